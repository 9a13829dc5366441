// Shading as DSL code over the parameter buffer and the scene's textures (the engine's texture set: bilinear,
// repeat, mipmapped by the UV derivatives): each material by its model's plug-in under the scene's lights,
// each light type's radiance from its plug-in (adjoint/app/plugins.h), read from the light buffer. The same
// code runs in the forward renderer and inside $autodiff (where the reads of the differentiable parameter
// buffer and of the textures scatter their adjoints into gradient buffers), so it is written once, as
// templates over the parameter buffer's type.
#pragma once
#include "gpu_types.h"

#include <adjoint/app/plugins.h>
#include <adjoint/app/scene.h>

#include <functional>
#include <string>
#include <vector>

namespace adjoint::app {

// The scene's lights of one type: entries [begin, end) of the light buffer (the scene's lights ordered by
// type). The types are baked into the recorded code; the lights' values come from the parameter buffer.
struct LightGroup {
    const LightModel* model = nullptr;
    uint32_t begin = 0, end = 0;
    bool shadows = false;   // its lights cast shadows (a type's lights with and without are two groups)
};

// The light-space grids' resolutions (render/shadow_grid.h): a sun's grid is sun x sun cells over the plane
// perpendicular to its rays, a point light's six cube faces of point x point cells; `cells` per light (each a
// multiple of 256, the scan's chunk).
struct ShadowGridShape {
    uint32_t sun = 16, point = 16, cells = 256;
};

// Shadows (render/shadow_dsl.h): how the scene's shadowing lights test their visibility.
struct ShadowPlan {
    bool any = false;                        // a light casts shadows
    Visibility mode = Visibility::hard;      // the scene's visibility: the shadow boundary's kind
    float sigma = 1.0f;                      // the soft edge's sigma (NDC units squared)
    float bias = 0.0f;                       // an occluder counts only this far (world units) along the ray
    uint32_t triangles = 0;                  // the scene's triangles, every one an occluder
    bool grid = true;                        // candidates from light-space grids (false: every triangle)
    ShadowGridShape shape;
    std::string file;                        // the scene's name, for errors
    std::vector<std::string> where, names;   // per light of the light buffer: "lights[i].shadows", its name
};

// A material model the scene uses, and bit j set when some material of that model has its texture j. A texture
// no material has is not sampled at all (MaterialReads::has_texture is false as a constant), so kernels carry no
// code for it: on lavapipe a branch costs its code whether or not a thread takes it (engine/GUIDE.md, "Branches on
// lavapipe"), and an untextured pose iteration's soft backward pass sampled in vain.
struct PlannedModel {
    const MaterialModel* model = nullptr;
    uint32_t textures = 0;
};

// What the shading code bakes in: the material models the scene uses (a scene of one model has no branch on
// the model) and the light buffer's runs of one type.
struct ShadingPlan {
    std::vector<PlannedModel> materials;
    std::vector<LightGroup> lights;
    bool tangents = false;   // a material has a tangent-space texture: surfaces carry tangent frames
    // Whether a material's texture, or a light's map, is a free parameter: otherwise their samples are detached
    // (TextureRef::detached: gradients to the coordinates only), which spares $autodiff every texel's
    // atomic scatter into a gradient nobody reads. The split sum's table is always detached.
    bool material_texture_gradients = true;
    bool light_texture_gradients = true;
    // Whether a value the shading reads from the parameter buffer (a material's, a light's) may be free: otherwise
    // the dynamic chain's backward reads them as constants, which spares every pixel's atomic adds into ~10-20
    // gradients nobody reads (half the shading backward of a pose iteration).
    bool value_gradients = true;
    // Whether a mesh's vertex colours are free: otherwise the dynamic chain's backward detaches their reads
    // (VertexInputs::color_gradients), a third of its per-pixel atomic adds.
    bool vertex_color_gradients = true;
    // Whether some mesh has vertex colours: otherwise every surface's colour is 1 and no kernel reads them.
    bool vertex_colors = true;
    uint32_t dfg = kNoTexture;   // the split sum's table (dfg_table) in the texture set, when a light is a sky
    // `background: "environment"`: the light drawn behind the scene (its type, its index in the light buffer).
    const LightModel* background = nullptr;
    uint32_t background_light = 0;
    ShadowPlan shadow;
};

// A group of up to this many lights is unrolled; a larger one is a loop over the light buffer (which keeps
// a scene with thousands of lights a small kernel: no tape either, as the loop only accumulates).
constexpr uint32_t kUnrolledLights = 4;

// The fraction of a shadowing light (where it stands, its index in the light buffer) that reaches a world point
// on a triangle of normal n (either way round: the plane a shadow falls on).
using ShadowHook = std::function<Float(const ShadowSource&, const UInt& light, const Float3& p, const Float3& n)>;

// The resources the shading code reads.
template <typename P>
struct ShadeInputs {
    const P& params;                        // the parameter buffer (plain or differentiable)
    const TextureSetFloat3& textures;       // every texture's mip chain; level 0 copied from `params`
    const BufferVar<gpu::Material>& materials;
    const BufferVar<LightSlots>& lights;    // per light: where its values are, grouped by type
    // The fraction of a shadowing light that reaches a world point (render/shadow_dsl.h: shadow_hook); empty
    // where the chain has no shadows (the static chain: scenes with shadows take the dynamic one).
    ShadowHook visibility = {};
    // --diagnose (render/diagnose_dsl.h): each texture sample (its texture, the value) passes through it.
    std::function<Float3(const UInt&, const Float3&)> texture_probe = {};
    // The static chain's texel gather (optim/texel_gather.h): each material texture sample's value passes through
    // material_sample (read detached, marked requires_grad there), or its texel reads are held in `held`.
    std::function<Float3(const Float3&)> material_sample = {};
    HeldTexels<float3>* held = nullptr;
};

// At most the material texture samples a pixel's shading records: one per texture each material model declares,
// in every model's branch (taken or not; a texture no material has is recorded in a branch that never runs).
inline int material_texture_samples(const ShadingPlan& plan) {
    int samples = 0;
    for (const PlannedModel& m : plan.materials) samples += int(m.model->textures.size());
    return samples;
}

// A stored surface (SurfaceBuffers) as the shading reads it: its record and, when the plan reads tangent frames,
// its tangent.
inline Var<gpu::Surface> stored_surface(const BufferVar<gpu::SurfaceRecord>& records, const BufferFloat4& tangents,
                                        const UInt& at, const ShadingPlan& plan) {
    auto r = records.read(at);
    Var<gpu::Surface> s;
    s.position = r.position;
    s.normal = r.normal;
    s.face_normal = r.normal;   // (the stored surfaces' chain casts no shadows)
    s.color = r.color;
    s.uv = r.uv;
    s.duv_dx = r.duv_dx;
    s.duv_dy = r.duv_dy;
    s.material = r.material;
    if (plan.tangents)
        s.tangent = tangents.read(at);
    else
        s.tangent = make_float4(0.0f);
    return s;
}

template <typename P>
Float3 read3(const P& buf, const UInt& at) {
    return make_float3(buf.read(at), buf.read(at + 1u), buf.read(at + 2u));
}

// Trilinear sampling; the level of detail comes from the surface's UV derivatives (a constant for the
// gradient: it depends on geometry only). Magnified pixels read level 0 alone.
inline Float3 sample_texture(const TextureSetFloat3& textures, const UInt& texture, const Expr<gpu::Surface>& s,
                             bool gradients, HeldTexels<float3>* held = nullptr) {
    auto t = textures.texture(texture);
    if (!gradients) return t.detached().sample_grad(s.uv, s.duv_dx, s.duv_dy);
    if (held) return t.held(*held).sample_grad(s.uv, s.duv_dx, s.duv_dy);
    return t.sample_grad(s.uv, s.duv_dx, s.duv_dy);
}

// The reads of a material's properties and textures for its model's evaluate().
template <typename P>
MaterialReads material_reads(const ShadeInputs<P>& in, const ShadingPlan& plan, const PlannedModel& planned,
                             const Expr<gpu::Material>& mat, const Expr<gpu::Surface>& s) {
    const MaterialModel& model = *planned.model;
    std::vector<uint32_t> offsets;   // each property's first float in the material's values
    uint32_t at = 0;
    for (const MaterialProperty& p : model.properties) offsets.push_back(at), at += p.floats;
    const auto texture_of = [mat](uint32_t j) -> UInt {
        return j == 0 ? mat.textures.x : j == 1 ? mat.textures.y : j == 2 ? mat.textures.z : mat.textures.w;
    };
    MaterialReads r;
    r.value = [&in, &model, mat, offsets](uint32_t i) -> Float3 {
        UInt first = mat.values + offsets[i];
        if (model.properties[i].floats == 1) return make_float3(in.params.read(first));
        return read3(in.params, first);
    };
    r.texture = [&in, texture_of, s, grads = plan.material_texture_gradients](uint32_t j) -> Float3 {
        // Sampled detached where material_sample takes the gradient, held where `held` takes the texels'.
        Float3 c = sample_texture(in.textures, texture_of(j), s, grads && (in.held || !in.material_sample), in.held);
        if (in.material_sample) c = in.material_sample(c);
        return in.texture_probe ? in.texture_probe(texture_of(j), c) : c;
    };
    const uint32_t used = planned.textures;
    r.has_texture = [texture_of, used](uint32_t j) -> Bool {
        if (j < 32 && !((used >> j) & 1u)) return Bool(false);
        return texture_of(j) != gpu::kNone;
    };
    r.vertex_color = s.color;
    r.normal = s.normal;
    r.tangent = s.tangent;
    return r;
}

template <typename P>
ParamReads param_reads(const ShadeInputs<P>& in, const ShadingPlan& plan) {
    return {[&in](const UInt& at) -> Float { return in.params.read(at); },
            [&in, grads = plan.light_texture_gradients](const UInt& texture, const Float2& uv, const Float& lod) {
                auto t = in.textures.texture(texture);
                Float3 c = (grads ? t : t.detached()).sample_level(uv, lod);
                return in.texture_probe ? in.texture_probe(texture, c) : c;
            }};
}

// What a pixel without a surface shows: the background colour, or the background light's radiance along the
// pixel centre's ray (`ray` gives the unit world direction through pixel coordinates).
template <typename P, typename Ray>
Float3 background_at(const ShadeInputs<P>& in, const ShadingPlan& plan, const Float3& color, Ray ray) {
    if (!plan.background) return color;
    return plan.background->radiance(param_reads(in, plan), in.lights.read(plan.background_light), ray());
}

// The colour of a surface point of one material model seen from eye.
template <typename P>
Float3 shade_model(const ShadeInputs<P>& in, const PlannedModel& planned, const ShadingPlan& plan,
                   const Expr<gpu::Material>& mat, const Expr<gpu::Surface>& s, const Float3& eye) {
    const MaterialModel& model = *planned.model;
    const MaterialPoint m = model.evaluate(material_reads(in, plan, planned, mat, s));
    Float3 v = normalize(eye - s.position);
    const ParamReads reads = param_reads(in, plan);
    Float3 color = model.emitted(m);
    for (const LightGroup& g : plan.lights) {
        auto add = [&](const UInt& i) {
            if (g.model->sky) {
                SkyLight sky = g.model->sky(reads, in.lights.read(i));
                // The table's two halves, each read as if it were a texture of its own (clamped at its edges).
                auto table = [&in, &plan](const Float& nv, const Float& roughness, float half) -> Float3 {
                    Float y = clamp(roughness, 0.5f / kDfgSize, 1.0f - 0.5f / kDfgSize);
                    return in.textures.texture(plan.dfg).detached().sample(make_float2(nv, 0.5f * (y + half)));
                };
                sky.dfg = [table](const Float& nv, const Float& roughness) { return table(nv, roughness, 0.0f); };
                sky.blur = [table](const Float& nv, const Float& roughness) -> Float {
                    return table(nv, roughness, 1.0f).x;
                };
                color = color + model.sky(m, m.normal, v, sky);
            } else {
                auto light = in.lights.read(i);
                Float3 c = model.direct(m, m.normal, v, g.model->incoming(reads, light, s.position));
                if (g.shadows && in.visibility)
                    c = c * in.visibility(g.model->shadow_source(reads, light), i, s.position, s.face_normal);
                color = color + c;
            }
        };
        if (g.end - g.begin <= kUnrolledLights) {
            for (uint32_t i = g.begin; i < g.end; ++i) add(UInt(i));
        } else {
            $for (i, UInt(g.begin), UInt(g.end)) { add(i); };
        }
    }
    return color;
}

// The colour of a surface point seen from eye: its material's model (a branch only when the scene has several).
template <typename P>
Float3 shade_surface(const ShadeInputs<P>& in, const ShadingPlan& plan, const Expr<gpu::Surface>& s,
                     const Float3& eye) {
    auto mat = in.materials.read(s.material);
    if (plan.materials.size() == 1) return shade_model(in, plan.materials[0], plan, mat, s, eye);
    Float3 color = make_float3(0.0f);
    for (const PlannedModel& planned : plan.materials) {
        $if (mat.model == material_model_index(*planned.model)) { color = shade_model(in, planned, plan, mat, s, eye); };
    }
    return color;
}

} // namespace adjoint::app
