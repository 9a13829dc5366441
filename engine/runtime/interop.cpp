// The interop surface (adjoint/runtime/interop.h) over the Vulkan layer's native objects.
#include <adjoint/runtime/interop.h>

#include "runtime/runtime_internal.h"
#include "vulkan/vk_check.h"
#include "vulkan/vk_runtime.h"

namespace adjoint::interop {

Device create_device(Context&, const DeviceRequirements& r) {
    vk::ContextExtras extras;
    extras.instance_extensions = r.instance_extensions;
    extras.device_extensions = r.device_extensions;
    extras.on_instance = r.on_instance;
    extras.accept_queue_family = r.accept_queue_family;
    extras.on_instance_destroy = r.on_instance_destroy;
    return adjoint::detail::create_device(DeviceOptions::from_environment(), "vulkan", extras);
}

DeviceHandles handles(const Device& device) {
    vk::NativeContext n = vk::native(*adjoint::detail::vulkan_context(*device.impl()));
    return {n.instance, n.physical_device, n.device, n.queue, n.queue_family, n.api_version};
}

void check(VkResult result, const char* call, const char* file, int line) { vk::check(result, call, file, line); }

void with_queue(const Device& device, const std::function<void(VkQueue)>& fn) {
    vk::with_queue(*adjoint::detail::vulkan_context(*device.impl()), fn);
}

namespace detail {

BufferHandle buffer_handle(const std::shared_ptr<adjoint::detail::BufferImpl>& buffer, size_t bytes) {
    if (!buffer) fail("interop::handle: the buffer is empty (default-constructed)");
    return {vk::native(adjoint::detail::vulkan_buffer(*buffer)), bytes};
}

ImageHandle image_handle(const std::shared_ptr<adjoint::detail::ImageImpl>& image) {
    if (!image) fail("interop::handle: the image is empty (default-constructed)");
    vk::Image& img = adjoint::detail::vulkan_image(*image);
    vk::NativeImage n = vk::native(img);
    ImageHandle h;
    h.image = n.image;
    h.view = n.view;
    h.width = img.width();
    h.height = img.height();
    return h;
}

} // namespace detail

} // namespace adjoint::interop
