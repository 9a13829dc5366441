// The shading stage of the dynamic renderer: the surface each pixel sees, recomputed from the world vertices
// through the camera, shaded by the scene's materials and lights (a shadowing light's visibility tested against
// every world triangle: shadow_dsl.h). Forward writes linear RGBA (alpha 1 where a triangle covers the pixel);
// backward takes d loss / d that colour and scatters into the parameter buffer's gradient, the textures' and
// the world vertices' (the occluders' too).
#pragma once
#include "render/raster.h"
#include "render/stage_buffers.h"

#include <optional>

namespace adjoint::app {

class ShadeStage {
public:
    // camera_free: the camera's values are parameters, so the backward pass differentiates them too.
    // blend_share: the colour's gradient comes in two buffers (backward's `share`: the antialias stage's).
    ShadeStage(Device& device, const ShadingPlan& groups, bool camera_free, bool blend_share = false);
    // gb: the view's G-buffer (its visible triangles and its list of covered pixels).
    void forward(Stream& stream, const StageBuffers& b, uint32_t view, const GBuffer& gb, const Buffer<float>& params,
                 const Buffer<float4>& out) const;
    // color_grad: d loss / d the colour, 4 floats a pixel; with blend_share, plus `share`'s (required then).
    void backward(Stream& stream, const StageBuffers& b, uint32_t view, const GBuffer& gb,
                  const DiffBuffer<float>& params, const Buffer<float>& color_grad,
                  const Buffer<float>* share = nullptr) const;

private:
    // Where no environment is drawn the background is one colour, the same every iteration: forward() copies an
    // image of it (made at the first call, again where the size or colour changes) under the shaded pixels, which
    // costs lavapipe a memcpy where the per-pixel pass (background_, an environment's) took 0.5 ms at 256x256.
    bool plain_background_;
    std::optional<Shader<2>> background_;   // an environment's
    Shader<1> forward_, backward_;
    bool blend_share_;
    uint32_t stride_;   // covered pixels per thread (render/work_list.h)
    Device& device_;
    mutable Buffer<float4> plain_;   // the plain background's image
    mutable float3 plain_color_{};
};

} // namespace adjoint::app
