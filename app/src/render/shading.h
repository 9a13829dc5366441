// Shading as DSL code over the parameter buffer and the scene's textures (the engine's texture set: bilinear,
// repeat, mipmapped by the UV derivatives): Lambert + Blinn-Phong with point (inverse-square), directional and
// ambient lights. The same code runs in the forward renderer and inside $autodiff (where the reads of the
// differentiable parameter buffer and of the textures scatter their adjoints into gradient buffers), so it
// is written once, as templates over the parameter buffer's type.
#pragma once
#include "gpu_types.h"

#include <adjoint/app/scene.h>

#include <vector>

namespace adjoint::app {

// A light as the kernels see it: its type is baked into the recorded code, its values are read from the
// parameter buffer at these offsets (floats).
struct ShadeLight {
    LightType type = LightType::ambient;
    uint32_t position = 0;    // point: position; directional: direction of travel
    uint32_t color = 0;
    uint32_t intensity = 0;
};

// The resources the shading code reads.
template <typename P>
struct ShadeInputs {
    const P& params;                        // the parameter buffer (plain or differentiable)
    const TextureSetFloat3& textures;       // every texture's mip chain; level 0 copied from `params`
    const BufferVar<gpu::Material>& materials;
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

// The colour of a surface point seen from eye.
template <typename P>
Float3 shade_surface(const ShadeInputs<P>& in, const std::vector<ShadeLight>& lights, const Expr<gpu::Surface>& s,
             const Float3& eye) {
    auto mat = in.materials.read(s.material);
    Float3 albedo;
    $if (mat.texture != gpu::kNone) { albedo = sample_texture(in.textures, mat.texture, s); }
    $else { albedo = read3(in.params, mat.albedo); };
    albedo = albedo * s.color;
    Float3 specular = read3(in.params, mat.specular);
    Float shininess = in.params.read(mat.shininess);
    Float3 v = normalize(eye - s.position);
    Float3 color = make_float3(0.0f);
    for (const ShadeLight& L : lights) {
        Float3 radiance = read3(in.params, L.color) * in.params.read(L.intensity);
        if (L.type == LightType::ambient) {
            color = color + albedo * radiance;
            continue;
        }
        Float3 l;
        Float atten = 1.0f;
        if (L.type == LightType::point) {
            Float3 d = read3(in.params, L.position) - s.position;
            Float dist2 = dot(d, d);
            l = d * rsqrt(dist2);
            atten = 1.0f / dist2;
        } else {
            l = -normalize(read3(in.params, L.position));
        }
        Float ndl = dot(s.normal, l);
        Float3 h = normalize(l + v);
        Float spec = ite(ndl > 0.0f, pow(max(dot(s.normal, h), 0.0f), shininess), 0.0f);
        color = color + (albedo * max(ndl, 0.0f) + specular * spec) * radiance * atten;
    }
    return color;
}

} // namespace adjoint::app
