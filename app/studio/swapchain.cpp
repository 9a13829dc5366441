// The swapchain, made again whenever the window's size changes.
#include "swapchain.h"

#include <algorithm>

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace adjoint::studio {

Swapchain::Swapchain(Device& device, VkSurfaceKHR surface, VkSurfaceFormatKHR format, VkRenderPass render_pass)
    : device_(device), h_(interop::handles(device)), surface_(surface), format_(format), render_pass_(render_pass) {}

VkSwapchainCreateInfoKHR Swapchain::describe(const VkSurfaceCapabilitiesKHR& caps, VkExtent2D extent) const {
    uint32_t count = std::max(caps.minImageCount + 1, 2u);
    if (caps.maxImageCount > 0) count = std::min(count, caps.maxImageCount);
    VkSwapchainCreateInfoKHR info{VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR};
    info.surface = surface_;
    info.minImageCount = count;
    info.imageFormat = format_.format;
    info.imageColorSpace = format_.colorSpace;
    info.imageExtent = extent;
    info.imageArrayLayers = 1;
    const bool capture = (caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_SRC_BIT) != 0;
    info.imageUsage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | (capture ? VK_IMAGE_USAGE_TRANSFER_SRC_BIT : 0);
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
    info.oldSwapchain = swapchain_.get();
    return info;
}

bool Swapchain::recreate(VkExtent2D framebuffer) {
    VkSurfaceCapabilitiesKHR caps;
    ADJOINT_VK_CHECK(vkGetPhysicalDeviceSurfaceCapabilitiesKHR(h_.physical_device, surface_, &caps));
    VkExtent2D extent = caps.currentExtent;
    if (extent.width == UINT32_MAX) {   // the surface takes the swapchain's size: the framebuffer's
        extent.width = std::clamp(framebuffer.width, caps.minImageExtent.width, caps.maxImageExtent.width);
        extent.height = std::clamp(framebuffer.height, caps.minImageExtent.height, caps.maxImageExtent.height);
    }
    if (extent.width == 0 || extent.height == 0 || framebuffer.width == 0 || framebuffer.height == 0) return false;

    interop::with_queue(device_, [](VkQueue q) { vkQueueWaitIdle(q); });
    targets_.clear();
    const VkSwapchainCreateInfoKHR info = describe(caps, extent);
    vko::Swapchain created;   // the old one is retired only once the new one exists
    ADJOINT_VK_CHECK(vkCreateSwapchainKHR(h_.device, &info, nullptr, created.out(h_.device)));
    swapchain_ = std::move(created);
    extent_ = extent;
    min_image_count_ = std::max(caps.minImageCount, 2u);
    can_capture_ = (info.imageUsage & VK_IMAGE_USAGE_TRANSFER_SRC_BIT) != 0;
    ++created_;
    make_targets();
    return true;
}

void Swapchain::make_targets() {
    uint32_t n = 0;
    ADJOINT_VK_CHECK(vkGetSwapchainImagesKHR(h_.device, swapchain_.get(), &n, nullptr));
    std::vector<VkImage> images(n);
    ADJOINT_VK_CHECK(vkGetSwapchainImagesKHR(h_.device, swapchain_.get(), &n, images.data()));
    targets_.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
        Target& t = targets_[i];
        t.image = images[i];
        VkImageViewCreateInfo v{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
        v.image = t.image;
        v.viewType = VK_IMAGE_VIEW_TYPE_2D;
        v.format = format_.format;
        v.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        ADJOINT_VK_CHECK(vkCreateImageView(h_.device, &v, nullptr, t.view.out(h_.device)));
        VkFramebufferCreateInfo fb{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
        fb.renderPass = render_pass_;
        fb.attachmentCount = 1;
        fb.pAttachments = t.view.address();
        fb.width = extent_.width;
        fb.height = extent_.height;
        fb.layers = 1;
        ADJOINT_VK_CHECK(vkCreateFramebuffer(h_.device, &fb, nullptr, t.framebuffer.out(h_.device)));
        VkSemaphoreCreateInfo sem{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
        ADJOINT_VK_CHECK(vkCreateSemaphore(h_.device, &sem, nullptr, t.rendered.out(h_.device)));
    }
}

} // namespace adjoint::studio
