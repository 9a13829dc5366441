// Refusing scenes too large for the device before any device work: one kernel argument (a storage-buffer
// binding) may cover at most Device::max_buffer_bytes(), so the per-pixel surfaces of a view, the textures
// (free ones at their own resolution) and the triangles' setup records must each fit.
#include <adjoint/app/renderer.h>

#include "gpu_types.h"

namespace adjoint::app {

void check_scene_fits(const Device& device, const Scene& scene) {
    const uint64_t limit = device.max_buffer_bytes();
    auto mib = [](uint64_t b) { return std::to_string((b + (1 << 20) - 1) >> 20) + " MiB"; };
    const uint64_t pixels = uint64_t(scene.camera.width) * scene.camera.height;
    const uint64_t surfaces = pixels * sizeof(gpu::SurfaceRecord);
    if (surfaces > limit)
        throw SceneError(scene.display_name, "camera.resolution",
                         std::to_string(scene.camera.width) + "x" + std::to_string(scene.camera.height) + " needs " +
                             mib(surfaces) + " for a view's surfaces, over this device's limit of " + mib(limit) +
                             " per buffer (" + device.name() + "); lower the resolution");
    // Every triangle's setup record (gpu::TriSetup) lives in one buffer: the scene's triangle count is bounded.
    uint64_t triangles = 0;
    for (const auto& m : scene.meshes) triangles += m.triangles.size();
    if (triangles * sizeof(gpu::TriSetup) > limit)
        throw SceneError(scene.display_name, "meshes",
                         std::to_string(triangles) + " triangles are too many for this device: their setup records "
                         "need " + mib(triangles * sizeof(gpu::TriSetup)) + ", over its limit of " + mib(limit) +
                         " per buffer (" + device.name() + "); at most " +
                         std::to_string(limit / sizeof(gpu::TriSetup)) + " triangles fit");
    // A free texture's floats live in the parameter buffer, and again with its mip chain in the texture set, at
    // the resolution its parameter gives (which may not be the file's).
    if (scene.optimize)
        for (const Parameter& p : scene.optimize->parameters)
            if (p.texture_width > 0 && uint64_t(p.size) * 4 * 4 / 3 > limit)
                throw SceneError(scene.display_name, "optimize.parameters[\"" + p.path + "\"]",
                                 "a " + std::to_string(p.texture_width) + "x" + std::to_string(p.texture_height) +
                                     " texture needs " + mib(uint64_t(p.size) * 4 * 4 / 3) + " with its mip chain, "
                                     "over this device's limit of " + mib(limit) + " per buffer (" + device.name() +
                                     "); use a smaller resolution");
    uint64_t texture_floats = 0;
    for (const auto& t : scene.textures) texture_floats += uint64_t(t.width) * t.height * 3;
    // The mip chain adds a third again; both chains live in one buffer each.
    if (texture_floats * 4 * 4 / 3 > limit)
        throw SceneError(scene.display_name, "materials",
                         "the textures need " + mib(texture_floats * 4 * 4 / 3) + " with their mip chains, over this "
                         "device's limit of " + mib(limit) + " per buffer; use smaller textures");
}

} // namespace adjoint::app
