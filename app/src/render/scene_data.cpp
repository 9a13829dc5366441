// Building the device-side scene: parameter layout, world-space geometry, tables and the texture set.
#include "scene_data.h"

#include <adjoint/core/error.h>

#include <algorithm>
#include <cmath>

namespace adjoint::app {

ParamLayout make_layout(const Scene& scene) {
    ParamLayout l;
    uint32_t at = 0;
    auto take = [&](uint32_t n) {
        uint32_t o = at;
        at += n;
        return o;
    };
    for (size_t i = 0; i < scene.materials.size(); ++i) {
        l.material_albedo.push_back(take(3));
        l.material_specular.push_back(take(3));
        l.material_shininess.push_back(take(1));
    }
    for (const auto& t : scene.textures) l.texture_base.push_back(take(t.width * t.height * 3));
    for (size_t i = 0; i < scene.lights.size(); ++i) {
        l.light_position.push_back(take(3));
        l.light_color.push_back(take(3));
        l.light_intensity.push_back(take(1));
    }
    for (const auto& m : scene.meshes) {
        l.mesh_translation.push_back(take(3));
        l.mesh_rotation.push_back(take(4));
        l.mesh_scale.push_back(take(3));
        l.mesh_vertices.push_back(take(3 * uint32_t(m.obj_positions.size())));
        l.mesh_vertex_colors.push_back(take(3 * uint32_t(m.obj_colors.size())));
    }
    for (size_t v = 0; v < scene.views.size(); ++v) {
        l.view_eye.push_back(take(3));
        l.view_target.push_back(take(3));
        l.view_fov.push_back(take(1));
    }
    l.size = at;
    return l;
}

uint32_t ParamLayout::offset_of(const Scene& scene, const Parameter& p) const {
    switch (p.kind) {
    case ParameterKind::material_albedo: return material_albedo.at(p.target);
    case ParameterKind::material_specular: return material_specular.at(p.target);
    case ParameterKind::material_shininess: return material_shininess.at(p.target);
    case ParameterKind::material_albedo_texture: return texture_base.at(uint32_t(scene.materials.at(p.target).texture));
    case ParameterKind::light_position:
    case ParameterKind::light_direction: return light_position.at(p.target);
    case ParameterKind::light_color: return light_color.at(p.target);
    case ParameterKind::light_intensity: return light_intensity.at(p.target);
    case ParameterKind::mesh_translation: return mesh_translation.at(p.target);
    case ParameterKind::mesh_rotation: return mesh_rotation.at(p.target);
    case ParameterKind::mesh_scale: return mesh_scale.at(p.target);
    case ParameterKind::mesh_vertices: return mesh_vertices.at(p.target);
    case ParameterKind::mesh_vertex_colors: return mesh_vertex_colors.at(p.target);
    case ParameterKind::camera_eye: return view_eye.at(0);
    case ParameterKind::camera_target: return view_target.at(0);
    case ParameterKind::camera_fov_y: return view_fov.at(0);
    }
    throw Error("parameter " + p.path + " has no place in the parameter buffer");
}

std::vector<float> gather_values(const Scene& scene, const ParamLayout& l) {
    std::vector<float> v(l.size);
    auto put3 = [&](uint32_t at, float3 x) {
        v[at] = x.x;
        v[at + 1] = x.y;
        v[at + 2] = x.z;
    };
    for (size_t i = 0; i < scene.materials.size(); ++i) {
        const auto& m = scene.materials[i];
        put3(l.material_albedo[i], m.albedo);
        put3(l.material_specular[i], m.specular);
        v[l.material_shininess[i]] = m.shininess;
    }
    for (size_t t = 0; t < scene.textures.size(); ++t) {
        const auto& tex = scene.textures[t];
        for (size_t k = 0; k < tex.texels.size(); ++k) {
            v[l.texture_base[t] + 3 * k] = tex.texels[k].x;
            v[l.texture_base[t] + 3 * k + 1] = tex.texels[k].y;
            v[l.texture_base[t] + 3 * k + 2] = tex.texels[k].z;
        }
    }
    for (size_t i = 0; i < scene.lights.size(); ++i) {
        const auto& L = scene.lights[i];
        put3(l.light_position[i], light_model(L.type).vector_key == "direction" ? L.direction : L.position);
        put3(l.light_color[i], L.color);
        v[l.light_intensity[i]] = L.intensity;
    }
    for (size_t i = 0; i < scene.meshes.size(); ++i) {
        const auto& m = scene.meshes[i];
        put3(l.mesh_translation[i], m.transform.translation);
        const Quaternion& q = m.transform.rotation;
        v[l.mesh_rotation[i]] = q.w;
        v[l.mesh_rotation[i] + 1] = q.x;
        v[l.mesh_rotation[i] + 2] = q.y;
        v[l.mesh_rotation[i] + 3] = q.z;
        put3(l.mesh_scale[i], m.transform.scale);
        for (size_t k = 0; k < m.obj_positions.size(); ++k) put3(l.mesh_vertices[i] + 3 * uint32_t(k), m.obj_positions[k]);
        for (size_t k = 0; k < m.obj_colors.size(); ++k) put3(l.mesh_vertex_colors[i] + 3 * uint32_t(k), m.obj_colors[k]);
    }
    for (size_t i = 0; i < scene.views.size(); ++i) {
        put3(l.view_eye[i], scene.views[i].eye);
        put3(l.view_target[i], scene.views[i].target);
        v[l.view_fov[i]] = scene.views[i].fov_y;
    }
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

} // namespace

SceneData upload_scene(Device& device, Stream& stream, const Scene& scene) {
    SceneData d;
    d.layout = make_layout(scene);
    std::vector<TextureDesc> textures;
    for (const auto& tex : scene.textures) textures.push_back({tex.width, tex.height, {.wrap = TextureWrap::Repeat}});
    if (textures.empty()) textures.push_back({1, 1});
    d.textures = device.create_texture_set<float3>(textures);
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

    std::vector<gpu::Material> mats;
    for (size_t i = 0; i < scene.materials.size(); ++i) {
        const auto& m = scene.materials[i];
        mats.push_back({d.layout.material_albedo[i], m.texture < 0 ? gpu::kNone : uint32_t(m.texture),
                        d.layout.material_specular[i], d.layout.material_shininess[i]});
    }
    d.materials = upload(device, stream, mats);
    std::vector<LightSlots> slots;   // the lights grouped by type, in the registry's order
    for (const LightModel* model : light_models()) {
        LightGroup group{model, uint32_t(slots.size()), uint32_t(slots.size())};
        for (size_t i = 0; i < scene.lights.size(); ++i)
            if (scene.lights[i].type == model->name)
                slots.push_back({d.layout.light_position[i], d.layout.light_color[i], d.layout.light_intensity[i], 0});
        group.end = uint32_t(slots.size());
        if (group.end > group.begin) d.light_groups.push_back(group);
    }
    d.lights = upload(device, stream, slots);
    for (const auto& cam : scene.views)
        d.views.push_back({view_projection_matrix(cam), cam.eye, cam.width, cam.height});
    stream << synchronize();   // the host vectors above go out of scope
    return d;
}

} // namespace adjoint::app
