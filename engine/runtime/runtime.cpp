// The host API's commands on top of the Vulkan layer: resource copies, dispatch argument checking and binding,
// shaders and streams with kernel error reports (devices: device.cpp; compiling kernels: compile_kernel.cpp).
#include <adjoint/runtime/device.h>

#include <adjoint/autodiff/autodiff.h>
#include <adjoint/codegen/glsl.h>
#include <adjoint/ir/printer.h>
#include <adjoint/ir/trap.h>

#include "compile/glsl_compiler.h"
#include "compile/lru_cache.h"
#include "runtime/dispatch_grid.h"
#include "runtime/runtime_internal.h"
#include "runtime/glsl_options.h"
#include "vulkan/vk_runtime.h"

#include <adjoint/core/hash.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <unordered_map>

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
    // Host data is copied now, as the command is made, so the caller may reuse its memory at once.
    size_t offset = range.first * range.stride;
    auto data = std::make_shared<std::vector<std::byte>>(range.count * range.stride);
    if (!data->empty()) std::memcpy(data->data(), src, data->size());
    return Command([b, data, offset](StreamImpl& s) {
        check_same_device("copy_from", b->ctx, s);
        s.stream.upload(*b->buffer, offset, data->data(), data->size());
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

Command image_copy_from(const std::shared_ptr<ImageImpl>& img, const void* src) {
    check_image("copy_from", img);
    size_t bytes = size_t(img->image->width()) * img->image->height() * 16;
    auto data = std::make_shared<std::vector<std::byte>>(bytes);
    std::memcpy(data->data(), src, bytes);
    return Command([img, data](StreamImpl& s) {
        check_same_device("copy_from", img->ctx, s);
        s.stream.upload(*img->image, data->data());
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

namespace {

std::string describe(const DispatchArg& a) {
    switch (a.kind) {
    case DispatchArg::Kind::Buffer: return (a.grad ? "diff_buffer<" : "buffer<") + a.type->to_string() + ">";
    case DispatchArg::Kind::Image: return "image2d";
    case DispatchArg::Kind::Value:
        if (!a.is_plain_number) return a.type->to_string();
        return a.is_bool ? "a bool" : a.is_integer ? "an integer" : "a floating-point number";
    }
    return "?";
}

// Why the C++ number `a` does not fit a parameter of scalar kind k (the rule is at DispatchArg); empty
// when it fits.
std::string misfit(const DispatchArg& a, ir::ScalarKind k) {
    std::ostringstream value;
    value.precision(17);
    if (a.is_bool) value << "the bool " << (a.scalar != 0 ? "true" : "false");
    else value << (a.is_integer ? "the integer " : "the floating-point number ") << a.scalar;
    switch (k) {
    case ir::ScalarKind::Float: return a.is_bool ? "got " + value.str() : "";
    case ir::ScalarKind::Bool: return a.is_bool ? "" : "got " + value.str() + " (pass true or false)";
    case ir::ScalarKind::UInt64:
        if (!a.is_integer) return "got " + value.str() + " (convert it explicitly)";
        if (a.is_negative) return "got " + value.str() + ", outside its range [0, 18446744073709551615]";
        return "";
    case ir::ScalarKind::Int: case ir::ScalarKind::UInt: {
        if (!a.is_integer) return "got " + value.str() + " (convert it explicitly)";
        bool is_int = k == ir::ScalarKind::Int;
        if (a.scalar < (is_int ? -2147483648.0 : 0.0) || a.scalar > (is_int ? 2147483647.0 : 4294967295.0))
            return "got " + value.str() + ", outside its range [" + (is_int ? "-2147483648, 2147483647]" : "0, 4294967295]");
        return "";
    }
    }
    return "";
}

// Writes a plain C++ number into a scalar parameter of kind k.
void write_number(std::byte* dst, ir::ScalarKind k, const DispatchArg& a) {
    const double v = a.scalar;
    switch (k) {
    case ir::ScalarKind::UInt64: std::memcpy(dst, &a.integer, 8); break;   // exact: a double has 53 bits
    case ir::ScalarKind::Float: { float f = float(v); std::memcpy(dst, &f, 4); break; }
    case ir::ScalarKind::Int: { int32_t i = int32_t(v); std::memcpy(dst, &i, 4); break; }
    case ir::ScalarKind::UInt: { uint32_t u = uint32_t(v); std::memcpy(dst, &u, 4); break; }
    case ir::ScalarKind::Bool: { uint32_t b = v != 0; std::memcpy(dst, &b, 4); break; }
    }
}

} // namespace

} // namespace detail

// ---- Shader ----------------------------------------------------------------------------------------------

const std::string& ShaderBase::name() const { return impl_->kernel->name; }
const std::string& ShaderBase::glsl() const { return impl_->kernel->layout.source; }
const std::string& ShaderBase::ir_text() const { return impl_->kernel->ir_text; }
bool ShaderBase::cache_hit() const { return impl_->cache_hit; }
const std::vector<TapeUse>& ShaderBase::tape_report() const { return impl_->kernel->tape; }

namespace detail {
namespace {

// Does argument `a` fit parameter `slot`? Converts a plain C++ number to the parameter's scalar type.
bool matches(const codegen::ArgSlot& slot, DispatchArg& a) {
    switch (slot.kind) {
    case codegen::ArgSlot::Kind::Buffer:
        // A DiffBuffer passes where a Buffer is expected (its values); a differentiable parameter needs one.
        return a.kind == DispatchArg::Kind::Buffer && a.type == slot.type->element() &&
               (a.grad || !slot.type->is_diff_buffer());
    case codegen::ArgSlot::Kind::Image: return a.kind == DispatchArg::Kind::Image;
    case codegen::ArgSlot::Kind::Push:
        if (a.kind == DispatchArg::Kind::Value && a.is_plain_number && slot.type->is_scalar()) {
            a.bytes.resize(slot.type->host_size());
            write_number(a.bytes.data(), slot.type->scalar_kind(), a);
            a.type = slot.type;
            a.is_plain_number = false;
            return true;
        }
        return a.kind == DispatchArg::Kind::Value && a.type == slot.type;
    }
    return false;
}

std::string expected(const codegen::ArgSlot& slot) {
    return slot.kind == codegen::ArgSlot::Kind::Image ? std::string("image2d") : slot.type->to_string();
}

// An argument of the right kind can still be unusable: empty, of another device, or larger than one binding
// may be. Returns what is wrong, or empty.
std::string unusable(const DispatchArg& a, const DeviceImpl& device) {
    switch (a.kind) {
    case DispatchArg::Kind::Buffer: {
        if (!a.buffer)
            return "is an empty Buffer (default-constructed or moved-from)";
        if (a.buffer->ctx != device.ctx || (a.grad && a.grad->ctx != device.ctx))
            return "is a buffer of another Device (each Device has its own memory; create it on the device "
                   "that compiled the kernel)";
        uint64_t range = device.ctx->device_info().max_storage_buffer_range;
        if (a.buffer->buffer->size() > range)
            return "is a buffer of " + std::to_string(a.buffer->buffer->size()) +
                   " bytes, over the device's storage-buffer range of " + std::to_string(range) +
                   " bytes (the most one kernel argument may cover)";
        return {};
    }
    case DispatchArg::Kind::Image:
        if (!a.image) return "is an empty Image (default-constructed or moved-from)";
        if (a.image->ctx != device.ctx)
            return "is an image of another Device (each Device has its own memory; create it on the device "
                   "that compiled the kernel)";
        return {};
    case DispatchArg::Kind::Value: return {};
    }
    return {};
}

// Binds argument `a` to its slot; a resource is retained by the stream until synchronize().
void bind_argument(vk::Bindings& b, const codegen::GlslKernel& layout, const codegen::ArgSlot& slot,
                   const DispatchArg& a, StreamImpl& s) {
    switch (slot.kind) {
    case codegen::ArgSlot::Kind::Buffer:
        b.buffers[slot.binding] = a.buffer->buffer.get();
        b.buffer_written[slot.binding] = slot.written;
        s.retained.push_back(a.buffer);
        return;
    case codegen::ArgSlot::Kind::Image: {
        uint32_t index = slot.binding - layout.buffer_count;   // images follow all buffers, status included
        b.images[index] = a.image->image.get();
        b.image_written[index] = slot.written;
        s.retained.push_back(a.image);
        return;
    }
    case codegen::ArgSlot::Kind::Push:
        std::memcpy(b.push_constants.data() + slot.offset, a.bytes.data(), a.bytes.size());
        return;
    }
}

// The scratch buffer holds every thread's tape at once, in one binding: refuse a dispatch whose tape cannot
// fit, naming the loops whose tapes are there, before anything is allocated.
void check_scratch(const CompiledKernel& k, const DeviceImpl& device, std::array<uint32_t, 3> size) {
    if (!k.layout.uses_scratch) return;
    // In 128 bits: three 32-bit sizes multiply to at most 2^96 threads.
    const unsigned __int128 threads = (unsigned __int128)size[0] * size[1] * size[2];
    const uint64_t per_thread = uint64_t(k.layout.scratch_words_per_thread) * 4;
    const uint64_t range = device.ctx->device_info().max_storage_buffer_range;
    if (per_thread == 0 || threads <= range / per_thread) return;
    std::string loops;
    for (const TapeUse& t : k.tape)
        if (t.in_scratch)
            loops += std::string(loops.empty() ? "" : "; ") + "the loop at " + t.loop + " (" +
                     std::to_string(t.bytes_per_thread) + " bytes per thread, " + std::to_string(t.capacity) +
                     " iterations)";
    std::string total = threads > ~uint64_t(0) / per_thread ? std::string("over 2^64")
                                                             : std::to_string(uint64_t(threads) * per_thread);
    fail("kernel '", k.name, "': the autodiff tapes of ", size[0], " x ", size[1], " x ", size[2], " threads need ",
         total, " bytes of scratch (", per_thread, " bytes per thread: ", loops,
         "), over the device's storage-buffer range of ", range, " bytes; dispatch at most ", range / per_thread,
         " threads at a time, or lower tape_capacity() for those loops");
}

} // namespace
} // namespace detail

void ShaderBase::check(std::vector<DispatchArg>& args) const {
    const detail::CompiledKernel& kernel = *impl_->kernel;
    const auto& slots = kernel.layout.args;
    const auto& bundles = impl_->bundles;
    size_t user = slots.size() - kernel.grad_params.size();   // the gradient buffers come with their DiffBuffer
    for (const auto& b : bundles) user -= b.params - 1;
    if (args.size() != user) fail("kernel '", kernel.name, "' takes ", user, " arguments, got ", args.size());
    // One argument (or one part of a bundle) against one parameter.
    auto check_one = [&](size_t k, const codegen::ArgSlot& slot, DispatchArg& a) {
        if (slot.kind == codegen::ArgSlot::Kind::Push && a.kind == DispatchArg::Kind::Value && a.is_plain_number &&
            slot.type->is_scalar())
            if (std::string why = detail::misfit(a, slot.type->scalar_kind()); !why.empty())
                fail("argument ", k, " of kernel '", kernel.name, "' is a ", slot.type->to_string(), ": ", why);
        if (!detail::matches(slot, a))
            fail("argument ", k, " of kernel '", kernel.name, "' must be ", detail::expected(slot), ", got ",
                 detail::describe(a));
        if (std::string why = detail::unusable(a, *impl_->device); !why.empty())
            fail("argument ", k, " of kernel '", kernel.name, "' ", why);
    };
    std::vector<DispatchArg> flat;
    size_t param = 0, next_bundle = 0;
    for (size_t k = 0; k < args.size(); ++k) {
        DispatchArg& a = args[k];
        const ir::ArgBundle* b = next_bundle < bundles.size() && bundles[next_bundle].argument == k
                                     ? &bundles[next_bundle++] : nullptr;
        std::string want = b ? b->kind : std::string();
        if (a.bundle != want)
            fail("argument ", k, " of kernel '", kernel.name, "' must be ", b ? b->kind : detail::expected(slots[param]),
                 ", got ", a.bundle.empty() ? detail::describe(a) : a.bundle);
        if (!b) {
            check_one(k, slots[param++], a);
            flat.push_back(std::move(a));
            continue;
        }
        if (a.parts.size() != b->params)
            fail("argument ", k, " of kernel '", kernel.name, "': a ", b->kind, " of ", a.parts.size(),
                 " parts for ", b->params, " parameters");
        for (auto& part : a.parts)
            if (part.kind == DispatchArg::Kind::Buffer && !part.buffer)
                fail("argument ", k, " of kernel '", kernel.name, "' is an empty ", b->kind,
                     " (default-constructed or moved-from)");
        for (auto& part : a.parts) {
            check_one(k, slots[param++], part);
            flat.push_back(std::move(part));
        }
    }
    args = std::move(flat);
}

Command ShaderBase::Invocation::dispatch(uint32_t w, uint32_t h, uint32_t d) const {
    const detail::CompiledKernel& kernel = *shader_->kernel;
    const detail::DeviceImpl& device = *shader_->device;
    // Planned here, so a size the device cannot run fails where the dispatch is written.
    const auto& max = device.ctx->device_info().max_workgroup_count;
    std::array<uint32_t, 3> groups =
        detail::plan_dispatch(kernel.name, kernel.dimension, {w, h, d}, kernel.block, {max[0], max[1], max[2]});
    if (groups[0] == 0) return Command([](detail::StreamImpl&) {});
    if (!kernel.layout.barrier_at.empty()) {
        // A block cut by the edge of the dispatch would leave threads that never reach the barrier.
        const std::array<uint32_t, 3> size{w, h, d};
        for (int i = 0; i < 3; ++i)
            if (size[size_t(i)] % kernel.block[size_t(i)] != 0)
                fail("dispatch of '", kernel.name, "': the kernel calls sync_block() (at ", kernel.layout.barrier_at,
                     "), so its dispatch size must be a multiple of its block size in each dimension: ",
                     detail::show_block(size), " is not a multiple of ", detail::show_block(kernel.block));
    }
    detail::check_scratch(kernel, device, {w, h, d});
    auto shader = shader_;
    auto args = args_;
    return Command([shader, args, w, h, d, groups](detail::StreamImpl& s) {
        const detail::CompiledKernel& k = *shader->kernel;
        if (shader->device->ctx != s.device->ctx)
            fail("kernel '", k.name, "' was compiled by another Device than the one of the stream it is dispatched on");
        const auto& layout = k.layout;
        vk::Bindings b;
        b.buffers.resize(layout.buffer_count, nullptr);
        b.buffer_written.resize(layout.buffer_count, false);
        b.images.resize(layout.image_count, nullptr);
        b.image_written.resize(layout.image_count, false);
        b.push_constants.resize(layout.push_bytes);
        uint32_t size[3] = {w, h, d};
        std::memcpy(b.push_constants.data(), size, 12);
        for (size_t i = 0; i < args.size(); ++i) detail::bind_argument(b, layout, layout.args[i], args[i], s);
        // A DiffBuffer's gradient buffer is a hidden parameter after the user's, written by the generated
        // atomics.
        for (const auto& g : k.grad_params) {
            const auto& slot = layout.args[g.param];
            b.buffers[slot.binding] = args[g.of].grad->buffer.get();
            b.buffer_written[slot.binding] = true;
            s.retained.push_back(args[g.of].grad);
        }
        if (layout.uses_status) s.bind_status(b, k);
        if (layout.uses_scratch) s.bind_scratch(b, k, uint64_t(w) * h * d);
        // The kernel's pipeline must outlive the submission even if the cache forgets it meanwhile.
        s.retained.push_back(shader);
        s.stream.dispatch(*k.pipeline, b, groups[0], groups[1], groups[2]);
    });
}

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
