// The host API on top of the Vulkan layer: devices, resources, shaders (lowering, GLSL, cache,
// pipeline) and streams with argument checking and kernel error reports.
#include <adjoint/runtime/device.h>

#include <adjoint/autodiff/autodiff.h>
#include <adjoint/codegen/glsl.h>
#include <adjoint/ir/printer.h>
#include <adjoint/ir/trap.h>

#include "compile/glsl_compiler.h"
#include "runtime/runtime_internal.h"
#include "vulkan/vk_runtime.h"

#include <adjoint/core/hash.h>

#include <cmath>
#include <cstdlib>
#include <unordered_map>

namespace adjoint {

namespace detail {

class ShaderImpl;

class DeviceImpl {
public:
    std::shared_ptr<vk::Context> ctx;
    compile::ShaderCache cache;
    // Compiled kernels by a hash of their recorded IR and name: compiling the same kernel again reuses the
    // lowering, the GLSL and the pipeline (on lavapipe, pipeline creation is most of a warm compile).
    std::unordered_map<uint64_t, std::shared_ptr<const ShaderImpl>> kernels;
    codegen::GlslOptions glsl;
    std::string key;
};

class BufferImpl {
public:
    std::shared_ptr<vk::Buffer> buffer;
};

class ImageImpl {
public:
    std::shared_ptr<vk::Image> image;
};

class ShaderImpl {
public:
    std::shared_ptr<DeviceImpl> device;
    std::string name;
    codegen::GlslKernel layout;
    std::string ir_text;
    std::vector<TapeUse> tape;
    std::vector<autodiff::GradParam> grad_params;   // hidden parameters after the user's (gradient buffers)
    std::shared_ptr<vk::Pipeline> pipeline;   // shared by every shader compiled from the same kernel
    bool cache_hit = false;
    std::array<uint32_t, 3> block{};
    uint32_t dimension = 1;
};

class StreamImpl {
public:
    explicit StreamImpl(std::shared_ptr<DeviceImpl> d) : device(std::move(d)), stream(device->ctx) {}
    std::shared_ptr<DeviceImpl> device;
    vk::Stream stream;
    std::vector<std::shared_ptr<void>> retained;   // resources used by recorded commands, until synchronize
    std::unique_ptr<vk::Buffer> status;
    bool status_armed = false;
    uint32_t status_value = 0;
    std::vector<std::string> status_kernels;

    void bind_status(vk::Bindings& b, const ShaderImpl& s) {
        if (!status) status = std::make_unique<vk::Buffer>(device->ctx, 4);
        if (!status_armed) {
            stream.fill_zero(*status);
            status_armed = true;
        }
        if (b.buffers.size() <= s.layout.status_binding) b.buffers.resize(s.layout.status_binding + 1, nullptr);
        b.buffers[s.layout.status_binding] = status.get();
        if (b.buffer_written.size() <= s.layout.status_binding) b.buffer_written.resize(s.layout.status_binding + 1, false);
        b.buffer_written[s.layout.status_binding] = true;
        status_kernels.push_back(s.name);
    }

