// Swapchain, render pass and frames in flight on the engine's device; screenshots by reading back a frame.
#include "presenter.h"

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cstring>
#include <string>

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace adjoint::studio {

namespace {

const char* result_name(VkResult r) {
    switch (r) {
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_SURFACE_LOST_KHR: return "VK_ERROR_SURFACE_LOST_KHR";
    case VK_ERROR_OUT_OF_DATE_KHR: return "VK_ERROR_OUT_OF_DATE_KHR";
    case VK_ERROR_NATIVE_WINDOW_IN_USE_KHR: return "VK_ERROR_NATIVE_WINDOW_IN_USE_KHR";
    case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_NOT_READY: return "VK_NOT_READY";
    default: return "a VkResult";
    }
}

} // namespace

void check_vk(VkResult result, const char* call) {
    if (result != VK_SUCCESS) fail(call, " failed: ", result_name(result), " (", int(result), ")");
}

namespace {

VkSurfaceFormatKHR choose_format(VkPhysicalDevice pd, VkSurfaceKHR surface) {
    uint32_t n = 0;
    STUDIO_VK(vkGetPhysicalDeviceSurfaceFormatsKHR(pd, surface, &n, nullptr));
    std::vector<VkSurfaceFormatKHR> formats(n);
    STUDIO_VK(vkGetPhysicalDeviceSurfaceFormatsKHR(pd, surface, &n, formats.data()));
    if (formats.empty()) fail("the window surface offers no formats");
    // UNORM: ImGui's colours and the panels' texels are already sRGB-encoded.
    for (VkFormat want : {VK_FORMAT_B8G8R8A8_UNORM, VK_FORMAT_R8G8B8A8_UNORM})
        for (const auto& f : formats)
            if (f.format == want && f.colorSpace == VK_COLOR_SPACE_SRGB_NONLINEAR_KHR) return f;
    return formats.front();
}

uint32_t find_memory(VkPhysicalDevice pd, uint32_t bits, VkMemoryPropertyFlags want) {
    VkPhysicalDeviceMemoryProperties props;
    vkGetPhysicalDeviceMemoryProperties(pd, &props);
    for (uint32_t i = 0; i < props.memoryTypeCount; ++i)
        if ((bits & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want) return i;
    fail("no Vulkan memory type with properties 0x", std::hex, want);
}

} // namespace

Presenter::Presenter(GLFWwindow* window, Device& device, VkSurfaceKHR surface)
    : window_(window), device_(device), h_(interop::handles(device)), surface_(surface) {
    format_ = choose_format(h_.physical_device, surface_);

    VkAttachmentDescription colour{};
    colour.format = format_.format;
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
    STUDIO_VK(vkCreateRenderPass(h_.device, &rp, nullptr, &render_pass_));

    for (Frame& f : frames_) {
        VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pool.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
        pool.queueFamilyIndex = h_.queue_family;
        STUDIO_VK(vkCreateCommandPool(h_.device, &pool, nullptr, &f.pool));
        VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        alloc.commandPool = f.pool;
        alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        alloc.commandBufferCount = 1;
        STUDIO_VK(vkAllocateCommandBuffers(h_.device, &alloc, &f.cmd));
        VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        fence.flags = VK_FENCE_CREATE_SIGNALED_BIT;
        STUDIO_VK(vkCreateFence(h_.device, &fence, nullptr, &f.done));
        VkSemaphoreCreateInfo sem{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
        STUDIO_VK(vkCreateSemaphore(h_.device, &sem, nullptr, &f.acquired));
    }
    int w = 0, h = 0;   // the first swapchain: the window's size when it opened
    glfwGetFramebufferSize(window_, &w, &h);
    framebuffer_ = {uint32_t(std::max(w, 0)), uint32_t(std::max(h, 0))};
    create_swapchain();
}

Presenter::~Presenter() {
    wait_idle();
    destroy_swapchain_views();
    if (swapchain_) vkDestroySwapchainKHR(h_.device, swapchain_, nullptr);
    for (Frame& f : frames_) {
        vkDestroySemaphore(h_.device, f.acquired, nullptr);
        vkDestroyFence(h_.device, f.done, nullptr);
        vkDestroyCommandPool(h_.device, f.pool, nullptr);
    }
    if (capture_) vkDestroyBuffer(h_.device, capture_, nullptr);
    if (capture_memory_) vkFreeMemory(h_.device, capture_memory_, nullptr);
    vkDestroyRenderPass(h_.device, render_pass_, nullptr);
}

void Presenter::wait_idle() {
    interop::with_queue(device_, [](VkQueue q) { vkQueueWaitIdle(q); });
}

void Presenter::destroy_swapchain_views() {
    for (auto fb : framebuffers_) vkDestroyFramebuffer(h_.device, fb, nullptr);
    for (auto v : views_) vkDestroyImageView(h_.device, v, nullptr);
    for (auto s : rendered_) vkDestroySemaphore(h_.device, s, nullptr);
    framebuffers_.clear();
    views_.clear();
    rendered_.clear();
    images_.clear();
}

bool Presenter::create_swapchain() {
    VkSurfaceCapabilitiesKHR caps;
    STUDIO_VK(vkGetPhysicalDeviceSurfaceCapabilitiesKHR(h_.physical_device, surface_, &caps));
    VkExtent2D extent = caps.currentExtent;
    if (extent.width == UINT32_MAX) {   // the surface takes the swapchain's size: the framebuffer's
        extent.width = std::clamp(framebuffer_.width, caps.minImageExtent.width, caps.maxImageExtent.width);
        extent.height = std::clamp(framebuffer_.height, caps.minImageExtent.height, caps.maxImageExtent.height);
    }
    if (extent.width == 0 || extent.height == 0 || framebuffer_.width == 0 || framebuffer_.height == 0) return false;

    wait_idle();   // the old swapchain's images and framebuffers may still be in use
    destroy_swapchain_views();

    uint32_t count = std::max(caps.minImageCount + 1, 2u);
    if (caps.maxImageCount > 0) count = std::min(count, caps.maxImageCount);
    min_image_count_ = std::max(caps.minImageCount, 2u);
    can_capture_ = (caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_SRC_BIT) != 0;
    VkSwapchainCreateInfoKHR info{VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR};
    info.surface = surface_;
    info.minImageCount = count;
    info.imageFormat = format_.format;
    info.imageColorSpace = format_.colorSpace;
    info.imageExtent = extent;
    info.imageArrayLayers = 1;
    info.imageUsage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | (can_capture_ ? VK_IMAGE_USAGE_TRANSFER_SRC_BIT : 0);
    info.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;
    info.preTransform = (caps.supportedTransforms & VK_SURFACE_TRANSFORM_IDENTITY_BIT_KHR)
                            ? VK_SURFACE_TRANSFORM_IDENTITY_BIT_KHR
                            : caps.currentTransform;
    info.compositeAlpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR;
    for (auto a : {VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR, VK_COMPOSITE_ALPHA_INHERIT_BIT_KHR,
                   VK_COMPOSITE_ALPHA_PRE_MULTIPLIED_BIT_KHR, VK_COMPOSITE_ALPHA_POST_MULTIPLIED_BIT_KHR})
        if (caps.supportedCompositeAlpha & a) {
            info.compositeAlpha = a;
            break;
        }
    info.presentMode = VK_PRESENT_MODE_FIFO_KHR;   // always supported; the frame loop paces itself by it
    info.clipped = VK_TRUE;
    info.oldSwapchain = swapchain_;
    VkSwapchainKHR created = VK_NULL_HANDLE;
    STUDIO_VK(vkCreateSwapchainKHR(h_.device, &info, nullptr, &created));
    if (swapchain_) vkDestroySwapchainKHR(h_.device, swapchain_, nullptr);
    swapchain_ = created;
    extent_ = extent;
    ++swapchains_created_;

    uint32_t n = 0;
    STUDIO_VK(vkGetSwapchainImagesKHR(h_.device, swapchain_, &n, nullptr));
    images_.resize(n);
    STUDIO_VK(vkGetSwapchainImagesKHR(h_.device, swapchain_, &n, images_.data()));
    for (VkImage image : images_) {
        VkImageViewCreateInfo v{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
        v.image = image;
        v.viewType = VK_IMAGE_VIEW_TYPE_2D;
        v.format = format_.format;
        v.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        VkImageView view;
        STUDIO_VK(vkCreateImageView(h_.device, &v, nullptr, &view));
        views_.push_back(view);
        VkFramebufferCreateInfo fb{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
        fb.renderPass = render_pass_;
        fb.attachmentCount = 1;
        fb.pAttachments = &view;
        fb.width = extent.width;
        fb.height = extent.height;
        fb.layers = 1;
        VkFramebuffer framebuffer;
        STUDIO_VK(vkCreateFramebuffer(h_.device, &fb, nullptr, &framebuffer));
        framebuffers_.push_back(framebuffer);
        VkSemaphoreCreateInfo sem{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
        VkSemaphore s;
        STUDIO_VK(vkCreateSemaphore(h_.device, &sem, nullptr, &s));
        rendered_.push_back(s);
    }
    stale_ = false;
    return true;
}

VkCommandBuffer Presenter::begin_frame(VkExtent2D size) {
    framebuffer_ = size;
    if (size.width == 0 || size.height == 0) return VK_NULL_HANDLE;
    if (stale_ || !swapchain_ || size.width != extent_.width || size.height != extent_.height || images_.empty())
        if (!create_swapchain()) return VK_NULL_HANDLE;

    Frame& f = frames_[frame_];
    STUDIO_VK(vkWaitForFences(h_.device, 1, &f.done, VK_TRUE, UINT64_MAX));
    for (int attempt = 0;; ++attempt) {
        VkResult r = vkAcquireNextImageKHR(h_.device, swapchain_, UINT64_MAX, f.acquired, VK_NULL_HANDLE, &image_);
        if (r == VK_SUCCESS) break;
        if (r == VK_SUBOPTIMAL_KHR) {   // usable; recreated after this frame
            stale_ = true;
            break;
        }
        if (r == VK_ERROR_OUT_OF_DATE_KHR && attempt == 0) {
            if (!create_swapchain()) return VK_NULL_HANDLE;
            continue;
        }
        check_vk(r, "vkAcquireNextImageKHR");
    }
    STUDIO_VK(vkResetFences(h_.device, 1, &f.done));
    STUDIO_VK(vkResetCommandPool(h_.device, f.pool, 0));
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    STUDIO_VK(vkBeginCommandBuffer(f.cmd, &begin));
    recording_ = true;
    return f.cmd;
}

void Presenter::begin_render_pass(VkCommandBuffer cmd, const float clear_rgba[4]) {
    VkClearValue clear{};
    std::memcpy(clear.color.float32, clear_rgba, sizeof(float) * 4);
    VkRenderPassBeginInfo info{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
    info.renderPass = render_pass_;
    info.framebuffer = framebuffers_[image_];
    info.renderArea.extent = extent_;
    info.clearValueCount = 1;
    info.pClearValues = &clear;
    vkCmdBeginRenderPass(cmd, &info, VK_SUBPASS_CONTENTS_INLINE);
}

void Presenter::create_capture_buffer() {
    VkDeviceSize bytes = VkDeviceSize(extent_.width) * extent_.height * 4;
    if (capture_ && capture_size_ >= bytes) return;
    if (capture_) {
        vkDestroyBuffer(h_.device, capture_, nullptr);
        vkFreeMemory(h_.device, capture_memory_, nullptr);
    }
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = bytes;
    info.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    STUDIO_VK(vkCreateBuffer(h_.device, &info, nullptr, &capture_));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(h_.device, capture_, &req);
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = find_memory(h_.physical_device, req.memoryTypeBits,
                                        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    STUDIO_VK(vkAllocateMemory(h_.device, &alloc, nullptr, &capture_memory_));
    STUDIO_VK(vkBindBufferMemory(h_.device, capture_, capture_memory_, 0));
    STUDIO_VK(vkMapMemory(h_.device, capture_memory_, 0, VK_WHOLE_SIZE, 0, &capture_mapped_));
    capture_size_ = bytes;
}

void Presenter::end_frame(bool capture) {
    Frame& f = frames_[frame_];
    VkCommandBuffer cmd = f.cmd;
    vkCmdEndRenderPass(cmd);
    captured_ = false;
    if (capture) {
        if (!can_capture_) fail("--screenshot: this window's swapchain images cannot be copied (no TRANSFER_SRC usage)");
        create_capture_buffer();
        VkImageMemoryBarrier to_src{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
        to_src.srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
        to_src.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
        to_src.oldLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
        to_src.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
        to_src.srcQueueFamilyIndex = to_src.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        to_src.image = images_[image_];
        to_src.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0,
                             nullptr, 0, nullptr, 1, &to_src);
        VkBufferImageCopy region{};
        region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        region.imageExtent = {extent_.width, extent_.height, 1};
        vkCmdCopyImageToBuffer(cmd, images_[image_], VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, capture_, 1, &region);
        VkImageMemoryBarrier to_present = to_src;
        to_present.srcAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
        to_present.dstAccessMask = 0;
        to_present.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
        to_present.newLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
        VkBufferMemoryBarrier to_host{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
        to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
        to_host.srcQueueFamilyIndex = to_host.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        to_host.buffer = capture_;
        to_host.size = VK_WHOLE_SIZE;
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                             VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 0, nullptr, 1,
                             &to_host, 1, &to_present);
        captured_extent_ = extent_;
        captured_ = true;
    }
    STUDIO_VK(vkEndCommandBuffer(cmd));
    recording_ = false;

    VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.waitSemaphoreCount = 1;
    submit.pWaitSemaphores = &f.acquired;
    submit.pWaitDstStageMask = &wait_stage;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    submit.signalSemaphoreCount = 1;
    submit.pSignalSemaphores = &rendered_[image_];
    VkPresentInfoKHR present{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
    present.waitSemaphoreCount = 1;
    present.pWaitSemaphores = &rendered_[image_];
    present.swapchainCount = 1;
    present.pSwapchains = &swapchain_;
    present.pImageIndices = &image_;
    VkResult presented = VK_SUCCESS;
    interop::with_queue(device_, [&](VkQueue q) {
        STUDIO_VK(vkQueueSubmit(q, 1, &submit, f.done));
        presented = vkQueuePresentKHR(q, &present);
    });
    if (presented == VK_ERROR_OUT_OF_DATE_KHR || presented == VK_SUBOPTIMAL_KHR)
        stale_ = true;
    else
        check_vk(presented, "vkQueuePresentKHR");
    frame_ = (frame_ + 1) % kFrames;
}

Screenshot Presenter::take_screenshot() {
    if (!captured_) fail("take_screenshot: no frame was captured");
    const Frame& f = frames_[(frame_ + kFrames - 1) % kFrames];
    STUDIO_VK(vkWaitForFences(h_.device, 1, &f.done, VK_TRUE, UINT64_MAX));
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
