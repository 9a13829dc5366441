// The engine's device shared with the window: created with what presenting needs; the validation messages
// of its destruction caught by the studio's own messenger.
#include "gpu.h"

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>

#include <cstdlib>
#include <string_view>

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace adjoint::studio {

bool validation_requested() {
    const char* v = std::getenv("ADJOINT_VALIDATION");
    return v && *v && std::string_view(v) != "0";
}

Gpu::Messenger::Messenger(VkInstance instance, Gpu* gpu) : instance_(instance) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
    destroy_ = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
    if (!create || !destroy_) fail("validation is on, but VK_EXT_debug_utils' messenger functions are missing");
    VkDebugUtilsMessengerCreateInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    info.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    info.messageType =
        VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
    info.pfnUserCallback = &Gpu::on_message;
    info.pUserData = gpu;
    ADJOINT_VK_CHECK(create(instance, &info, nullptr, &messenger_));
}

void Gpu::Messenger::reset() {
    if (messenger_) destroy_(instance_, messenger_, nullptr);
    messenger_ = VK_NULL_HANDLE;
}

VkBool32 Gpu::on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
                         const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
    auto* self = static_cast<Gpu*>(user);
    std::lock_guard lock(self->messages_mutex_);
    if (self->collecting_)
        self->exit_messages_.push_back(
            std::string(severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error: " : "warning: ") +
            (data->pMessage ? data->pMessage : ""));
    return VK_FALSE;
}

Gpu::Gpu(GLFWwindow* window) : window_(window) {
    interop::DeviceRequirements r;
    uint32_t n = 0;
    const char** names = glfwGetRequiredInstanceExtensions(&n);
    if (!names) fail("GLFW found no Vulkan window-system support (glfwGetRequiredInstanceExtensions)");
    r.instance_extensions.assign(names, names + n);
    r.device_extensions = {VK_KHR_SWAPCHAIN_EXTENSION_NAME};
    r.on_instance = [this](VkInstance instance) {
        ADJOINT_VK_CHECK(glfwCreateWindowSurface(instance, window_, nullptr, surface_.out(instance)));
        if (validation_requested()) messenger_.emplace(instance, this);
    };
    // The engine's one queue must draw and present to this window.
    r.accept_queue_family = [this](VkInstance, VkPhysicalDevice pd, uint32_t family) {
        uint32_t count = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, nullptr);
        std::vector<VkQueueFamilyProperties> props(count);
        vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, props.data());
        VkBool32 present = VK_FALSE;
        vkGetPhysicalDeviceSurfaceSupportKHR(pd, family, surface_.get(), &present);
        return (props[family].queueFlags & VK_QUEUE_GRAPHICS_BIT) && present;
    };
    r.on_instance_destroy = [this](VkInstance) {
        surface_.reset();
        messenger_.reset();
    };
    context_.emplace();
    device_.emplace(interop::create_device(*context_, r));
}

Gpu::~Gpu() { close(); }

void Gpu::leak_a_sampler() {
    VkSamplerCreateInfo info{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
    VkSampler leaked = VK_NULL_HANDLE;
    ADJOINT_VK_CHECK(vkCreateSampler(interop::handles(*device_).device, &info, nullptr, &leaked));
}

std::vector<std::string> Gpu::close() {
    std::vector<std::string> messages;
    if (!device_) return messages;
    {
        std::lock_guard lock(messages_mutex_);
        messages = device_->validation_messages();
        collecting_ = true;
    }
    device_.reset();
    context_.reset();
    std::lock_guard lock(messages_mutex_);
    messages.insert(messages.end(), exit_messages_.begin(), exit_messages_.end());
    exit_messages_.clear();
    collecting_ = false;
    return messages;
}

} // namespace adjoint::studio
