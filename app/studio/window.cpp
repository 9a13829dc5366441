// The GLFW window: its one owner, its size as Vulkan draws it, and the scripted size changes of test runs.
#include "window.h"

#include <adjoint/core/error.h>

#include <GLFW/glfw3.h>

#include <algorithm>

namespace adjoint::studio {

Window::Window(WindowSize size, const char* title) {
    glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
    window_ = glfwCreateWindow(int(size.width), int(size.height), title, nullptr, nullptr);
    if (!window_) fail("glfwCreateWindow failed");
}

Window::~Window() { glfwDestroyWindow(window_); }

VkExtent2D Window::drawable_size() const {
    if (held_minimized_ || glfwGetWindowAttrib(window_, GLFW_ICONIFIED)) return {0, 0};
    int w = 0, h = 0;
    glfwGetFramebufferSize(window_, &w, &h);
    return {uint32_t(std::max(w, 0)), uint32_t(std::max(h, 0))};
}

void Window::set_title(const std::string& title) { glfwSetWindowTitle(window_, title.c_str()); }

void Window::resize(WindowSize size) { glfwSetWindowSize(window_, int(size.width), int(size.height)); }

void Window::minimize() {
    glfwIconifyWindow(window_);
    held_minimized_ = true;
}

void Window::restore() {
    glfwRestoreWindow(window_);
    held_minimized_ = false;
}

void Window::request_close() { glfwSetWindowShouldClose(window_, GLFW_TRUE); }

bool Window::close_requested() const { return glfwWindowShouldClose(window_); }

} // namespace adjoint::studio
