// Shading as DSL code over the parameter buffer and the scene's textures (the engine's texture set: bilinear,
// repeat, mipmapped by the UV derivatives): Lambert + Blinn-Phong under the scene's lights, each type's
// radiance from its plug-in (adjoint/app/plugins.h), read from the light buffer. The same code runs in the
// forward renderer and inside $autodiff (where the reads of the differentiable parameter buffer and of the
// textures scatter their adjoints into gradient buffers), so it is written once, as templates over the
// parameter buffer's type.
#pragma once
#include "gpu_types.h"

#include <adjoint/app/plugins.h>
#include <adjoint/app/scene.h>

#include <vector>

namespace adjoint::app {

// The scene's lights of one type: entries [begin, end) of the light buffer (the scene's lights ordered by
// type). The types are baked into the recorded code; the lights' values come from the parameter buffer.
struct LightGroup {
    const LightModel* model = nullptr;
    uint32_t begin = 0, end = 0;
};

// A group of up to this many lights is unrolled; a larger one is a loop over the light buffer (which keeps
// a scene with thousands of lights a small kernel: no tape either, as the loop only accumulates).
constexpr uint32_t kUnrolledLights = 4;

// The resources the shading code reads.
template <typename P>
struct ShadeInputs {
    const P& params;                        // the parameter buffer (plain or differentiable)
    const TextureSetFloat3& textures;       // every texture's mip chain; level 0 copied from `params`
    const BufferVar<gpu::Material>& materials;
    const BufferVar<LightSlots>& lights;    // per light: where its values are, grouped by type
};

template <typename P>
Float3 read3(const P& buf, const UInt& at) {
    return make_float3(buf.read(at), buf.read(at + 1u), buf.read(at + 2u));
}

// Trilinear sampling; the level of detail comes from the surface's UV derivatives (a constant for the
// gradient: it depends on geometry only). Magnified pixels read level 0 alone.
inline Float3 sample_texture(const TextureSetFloat3& textures, const UInt& texture, const Expr<gpu::Surface>& s) {
    return textures.texture(texture).sample_grad(s.uv, s.duv_dx, s.duv_dy);
}

// Lambert + Blinn-Phong for one light's incoming radiance.
inline Float3 blinn_phong(const Float3& albedo, const Float3& specular, const Float& shininess, const Float3& n,
                          const Float3& v, const LightIncoming& light) {
    Float ndl = dot(n, light.direction);
    Float3 h = normalize(light.direction + v);
    Float spec = ite(ndl > 0.0f, pow(max(dot(n, h), 0.0f), shininess), 0.0f);
    return (albedo * max(ndl, 0.0f) + specular * spec) * light.radiance;
}

// The colour of a surface point seen from eye.
template <typename P>
Float3 shade_surface(const ShadeInputs<P>& in, const std::vector<LightGroup>& groups, const Expr<gpu::Surface>& s,
                     const Float3& eye) {
    auto mat = in.materials.read(s.material);
    Float3 albedo;
    $if (mat.texture != gpu::kNone) { albedo = sample_texture(in.textures, mat.texture, s); }
    $else { albedo = read3(in.params, mat.albedo); };
    albedo = albedo * s.color;
    Float3 specular = read3(in.params, mat.specular);
    Float shininess = in.params.read(mat.shininess);
    Float3 v = normalize(eye - s.position);
    const ParamReads reads{[&in](const UInt& at) -> Float { return in.params.read(at); }};
    Float3 color = make_float3(0.0f);
    for (const LightGroup& g : groups) {
        auto add = [&](const UInt& i) {
            LightIncoming light = g.model->incoming(reads, in.lights.read(i), s.position);
            if (g.model->ambient)
                color = color + albedo * light.radiance;
            else
                color = color + blinn_phong(albedo, specular, shininess, s.normal, v, light);
        };
        if (g.end - g.begin <= kUnrolledLights) {
            for (uint32_t i = g.begin; i < g.end; ++i) add(UInt(i));
        } else {
            $for (i, UInt(g.begin), UInt(g.end)) { add(i); };
        }
    }
    return color;
}

} // namespace adjoint::app
