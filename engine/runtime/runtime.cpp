// The host API on top of the Vulkan layer: devices, resources, shaders (lowering, GLSL, cache,
// pipeline) and streams with argument checking and kernel error reports.
#include <adjoint/runtime/device.h>

#include <adjoint/autodiff/autodiff.h>
#include <adjoint/codegen/glsl.h>
#include <adjoint/ir/printer.h>
#include <adjoint/ir/trap.h>
#include <adjoint/pipeline/lower.h>

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

// What compiling a kernel produces; immutable once built and shared by every Shader compiled from the same
// kernel, by the device's kernel cache while it keeps it, and by streams that recorded a dispatch of it.
struct CompiledKernel {
    std::string name;
    codegen::GlslKernel layout;
    std::string ir_text;
    std::vector<TapeUse> tape;
    std::vector<autodiff::GradParam> grad_params;   // hidden parameters after the user's (gradient buffers)
    std::shared_ptr<vk::Pipeline> pipeline;
    bool spirv_cache_hit = false;
    std::array<uint32_t, 3> block{};
    uint32_t dimension = 1;
};

class DeviceImpl {
public:
    std::shared_ptr<vk::Context> ctx;
    compile::ShaderCache cache;   // thread-safe
    // Compiled kernels by a hash of their recorded IR and name: compiling the same kernel again reuses the
    // lowering, the GLSL and the pipeline (on lavapipe, pipeline creation is most of a warm compile).
    compile::LruCache<uint64_t, std::shared_ptr<const CompiledKernel>> kernels{Device::kDefaultKernelCacheCapacity};
    codegen::GlslOptions glsl;
    pipeline::LowerOptions lowering;
    std::string key;
};

// Resources remember their Vulkan context, so a resource of another Device is refused by name rather than
// handed to a pipeline of this one.
class BufferImpl {
public:
    std::shared_ptr<vk::Context> ctx;
    std::shared_ptr<vk::Buffer> buffer;
};

class ImageImpl {
public:
    std::shared_ptr<vk::Context> ctx;
    std::shared_ptr<vk::Image> image;
};

class ShaderImpl {
public:
    std::shared_ptr<DeviceImpl> device;
    std::shared_ptr<const CompiledKernel> kernel;
    bool cache_hit = false;
    // The kernel's bundled arguments (textures), from the recorded function: kept here, not in the compiled
    // kernel, which kernels with the same IR share whatever their C++ parameter types.
    std::vector<ir::ArgBundle> bundles;
};

class StreamImpl {
public:
    explicit StreamImpl(std::shared_ptr<DeviceImpl> d) : device(std::move(d)), stream(device->ctx) {}
    std::mutex mutex;                              // one command at a time (Stream::operator<<)
    std::shared_ptr<DeviceImpl> device;
    vk::Stream stream;
    std::vector<std::shared_ptr<const void>> retained;   // resources and kernels used by recorded commands
    std::unique_ptr<vk::Buffer> status;
    bool status_armed = false;
    uint32_t status_value = 0;
    std::vector<std::pair<std::string, ir::TrapTable>> status_kernels;   // name, trap messages

    void bind_status(vk::Bindings& b, const CompiledKernel& k) {
        if (!status) status = std::make_unique<vk::Buffer>(device->ctx, 4);
        if (!status_armed) {
            stream.fill_zero(*status);
            status_armed = true;
        }
        b.buffers[k.layout.status_binding] = status.get();
        b.buffer_written[k.layout.status_binding] = true;
        status_kernels.emplace_back(k.name, k.layout.traps);
    }

    // One scratch buffer per stream, grown to the largest need; dispatches that share it are ordered by
    // the stream's hazard barriers. The size was checked against the device's range when the dispatch
    // command was made.
    std::shared_ptr<vk::Buffer> scratch;
    void bind_scratch(vk::Bindings& b, const CompiledKernel& k, uint64_t threads) {
        uint64_t bytes = threads * k.layout.scratch_words_per_thread * 4ull;
        if (!scratch || scratch->size() < bytes) {
            if (scratch) retained.push_back(scratch);   // recorded commands may still use the smaller one
            scratch = std::make_shared<vk::Buffer>(device->ctx, size_t(std::max<uint64_t>(bytes, 4)));
        }
        b.buffers[k.layout.scratch_binding] = scratch.get();
        b.buffer_written[k.layout.scratch_binding] = true;
    }

