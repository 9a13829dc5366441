// Render pass and frames in flight on the engine's device; screenshots by reading back a frame.
#include "presenter.h"

#include <algorithm>
#include <cstring>

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace adjoint::studio {

namespace {

VkSurfaceFormatKHR choose_format(VkPhysicalDevice pd, VkSurfaceKHR surface) {
    uint32_t n = 0;
    ADJOINT_VK_CHECK(vkGetPhysicalDeviceSurfaceFormatsKHR(pd, surface, &n, nullptr));
    std::vector<VkSurfaceFormatKHR> formats(n);
    ADJOINT_VK_CHECK(vkGetPhysicalDeviceSurfaceFormatsKHR(pd, surface, &n, formats.data()));
    if (formats.empty()) fail("the window surface offers no formats");
    // UNORM: ImGui's colours and the panels' texels are already sRGB-encoded.
    for (VkFormat want : {VK_FORMAT_B8G8R8A8_UNORM, VK_FORMAT_R8G8B8A8_UNORM})
        for (const auto& f : formats)
            if (f.format == want && f.colorSpace == VK_COLOR_SPACE_SRGB_NONLINEAR_KHR) return f;
    return formats.front();
}

vko::RenderPass make_render_pass(VkDevice device, VkFormat format) {
    VkAttachmentDescription colour{};
    colour.format = format;
    colour.samples = VK_SAMPLE_COUNT_1_BIT;
    colour.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    colour.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    colour.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
    colour.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
    colour.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    colour.finalLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
    VkAttachmentReference ref{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    VkSubpassDescription subpass{};
    subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
    subpass.colorAttachmentCount = 1;
    subpass.pColorAttachments = &ref;
    // The acquire semaphore is waited for at the colour-output stage: the layout change must wait for it too.
    VkSubpassDependency dep{};
    dep.srcSubpass = VK_SUBPASS_EXTERNAL;
    dep.dstSubpass = 0;
    dep.srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    dep.dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    dep.dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    VkRenderPassCreateInfo rp{VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
    rp.attachmentCount = 1;
    rp.pAttachments = &colour;
    rp.subpassCount = 1;
    rp.pSubpasses = &subpass;
    rp.dependencyCount = 1;
    rp.pDependencies = &dep;
    vko::RenderPass render_pass;
    ADJOINT_VK_CHECK(vkCreateRenderPass(device, &rp, nullptr, render_pass.out(device)));
    return render_pass;
}

} // namespace

Presenter::Presenter(Device& device, VkSurfaceKHR surface, VkExtent2D framebuffer)
    : device_(device), h_(interop::handles(device)), format_(choose_format(h_.physical_device, surface)),
      render_pass_(make_render_pass(h_.device, format_.format)),
      swapchain_(device, surface, format_, render_pass_.get()), framebuffer_(framebuffer) {
    for (Frame& f : frames_) {
        VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pool.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
        pool.queueFamilyIndex = h_.queue_family;
        ADJOINT_VK_CHECK(vkCreateCommandPool(h_.device, &pool, nullptr, f.pool.out(h_.device)));
        VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        alloc.commandPool = f.pool.get();
        alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        alloc.commandBufferCount = 1;
        ADJOINT_VK_CHECK(vkAllocateCommandBuffers(h_.device, &alloc, &f.cmd));
        VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        fence.flags = VK_FENCE_CREATE_SIGNALED_BIT;
        ADJOINT_VK_CHECK(vkCreateFence(h_.device, &fence, nullptr, f.done.out(h_.device)));
        VkSemaphoreCreateInfo sem{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
        ADJOINT_VK_CHECK(vkCreateSemaphore(h_.device, &sem, nullptr, f.acquired.out(h_.device)));
    }
    remake_swapchain();
}

Presenter::~Presenter() { wait_idle(); }

void Presenter::wait_idle() {
    interop::with_queue(device_, [](VkQueue q) { vkQueueWaitIdle(q); });
}

bool Presenter::remake_swapchain() {
    if (!swapchain_.recreate(framebuffer_)) return false;
    stale_ = false;
    return true;
}

bool Presenter::acquire(VkSemaphore acquired) {
    for (int attempt = 0;; ++attempt) {
        VkResult r = vkAcquireNextImageKHR(h_.device, swapchain_.get(), UINT64_MAX, acquired, VK_NULL_HANDLE, &image_);
        if (r == VK_SUCCESS) return true;
        if (r == VK_SUBOPTIMAL_KHR) {   // usable; made again after this frame
            stale_ = true;
            return true;
        }
        if (r == VK_ERROR_OUT_OF_DATE_KHR && attempt == 0) {
            if (!remake_swapchain()) return false;
            continue;
        }
        interop::check(r, "vkAcquireNextImageKHR", __FILE__, __LINE__);
    }
}

VkCommandBuffer Presenter::begin_frame(VkExtent2D size) {
    framebuffer_ = size;
    if (size.width == 0 || size.height == 0) return VK_NULL_HANDLE;
    const VkExtent2D e = swapchain_.extent();
    if (stale_ || !swapchain_ || size.width != e.width || size.height != e.height || !swapchain_.image_count())
        if (!remake_swapchain()) return VK_NULL_HANDLE;
    Frame& f = frames_[frame_];
    ADJOINT_VK_CHECK(vkWaitForFences(h_.device, 1, f.done.address(), VK_TRUE, UINT64_MAX));
    if (!acquire(f.acquired.get())) return VK_NULL_HANDLE;
    ADJOINT_VK_CHECK(vkResetFences(h_.device, 1, f.done.address()));
    ADJOINT_VK_CHECK(vkResetCommandPool(h_.device, f.pool.get(), 0));
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    ADJOINT_VK_CHECK(vkBeginCommandBuffer(f.cmd, &begin));
    return f.cmd;
}

void Presenter::begin_render_pass(VkCommandBuffer cmd, const float clear_rgba[4]) {
    VkClearValue clear{};
    std::memcpy(clear.color.float32, clear_rgba, sizeof(float) * 4);
    VkRenderPassBeginInfo info{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
    info.renderPass = render_pass_.get();
    info.framebuffer = swapchain_.framebuffer(image_);
    info.renderArea.extent = swapchain_.extent();
    info.clearValueCount = 1;
    info.pClearValues = &clear;
    vkCmdBeginRenderPass(cmd, &info, VK_SUBPASS_CONTENTS_INLINE);
}

void Presenter::create_capture_buffer() {
    const VkExtent2D e = swapchain_.extent();
    VkDeviceSize bytes = VkDeviceSize(e.width) * e.height * 4;
    if (capture_ && capture_size_ >= bytes) return;
    capture_.reset();   // the buffer before the memory it is bound to
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = bytes;
    info.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    ADJOINT_VK_CHECK(vkCreateBuffer(h_.device, &info, nullptr, capture_.out(h_.device)));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(h_.device, capture_.get(), &req);
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = req.size;
    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    alloc.memoryTypeIndex = find_memory_type(h_.physical_device, req.memoryTypeBits, host);
    ADJOINT_VK_CHECK(vkAllocateMemory(h_.device, &alloc, nullptr, capture_memory_.out(h_.device)));
    ADJOINT_VK_CHECK(vkBindBufferMemory(h_.device, capture_.get(), capture_memory_.get(), 0));
    ADJOINT_VK_CHECK(vkMapMemory(h_.device, capture_memory_.get(), 0, VK_WHOLE_SIZE, 0, &capture_mapped_));
    capture_size_ = bytes;
}

void Presenter::record_capture(VkCommandBuffer cmd) {
    if (!swapchain_.can_capture())
        fail("--screenshot: this window's swapchain images cannot be copied (no TRANSFER_SRC usage)");
    create_capture_buffer();
    const VkExtent2D e = swapchain_.extent();
    VkImageMemoryBarrier to_src{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    to_src.srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    to_src.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    to_src.oldLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
    to_src.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    to_src.srcQueueFamilyIndex = to_src.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    to_src.image = swapchain_.image(image_);
    to_src.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0,
                         nullptr, 0, nullptr, 1, &to_src);
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {e.width, e.height, 1};
    vkCmdCopyImageToBuffer(cmd, to_src.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, capture_.get(), 1, &region);
    VkImageMemoryBarrier to_present = to_src;
    to_present.srcAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    to_present.dstAccessMask = 0;
    to_present.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    to_present.newLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
    VkBufferMemoryBarrier to_host{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
    to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    to_host.srcQueueFamilyIndex = to_host.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    to_host.buffer = capture_.get();
    to_host.size = VK_WHOLE_SIZE;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 0, nullptr, 1,
                         &to_host, 1, &to_present);
    captured_extent_ = e;
    captured_ = true;
}

void Presenter::end_frame(bool capture) {
    Frame& f = frames_[frame_];
    vkCmdEndRenderPass(f.cmd);
    captured_ = false;
    if (capture) record_capture(f.cmd);
    ADJOINT_VK_CHECK(vkEndCommandBuffer(f.cmd));

    VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.waitSemaphoreCount = 1;
    submit.pWaitSemaphores = f.acquired.address();
    submit.pWaitDstStageMask = &wait_stage;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &f.cmd;
    submit.signalSemaphoreCount = 1;
    submit.pSignalSemaphores = swapchain_.rendered(image_);
    VkPresentInfoKHR present{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
    present.waitSemaphoreCount = 1;
    present.pWaitSemaphores = swapchain_.rendered(image_);
    present.swapchainCount = 1;
    present.pSwapchains = swapchain_.address();
    present.pImageIndices = &image_;
    VkResult presented = VK_SUCCESS;
    interop::with_queue(device_, [&](VkQueue q) {
        ADJOINT_VK_CHECK(vkQueueSubmit(q, 1, &submit, f.done.get()));
        presented = vkQueuePresentKHR(q, &present);
    });
    if (presented == VK_ERROR_OUT_OF_DATE_KHR || presented == VK_SUBOPTIMAL_KHR)
        stale_ = true;
    else
        interop::check(presented, "vkQueuePresentKHR", __FILE__, __LINE__);
    frame_ = (frame_ + 1) % kFrames;
}

Screenshot Presenter::take_screenshot() {
    if (!captured_) fail("take_screenshot: no frame was captured");
    const Frame& f = frames_[(frame_ + kFrames - 1) % kFrames];
    ADJOINT_VK_CHECK(vkWaitForFences(h_.device, 1, f.done.address(), VK_TRUE, UINT64_MAX));
    Screenshot s;
    s.width = captured_extent_.width;
    s.height = captured_extent_.height;
    s.rgb.resize(size_t(s.width) * s.height * 3);
    const bool bgr = format_.format == VK_FORMAT_B8G8R8A8_UNORM || format_.format == VK_FORMAT_B8G8R8A8_SRGB;
    const auto* src = static_cast<const uint8_t*>(capture_mapped_);
    for (size_t i = 0; i < size_t(s.width) * s.height; ++i) {
        s.rgb[3 * i + 0] = src[4 * i + (bgr ? 2 : 0)];
        s.rgb[3 * i + 1] = src[4 * i + 1];
        s.rgb[3 * i + 2] = src[4 * i + (bgr ? 0 : 2)];
    }
    captured_ = false;
    return s;
}

} // namespace adjoint::studio
