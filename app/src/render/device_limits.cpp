// Refusing scenes too large for the device before any device work: one kernel argument (a storage-buffer
// binding) may cover at most Device::max_buffer_bytes(), so the per-pixel surfaces of a view, the textures
// (free ones at their own resolution) and the triangles' setup records must each fit.
#include <adjoint/app/renderer.h>
#include <adjoint/app/parameter_kinds.h>
#include <adjoint/runtime/texture.h>

#include "gpu_types.h"
#include "scene_data.h"

#include <algorithm>
#include <cmath>

namespace adjoint::app {

namespace {

// The largest n with n * n <= pixels.
uint64_t max_square_side(uint64_t pixels) {
    uint64_t n = uint64_t(std::sqrt(double(pixels)));
    while (n * n > pixels) --n;
    while ((n + 1) * (n + 1) <= pixels) ++n;
    return n;
}


std::string mib(uint64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }

std::string over_the_limit(const Device& device) {
    return ", over this device's limit of " + mib(device.max_buffer_bytes()) + " per buffer (" + device.name() + ")";
}

} // namespace

void check_views_fit(const Device& device, const Scene& scene) {
    // The optimizer's per-pixel loss terms of every view lie in one buffer (an iteration may render each view).
    const uint64_t pixels = uint64_t(scene.camera.width) * scene.camera.height;
    const uint64_t views = std::max<uint64_t>(scene.views.size(), 1), limit = device.max_buffer_bytes();
    if (pixels > 0 && pixels * views * sizeof(float) > limit)
        throw SceneError(scene.display_name, "views",
                         std::to_string(views) + " views at " + std::to_string(scene.camera.width) + "x" +
                             std::to_string(scene.camera.height) + " need " + mib(pixels * views * sizeof(float)) +
                             " for the loss's per-pixel terms" + over_the_limit(device) + "; at most " +
                             std::to_string(limit / (pixels * sizeof(float))) +
                             " views fit at this resolution: use fewer views or a lower resolution");
}

void check_scene_fits(const Device& device, const Scene& scene) {
    const uint64_t limit = device.max_buffer_bytes();
    const std::string over = over_the_limit(device);
    const uint64_t pixels = uint64_t(scene.camera.width) * scene.camera.height;
    const uint64_t surfaces = pixels * sizeof(gpu::SurfaceRecord), most = limit / sizeof(gpu::SurfaceRecord);
    if (surfaces > limit)
        throw SceneError(scene.display_name, "camera.resolution",
                         std::to_string(scene.camera.width) + "x" + std::to_string(scene.camera.height) + " needs " +
                             mib(surfaces) + " for a view's surfaces" + over + "; lower the resolution (at most " +
                             std::to_string(most) + " pixels, " + std::to_string(max_square_side(most)) + "x" +
                             std::to_string(max_square_side(most)) + " square)");
    // Every triangle's rasterizer records (gpu::TriSetup, and gpu::TriEdges, the larger) live in one buffer each:
    // the scene's triangle count is bounded.
    uint64_t triangles = 0;
    for (const auto& m : scene.meshes) triangles += m.triangles.size();
    constexpr uint64_t record = std::max(sizeof(gpu::TriSetup), sizeof(gpu::TriEdges));
    if (triangles * record > limit)
        throw SceneError(scene.display_name, "meshes",
                         std::to_string(triangles) + " triangles are too many for this device: their setup records "
                         "need " + mib(triangles * record) + over + "; at most " + std::to_string(limit / record) +
                             " triangles fit");

    // Textures: 3 floats a texel, in the parameter buffer (every scene texture has its slot there, free or not),
    // and again with their mip chains in the texture set (with the environment maps' prefiltered maps and the
    // split sum's table). A free texture is held at the resolution its parameter gives, which may not be the
    // file's: the sizes are the ones the run will have.
    std::vector<TextureDesc> set = texture_set_descs(scene);
    uint64_t parameter_floats = make_layout(scene).size;
    std::string free_sizes;   // "materials.a.albedo_texture 2048x2048, ..."
    if (scene.optimize)
        for (const Parameter& p : scene.optimize->parameters) {
            const ParameterKindInfo& k = kind_info(p.kind);
            if (k.slot != SlotSpace::textures) continue;
            const std::string size = std::to_string(p.texture_width) + "x" + std::to_string(p.texture_height);
            TextureDesc& d = set.at(k.element(scene, p.target, p.property));
            parameter_floats = parameter_floats - uint64_t(d.width) * d.height * 3 + p.size;
            d.width = p.texture_width;
            d.height = p.texture_height;
            const uint64_t chain = texture_set_floats({d}, 3) * 4;
            if (chain > limit)
                throw SceneError(scene.display_name, "optimize.parameters[\"" + p.path + "\"]",
                                 "a " + size + " texture needs " + mib(chain) + " with its mip chain" + over +
                                     "; use a smaller resolution");
            free_sizes += (free_sizes.empty() ? "" : ", ") + p.path + " " + size;
        }
    const uint64_t needed = texture_set_floats(set, 3) * 4;
    if (needed > limit) {
        if (free_sizes.empty())
            throw SceneError(scene.display_name, "materials",
                             "the textures need " + mib(needed) + " with their mip chains" + over +
                                 "; use smaller textures");
        throw SceneError(scene.display_name, "optimize.parameters",
                         "the textures need " + mib(needed) + " with their mip chains, the free ones at their "
                         "resolutions (" + free_sizes + ")" + over + "; use smaller resolutions");
    }
    // Below the texture set's (which holds the textures' level 0 and more), unless other values are many. The
    // optimizer pads its arrays to whole float4s (optim/optimization.cpp).
    parameter_floats = (parameter_floats + 3) / 4 * 4;
    if (parameter_floats * 4 > limit)
        throw SceneError(scene.display_name, "meshes",
                         "the scene's values (vertices, textures, materials, lights) need " +
                             mib(parameter_floats * 4) + " in the parameter buffer" + over);
}

} // namespace adjoint::app
