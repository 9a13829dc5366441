// Building the device-side scene: parameter layout, world-space geometry, tables and the texture set.
#include "scene_data.h"

#include "render/shadow_grid.h"
#include "render/soft_dsl.h"
#include "render/stage_buffers.h"

#include <adjoint/core/error.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace adjoint::app {

namespace {

// The number of elements in a kind's slot space.
uint32_t slot_elements(const Scene& scene, const ParameterKindInfo& k) {
    switch (k.slot) {
    case SlotSpace::textures: return uint32_t(scene.textures.size());
    case SlotSpace::views: return uint32_t(scene.views.size());
    case SlotSpace::targets: break;
    }
    switch (k.collection) {
    case ParameterCollection::materials: return uint32_t(scene.materials.size());
    case ParameterCollection::lights: return uint32_t(scene.lights.size());
    case ParameterCollection::meshes: return uint32_t(scene.meshes.size());
    case ParameterCollection::camera: return 1;
    }
    return 0;
}

// Shadows: the scene's visibility gives the boundary's kind; the bias is 1e-3 of the scene's bounding-box
// diagonal (world positions), for point and directional lights alike: far above float rounding of heights
// along the ray for scenes of any scale, and a thousandth of the scene's size is the most a shadow may detach
// from an object resting on a receiver (peter-panning).
ShadowPlan shadow_plan(const Scene& scene, const std::vector<float3>& positions, uint32_t triangles) {
    ShadowPlan plan;
    plan.any = std::any_of(scene.lights.begin(), scene.lights.end(), [](const Light& l) { return l.shadows; });
    plan.mode = scene.render.visibility;
    plan.triangles = triangles;
    // ADJOINT_SHADOW_GRID=0: every triangle is every point's candidate, the brute-force oracle that the tests
    // and the bench compare the light-space grids with (read when a renderer is made).
    const char* grid = std::getenv("ADJOINT_SHADOW_GRID");
    plan.grid = !(grid && std::string_view(grid) == "0");
    plan.shape = shadow_grid_shape(triangles);
    plan.file = scene.display_name;
    // antialias: the soft edge's reach (where it falls to kSoftCutoff) one pixel out of the outline.
    const float pixel_ndc = 2.0f / float(std::max(scene.camera.width, 1u));
    plan.sigma = plan.mode == Visibility::soft ? scene.render.soft_sigma : pixel_ndc * pixel_ndc / soft_reach2(1.0f);
    float3 lo(1e30f, 1e30f, 1e30f), hi(-1e30f, -1e30f, -1e30f);
    for (const float3& p : positions)
        for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], p[k]), hi[k] = std::max(hi[k], p[k]);
    double d2 = 0;
    for (int k = 0; k < 3; ++k) d2 += double(hi[k] - lo[k]) * double(hi[k] - lo[k]);
    plan.bias = positions.empty() ? 0.0f : float(1e-3 * std::sqrt(d2));
    return plan;
}

} // namespace

bool any_free(const Scene& scene, std::initializer_list<ParameterKind> kinds) {
    return scene.optimize && std::any_of(scene.optimize->parameters.begin(), scene.optimize->parameters.end(),
                                         [&](const Parameter& p) {
                                             return std::find(kinds.begin(), kinds.end(), p.kind) != kinds.end();
                                         });
}

ParamLayout make_layout(const Scene& scene) {
    ParamLayout l;
    const std::vector<uint32_t>* texture_slots = nullptr;   // a texture has one slot, whichever kind names it
    for (const ParameterKindInfo& k : parameter_kinds()) {
        std::vector<uint32_t>& offsets = l.offsets[size_t(k.kind)];
        if (k.slot == SlotSpace::textures && texture_slots) {
            offsets = *texture_slots;
            continue;
        }
        if (k.slot == SlotSpace::textures) texture_slots = &offsets;
        const uint32_t n = slot_elements(scene, k);
        offsets.assign(n, ParamLayout::kNoSlot);
        for (uint32_t e = 0; e < n; ++e) {
            if (k.slot == SlotSpace::targets && !k.refusal(scene, e, kWholeElement).empty()) continue;
            const uint32_t size = uint32_t(k.size(scene, e));
            if (k.slot == SlotSpace::textures) l.size = whole_float4s(l.size);
            offsets[e] = l.size;
            l.slots.push_back({k.kind, e, l.size, size});
            l.size += size;
        }
    }
    l.size = whole_float4s(l.size);
    return l;
}

