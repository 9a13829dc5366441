// The engine's device, made to present to the studio's window: the window's surface, and (with validation
// on) the studio's own messenger, which also hears the device's destruction, where the layer reports the
// objects left alive (after the engine's own count can be read).
#pragma once
#include "vk_owner.h"

#include <adjoint/adjoint.h>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

struct GLFWwindow;

namespace adjoint::studio {

// ADJOINT_VALIDATION, read as the engine reads it.
bool validation_requested();

class Gpu {
public:
    explicit Gpu(GLFWwindow* window);
    ~Gpu();   // as close(), the messages dropped
    Gpu(const Gpu&) = delete;
    Gpu& operator=(const Gpu&) = delete;

    Device& device() { return *device_; }
    VkSurfaceKHR surface() const { return surface_.get(); }
    // --test-leak-at-exit: a VkSampler that nothing destroys.
    void leak_a_sampler();
    // Destroys the device (everything made on it must be gone) and returns every validation message: the
    // engine's and those of the destruction itself. Only once.
    std::vector<std::string> close();

private:
    // The messenger's destroy function is the instance's, found at run time.
    class Messenger {
    public:
        Messenger(VkInstance instance, Gpu* gpu);
        Messenger(const Messenger&) = delete;
        Messenger& operator=(const Messenger&) = delete;
        ~Messenger() { reset(); }
        void reset();

    private:
        VkInstance instance_ = VK_NULL_HANDLE;
        VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
        PFN_vkDestroyDebugUtilsMessengerEXT destroy_ = nullptr;
    };
    static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                     VkDebugUtilsMessageTypeFlagsEXT types,
                                                     const VkDebugUtilsMessengerCallbackDataEXT* data, void* user);

    GLFWwindow* window_;
    // Both belong to the instance: the engine calls on_instance_destroy before it destroys it.
    vko::Surface surface_;
    std::optional<Messenger> messenger_;
    std::mutex messages_mutex_;
    bool collecting_ = false;   // until close() the engine's messenger counts the same messages
    std::vector<std::string> exit_messages_;
    std::optional<Context> context_;
    std::optional<Device> device_;
};

} // namespace adjoint::studio
