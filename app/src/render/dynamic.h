// The renderer for scenes whose geometry moves or whose visibility is antialias or soft: each render runs
// the vertex stage's output through the rasterizer, and every pixel's colour is recomputed from the
// vertices (so that $autodiff sees it move). The backward pass chains kernels the way nvdiffrast chains
// its ops, each one's gradient from $autodiff:
//   antialias: d loss / d final image (image_gradient(), which the objective writes) -> antialias (-> colours,
//              vertices) -> shade (-> parameters, textures, vertices) -> vertex stage (-> parameters). The
//              surface a pixel sees is shaded and silhouette edges are antialiased.
//   soft:      loss -> soft (-> parameters, textures, vertices) -> vertex stage. SoftRas: every pixel
//              lists the triangles within reach (from tile bins grown by the reach), then blends them by
//              sigmoid coverage (`sigma`) and a softmax over depth (`gamma`) with the background; alpha is
//              the soft silhouette (soft_dsl.h).
//   hard:      the shading alone is differentiated (no visibility gradients).
#pragma once
#include "geometry.h"
#include "raster.h"

#include <memory>

namespace adjoint::app {

struct DiagnoseBuffers;   // render/diagnose_stage.h

struct DynamicOptions {
    Visibility visibility = Visibility::antialias;
    bool camera_free = false;   // camera values are parameters: the shading reads them differentiably
    // soft: room for each pixel's own list of candidates; 0 chooses it (SoftStage: up to 256, as many as the
    // device's largest storage buffer holds). A pixel with more loops over its whole tile instead, with the same
    // result.
    uint32_t soft_candidates = 0;
    // soft: the list entries a pixel visits in one dispatch; 0 chooses (SoftStage). A test lowers it to force
    // a long list's several dispatches on a small scene.
    uint32_t soft_part = 0;
    // soft with faces_per_pixel: keep the heaviest in memory even where registers would hold them
    // (soft_select_dsl.h, soft_select_held): a test compares the two selections.
    bool soft_faces_in_memory = false;
};

class DynamicRenderer {
public:
    DynamicRenderer(Device& device, Stream& stream, const Scene& scene, const SceneData& data,
                    const DynamicOptions& options);
    ~DynamicRenderer();

    // params -> world-space vertices; call after the parameters change, before render().
    void update_geometry(Stream& stream, const Buffer<float>& params);
    // One view into `out` (width * height, alpha = coverage). Every stage, the rasterizer too, reads the
    // camera's eye, target and fov_y from params; `camera` gives the resolution. Synchronizes once (tile lists).
    void render(Stream& stream, uint32_t view, const Camera& camera, const Buffer<float>& params,
                const Buffer<float4>& out);
    // Where the caller writes d loss / d the image of the last render() (width * height float4), before
    // backward().
    const Buffer<float>& image_gradient() const;   // 4 floats a pixel
    // After render() of `view` and image_gradient() written: the gradient into params.grad, the textures'
    // gradients and the world vertices' gradients.
    void backward(Stream& stream, uint32_t view, const DiffBuffer<float>& params);
    void zero_grad(Stream& stream);
    // --diagnose, in place of backward(): antialiasing's backward as usual, then each pixel's own
    // contributions to the traced parameters into d.out (render/diagnose_stage.h; soft: render/soft_diagnose.h).
    void diagnose(Device& device, Stream& stream, uint32_t view, const DiffBuffer<float>& params,
                  const DiagnoseBuffers& d);
    // After every view's backward(): the world vertices' gradients into params.grad.
    void geometry_backward(Stream& stream, const DiffBuffer<float>& params);
    const GeometryStage& geometry() const;
    // soft: the dispatches each pass over the pixels' lists took in the last render() (its longest tile list
    // over the entries a dispatch visits); 1 in the other modes.
    uint32_t soft_parts() const;
    // soft: each pixel's candidates and, of those, the entries that enter its weights (kSoftAllWeighed where
    // they did not fit its own list), of the last render(); nullptr in the other modes.
    const Buffer<uint32_t>* soft_candidates() const;
    const Buffer<uint32_t>* soft_weighed() const;

private:
    struct State;
    std::unique_ptr<State> s_;
};

} // namespace adjoint::app
