// The window's swapchain and what each of its images needs to be drawn: a view, a framebuffer of the
// presenter's render pass, and the semaphore its frame's commands signal. Made again for a new size.
#pragma once
#include "vk_owner.h"

#include <adjoint/adjoint.h>

#include <vector>

namespace adjoint::studio {

class Swapchain {
public:
    Swapchain(Device& device, VkSurfaceKHR surface, VkSurfaceFormatKHR format, VkRenderPass render_pass);
    Swapchain(const Swapchain&) = delete;
    Swapchain& operator=(const Swapchain&) = delete;

    // Makes the swapchain for a window whose framebuffer is `framebuffer` (after waiting for the queue: the
    // old images may still be in use). False, and nothing changed, when the surface has no area.
    bool recreate(VkExtent2D framebuffer);
    explicit operator bool() const { return bool(swapchain_); }

    VkSwapchainKHR get() const { return swapchain_.get(); }
    const VkSwapchainKHR* address() const { return swapchain_.address(); }
    VkExtent2D extent() const { return extent_; }
    uint32_t image_count() const { return uint32_t(targets_.size()); }
    uint32_t min_image_count() const { return min_image_count_; }
    bool can_capture() const { return can_capture_; }   // images usable as copy sources (screenshots)
    uint64_t created() const { return created_; }
    VkImage image(uint32_t i) const { return targets_.at(i).image; }
    VkFramebuffer framebuffer(uint32_t i) const { return targets_.at(i).framebuffer.get(); }
    const VkSemaphore* rendered(uint32_t i) const { return targets_.at(i).rendered.address(); }

private:
    VkSwapchainCreateInfoKHR describe(const VkSurfaceCapabilitiesKHR& caps, VkExtent2D extent) const;
    void make_targets();

    struct Target {
        VkImage image = VK_NULL_HANDLE;   // the swapchain's
        vko::ImageView view;
        vko::Framebuffer framebuffer;
        vko::Semaphore rendered;          // its frame's commands are done
    };

    Device& device_;
    interop::DeviceHandles h_;
    VkSurfaceKHR surface_;
    VkSurfaceFormatKHR format_;
    VkRenderPass render_pass_;
    vko::Swapchain swapchain_;
    std::vector<Target> targets_;   // after the swapchain: destroyed before it
    VkExtent2D extent_{};
    uint32_t min_image_count_ = 2;
    bool can_capture_ = false;
    uint64_t created_ = 0;
};

} // namespace adjoint::studio
