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
    // The lock every stream's submission takes: the caller's submissions and presents take turns with them.
    std::lock_guard lock(ctx.impl().queue_mutex);
    fn(ctx.impl().queue);
}

} // namespace adjoint::vk
