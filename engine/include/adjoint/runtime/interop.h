// Interop with the caller's own Vulkan code on the engine's device: creating the device with what a
// window needs, the native handles, and the ordering contract between streams and the caller's commands.
//
// Plain Vulkan, no window system: a caller that presents (the studio, with GLFW) passes the instance
// extensions its surface needs, VK_KHR_swapchain, and a test that a queue family can present.
//
// Ordering (the engine has one queue; streams submit to it and wait for completion):
// - When a Stream's synchronize() returns, the device has finished every command recorded before it.
//   The caller's command buffers submitted to the same queue afterwards see those writes once they begin
//   with a memory barrier from VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT
//   (VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT) to their own first use.
// - Each engine submission begins with a barrier whose first scope is the compute and transfer stages, so
//   the caller's reads and writes of engine resources at those stages (copies, compute), submitted to the
//   same queue earlier, are ordered before the engine's next commands. For any other stage (say, sampling
//   an engine image in a fragment shader) the caller must wait for its own fence before the engine's next
//   synchronize() that touches the resource; the simplest way is to copy into an image of its own.
// - Submit and present through with_queue(): it holds the lock that every stream's submission takes.
// - Engine images stay in VK_IMAGE_LAYOUT_GENERAL; the caller must leave them there. Buffers and images
//   must outlive the caller's commands that use them.
#pragma once
#include <adjoint/runtime/device.h>

#include <vulkan/vulkan_core.h>

#include <functional>
#include <string>
#include <vector>

namespace adjoint::interop {

// What the caller needs from the device beyond compute. Everything is optional.
struct DeviceRequirements {
    std::vector<std::string> instance_extensions;   // e.g. glfwGetRequiredInstanceExtensions()
    std::vector<std::string> device_extensions;     // e.g. VK_KHR_SWAPCHAIN_EXTENSION_NAME
    // Called once the instance exists, before a device is chosen: make what accept_queue_family needs
    // (a window surface). An exception thrown here leaves create_device.
    std::function<void(VkInstance)> on_instance;
    // Whether queue family `family` (one with compute) of a physical device may be the engine's only queue,
    // e.g. it has graphics and can present to the surface. The first accepted family is used.
    std::function<bool(VkInstance, VkPhysicalDevice, uint32_t family)> accept_queue_family;
    // Called when the device is gone and just before the instance is destroyed (destroy the surface here;
    // also on the way out of a create_device that throws after on_instance).
    std::function<void(VkInstance)> on_instance_destroy;
};

// As Context::create_device(), with the extras. A device that lacks a device extension or has no accepted
// queue family is passed over, and the error lists why when none is left; an instance extension that is not
// available is an Error naming it. ADJOINT_DEVICE and ADJOINT_VALIDATION apply as usual.
Device create_device(Context& context, const DeviceRequirements& requirements);

struct DeviceHandles {
    VkInstance instance = VK_NULL_HANDLE;
    VkPhysicalDevice physical_device = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    VkQueue queue = VK_NULL_HANDLE;   // index 0 of queue_family: the only queue the engine creates
    uint32_t queue_family = 0;
    uint32_t api_version = 0;         // the instance's apiVersion (at most Vulkan 1.2)
};
DeviceHandles handles(const Device& device);

// A buffer's VkBuffer, usable as a storage buffer and as a copy source and destination. `size` is the
// buffer's size in bytes (the VkBuffer may be larger: sizes are rounded up to whole words).
struct BufferHandle {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
};

// An image's VkImage: 2D, one mip level and layer, R32G32B32A32_SFLOAT, usable as a storage image and as a
// copy source and destination, always in VK_IMAGE_LAYOUT_GENERAL.
struct ImageHandle {
    VkImage image = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE;
    VkImageLayout layout = VK_IMAGE_LAYOUT_GENERAL;
    VkFormat format = VK_FORMAT_R32G32B32A32_SFLOAT;
    uint32_t width = 0, height = 0;
};

namespace detail {
BufferHandle buffer_handle(const std::shared_ptr<adjoint::detail::BufferImpl>& buffer, size_t bytes);
ImageHandle image_handle(const std::shared_ptr<adjoint::detail::ImageImpl>& image);
} // namespace detail

// An empty (default-constructed) buffer or image is an Error.
template <typename T>
BufferHandle handle(const Buffer<T>& buffer) {
    return detail::buffer_handle(buffer.impl(), buffer.size_bytes());
}
template <typename T>
ImageHandle handle(const Image<T>& image) {
    return detail::image_handle(image.impl());
}

// The engine's own check of a VkResult, for the caller's Vulkan calls: anything but VK_SUCCESS is an Error
// naming the call, the result and file:line, worded as the engine's failures are.
void check(VkResult result, const char* call, const char* file, int line);
#define ADJOINT_VK_CHECK(call) ::adjoint::interop::check((call), #call, __FILE__, __LINE__)

// Runs `fn` holding the engine's queue lock, for the caller's vkQueueSubmit / vkQueuePresentKHR /
// vkQueueWaitIdle (a VkQueue is externally synchronized). Streams synchronizing on other threads wait
// meanwhile; a stream used inside `fn` would wait for ever.
void with_queue(const Device& device, const std::function<void(VkQueue)>& fn);

} // namespace adjoint::interop
