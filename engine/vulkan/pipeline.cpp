// Compute pipelines: shader module, the one descriptor-set layout, push-constant range and pipeline object.
#include "vulkan/vk_internal.h"

namespace adjoint::vk {

Pipeline::Impl::~Impl() {
    if (!ctx)
        return;
    VkDevice device = ctx->impl().device;
    if (pipeline)
        vkDestroyPipeline(device, pipeline, nullptr);
    if (layout)
        vkDestroyPipelineLayout(device, layout, nullptr);
    if (set_layout)
        vkDestroyDescriptorSetLayout(device, set_layout, nullptr);
    if (module)
        vkDestroyShaderModule(device, module, nullptr);
}

namespace {

void check_limits(const PipelineLayoutDesc& desc, const VkPhysicalDeviceLimits& limits,
                  const std::string& name) {
    if (desc.push_constant_bytes > limits.maxPushConstantsSize)
        fail("pipeline '", name, "': ", desc.push_constant_bytes,
             " bytes of push constants exceed the device limit of ", limits.maxPushConstantsSize, " bytes");
    if (desc.push_constant_bytes % 4 != 0)
        fail("pipeline '", name, "': push-constant size ", desc.push_constant_bytes,
             " is not a multiple of 4");
    uint32_t texel = 0;
    for (uint32_t i = 0; i < desc.buffer_count; ++i) texel += desc.texel_words_of(i) != 0;
    if (desc.buffer_count - texel > limits.maxPerStageDescriptorStorageBuffers)
        fail("pipeline '", name, "': ", desc.buffer_count - texel, " storage buffers exceed the device limit of ",
             limits.maxPerStageDescriptorStorageBuffers);
    // Uniform texel buffers count against the sampled images.
    if (texel > limits.maxPerStageDescriptorSampledImages)
        fail("pipeline '", name, "': ", texel, " uniform texel buffers exceed the device limit of ",
             limits.maxPerStageDescriptorSampledImages, " (maxPerStageDescriptorSampledImages)");
    if (desc.image_count > limits.maxPerStageDescriptorStorageImages)
        fail("pipeline '", name, "': ", desc.image_count, " storage images exceed the device limit of ",
             limits.maxPerStageDescriptorStorageImages);
}

void build(Pipeline::Impl& p, std::span<const uint32_t> spirv) {
    VkDevice device = p.ctx->impl().device;
    if (spirv.empty())
        fail("empty SPIR-V");
    VkShaderModuleCreateInfo module{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module.codeSize = spirv.size_bytes();
    module.pCode = spirv.data();
    VK_CHECK(vkCreateShaderModule(device, &module, nullptr, &p.module));

    std::vector<VkDescriptorSetLayoutBinding> bindings;
    for (uint32_t i = 0; i < p.desc.buffer_count + p.desc.image_count; ++i) {
        VkDescriptorType type = i >= p.desc.buffer_count  ? VK_DESCRIPTOR_TYPE_STORAGE_IMAGE
                                : p.desc.texel_words_of(i) ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
                                                           : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        bindings.push_back({i, type, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
    }
    VkDescriptorSetLayoutCreateInfo set{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set.bindingCount = static_cast<uint32_t>(bindings.size());
    set.pBindings = bindings.data();
    VK_CHECK(vkCreateDescriptorSetLayout(device, &set, nullptr, &p.set_layout));

    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, p.desc.push_constant_bytes};
    VkPipelineLayoutCreateInfo layout{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout.setLayoutCount = 1;
    layout.pSetLayouts = &p.set_layout;
    layout.pushConstantRangeCount = p.desc.push_constant_bytes > 0 ? 1 : 0;
    layout.pPushConstantRanges = &range;
    VK_CHECK(vkCreatePipelineLayout(device, &layout, nullptr, &p.layout));

    VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = p.module;
    info.stage.pName = "main";
    info.layout = p.layout;
    VK_CHECK(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, &p.pipeline));
}

} // namespace

VkFormat texel_format(uint32_t words) {
    switch (words) {
    case 1: return VK_FORMAT_R32_UINT;
    case 2: return VK_FORMAT_R32G32_UINT;
    case 4: return VK_FORMAT_R32G32B32A32_UINT;
    default: fail("internal: texel buffers of ", words, " words a texel");
    }
}

Pipeline::Pipeline(std::shared_ptr<Context> ctx, std::span<const uint32_t> spirv,
                   const PipelineLayoutDesc& layout, std::string name)
    : impl_(std::make_unique<Impl>()) {
    impl_->ctx = std::move(ctx);
    impl_->desc = layout;
    impl_->name = std::move(name);
    check_limits(layout, impl_->ctx->impl().limits, impl_->name);
    try {
        build(*impl_, spirv);
    } catch (const Error& e) {
        fail("pipeline '", impl_->name, "': ", e.what());
    }
}

Pipeline::~Pipeline() = default;
const PipelineLayoutDesc& Pipeline::layout() const { return impl_->desc; }
const std::string& Pipeline::name() const { return impl_->name; }

} // namespace adjoint::vk
