// Rendering a scene's views on a device (forward only): what adjoint-render and the optimizer's target,
// start and final pictures use.
#pragma once
#include <adjoint/adjoint.h>
#include <adjoint/app/scene.h>

#include <memory>
#include <vector>

namespace adjoint::app {

// Throws SceneError (naming camera.resolution or materials) when a view or the textures would not fit in
// the device's buffers; called before any device work.
void check_scene_fits(const Device& device, const Scene& scene);
// Throws SceneError (naming views) when an optimization's per-pixel loss terms of every view would not fit in
// one of the device's buffers; the Optimizer calls it before any device work.
void check_views_fit(const Device& device, const Scene& scene);

// What a pixel of a view sees when the scene is rasterized (hard visibility, the geometry as loaded): for
// tools and peers that start from the G-buffer (the bench's PyTorch loop).
struct SurfaceSample {
    bool covered = false;     // false: the background
    float3 position, normal;  // world space; the normal faces the camera
    float2 uv;                // texture coordinates (u, 1 - v), as the textures are stored
};
// One view's samples, row-major, top row first.
std::vector<SurfaceSample> rasterize_view(Device& device, const Scene& scene, uint32_t view);

struct RenderStages;   // the renderer's kernels and device data (app/src/render)

class SceneRenderer {
public:
    SceneRenderer(Device& device, const Scene& scene);
    ~SceneRenderer();
    SceneRenderer(SceneRenderer&&) noexcept;
    // One view as a linear RGBA image (alpha 1), rows top first.
    LinearImage render(uint32_t view);
    // The same into `out` (width * height texels), on the device: nothing is read back (the studio's panels).
    void render(uint32_t view, const Buffer<float4>& out);
    uint32_t view_count() const;

private:
    std::unique_ptr<RenderStages> s_;
};

} // namespace adjoint::app
