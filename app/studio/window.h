// The studio's window (GLFW, no client API: Vulkan draws into it), owned: destroyed with its owner.
#pragma once
#include <vulkan/vulkan_core.h>

#include <cstdint>
#include <memory>
#include <string>

struct GLFWwindow;

namespace adjoint::studio {

struct WindowSize {
    uint32_t width = 0, height = 0;
};

class Window {
public:
    Window(WindowSize size, const char* title);
    ~Window();
    Window(const Window&) = delete;
    Window& operator=(const Window&) = delete;

    GLFWwindow* get() const { return window_; }
    // The framebuffer's size; zero while the window is minimized (or held so by minimize()).
    VkExtent2D drawable_size() const;
    void set_title(const std::string& title);
    void resize(WindowSize size);
    // A window manager iconifies the window; Xvfb has none and leaves it as it is, so the window also reads
    // as zero-sized (drawable_size) until restore(), either way.
    void minimize();
    void restore();
    void request_close();
    bool close_requested() const;

private:
    GLFWwindow* window_ = nullptr;
    bool held_minimized_ = false;
};

} // namespace adjoint::studio
