// Dear ImGui over the window and the engine's device: its context, its GLFW and Vulkan backends, and the
// descriptor pool the backend allocates from. One owner: the backends are shut down before the pool goes.
#pragma once
#include "vk_owner.h"

#include <adjoint/adjoint.h>

struct GLFWwindow;

namespace adjoint::studio {

class Presenter;

class ImGuiLayer {
public:
    // Draws into `presenter`'s render pass; the font atlas goes up through the engine's queue.
    ImGuiLayer(GLFWwindow* window, Device& device, const Presenter& presenter);
    ~ImGuiLayer();
    ImGuiLayer(const ImGuiLayer&) = delete;
    ImGuiLayer& operator=(const ImGuiLayer&) = delete;

    // Starts ImGui's frame; a scripted run ignores the pointer (`hide_pointer`), so that where Xvfb leaves it
    // shows in no screenshot (hover tooltips).
    void new_frame(bool hide_pointer);

private:
    void init_backends(GLFWwindow* window, Device& device, const Presenter& presenter);
    void upload_fonts(Device& device);
    void shut_down();

    vko::DescriptorPool pool_;   // declared first: it outlives the backends
    bool glfw_ready_ = false, vulkan_ready_ = false;
};

} // namespace adjoint::studio
