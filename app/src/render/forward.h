// The forward renderer's kernels for one scene: mip chains from the parameter buffer, and shading of a
// view's surfaces into linear RGBA. The lights' types are baked into the recorded code (their values
// come from the parameter buffer), so the kernels are recorded per scene.
#pragma once
#include "raster.h"
#include "scene_data.h"

#include <memory>

namespace adjoint::app {

class ForwardRenderer {
public:
    ForwardRenderer(Device& device, const SceneData& scene);
    ~ForwardRenderer();
    // Copies every texture's level 0 from `params` into the scene's texture set and rebuilds the mip chains,
    // then an environment map's prefiltered maps. A texture no free parameter holds (scene.texture_varies) is
    // built by the first call only: its texels are the same in every parameter buffer of the scene.
    void build_mips(Stream& stream, const SceneData& scene, const Buffer<float>& params);
    // The reverse: the prefiltered maps' gradients into their environment map's, then every free texture's
    // gradient down its mip chain to level 0 and into `grad` at its slot.
    void backward_mips(Stream& stream, const SceneData& scene, const Buffer<float>& grad);
    // Shades one view's surfaces into `image` (width * height float4, alpha 1).
    void shade(Stream& stream, const SceneData& scene, uint32_t view, const SurfaceBuffers& surfaces,
               const Buffer<float>& params, const Buffer<float4>& image);

private:
    struct Kernels;
    std::unique_ptr<Kernels> k_;
    bool built_ = false;   // every texture's mip chain has been built once
};

} // namespace adjoint::app
