// The textured-quad pipeline the panels' images are drawn with.
#include "quad_pipeline.h"

#include "quad.frag.h"
#include "quad.vert.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace adjoint::studio {

namespace {

vko::ShaderModule make_module(VkDevice device, const uint32_t* words, size_t bytes) {
    VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    info.codeSize = bytes;
    info.pCode = words;
    vko::ShaderModule m;
    ADJOINT_VK_CHECK(vkCreateShaderModule(device, &info, nullptr, m.out(device)));
    return m;
}

// The fixed-function state of a quad drawn inside ImGui's render pass: no blending, no culling.
struct FixedState {
    VkPipelineVertexInputStateCreateInfo vertex_input{VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
    VkPipelineInputAssemblyStateCreateInfo assembly{VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
    VkPipelineViewportStateCreateInfo viewport{VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
    VkPipelineRasterizationStateCreateInfo raster{VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
    VkPipelineMultisampleStateCreateInfo multisample{VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
    VkPipelineColorBlendAttachmentState blend_attachment{};
    VkPipelineColorBlendStateCreateInfo blend{VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
    VkDynamicState dynamic_states[2] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
    VkPipelineDynamicStateCreateInfo dynamic{VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};

    FixedState() {
        assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP;
        viewport.viewportCount = 1;
        viewport.scissorCount = 1;
        raster.polygonMode = VK_POLYGON_MODE_FILL;
        raster.cullMode = VK_CULL_MODE_NONE;
        raster.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
        raster.lineWidth = 1.0f;
        multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
        blend_attachment.colorWriteMask =
            VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT | VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
        blend.attachmentCount = 1;
        blend.pAttachments = &blend_attachment;
        dynamic.dynamicStateCount = 2;
        dynamic.pDynamicStates = dynamic_states;
    }
    FixedState(const FixedState&) = delete;   // points into itself
    FixedState& operator=(const FixedState&) = delete;
};

} // namespace

QuadPipeline::QuadPipeline(VkDevice device, VkRenderPass render_pass) {
    VkSamplerCreateInfo s{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
    s.magFilter = VK_FILTER_NEAREST;   // zoomed in: whole pixels; at 1:1 exactly the texels
    s.minFilter = VK_FILTER_LINEAR;    // thumbnails
    s.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST;
    s.addressModeU = s.addressModeV = s.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
    s.maxLod = 0.0f;
    ADJOINT_VK_CHECK(vkCreateSampler(device, &s, nullptr, sampler_.out(device)));

    VkDescriptorSetLayoutBinding binding{};
    binding.binding = 0;
    binding.descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    binding.descriptorCount = 1;
    binding.stageFlags = VK_SHADER_STAGE_FRAGMENT_BIT;
    binding.pImmutableSamplers = sampler_.address();
    VkDescriptorSetLayoutCreateInfo sl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    sl.bindingCount = 1;
    sl.pBindings = &binding;
    ADJOINT_VK_CHECK(vkCreateDescriptorSetLayout(device, &sl, nullptr, set_layout_.out(device)));

    VkPushConstantRange push{VK_SHADER_STAGE_VERTEX_BIT, 0, kPushBytes};
    VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pl.setLayoutCount = 1;
    pl.pSetLayouts = set_layout_.address();
    pl.pushConstantRangeCount = 1;
    pl.pPushConstantRanges = &push;
    ADJOINT_VK_CHECK(vkCreatePipelineLayout(device, &pl, nullptr, layout_.out(device)));

    // The modules are needed only while the pipeline is made.
    const vko::ShaderModule vert = make_module(device, quad_vert, sizeof(quad_vert));
    const vko::ShaderModule frag = make_module(device, quad_frag, sizeof(quad_frag));
    VkPipelineShaderStageCreateInfo stages[2] = {{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO},
                                                 {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO}};
    stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
    stages[0].module = vert.get();
    stages[0].pName = "main";
    stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
    stages[1].module = frag.get();
    stages[1].pName = "main";
    const FixedState fixed;
    VkGraphicsPipelineCreateInfo info{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
    info.stageCount = 2;
    info.pStages = stages;
    info.pVertexInputState = &fixed.vertex_input;
    info.pInputAssemblyState = &fixed.assembly;
    info.pViewportState = &fixed.viewport;
    info.pRasterizationState = &fixed.raster;
    info.pMultisampleState = &fixed.multisample;
    info.pColorBlendState = &fixed.blend;
    info.pDynamicState = &fixed.dynamic;
    info.layout = layout_.get();
    info.renderPass = render_pass;
    info.subpass = 0;
    ADJOINT_VK_CHECK(vkCreateGraphicsPipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, pipeline_.out(device)));
}

} // namespace adjoint::studio
