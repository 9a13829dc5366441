// The panels' textured-quad pipeline (shaders/quad.*): one combined image sampler per texture, the quad's
// corners and texture rectangle as push constants, viewport and scissor dynamic.
#pragma once
#include "vk_owner.h"

namespace adjoint::studio {

class QuadPipeline {
public:
    QuadPipeline(VkDevice device, VkRenderPass render_pass);

    VkDescriptorSetLayout set_layout() const { return set_layout_.get(); }
    VkPipelineLayout layout() const { return layout_.get(); }
    VkPipeline get() const { return pipeline_.get(); }
    static constexpr uint32_t kPushBytes = 8 * sizeof(float);   // NDC corners, then uv0, uv1

private:
    vko::Sampler sampler_;                  // immutable in the set layout
    vko::DescriptorSetLayout set_layout_;
    vko::PipelineLayout layout_;
    vko::Pipeline pipeline_;
};

} // namespace adjoint::studio
