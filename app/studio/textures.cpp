// Panel textures: GPU copies from engine buffers, and the textured-quad pipeline drawn from ImGui callbacks.
#include "textures.h"

#include <backends/imgui_impl_vulkan.h>

#include <algorithm>

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace adjoint::studio {

namespace {

constexpr uint32_t kMaxTextures = 256;

} // namespace

Textures::Textures(Device& device, VkRenderPass render_pass)
    : h_(interop::handles(device)), pipeline_(h_.device, render_pass) {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, kMaxTextures};
    VkDescriptorPoolCreateInfo pool{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool.maxSets = kMaxTextures;
    pool.poolSizeCount = 1;
    pool.pPoolSizes = &size;
    ADJOINT_VK_CHECK(vkCreateDescriptorPool(h_.device, &pool, nullptr, pool_.out(h_.device)));
}

void Textures::clear() {
    textures_.clear();
    requests_.clear();
    ADJOINT_VK_CHECK(vkResetDescriptorPool(h_.device, pool_.get(), 0));
}

void Textures::allocate_image(Texture& t) {
    VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    info.imageType = VK_IMAGE_TYPE_2D;
    info.format = VK_FORMAT_R8G8B8A8_UNORM;
    info.extent = {t.width, t.height, 1};
    info.mipLevels = 1;
    info.arrayLayers = 1;
    info.samples = VK_SAMPLE_COUNT_1_BIT;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;
    info.usage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    ADJOINT_VK_CHECK(vkCreateImage(h_.device, &info, nullptr, t.image.out(h_.device)));
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(h_.device, t.image.get(), &req);
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex =
        find_memory_type(h_.physical_device, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, true);
    ADJOINT_VK_CHECK(vkAllocateMemory(h_.device, &alloc, nullptr, t.memory.out(h_.device)));
    ADJOINT_VK_CHECK(vkBindImageMemory(h_.device, t.image.get(), t.memory.get(), 0));
    VkImageViewCreateInfo v{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    v.image = t.image.get();
    v.viewType = VK_IMAGE_VIEW_TYPE_2D;
    v.format = info.format;
    v.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    ADJOINT_VK_CHECK(vkCreateImageView(h_.device, &v, nullptr, t.view.out(h_.device)));
}

Textures::Id Textures::create(uint32_t width, uint32_t height) {
    if (textures_.size() >= kMaxTextures) fail("the studio shows at most ", kMaxTextures, " images at once");
    Texture t;
    t.width = width;
    t.height = height;
    allocate_image(t);
    VkDescriptorSetAllocateInfo a{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    a.descriptorPool = pool_.get();
    a.descriptorSetCount = 1;
    const VkDescriptorSetLayout layout = pipeline_.set_layout();
    a.pSetLayouts = &layout;
    ADJOINT_VK_CHECK(vkAllocateDescriptorSets(h_.device, &a, &t.set));
    VkDescriptorImageInfo image_info{VK_NULL_HANDLE, t.view.get(), VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
    VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstSet = t.set;
    w.dstBinding = 0;
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    w.pImageInfo = &image_info;
    vkUpdateDescriptorSets(h_.device, 1, &w, 0, nullptr);
    textures_.push_back(std::move(t));
    return textures_.size() - 1;
}

uint32_t Textures::width(Id id) const { return textures_.at(id).width; }
uint32_t Textures::height(Id id) const { return textures_.at(id).height; }

void Textures::update(Id id, const Buffer<uint32_t>& source) {
    Texture& t = textures_.at(id);
    if (source.size() != size_t(t.width) * t.height)
        fail("a panel texture of ", t.width, "x", t.height, " was given ", source.size(), " texels");
    t.pending = source;
    t.has_pending = true;
}

void Textures::record_updates(VkCommandBuffer cmd) {
    std::vector<VkImageMemoryBarrier> to_dst, to_read;
    for (Texture& t : textures_) {
        if (t.initialized && !t.has_pending) continue;
        VkImageMemoryBarrier b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
        b.srcAccessMask = 0;   // earlier frames only read it: an execution dependency is enough
        b.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        b.oldLayout = t.initialized ? VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL : VK_IMAGE_LAYOUT_UNDEFINED;
        b.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
        b.srcQueueFamilyIndex = b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        b.image = t.image.get();
        b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        to_dst.push_back(b);
        b.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
        b.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
        b.newLayout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
        to_read.push_back(b);
    }
    if (to_dst.empty()) return;
    // The engine's kernels wrote the sources (interop.h: synchronize(), then this barrier).
    VkMemoryBarrier engine{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    engine.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    engine.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    vkCmdPipelineBarrier(cmd,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                             VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &engine, 0, nullptr, uint32_t(to_dst.size()),
                         to_dst.data());
    record_copies(cmd);
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, 0, 0, nullptr, 0,
                         nullptr, uint32_t(to_read.size()), to_read.data());
}

// Between record_updates' barriers: every texture that has a source, or none yet (black).
void Textures::record_copies(VkCommandBuffer cmd) {
    for (Texture& t : textures_) {
        if (t.initialized && !t.has_pending) continue;
        if (t.has_pending) {
            VkBufferImageCopy region{};
            region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
            region.imageExtent = {t.width, t.height, 1};
            vkCmdCopyBufferToImage(cmd, interop::handle(t.pending).buffer, t.image.get(),
                                   VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
        } else {
            VkClearColorValue black{};
            black.float32[3] = 1.0f;
            VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
            vkCmdClearColorImage(cmd, t.image.get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &black, 1, &range);
        }
        t.initialized = true;
        t.has_pending = false;
    }
}

void Textures::draw(Id id, ImVec2 p0, ImVec2 p1, ImVec2 uv0, ImVec2 uv1) {
    (void)textures_.at(id);
    ImDrawList* list = ImGui::GetWindowDrawList();
    requests_.push_back({this, id, p0, p1, uv0, uv1});
    list->AddCallback(draw_callback, &requests_.back());
    list->AddCallback(ImDrawCallback_ResetRenderState, nullptr);   // ImGui's pipeline and buffers again
}

void Textures::render(ImDrawData* draw_data, VkCommandBuffer cmd) {
    cmd_ = cmd;
    display_pos_ = draw_data->DisplayPos;
    framebuffer_scale_ = draw_data->FramebufferScale;
    framebuffer_ = {uint32_t(std::max(0.0f, draw_data->DisplaySize.x * framebuffer_scale_.x)),
                    uint32_t(std::max(0.0f, draw_data->DisplaySize.y * framebuffer_scale_.y))};
    ImGui_ImplVulkan_RenderDrawData(draw_data, cmd);
    cmd_ = VK_NULL_HANDLE;
    requests_.clear();
}

void Textures::draw_callback(const ImDrawList*, const ImDrawCmd* pcmd) {
    const auto& r = *static_cast<const DrawRequest*>(pcmd->UserCallbackData);
    Textures& t = *r.self;
    if (!t.cmd_ || t.framebuffer_.width == 0 || t.framebuffer_.height == 0) return;
    const ImVec2 dp = t.display_pos_, sc = t.framebuffer_scale_;
    const float fw = float(t.framebuffer_.width), fh = float(t.framebuffer_.height);
    float x0 = std::clamp((pcmd->ClipRect.x - dp.x) * sc.x, 0.0f, fw);
    float y0 = std::clamp((pcmd->ClipRect.y - dp.y) * sc.y, 0.0f, fh);
    float x1 = std::clamp((pcmd->ClipRect.z - dp.x) * sc.x, 0.0f, fw);
    float y1 = std::clamp((pcmd->ClipRect.w - dp.y) * sc.y, 0.0f, fh);
    if (x1 <= x0 || y1 <= y0) return;
    VkRect2D scissor{{int32_t(x0), int32_t(y0)}, {uint32_t(x1 - x0), uint32_t(y1 - y0)}};
    VkViewport viewport{0, 0, fw, fh, 0, 1};
    const Texture& tex = t.textures_.at(r.id);
    vkCmdBindPipeline(t.cmd_, VK_PIPELINE_BIND_POINT_GRAPHICS, t.pipeline_.get());
    vkCmdBindDescriptorSets(t.cmd_, VK_PIPELINE_BIND_POINT_GRAPHICS, t.pipeline_.layout(), 0, 1, &tex.set, 0, nullptr);
    vkCmdSetViewport(t.cmd_, 0, 1, &viewport);
    vkCmdSetScissor(t.cmd_, 0, 1, &scissor);
    auto ndc_x = [&](float x) { return (x - dp.x) * sc.x / fw * 2.0f - 1.0f; };
    auto ndc_y = [&](float y) { return (y - dp.y) * sc.y / fh * 2.0f - 1.0f; };
    const float push[8] = {ndc_x(r.p0.x), ndc_y(r.p0.y), ndc_x(r.p1.x), ndc_y(r.p1.y), r.uv0.x, r.uv0.y, r.uv1.x, r.uv1.y};
    vkCmdPushConstants(t.cmd_, t.pipeline_.layout(), VK_SHADER_STAGE_VERTEX_BIT, 0, sizeof(push), push);
    vkCmdDraw(t.cmd_, 4, 1, 0, 0);
}

} // namespace adjoint::studio
