// The antialiasing stage (nvdiffrast's antialias op): where a pixel pair straddles a silhouette edge, the
// nearer triangle's exit point along the pair blends their colours, so the image moves continuously with the
// vertices. Backward takes d loss / d the antialiased image and scatters into the shaded colours' gradient, the
// world positions' and (camera_free) the camera's.
#pragma once
#include "render/stage_buffers.h"

#include <vector>

namespace adjoint::app {

class AntialiasStage {
public:
    // pixels: the largest view's; the pairs' edges found by forward() are kept for backward() of the same view
    // and G-buffer (backward() of another refuses: its pairs would have no edges, a silent zero gradient).
    AntialiasStage(Device& device, bool camera_free, uint32_t pixels);
    // Blends `image` (the shaded colours) in place: no copy of the image (that copy was half of the pairs
    // kernel's time), and the few blending pairs' colours are kept for backward().
    void forward(Stream& stream, const StageBuffers& b, uint32_t view, const GBuffer& gbuffer,
                 const Buffer<float>& params, const Buffer<float4>& image) const;
    // dfinal: d loss / d the antialiased image, 4 floats a pixel. color_grad (4 floats a pixel) receives the
    // blends' share of d loss / d the shaded colours only (the identity part of image = colours + blends is dfinal
    // itself: the shading reads both).
    void backward(Stream& stream, const StageBuffers& b, uint32_t view, const GBuffer& gbuffer,
                  const DiffBuffer<float>& params, const Buffer<float>& color_grad,
                  const Buffer<float>& dfinal) const;

    // For tests: the pair ids (2 * pixel + 0 its right pair, + 1 its lower one) the last forward() walked, in
    // ascending order (synchronizes the stream).
    std::vector<uint32_t> walked_pairs(Stream& stream) const;

private:
    Shader<2> pairs_kernel_;
    Shader<1> walk_kernel_, forward_, backward_;
    // Per pair (2 * pixel + 0 its right pair, + 1 its lower one) that blends: its edge (antialias_dsl.h), and its
    // two pixels' shaded colours (2 * pair: the occluder's pixel's, + 1 the other's) before any blend.
    Buffer<uint2> edges_;
    Buffer<float4> originals_;
    // The pairs that see two triangles (walks_) and those of them that blend (blends_), their counts in count_.
    Buffer<uint32_t> walks_, blends_, count_;
    // Whose edges edges_ holds: the view and G-buffer of the last forward() (recorded, not yet run, is enough:
    // one stream runs them in order).
    mutable uint32_t edges_view_ = ~0u;
    mutable const GBuffer* edges_gbuffer_ = nullptr;
};

} // namespace adjoint::app
