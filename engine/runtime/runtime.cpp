// The host API's commands on top of the Vulkan layer: resource copies, shaders and streams with kernel error
// reports (devices: device.cpp; compiling kernels: compile_kernel.cpp; dispatching them: dispatch.cpp).
#include <adjoint/runtime/device.h>

#include "runtime/runtime_internal.h"

#include <cstring>
#include <mutex>

namespace adjoint {

namespace detail {

namespace {

// "copy_to of elements [8, 12) of a buffer of 10 elements" and the like; empty and foreign resources too.
void check_buffer(const char* what, const std::shared_ptr<BufferImpl>& b) {
    if (!b) fail(what, " of an empty Buffer (default-constructed or moved-from); make one with device.create_buffer<T>(n)");
}

void check_range(const char* what, const ElementRange& r) {
    if (r.first <= r.size && r.count <= r.size - r.first) return;
    if (r.count > SIZE_MAX - r.first)   // the end would wrap around
        fail(what, " of ", r.count, " elements from element ", r.first, " of a buffer of ", r.size,
             " elements: out of range");
    fail(what, " of elements [", r.first, ", ", r.first + r.count, ") of a buffer of ", r.size,
         " elements: out of range");
}

void check_same_device(const char* what, const std::shared_ptr<vk::Context>& resource, const StreamImpl& s) {
    if (resource != s.device->ctx)
        fail(what, " on a stream of another Device than the resource's; each Device has its own memory");
}

void check_image(const char* what, const std::shared_ptr<ImageImpl>& img) {
    if (!img) fail(what, " of an empty Image (default-constructed or moved-from); make one with device.create_image<float>(...)");
}

} // namespace

Command buffer_copy_from(const std::shared_ptr<BufferImpl>& b, const void* src, const ElementRange& range) {
    check_buffer("copy_from", b);
    check_range("copy_from", range);
    // Host data is read as the command is recorded, straight into the stream's staging memory: a copy made with
    // the command (its memory zeroed, filled, then copied again) cost a megapixel image's upload three passes.
    size_t offset = range.first * range.stride, bytes = range.count * range.stride;
    return Command([b, src, offset, bytes](StreamImpl& s) {
        check_same_device("copy_from", b->ctx, s);
        s.stream.upload(*b->buffer, offset, src, bytes);
        s.retained.push_back(b);
    });
}

Command buffer_copy_to(const std::shared_ptr<BufferImpl>& b, void* dst, const ElementRange& range) {
    check_buffer("copy_to", b);
    check_range("copy_to", range);
    size_t offset = range.first * range.stride, bytes = range.count * range.stride;
    return Command([b, dst, offset, bytes](StreamImpl& s) {
        check_same_device("copy_to", b->ctx, s);
        s.stream.download(*b->buffer, offset, dst, bytes);
        s.retained.push_back(b);
    });
}

Command buffer_fill_zero(const std::shared_ptr<BufferImpl>& b) {
    check_buffer("fill_zero", b);
    return Command([b](StreamImpl& s) {
        check_same_device("fill_zero", b->ctx, s);
        s.stream.fill_zero(*b->buffer);
        s.retained.push_back(b);
    });
}

void fail_copy_sizes(size_t count, size_t dst_count) {
    fail("copy_to of a buffer of ", count, " elements into one of ", dst_count, ": the sizes must match");
}

Command buffer_copy(const std::shared_ptr<BufferImpl>& src, const std::shared_ptr<BufferImpl>& dst,
                    const ElementRange& from, const ElementRange& to) {
    check_buffer("copy_to", src);
    check_buffer("copy_to (its destination)", dst);
    check_range("copy_to", from);
    check_range("copy_to (its destination)", to);
    // One buffer is one resource to the stream's hazard tracking, so a copy within it is refused whole, even
    // between disjoint ranges.
    if (src == dst) fail("copy_to of a buffer into itself");
    return Command([src, dst, from_byte = from.first * from.stride, to_byte = to.first * to.stride,
                    bytes = from.count * from.stride](StreamImpl& s) {
        check_same_device("copy_to", src->ctx, s);
        check_same_device("copy_to", dst->ctx, s);
        s.stream.copy(*src->buffer, from_byte, *dst->buffer, to_byte, bytes);
        s.retained.push_back(src);
        s.retained.push_back(dst);
    });
}

Command image_copy_from(const std::shared_ptr<ImageImpl>& img, const void* src) {
    check_image("copy_from", img);
    return Command([img, src](StreamImpl& s) {   // read as recorded, as buffer_copy_from
        check_same_device("copy_from", img->ctx, s);
        s.stream.upload(*img->image, src);
        s.retained.push_back(img);
    });
}

Command image_copy_to(const std::shared_ptr<ImageImpl>& img, void* dst) {
    check_image("copy_to", img);
    return Command([img, dst](StreamImpl& s) {
        check_same_device("copy_to", img->ctx, s);
        s.stream.download(*img->image, dst);
        s.retained.push_back(img);
    });
}

uint32_t image_width(const ImageImpl* img) { return img ? img->image->width() : 0; }
uint32_t image_height(const ImageImpl* img) { return img ? img->image->height() : 0; }

} // namespace detail

// ---- Shader ----------------------------------------------------------------------------------------------

const std::string& ShaderBase::name() const { return impl_->kernel->name; }
const std::string& ShaderBase::glsl() const { return impl_->kernel->layout.source; }
const std::string& ShaderBase::ir_text() const { return impl_->kernel->ir_text; }
bool ShaderBase::cache_hit() const { return impl_->cache_hit; }
const std::vector<TapeUse>& ShaderBase::tape_report() const { return impl_->kernel->tape; }

// ---- Stream ----------------------------------------------------------------------------------------------

Command synchronize() {
    return Command([](detail::StreamImpl& s) { s.synchronize(); });
}

Stream& Stream::operator<<(const Command& c) {
    std::lock_guard lock(impl_->mutex);
    c(*impl_);
    return *this;
}

// ---- For runtime/interop.cpp: the Vulkan objects behind the public handles ------------------------------

const std::shared_ptr<vk::Context>& detail::vulkan_context(const DeviceImpl& device) { return device.ctx; }
vk::Buffer& detail::vulkan_buffer(const BufferImpl& buffer) { return *buffer.buffer; }
vk::Image& detail::vulkan_image(const ImageImpl& image) { return *image.image; }

} // namespace adjoint
