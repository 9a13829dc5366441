// The window's side of Vulkan on the engine's device: the render pass, the swapchain (swapchain.h) and two
// frames in flight. The swapchain is made again when the window's size changes (or the driver says it is out
// of date); at zero size (a minimized window) nothing is drawn. A frame can be read back for --screenshot.
#pragma once
#include "swapchain.h"

#include <cstdint>
#include <vector>

namespace adjoint::studio {

// The window as a picture: 8-bit sRGB RGB, rows top first.
struct Screenshot {
    uint32_t width = 0, height = 0;
    std::vector<uint8_t> rgb;
};

class Presenter {
public:
    // `framebuffer`: the window's size when it opened (the first swapchain's).
    Presenter(Device& device, VkSurfaceKHR surface, VkExtent2D framebuffer);
    ~Presenter();   // waits for the queue first
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

    VkRenderPass render_pass() const { return render_pass_.get(); }
    VkExtent2D extent() const { return swapchain_.extent(); }
    uint32_t image_count() const { return swapchain_.image_count(); }
    uint32_t min_image_count() const { return swapchain_.min_image_count(); }
    VkFormat format() const { return format_.format; }
    uint64_t swapchains_created() const { return swapchain_.created(); }

private:
    bool remake_swapchain();              // false at zero size
    bool acquire(VkSemaphore acquired);   // false when the swapchain cannot be made (zero size)
    void record_capture(VkCommandBuffer cmd);
    void create_capture_buffer();

    Device& device_;
    interop::DeviceHandles h_;
    VkSurfaceFormatKHR format_{};
    vko::RenderPass render_pass_;
    Swapchain swapchain_;
    VkExtent2D framebuffer_{};           // the window's, as the last begin_frame said
    bool stale_ = false;                 // make the swapchain again before the next frame

    static constexpr uint32_t kFrames = 2;
    struct Frame {
        vko::CommandPool pool;
        VkCommandBuffer cmd = VK_NULL_HANDLE;   // the pool's
        vko::Fence done;
        vko::Semaphore acquired;
    };
    Frame frames_[kFrames];
    uint32_t frame_ = 0;                 // the slot of the frame being recorded
    uint32_t image_ = 0;                 // its swapchain image

    vko::Memory capture_memory_;         // host-visible, mapped while it lives; outlives the buffer
    vko::Buffer capture_;
    VkDeviceSize capture_size_ = 0;
    void* capture_mapped_ = nullptr;
    VkExtent2D captured_extent_{};
    bool captured_ = false;
};

} // namespace adjoint::studio