    void synchronize() {
        // The status word is read back after every dispatch of the submission.
        if (status_armed) stream.download(*status, 0, &status_value, 4);
        stream.synchronize();
        retained.clear();
        bool armed = status_armed;
        status_armed = false;
        auto kernels = std::move(status_kernels);
        status_kernels.clear();
        if (armed && status_value != 0) {
            uint32_t code = status_value;
            status_value = 0;
            // A code is a hash of its message: the first kernel that knows it raised it.
            std::string message = ir::trap_message({}, code);
            for (const auto& [name, traps] : kernels)
                if (traps.count(code)) {
                    message = ir::trap_message(traps, code);
                    break;
                }
            fail("kernel error: ", message, "; the results of this submission are not valid (kernels: ",
                 kernels.empty() ? "" : kernels.front().first, ")");
        }
    }
};

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

// ---- Context / Device ------------------------------------------------------------------------------------

Context::Context(std::string_view program_path) : program_path_(program_path) {}

Device Context::create_device(std::string_view backend) { return detail::create_device(backend, {}); }

Device detail::create_device(std::string_view backend, const vk::ContextExtras& extras) {
    if (!backend.empty() && backend != "vulkan")
        fail("unknown backend '", backend, "': Adjoint runs on \"vulkan\" (lavapipe where no GPU is present)");
    vk::ContextOptions options = vk::ContextOptions::from_environment();
    options.extras = extras;
    auto impl = std::make_shared<detail::DeviceImpl>();
    impl->ctx = vk::Context::create(options);
    const auto& info = impl->ctx->device_info();
    impl->glsl = detail::glsl_options_for(info);
    // Lavapipe (llvmpipe) stops loops after 65,535 iterations per group of threads: measured by the probe
    // in tests/runtime/loop_limit_test.cpp; the lowering then checks every loop against that limit.
    if (info.name.find("llvmpipe") != std::string::npos) impl->lowering.loop_limit = {65535, "lavapipe"};
    if (const char* limit = std::getenv("ADJOINT_LOOP_LIMIT"))   // 0: no check; N: check N on any device
        impl->lowering.loop_limit = {uint32_t(std::strtoul(limit, nullptr, 10)), info.name};
    impl->key = info.name + "|" + std::to_string(info.api_version) + "|" + (impl->glsl.float_atomic_add ? "fa" : "") +
                (impl->glsl.float_atomic_min_max ? "fm" : "");
    impl->cache.set_memory_capacity(Device::kDefaultKernelCacheCapacity);
    return Device(std::move(impl));
}

std::string Device::name() const { return impl_->ctx->device_info().name; }

uint64_t Device::max_buffer_bytes() const { return impl_->ctx->device_info().max_storage_buffer_range; }

uint32_t Device::subgroup_size() const {
    const auto& info = impl_->ctx->device_info();
    return info.subgroup_operations & codegen::kSubgroupBasic ? info.subgroup_size : 0;
}

Stream Device::create_stream() { return Stream(std::make_shared<detail::StreamImpl>(impl_)); }

uint64_t Device::validation_message_count() const { return impl_->ctx->validation_message_count(); }
std::vector<std::string> Device::validation_messages() const { return impl_->ctx->validation_messages(); }
uint64_t Device::cache_hits() const { return impl_->cache.hits(); }
uint64_t Device::cache_misses() const { return impl_->cache.misses(); }

void Device::set_kernel_cache_capacity(size_t kernels) {
    impl_->kernels.set_capacity(kernels);
    impl_->cache.set_memory_capacity(kernels);
}
size_t Device::kernel_cache_capacity() const { return impl_->kernels.capacity(); }
size_t Device::kernel_cache_size() const { return impl_->kernels.size(); }
void Device::clear_kernel_cache() {
    impl_->kernels.clear();
    impl_->cache.clear_memory();
}

std::shared_ptr<detail::BufferImpl> Device::make_buffer(size_t bytes) {
    auto b = std::make_shared<detail::BufferImpl>();
    b->ctx = impl_->ctx;
    b->buffer = std::make_shared<vk::Buffer>(impl_->ctx, bytes);
    return b;
}

std::shared_ptr<detail::ImageImpl> Device::make_image(PixelFormat, uint32_t width, uint32_t height) {
    if (width == 0 || height == 0) fail("create_image: an image needs a width and height of at least 1");
    auto img = std::make_shared<detail::ImageImpl>();
    img->ctx = impl_->ctx;
    img->image = std::make_shared<vk::Image>(impl_->ctx, width, height);
    return img;
}