    // One scratch buffer per stream, grown to the largest need; dispatches that share it are ordered by
    // the stream's hazard barriers.
    std::shared_ptr<vk::Buffer> scratch;
    void bind_scratch(vk::Bindings& b, const ShaderImpl& s, uint64_t threads) {
        uint64_t bytes = threads * s.layout.scratch_words_per_thread * 4ull;
        if (!scratch || scratch->size() < bytes) {
            if (scratch) retained.push_back(scratch);   // recorded commands may still use the smaller one
            scratch = std::make_shared<vk::Buffer>(device->ctx, size_t(std::max<uint64_t>(bytes, 4)));
        }
        b.buffers[s.layout.scratch_binding] = scratch.get();
        b.buffer_written[s.layout.scratch_binding] = true;
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
            fail("kernel error: ", ir::trap_message(code),
                 "; the results of this submission are not valid (kernels: ", kernels.empty() ? "" : kernels.front(), ")");
        }
    }
};

Command buffer_copy_from(const std::shared_ptr<BufferImpl>& b, const void* src, size_t bytes) {
    // Host data is copied now, as the command is made, so the caller may reuse its memory at once.
    auto data = std::make_shared<std::vector<std::byte>>(bytes);
    std::memcpy(data->data(), src, bytes);
    return Command([b, data](StreamImpl& s) {
        s.stream.upload(*b->buffer, 0, data->data(), data->size());
        s.retained.push_back(b);
    });
}

Command buffer_copy_to(const std::shared_ptr<BufferImpl>& b, void* dst, size_t bytes) {
    return Command([b, dst, bytes](StreamImpl& s) {
        s.stream.download(*b->buffer, 0, dst, bytes);
        s.retained.push_back(b);
    });
}

Command buffer_fill_zero(const std::shared_ptr<BufferImpl>& b) {
    return Command([b](StreamImpl& s) {
        s.stream.fill_zero(*b->buffer);
        s.retained.push_back(b);
    });
}

Command image_copy_from(const std::shared_ptr<ImageImpl>& img, const void* src) {
    size_t bytes = size_t(img->image->width()) * img->image->height() * 16;
    auto data = std::make_shared<std::vector<std::byte>>(bytes);
    std::memcpy(data->data(), src, bytes);
    return Command([img, data](StreamImpl& s) {
        s.stream.upload(*img->image, data->data());
        s.retained.push_back(img);
    });
}

Command image_copy_to(const std::shared_ptr<ImageImpl>& img, void* dst) {
    return Command([img, dst](StreamImpl& s) {
        s.stream.download(*img->image, dst);
        s.retained.push_back(img);
    });
}

uint32_t image_width(const ImageImpl& img) { return img.image->width(); }
uint32_t image_height(const ImageImpl& img) { return img.image->height(); }

namespace {

std::string describe(const DispatchArg& a) {
    switch (a.kind) {
    case DispatchArg::Kind::Buffer: return (a.grad ? "diff_buffer<" : "buffer<") + a.type->to_string() + ">";
    case DispatchArg::Kind::Image: return "image2d";
    case DispatchArg::Kind::Value: return a.is_plain_number ? "a number" : a.type->to_string();
    }
    return "?";
}

// Writes a plain C++ number into a scalar parameter of kind k.
void write_number(std::byte* dst, ir::ScalarKind k, double v) {
    switch (k) {
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
    vk::ContextOptions options;
    options.extras = extras;
    const char* validation = std::getenv("ADJOINT_VALIDATION");
    options.validation = validation && std::string_view(validation) != "0";
    if (const char* d = std::getenv("ADJOINT_DEVICE")) options.device_override = d;
    auto impl = std::make_shared<detail::DeviceImpl>();
    impl->ctx = vk::Context::create(options);
    const auto& info = impl->ctx->device_info();
    impl->glsl.float_atomic_add = info.float_atomic_add;
    impl->glsl.float_atomic_min_max = info.float_atomic_min_max;
    if (const char* cas = std::getenv("ADJOINT_NO_FLOAT_ATOMICS"); cas && std::string_view(cas) != "0")
        impl->glsl.float_atomic_add = impl->glsl.float_atomic_min_max = false;
    impl->key = info.name + "|" + std::to_string(info.api_version) + "|" + (impl->glsl.float_atomic_add ? "fa" : "") +
                (impl->glsl.float_atomic_min_max ? "fm" : "");
    return Device(std::move(impl));
}

std::string Device::name() const { return impl_->ctx->device_info().name; }

Stream Device::create_stream() { return Stream(std::make_shared<detail::StreamImpl>(impl_)); }

uint64_t Device::validation_message_count() const { return impl_->ctx->validation_message_count(); }
std::vector<std::string> Device::validation_messages() const { return impl_->ctx->validation_messages(); }
uint64_t Device::cache_hits() const { return impl_->cache.hits(); }
uint64_t Device::cache_misses() const { return impl_->cache.misses(); }

std::shared_ptr<detail::BufferImpl> Device::make_buffer(size_t bytes) {
    auto b = std::make_shared<detail::BufferImpl>();
    b->buffer = std::make_shared<vk::Buffer>(impl_->ctx, bytes);
    return b;
}

std::shared_ptr<detail::ImageImpl> Device::make_image(PixelFormat, uint32_t width, uint32_t height) {
    if (width == 0 || height == 0) fail("create_image: an image needs a width and height of at least 1");
    auto img = std::make_shared<detail::ImageImpl>();
    img->image = std::make_shared<vk::Image>(impl_->ctx, width, height);
    return img;
}

std::shared_ptr<detail::ShaderImpl> Device::compile_function(const std::shared_ptr<ir::Function>& f,
                                                            const ShaderOptions& options) {
    std::string name = options.name.empty() ? f->name() : options.name;
    uint64_t key = hash_string(ir::print(*f), hash_string(name));
    if (auto it = impl_->kernels.find(key); it != impl_->kernels.end()) {
        auto s = std::make_shared<detail::ShaderImpl>(*it->second);
        s->device = impl_;
        s->cache_hit = true;
        return s;
    }
    auto s = std::make_shared<detail::ShaderImpl>();
    s->device = impl_;
    s->name = name;
    s->dimension = f->dimension;
    s->block = f->block_size;
    auto lowered = autodiff::lower(*f, s->name);
    for (const auto& t : lowered.tape_report) s->tape.push_back(TapeUse{t.loop, t.bytes_per_thread, t.capacity, t.in_scratch});
    s->grad_params = lowered.grad_params;
    s->layout = codegen::emit_glsl(*lowered.function, impl_->glsl);
    s->ir_text = ir::print(*lowered.function);
    compile::dump_kernel(s->name, s->ir_text, s->layout.source);
    compile::CompileOptions copts;
    copts.device_key = impl_->key;
    auto result = impl_->cache.compile(s->layout.source, s->name, copts);
    s->cache_hit = result.cache_hit;
    vk::PipelineLayoutDesc desc{s->layout.buffer_count, s->layout.image_count, s->layout.push_bytes};
    s->pipeline = std::make_shared<vk::Pipeline>(impl_->ctx, result.spirv, desc, s->name);
    auto cached = std::make_shared<detail::ShaderImpl>(*s);
    cached->device.reset();   // the device owns its cache: no reference back, or neither would be freed
    impl_->kernels.emplace(key, std::move(cached));
    return s;
}

// ---- Shader ----------------------------------------------------------------------------------------------

const std::string& ShaderBase::name() const { return impl_->name; }
const std::string& ShaderBase::glsl() const { return impl_->layout.source; }
const std::string& ShaderBase::ir_text() const { return impl_->ir_text; }
bool ShaderBase::cache_hit() const { return impl_->cache_hit; }
const std::vector<TapeUse>& ShaderBase::tape_report() const { return impl_->tape; }

void ShaderBase::check(std::vector<DispatchArg>& args) const {
    const auto& slots = impl_->layout.args;
    size_t user = slots.size() - impl_->grad_params.size();   // the gradient buffers come with their DiffBuffer
    if (args.size() != user) fail("kernel '", impl_->name, "' takes ", user, " arguments, got ", args.size());
    for (size_t k = 0; k < args.size(); ++k) {
        const codegen::ArgSlot& slot = slots[k];
        DispatchArg& a = args[k];
        bool ok = false;
        switch (slot.kind) {
        case codegen::ArgSlot::Kind::Buffer:
            ok = a.kind == DispatchArg::Kind::Buffer && a.type == slot.type->element() &&
                 (a.grad || !slot.type->is_diff_buffer());
            break;
        case codegen::ArgSlot::Kind::Image: ok = a.kind == DispatchArg::Kind::Image; break;
        case codegen::ArgSlot::Kind::Push:
            if (a.kind == DispatchArg::Kind::Value && a.is_plain_number && slot.type->is_scalar()) {
                a.bytes.resize(4);
                detail::write_number(a.bytes.data(), slot.type->scalar_kind(), a.scalar);
                a.type = slot.type;
                a.is_plain_number = false;
                ok = true;
            } else {
                ok = a.kind == DispatchArg::Kind::Value && a.type == slot.type;
            }
            break;
        }
        if (!ok) {
            std::string want = slot.kind == codegen::ArgSlot::Kind::Buffer ? slot.type->to_string()
                               : slot.kind == codegen::ArgSlot::Kind::Image ? std::string("image2d")
                                                                            : slot.type->to_string();
            fail("argument ", k, " of kernel '", impl_->name, "' must be ", want, ", got ", detail::describe(a));
        }
    }
}

Command ShaderBase::Invocation::dispatch(uint32_t w, uint32_t h, uint32_t d) const {
    auto shader = shader_;
    auto args = args_;
    return Command([shader, args, w, h, d](detail::StreamImpl& s) {
        const auto& layout = shader->layout;
        vk::Bindings b;
        b.buffers.resize(layout.buffer_count, nullptr);
        b.buffer_written.resize(layout.buffer_count, false);
        b.images.resize(layout.image_count, nullptr);
        b.image_written.resize(layout.image_count, false);
        b.push_constants.resize(layout.push_bytes);
        uint32_t size[3] = {w, h, d};
        std::memcpy(b.push_constants.data(), size, 12);
        uint32_t nbuffers = layout.buffer_count;   // images are bound after all buffers, the status one included
        for (size_t k = 0; k < args.size(); ++k) {
            const auto& slot = layout.args[k];
            const auto& a = args[k];
            switch (slot.kind) {
            case codegen::ArgSlot::Kind::Buffer:
                b.buffers[slot.binding] = a.buffer->buffer.get();
                b.buffer_written[slot.binding] = slot.written;
                s.retained.push_back(a.buffer);
                break;
            case codegen::ArgSlot::Kind::Image:
                b.images[slot.binding - nbuffers] = a.image->image.get();
                b.image_written[slot.binding - nbuffers] = slot.written;
                s.retained.push_back(a.image);
                break;
            case codegen::ArgSlot::Kind::Push:
                std::memcpy(b.push_constants.data() + slot.offset, a.bytes.data(), a.bytes.size());
                break;
            }
        }
        for (const auto& g : shader->grad_params) {
            const auto& slot = layout.args[g.param];
            b.buffers[slot.binding] = args[g.of].grad->buffer.get();
            b.buffer_written[slot.binding] = true;
            s.retained.push_back(args[g.of].grad);
        }
        if (layout.uses_status) s.bind_status(b, *shader);
        if (layout.uses_scratch) s.bind_scratch(b, *shader, uint64_t(w) * h * d);
        // In 64 bits: n + block - 1 wraps around for n near 2^32 and would dispatch (almost) nothing.
        auto groups = [](uint32_t n, uint32_t block) { return uint32_t((uint64_t(n) + block - 1) / block); };
        if (w == 0 || h == 0 || d == 0) return;
        uint32_t gx = groups(w, shader->block[0]), gy = groups(h, shader->block[1]), gz = groups(d, shader->block[2]);
        if (shader->dimension == 1) {
            // More groups than the device allows in x become rows in y; the kernel relinearizes the index
            // and the surplus threads of the last row stop at the bounds check.
            uint32_t max_x = s.device->ctx->device_info().max_workgroup_count[0];
            if (gx > max_x) {
                gy = (gx + max_x - 1) / max_x;
                gx = max_x;
            }
        }
        s.stream.dispatch(*shader->pipeline, b, gx, gy, gz);
    });
}

// ---- Stream ----------------------------------------------------------------------------------------------

Command synchronize() {
    return Command([](detail::StreamImpl& s) { s.synchronize(); });
}

Stream& Stream::operator<<(const Command& c) {
    c(*impl_);
    return *this;
}

// ---- For runtime/interop.cpp: the Vulkan objects behind the public handles ------------------------------

const std::shared_ptr<vk::Context>& detail::vulkan_context(const DeviceImpl& device) { return device.ctx; }
vk::Buffer& detail::vulkan_buffer(const BufferImpl& buffer) { return *buffer.buffer; }
vk::Image& detail::vulkan_image(const ImageImpl& image) { return *image.image; }

} // namespace adjoint