uint32_t ParamLayout::packed_size() const {
    uint32_t n = 0;
    for (const Slot& s : slots) n += s.size;
    return n;
}

std::vector<float> ParamLayout::pack(const std::vector<float>& values) const {
    if (values.size() != size) fail("ParamLayout::pack: ", values.size(), " floats, the layout has ", size);
    std::vector<float> out;
    out.reserve(packed_size());
    for (const Slot& s : slots) out.insert(out.end(), values.begin() + s.offset, values.begin() + s.offset + s.size);
    return out;
}

std::vector<float> ParamLayout::unpack(const std::vector<float>& packed) const {
    if (packed.size() != packed_size())
        fail("ParamLayout::unpack: ", packed.size(), " floats, the slots hold ", packed_size());
    std::vector<float> out(size, 0.0f);
    size_t at = 0;
    for (const Slot& s : slots) {
        std::copy(packed.begin() + at, packed.begin() + at + s.size, out.begin() + s.offset);
        at += s.size;
    }
    return out;
}

uint32_t ParamLayout::find(ParameterKind kind, uint32_t element) const {
    const std::vector<uint32_t>& o = offsets[size_t(kind)];
    return element < o.size() ? o[element] : kNoSlot;
}

uint32_t ParamLayout::at(ParameterKind kind, uint32_t element) const {
    const uint32_t offset = find(kind, element);
    if (offset == kNoSlot)
        fail("the parameter buffer has no ", parameter_property(kind), " slot for element ", element);
    return offset;
}

uint32_t ParamLayout::of(const Scene& scene, const Parameter& p) const {
    const uint32_t offset = find(p.kind, kind_info(p.kind).element(scene, p.target, p.property));
    if (offset == kNoSlot) fail("parameter ", p.path, " has no place in the parameter buffer");
    return offset + p.offset;
}

std::vector<float> gather_values(const Scene& scene, const ParamLayout& l) {
    std::vector<float> v(l.size);
    for (const ParamLayout::Slot& slot : l.slots) kind_info(slot.kind).read(scene, slot.element, v.data() + slot.offset);
    return v;
}

namespace {

float3 transform_point(const float4x4& m, float3 p) {
    float3 r;
    for (int i = 0; i < 3; ++i) r[i] = m[0][i] * p.x + m[1][i] * p.y + m[2][i] * p.z + m[3][i];
    return r;
}

float3 transform_normal(const float3x3& m, float3 n) {
    float3 r;
    for (int i = 0; i < 3; ++i) r[i] = m[0][i] * n.x + m[1][i] * n.y + m[2][i] * n.z;
    float len = std::sqrt(r.x * r.x + r.y * r.y + r.z * r.z);
    return len > 0 ? float3(r.x / len, r.y / len, r.z / len) : r;
}

// Per scene texture: whether a free parameter (a material's texture, a light's map) moves it.
std::vector<bool> free_textures(const Scene& scene) {
    std::vector<bool> varies(scene.textures.size(), false);
    if (scene.optimize)
        for (const Parameter& p : scene.optimize->parameters)
            if (const ParameterKindInfo& k = kind_info(p.kind); k.storage == ParameterStorage::texture)
                if (const uint32_t t = k.element(scene, p.target, p.property); t < varies.size()) varies[t] = true;
    return varies;
}

} // namespace