namespace detail {
namespace {

std::string show_block(const std::array<uint32_t, 3>& b) {
    return std::to_string(b[0]) + " x " + std::to_string(b[1]) + " x " + std::to_string(b[2]);
}

// The block a kernel compiles with: its own, or the compile option's, within the device's limits.
std::array<uint32_t, 3> choose_block(const ir::Function& f, const std::string& name, const std::array<uint32_t, 3>& option,
                                     const vk::DeviceInfo& device) {
    std::array<uint32_t, 3> block = f.block_size;
    std::string where = f.block_loc.line() ? " (set_block_size at " + format_location(f.block_loc) + ")" : "";
    if (option != std::array<uint32_t, 3>{0, 0, 0}) {
        if (option[0] == 0 || option[1] == 0 || option[2] == 0)
            fail("compile of '", name, "': a block of ", show_block(option), " threads; each dimension needs at least 1");
        if (f.block_loc.line() && option != block)
            fail("compile of '", name, "': the option's block of ", show_block(option), " differs from the kernel's ",
                 show_block(block), where, "; a kernel that sets its block size is written for it");
        if ((f.dimension == 1 && (option[1] != 1 || option[2] != 1)) || (f.dimension == 2 && option[2] != 1))
            fail("compile of '", name, "': a ", f.dimension, "D kernel's block of ", show_block(option), " must be 1 in ",
                 f.dimension == 1 ? "y and z" : "z");
        block = option;
        where = " (the compile option)";
    }
    const uint64_t threads = uint64_t(block[0]) * block[1] * block[2];
    if (threads > device.max_workgroup_invocations)
        fail("kernel '", name, "': its block of ", show_block(block), " = ", threads, " threads", where,
             " exceeds the device's limit of ", device.max_workgroup_invocations,
             " threads per block (maxComputeWorkGroupInvocations)");
    for (int i = 0; i < 3; ++i)
        if (block[size_t(i)] > device.max_workgroup_size[i])
            fail("kernel '", name, "': its block of ", show_block(block), where, " exceeds the device's limit of ",
                 device.max_workgroup_size[i], " in ", "xyz"[i], " (maxComputeWorkGroupSize)");
    return block;
}

// Lowering, GLSL, SPIR-V (through the cache) and the pipeline. Runs with no lock held, so threads compile
// different kernels in parallel.
std::shared_ptr<const CompiledKernel> build_kernel(DeviceImpl& device, const ir::Function& f, std::string name,
                                                   const std::array<uint32_t, 3>& block_option) {
    auto k = std::make_shared<CompiledKernel>();
    k->name = std::move(name);
    k->dimension = f.dimension;
    const auto& info = device.ctx->device_info();
    k->block = choose_block(f, k->name, block_option, info);
    auto lowered = pipeline::lower(f, k->name, device.lowering);
    lowered.function->block_size = k->block;
    k->tape = lowered.tapes;
    k->grad_params = lowered.grad_params;
    k->layout = codegen::emit_glsl(*lowered.function, device.glsl);
    if (k->layout.shared_bytes > info.max_shared_memory)
        fail("kernel '", k->name, "' uses ", k->layout.shared_bytes, " bytes of shared memory per block (its shared "
             "arrays, and 4 bytes per thread for lavapipe's loop check where it applies), over the device's limit of ",
             info.max_shared_memory, " bytes (maxComputeSharedMemorySize)");
    k->ir_text = ir::print(*lowered.function);
    compile::dump_kernel(k->name, k->ir_text, k->layout.source);
    compile::CompileOptions copts;
    copts.device_key = device.key;
    auto result = device.cache.compile(k->layout.source, k->name, copts);
    k->spirv_cache_hit = result.cache_hit;
    vk::PipelineLayoutDesc desc{k->layout.buffer_count, k->layout.image_count, k->layout.push_bytes};
    k->pipeline = std::make_shared<vk::Pipeline>(device.ctx, result.spirv, desc, k->name);
    return k;
}

} // namespace
} // namespace detail

std::shared_ptr<detail::ShaderImpl> Device::compile_function(const std::shared_ptr<ir::Function>& f,
                                                            const ShaderOptions& options) {
    std::string name = options.name.empty() ? f->name() : options.name;
    uint64_t key = hash_string(ir::print(*f), hash_string(name, impl_->lowering.loop_limit.iterations));
    // The block option, and whether the kernel chose its own block (then no other is allowed).
    key = hash_string(detail::show_block(options.block) + "|" + format_location(f->block_loc), key);
    auto s = std::make_shared<detail::ShaderImpl>();
    s->device = impl_;
    s->bundles = f->bundles;
    if (auto cached = impl_->kernels.get(key)) {
        s->kernel = *cached;
        s->cache_hit = true;
        return s;
    }
    // Two threads compiling the same new kernel at once both build it; the cache keeps the later one.
    s->kernel = detail::build_kernel(*impl_, *f, std::move(name), options.block);
    s->cache_hit = s->kernel->spirv_cache_hit;
    impl_->kernels.put(key, s->kernel);
    return s;
}

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
