// The window's side of Vulkan on the engine's device: swapchain, render pass, framebuffers and two frames
// in flight. The swapchain is recreated when the window's size changes (or the driver says it is out of
// date); at zero size (a minimized window) nothing is drawn. A frame can be read back for --screenshot.
#pragma once
#include <adjoint/adjoint.h>
#include <adjoint/runtime/interop.h>

#include <cstdint>
#include <functional>
#include <vector>

struct GLFWwindow;

namespace adjoint::studio {

// The window as a picture: 8-bit sRGB RGB, rows top first.
struct Screenshot {
    uint32_t width = 0, height = 0;
    std::vector<uint8_t> rgb;
};

void check_vk(VkResult result, const char* call);
#define STUDIO_VK(call) ::adjoint::studio::check_vk((call), #call)

class Presenter {
public:
    Presenter(GLFWwindow* window, Device& device, VkSurfaceKHR surface);
    ~Presenter();
    Presenter(const Presenter&) = delete;
    Presenter& operator=(const Presenter&) = delete;

    // Waits for the frame's slot and acquires a swapchain image for a window whose framebuffer is `size`
    // (the caller says zero while the window is minimized); the command buffer is open for recording (no
    // render pass yet). Null when nothing can be drawn now (zero size).
    VkCommandBuffer begin_frame(VkExtent2D size);
    void begin_render_pass(VkCommandBuffer cmd, const float clear_rgba[4]);
    // Ends the render pass; with `capture`, copies the image out. Submits and presents.
    void end_frame(bool capture);
    // After end_frame(true): waits for the frame and returns the picture.
    Screenshot take_screenshot();
    // Waits until the queue has finished everything (before destroying what frames use).
    void wait_idle();

    VkRenderPass render_pass() const { return render_pass_; }
    VkExtent2D extent() const { return extent_; }
    uint32_t image_count() const { return uint32_t(images_.size()); }
    uint32_t min_image_count() const { return min_image_count_; }
    VkFormat format() const { return format_.format; }
    uint64_t swapchains_created() const { return swapchains_created_; }

private:
    bool create_swapchain();   // false at zero size
    void destroy_swapchain_views();
    void create_capture_buffer();

    GLFWwindow* window_;
    Device& device_;
    interop::DeviceHandles h_;
    VkSurfaceKHR surface_;
    VkSurfaceFormatKHR format_{};
    VkRenderPass render_pass_ = VK_NULL_HANDLE;
    VkSwapchainKHR swapchain_ = VK_NULL_HANDLE;
    VkExtent2D extent_{};
    VkExtent2D framebuffer_{};           // the window's, as the last begin_frame said
    uint32_t min_image_count_ = 2;
    bool can_capture_ = false;
    bool stale_ = false;                 // recreate before the next frame
    uint64_t swapchains_created_ = 0;
    std::vector<VkImage> images_;
    std::vector<VkImageView> views_;
    std::vector<VkFramebuffer> framebuffers_;
    std::vector<VkSemaphore> rendered_;  // per swapchain image: its frame's commands are done

    static constexpr uint32_t kFrames = 2;
    struct Frame {
        VkCommandPool pool = VK_NULL_HANDLE;
        VkCommandBuffer cmd = VK_NULL_HANDLE;
        VkFence done = VK_NULL_HANDLE;
        VkSemaphore acquired = VK_NULL_HANDLE;
    };
    Frame frames_[kFrames];
    uint32_t frame_ = 0;                 // the slot of the frame being recorded
    uint32_t image_ = 0;                 // its swapchain image
    bool recording_ = false;

    VkBuffer capture_ = VK_NULL_HANDLE;
    VkDeviceMemory capture_memory_ = VK_NULL_HANDLE;
    VkDeviceSize capture_size_ = 0;
    void* capture_mapped_ = nullptr;
    VkExtent2D captured_extent_{};
    bool captured_ = false;
};

} // namespace adjoint::studio