std::vector<TextureDesc> texture_set_descs(const Scene& scene, std::vector<SceneData::Environment>* environments,
                                          uint32_t* dfg) {
    std::vector<TextureDesc> textures;
    for (const auto& tex : scene.textures) textures.push_back({tex.width, tex.height, {.wrap = TextureWrap::Repeat}});
    const std::vector<bool> varies = environments ? free_textures(scene) : std::vector<bool>();
    for (const Light& light : scene.lights)
        if (light.texture >= 0) {
            textures[size_t(light.texture)].options.wrap = TextureWrap::RepeatClamp;
            if (environments)
                environments->push_back({uint32_t(light.texture), uint32_t(textures.size()),
                                         bool(varies[size_t(light.texture)])});
            for (uint32_t width : environment_level_width)
                textures.push_back({width, width / 2, {.wrap = TextureWrap::RepeatClamp, .mipmaps = false}});
        }
    // The split sum's table, when a light is a sky (its materials' sky() reads it).
    for (const Light& light : scene.lights)
        if (light_model(light.type).sky) {
            if (dfg) *dfg = uint32_t(textures.size());
            textures.push_back({kDfgSize, 2 * kDfgSize, {.wrap = TextureWrap::Clamp, .mipmaps = false}});
            break;
        }
    if (textures.empty()) textures.push_back({1, 1});
    return textures;
}

