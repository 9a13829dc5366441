// What runtime.cpp shares with interop.cpp: device creation with extras, and the Vulkan objects behind handles.
#pragma once
#include <adjoint/runtime/device.h>

#include "vulkan/vk_runtime.h"

namespace adjoint::detail {

// Context::create_device with the caller's extra requirements (interop::create_device).
Device create_device(std::string_view backend, const vk::ContextExtras& extras);

const std::shared_ptr<vk::Context>& vulkan_context(const DeviceImpl& device);
vk::Buffer& vulkan_buffer(const BufferImpl& buffer);
vk::Image& vulkan_image(const ImageImpl& image);

} // namespace adjoint::detail
