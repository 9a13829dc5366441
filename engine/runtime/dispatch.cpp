// Dispatching a compiled kernel: each argument checked once against its slot of the kernel's binding layout
// (codegen/binding_layout.h) when the invocation is made, then bound from the layout when the dispatch is
// recorded on a stream.
#include <adjoint/runtime/device.h>

#include "runtime/runtime_internal.h"

#include <array>
#include <cstring>
#include <sstream>

namespace adjoint {

namespace detail {
namespace {

using codegen::ArgSlot;

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

std::string expected(const ArgSlot& slot) {
    return slot.kind == ArgSlot::Kind::Image ? std::string("image2d") : slot.type->to_string();
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

// A plain C++ number that fits (misfit), written as the scalar parameter `t` holds it.
void convert_number(DispatchArg& a, const ir::Type* t) {
    a.bytes.resize(t->host_size());
    std::byte* dst = a.bytes.data();
    const double v = a.scalar;
    switch (t->scalar_kind()) {
    case ir::ScalarKind::UInt64: std::memcpy(dst, &a.integer, 8); break;   // exact: a double has 53 bits
    case ir::ScalarKind::Float: { float f = float(v); std::memcpy(dst, &f, 4); break; }
    case ir::ScalarKind::Int: { int32_t i = int32_t(v); std::memcpy(dst, &i, 4); break; }
    case ir::ScalarKind::UInt: { uint32_t u = uint32_t(v); std::memcpy(dst, &u, 4); break; }
    case ir::ScalarKind::Bool: { uint32_t b = v != 0; std::memcpy(dst, &b, 4); break; }
    }
    a.type = t;
    a.is_plain_number = false;
}

// Is `a` of the slot's kind and type? A DiffBuffer passes where a Buffer is expected (its values); a
// differentiable parameter needs one.
bool fits(const ArgSlot& slot, const DispatchArg& a) {
    switch (slot.kind) {
    case ArgSlot::Kind::Buffer:
        return a.kind == DispatchArg::Kind::Buffer && a.type == slot.type->element() &&
               (a.grad || !slot.type->is_diff_buffer());
    case ArgSlot::Kind::Image: return a.kind == DispatchArg::Kind::Image;
    case ArgSlot::Kind::Push: return a.kind == DispatchArg::Kind::Value && a.type == slot.type;
    }
    return false;
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

// The one check of an argument (argument k as the user wrote it, or one part of its bundle) against its
// parameter's slot; a plain C++ number becomes the parameter's scalar.
void check_argument(const std::string& kernel, size_t k, const ArgSlot& slot, DispatchArg& a, const DeviceImpl& device) {
    if (slot.kind == ArgSlot::Kind::Push && a.kind == DispatchArg::Kind::Value && a.is_plain_number &&
        slot.type->is_scalar()) {
        if (std::string why = misfit(a, slot.type->scalar_kind()); !why.empty())
            fail("argument ", k, " of kernel '", kernel, "' is a ", slot.type->to_string(), ": ", why);
        convert_number(a, slot.type);
    }
    if (!fits(slot, a))
        fail("argument ", k, " of kernel '", kernel, "' must be ", expected(slot), ", got ", describe(a));
    if (std::string why = unusable(a, device); !why.empty()) fail("argument ", k, " of kernel '", kernel, "' ", why);
}

// A bundle (a texture) against its parameters, part by part.
void check_bundle(const std::string& kernel, size_t k, const ir::ArgBundle& b, DispatchArg& a,
                  const std::vector<ArgSlot>& slots, size_t& param, std::vector<DispatchArg>& flat,
                  const DeviceImpl& device) {
    if (a.parts.size() != b.params)
        fail("argument ", k, " of kernel '", kernel, "': a ", b.kind, " of ", a.parts.size(), " parts for ", b.params,
             " parameters");
    for (auto& part : a.parts)
        if (part.kind == DispatchArg::Kind::Buffer && !part.buffer)
            fail("argument ", k, " of kernel '", kernel, "' is an empty ", b.kind, " (default-constructed or moved-from)");
    for (auto& part : a.parts) {
        check_argument(kernel, k, slots[param++], part, device);
        flat.push_back(std::move(part));
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

// One buffer (or image) bound to two parameters of a dispatch, one of which the kernel writes with plain
// stores, is refused. SPIR-V takes two bindings for two distinct memories, so a GPU may keep its reads through
// one binding (a read-only buffer goes through the texel cache) across the other's writes: the H200 gave wrong
// mip-chain gradients when those kernels read a buffer through one binding and wrote it through another
// (README). Reads beside atomics, or atomics through both, are left alone: a scatter into its own input adds
// by atomics; so is a kernel compiled with ShaderOptions::disjoint_views, which touches disjoint elements (its
// caller skips this check). `user_of[i]`: the user's argument that flat argument i came from (a texture binds
// several).
void check_aliasing(const CompiledKernel& k, const std::vector<DispatchArg>& flat, const std::vector<size_t>& user_of) {
    struct Bound {
        const void* resource;   // a BufferImpl or an ImageImpl
        std::string what;
        bool stored, image;
    };
    std::vector<Bound> bound;
    const auto& slots = k.layout.args;
    for (size_t i = 0; i < flat.size(); ++i) {
        const bool image = slots[i].kind == ArgSlot::Kind::Image;
        const void* r = image ? static_cast<const void*>(flat[i].image.get())
                        : slots[i].kind == ArgSlot::Kind::Buffer ? static_cast<const void*>(flat[i].buffer.get())
                                                                 : nullptr;
        if (r) bound.push_back({r, "argument " + std::to_string(user_of[i]), slots[i].stored, image});
    }
    for (const auto& g : k.grad_params)
        if (flat[g.of].grad)
            bound.push_back(
                {flat[g.of].grad.get(), "the gradient of argument " + std::to_string(user_of[g.of]), false, false});
    for (size_t a = 0; a < bound.size(); ++a)
        for (size_t b = a + 1; b < bound.size(); ++b) {
            if (bound[a].resource != bound[b].resource || !(bound[a].stored || bound[b].stored)) continue;
            const Bound& w = bound[a].stored ? bound[a] : bound[b];
            const Bound& o = bound[a].stored ? bound[b] : bound[a];
            fail("kernel '", k.name, "' is given one ", bound[a].image ? "image" : "buffer", " as ", bound[a].what,
                 " and ", bound[b].what, ", and writes ", w.what, " with plain stores: a GPU may take the two "
                 "bindings for distinct memory and reorder ", o.what, "'s accesses past those writes. Read and write "
                 "it through one parameter, or give the kernel a copy");
        }
}

// Binds argument `a` to its slot; a resource is retained by the stream until synchronize().
void bind_argument(vk::Bindings& b, const codegen::BindingLayout& layout, const ArgSlot& slot, const DispatchArg& a,
                   StreamImpl& s) {
    switch (slot.kind) {
    case ArgSlot::Kind::Buffer:
        b.buffers[slot.binding] = a.buffer->buffer.get();
        b.buffer_written[slot.binding] = slot.written;
        s.retained.push_back(a.buffer);
        return;
    case ArgSlot::Kind::Image: {
        uint32_t index = layout.image_index(slot);
        b.images[index] = a.image->image.get();
        b.image_written[index] = slot.written;
        s.retained.push_back(a.image);
        return;
    }
    case ArgSlot::Kind::Push:
        std::memcpy(b.push_constants.data() + slot.offset, a.bytes.data(), a.bytes.size());
        return;
    }
}

// Everything a dispatch of `k` binds, as its layout places it: the dispatch size, the checked arguments, the
// gradient buffers of DiffBuffers, and the stream's status and scratch buffers.
vk::Bindings bind(const CompiledKernel& k, const std::vector<DispatchArg>& args, std::array<uint32_t, 3> size,
                  StreamImpl& s) {
    const codegen::BindingLayout& layout = k.layout;
    vk::Bindings b;
    b.buffers.resize(layout.buffer_count, nullptr);
    b.buffer_written.resize(layout.buffer_count, false);
    b.images.resize(layout.image_count, nullptr);
    b.image_written.resize(layout.image_count, false);
    b.push_constants.resize(layout.push_bytes);
    std::memcpy(b.push_constants.data() + codegen::kDispatchSizeOffset, size.data(), codegen::kDispatchSizeBytes);
    for (size_t i = 0; i < args.size(); ++i) bind_argument(b, layout, layout.args[i], args[i], s);
    // A DiffBuffer's gradient buffer is a hidden parameter after the user's, written by the generated atomics.
    for (const auto& g : k.grad_params) {
        const auto& slot = layout.args[g.param];
        b.buffers[slot.binding] = args[g.of].grad->buffer.get();
        b.buffer_written[slot.binding] = true;
        s.retained.push_back(args[g.of].grad);
    }
    if (layout.uses_status) s.bind_status(b, k);
    if (layout.uses_scratch) s.bind_scratch(b, k, uint64_t(size[0]) * size[1] * size[2]);
    return b;
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
    std::vector<DispatchArg> flat;
    std::vector<size_t> user_of;   // per flat argument, the user's argument it came from
    size_t param = 0, next_bundle = 0;
    for (size_t k = 0; k < args.size(); ++k) {
        DispatchArg& a = args[k];
        const ir::ArgBundle* b = next_bundle < bundles.size() && bundles[next_bundle].argument == k
                                     ? &bundles[next_bundle++] : nullptr;
        std::string want = b ? b->kind : std::string();
        if (a.bundle != want)
            fail("argument ", k, " of kernel '", kernel.name, "' must be ", b ? b->kind : detail::expected(slots[param]),
                 ", got ", a.bundle.empty() ? detail::describe(a) : a.bundle);
        if (b) {
            detail::check_bundle(kernel.name, k, *b, a, slots, param, flat, *impl_->device);
            user_of.resize(flat.size(), k);
            continue;
        }
        detail::check_argument(kernel.name, k, slots[param++], a, *impl_->device);
        flat.push_back(std::move(a));
        user_of.push_back(k);
    }
    if (!impl_->disjoint_views) detail::check_aliasing(kernel, flat, user_of);
    args = std::move(flat);
}

Command ShaderBase::Invocation::dispatch(uint32_t w, uint32_t h, uint32_t d) const {
    const detail::CompiledKernel& kernel = *shader_->kernel;
    const detail::DeviceImpl& device = *shader_->device;
    // Planned here, so a size the device cannot run fails where the dispatch is written.
    const auto& max = device.ctx->device_info().max_workgroup_count;
    std::array<uint32_t, 3> groups =
        codegen::plan_dispatch(kernel.name, kernel.dimension, {w, h, d}, kernel.block, {max[0], max[1], max[2]});
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
        vk::Bindings b = detail::bind(k, args, {w, h, d}, s);
        // The kernel's pipeline must outlive the submission even if the cache forgets it meanwhile.
        s.retained.push_back(shader);
        s.stream.dispatch(*k.pipeline, b, groups[0], groups[1], groups[2]);
    });
}

} // namespace adjoint