SceneData upload_scene(Device& device, Stream& stream, const Scene& scene) {
    SceneData d;
    d.layout = make_layout(scene);
    d.texture_varies = free_textures(scene);
    const std::vector<TextureDesc> textures = texture_set_descs(scene, &d.environments, &d.shading.dfg);
    d.textures = device.create_texture_set<float3>(textures);
    if (d.shading.dfg != kNoTexture) stream << d.textures.copy_from(d.shading.dfg, dfg_table().data());
    d.background = scene.background;

    std::vector<float3> pos, nrm, col;
    std::vector<float2> uv;
    std::vector<uint3> tris;
    std::vector<uint32_t> tri_mat;
    for (const auto& mesh : scene.meshes) {
        float4x4 model = model_matrix(mesh.transform);
        float3x3 normal = normal_matrix(mesh.transform);
        uint32_t base = uint32_t(pos.size());
        for (size_t i = 0; i < mesh.positions.size(); ++i) {
            pos.push_back(transform_point(model, mesh.positions[i]));
            nrm.push_back(transform_normal(normal, mesh.normals[i]));
            col.push_back(mesh.vertex_colors ? mesh.colors[i] : float3(1, 1, 1));
            uv.push_back(mesh.texcoords.empty() ? float2(0, 0) : mesh.texcoords[i]);
        }
        for (size_t t = 0; t < mesh.triangles.size(); ++t) {
            const uint3& tr = mesh.triangles[t];
            tris.push_back(uint3(base + tr.x, base + tr.y, base + tr.z));
            tri_mat.push_back(mesh.triangle_materials[t]);
        }
    }
    d.geometry.vertex_count = uint32_t(pos.size());
    d.geometry.triangle_count = uint32_t(tris.size());
    d.geometry.positions = upload(device, stream, pos);
    d.geometry.normals = upload(device, stream, nrm);
    d.geometry.colors = upload(device, stream, col);
    d.geometry.uvs = upload(device, stream, uv);
    d.geometry.triangles = upload(device, stream, tris);
    d.geometry.triangle_material = upload(device, stream, tri_mat);

    // An ambient light has no vector: offset 0 stands in, never read.
    const auto slot_or_0 = [&](ParameterKind kind, uint32_t i) {
        const uint32_t offset = d.layout.find(kind, i);
        return offset == ParamLayout::kNoSlot ? 0u : offset;
    };
    std::vector<gpu::Material> mats;
    for (uint32_t i = 0; i < scene.materials.size(); ++i) {
        const Material& m = scene.materials[i];
        const MaterialModel& model = material_model(m.model);
        if (m.textures.size() > 4) fail("material model ", model.name, " has more than 4 textures");
        uint4 textures(gpu::kNone, gpu::kNone, gpu::kNone, gpu::kNone);
        for (size_t t = 0; t < m.textures.size(); ++t)
            if (m.textures[t] >= 0) textures[int(t)] = uint32_t(m.textures[t]);
        mats.push_back({material_model_index(model), d.layout.at(ParameterKind::material_value, i), 0, 0, textures});
        auto& models = d.shading.materials;
        auto planned = std::find_if(models.begin(), models.end(), [&](const PlannedModel& p) { return p.model == &model; });
        if (planned == models.end()) planned = models.insert(models.end(), PlannedModel{&model, 0});
        for (size_t t = 0; t < m.textures.size(); ++t)
            if (m.textures[t] >= 0) {
                planned->textures |= 1u << t;
                if (model.textures[t].tangent_space) d.shading.tangents = true;
            }
    }
    d.geometry.tangents = d.shading.tangents;
    d.shading.material_texture_gradients = any_free(scene, {ParameterKind::material_texture});
    d.shading.light_texture_gradients = any_free(scene, {ParameterKind::light_texture});
    d.shading.vertex_color_gradients = any_free(scene, {ParameterKind::mesh_vertex_colors});
    d.shading.vertex_colors = std::any_of(scene.meshes.begin(), scene.meshes.end(),
                                          [](const Mesh& m) { return m.vertex_colors; });
    // Conservative: any free value that moves no geometry (the vertex stage and the camera read those).
    d.shading.value_gradients = scene.optimize && std::any_of(scene.optimize->parameters.begin(),
                                                              scene.optimize->parameters.end(), [](const Parameter& p) {
                                                                  const ParameterKindInfo& k = kind_info(p.kind);
                                                                  return !k.geometry && k.storage == ParameterStorage::value;
                                                              });
    d.materials = upload(device, stream, mats);
    // A light's vector (a point light's position, a directional light's direction, an sh light's coefficients):
    // the light parameter kind its type's key names.
    const auto vector_slot = [&](uint32_t i) {
        const ParameterKindInfo* kind = find_kind("lights", light_model(scene.lights[i].type).vector_key);
        return kind ? slot_or_0(kind->kind, i) : 0u;
    };
    std::vector<LightSlots> slots;   // the lights grouped by type, in the registry's order
    std::vector<std::string> where, names;   // each one's JSON path and name in the scene, for errors
    for (const LightModel* model : light_models())
      for (bool shadows : {false, true}) {
        LightGroup group{model, uint32_t(slots.size()), uint32_t(slots.size()), shadows};
        for (size_t i = 0; i < scene.lights.size(); ++i)
            if (scene.lights[i].type == model->name && scene.lights[i].shadows == shadows) {
                const Light& light = scene.lights[i];
                LightSlots s{vector_slot(uint32_t(i)), d.layout.at(ParameterKind::light_color, uint32_t(i)),
                             d.layout.at(ParameterKind::light_intensity, uint32_t(i)),
                             uint32_t(std::max<size_t>(light.coefficients.size(), 1)), kNoTexture, kNoTexture,
                             slot_or_0(ParameterKind::light_rotation, uint32_t(i)), 0};
                for (const SceneData::Environment& e : d.environments)
                    if (light.texture >= 0 && e.map == uint32_t(light.texture)) s.texture = e.map, s.prefiltered = e.first;
                if (int32_t(i) == scene.background_light) {
                    d.shading.background = model;
                    d.shading.background_light = uint32_t(slots.size());
                }
                slots.push_back(s);
                where.push_back("lights[" + std::to_string(i) + "].shadows");
                names.push_back(light.name);
            }
        group.end = uint32_t(slots.size());
        if (group.end > group.begin) d.shading.lights.push_back(group);
      }
    d.lights = upload(device, stream, slots);
    d.shading.shadow = shadow_plan(scene, pos, d.geometry.triangle_count);
    d.shading.shadow.where = where;
    d.shading.shadow.names = names;
    d.view_recs = upload(device, stream, view_records(scene, d.layout));
    for (const auto& cam : scene.views)
        d.views.push_back({view_projection_matrix(cam), cam.eye, cam.width, cam.height});
    stream << synchronize();   // the host vectors above go out of scope
    return d;
}

} // namespace adjoint::app
