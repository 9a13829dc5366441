// The native Vulkan objects behind a context, buffer and image, for callers that draw with the same device.
#include "vulkan/vk_internal.h"

namespace adjoint::vk {

NativeContext native(Context& ctx) {
    const Context::Impl& c = ctx.impl();
    return {c.instance, c.physical, c.device, c.queue, c.queue_family, c.instance_api_version};
}

VkBuffer native(Buffer& buffer) { return buffer.impl().raw.buffer; }

NativeImage native(Image& image) { return {image.impl().image, image.impl().view}; }

void with_queue(Context& ctx, const std::function<void(VkQueue)>& fn) {
    // Streams submit from the thread that records them, one at a time, so the queue needs no lock of its own.
    fn(ctx.impl().queue);
}

} // namespace adjoint::vk
