// The forward renderer's kernels for one scene: mip chains from the parameter buffer, and shading of a
// view's surfaces into linear RGBA. The lights' types are baked into the recorded code (their values
// come from the parameter buffer), so the kernels are recorded per scene.
#pragma once
#include "scene_data.h"

#include <memory>

namespace adjoint::app {

class ForwardRenderer {
public:
    ForwardRenderer(Device& device, const SceneData& scene);
    ~ForwardRenderer();
    // Rebuilds every texture's mip chain in `mips` from level 0 in `params`.
    void build_mips(Stream& stream, const SceneData& scene, const Buffer<float>& params, const Buffer<float>& mips);
    // Shades one view's surfaces into `image` (width * height float4, alpha 1).
    void shade(Stream& stream, const SceneData& scene, uint32_t view, const Buffer<gpu::Surface>& surfaces,
               const Buffer<float>& params, const Buffer<float>& mips, const Buffer<float4>& image);

private:
    struct Kernels;
    std::unique_ptr<Kernels> k_;
};

// Records the mip-chain passes: level 0 copied from the parameters, each next level a 2x2 box filter
// (odd sizes clamp). Shared by the forward renderer and the optimizer.
struct MipKernels {
    Shader<1> copy_base, downsample;
    explicit MipKernels(Device& device);
    void build(Stream& stream, const MipTable& table, const Buffer<float>& params, const Buffer<float>& mips);
};

} // namespace adjoint::app
