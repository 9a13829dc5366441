// A scene on the device: world-space geometry, the parameter buffer that holds every value the shading
// reads (material colours, textures' level 0, lights), the tables that say where each value lives, the
// textures' mip chains (the engine's texture set) and the views.
#pragma once
#include "raster.h"
#include "shading.h"

#include <adjoint/app/scene.h>

#include <algorithm>
#include <vector>

namespace adjoint::app {

// Where each scene value lives in the flat parameter buffer (offsets in floats). Every value has a place,
// free or not, so one set of kernels serves every choice of free parameters.
struct ParamLayout {
    std::vector<uint32_t> material_albedo, material_specular, material_shininess;
    std::vector<uint32_t> texture_base;      // per Scene::textures entry: level 0, RGB, rows top first
    std::vector<uint32_t> light_position;    // position for point lights, direction for directional ones
    std::vector<uint32_t> light_color, light_intensity;
    // Geometry: per mesh its placement (translation 3, rotation 4 as a raw quaternion [w, x, y, z] that the
    // kernels renormalize, scale 3) and its OBJ positions and colours (3 floats per `v` line, object space);
    // per view its camera (eye 3, target 3, fov_y 1 in degrees).
    std::vector<uint32_t> mesh_translation, mesh_rotation, mesh_scale, mesh_vertices, mesh_vertex_colors;
    std::vector<uint32_t> view_eye, view_target, view_fov;
    uint32_t size = 0;

    // The parameter's first float (camera parameters: view 0's, the only view such scenes have).
    uint32_t offset_of(const Scene& scene, const Parameter& p) const;
};

ParamLayout make_layout(const Scene& scene);

// A host vector on the device (at least one element: a kernel argument cannot be an empty buffer).
template <typename T>
Buffer<T> upload(Device& device, Stream& stream, const std::vector<T>& v) {
    auto b = device.create_buffer<T>(std::max<size_t>(v.size(), 1));
    if (!v.empty()) stream << b.copy_from(v.data());
    return b;
}
std::vector<float> gather_values(const Scene& scene, const ParamLayout& layout);

struct SceneData {
    ParamLayout layout;
    DeviceGeometry geometry;
    Buffer<gpu::Material> materials;
    // Scene::textures in order (repeat, mipmapped), level 0 copied from the parameter buffer at
    // layout.texture_base; one 1x1 stand-in when the scene has none (a kernel argument cannot be absent).
    TextureSet<float3> textures;
    std::vector<LightGroup> light_groups;   // the light buffer's runs of one type
    Buffer<LightSlots> lights;              // per light, ordered by type: where its values are
    std::vector<ViewCamera> views;
    float3 background;
};

// Uploads geometry (transformed to world space on the host: nothing moves it in this renderer) and tables.
SceneData upload_scene(Device& device, Stream& stream, const Scene& scene);

} // namespace adjoint::app
