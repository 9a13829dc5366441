// Storage buffers in device-local memory, and the host-visible buffers that streams stage through.
#include "vulkan/vk_internal.h"

#include <utility>

namespace adjoint::vk {

// Delegating to the default constructor makes the object complete before any handle exists, so the
// destructor frees whatever was created when a later step throws.
RawBuffer::RawBuffer(Context::Impl& ctx, size_t bytes, VkBufferUsageFlags usage, bool host_visible)
    : RawBuffer() {
    device = ctx.device;
    size = bytes;
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = bytes;
    info.usage = usage;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VK_CHECK_ALLOC(vkCreateBuffer(device, &info, nullptr, &buffer), bytes);

    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device, buffer, &req);
    const VkMemoryPropertyFlags host =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = req.size;
    // Staging wants cached host memory for fast readback; kernels want device-local memory.
    alloc.memoryTypeIndex =
        host_visible ? ctx.find_memory(req.memoryTypeBits, host, VK_MEMORY_PROPERTY_HOST_CACHED_BIT, bytes)
                     : ctx.find_memory(req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, bytes);
    VK_CHECK_ALLOC(vkAllocateMemory(device, &alloc, nullptr, &memory), req.size);
    VK_CHECK(vkBindBufferMemory(device, buffer, memory, 0));
    if (host_visible)
        VK_CHECK(vkMapMemory(device, memory, 0, VK_WHOLE_SIZE, 0, &mapped));
}

RawBuffer::~RawBuffer() {
    // Freeing mapped memory implicitly unmaps it.
    if (buffer)
        vkDestroyBuffer(device, buffer, nullptr);
    if (memory)
        vkFreeMemory(device, memory, nullptr);
}

void RawBuffer::swap(RawBuffer& other) noexcept {
    std::swap(device, other.device);
    std::swap(buffer, other.buffer);
    std::swap(memory, other.memory);
    std::swap(mapped, other.mapped);
    std::swap(size, other.size);
}

Buffer::Buffer(std::shared_ptr<Context> ctx, size_t bytes) : impl_(std::make_unique<Impl>()) {
    // Rounded to whole words so vkCmdFillBuffer covers every byte and tiny buffers stay legal.
    const size_t rounded = bytes < 4 ? 4 : (bytes + 3) & ~size_t(3);
    impl_->raw = ctx->impl().take_buffer(rounded);
    impl_->requested = bytes;
    impl_->ctx = std::move(ctx);
}

Buffer::Impl::~Impl() {
    for (VkBufferView view : views)
        if (view)
            vkDestroyBufferView(raw.device, view, nullptr);
    if (ctx)
        ctx->impl().keep_buffer(std::move(raw));
}

RawBuffer Context::Impl::take_buffer(size_t bytes) {
    {
        std::lock_guard lock(buffer_pool_mutex);
        auto it = buffer_pool.find(bytes);
        if (it != buffer_pool.end() && !it->second.empty()) {
            RawBuffer raw = std::move(it->second.back());
            it->second.pop_back();
            buffer_pool_bytes -= bytes;
            buffer_bytes_in_use += bytes;
            return raw;
        }
    }
    RawBuffer raw(*this, bytes,
                  VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                  false);
    std::lock_guard lock(buffer_pool_mutex);
    ++buffer_allocations;
    buffer_bytes_in_use += bytes;
    return raw;
}

uint64_t Context::buffer_allocations() const {
    std::lock_guard lock(impl_->buffer_pool_mutex);
    return impl_->buffer_allocations;
}

size_t Context::buffer_bytes_in_use() const {
    std::lock_guard lock(impl_->buffer_pool_mutex);
    return impl_->buffer_bytes_in_use;
}

void Context::Impl::keep_buffer(RawBuffer&& raw) {
    if (!raw.buffer)
        return;
    RawBuffer kept = std::move(raw);
    std::lock_guard lock(buffer_pool_mutex);
    buffer_bytes_in_use -= kept.size;
    if (buffer_pool_bytes + kept.size > kBufferPoolBytes)
        return;   // freed as `kept` goes
    buffer_pool_bytes += kept.size;
    buffer_pool[kept.size].push_back(std::move(kept));
}

VkBufferView Buffer::Impl::texel_view(uint32_t words) {
    const size_t slot = words == 4 ? 2 : words == 2 ? 1 : 0;
    std::lock_guard lock(views_mutex);
    if (!views[slot]) {
        VkBufferViewCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
        info.buffer = raw.buffer;
        info.format = texel_format(words);
        info.range = VK_WHOLE_SIZE;
        VK_CHECK(vkCreateBufferView(raw.device, &info, nullptr, &views[slot]));
    }
    return views[slot];
}

Buffer::~Buffer() = default;
size_t Buffer::size() const { return impl_->requested; }
uint64_t Buffer::id() const { return impl_->id; }

} // namespace adjoint::vk
