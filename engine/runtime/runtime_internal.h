// What the runtime's files share: the objects behind the public handles (device, resources, shaders,
// streams), device creation with extras (interop.cpp), and the Vulkan objects behind handles.
#pragma once
#include <adjoint/runtime/device.h>

#include <adjoint/autodiff/autodiff.h>
#include <adjoint/pipeline/lower.h>
#include <adjoint/codegen/glsl.h>
#include <adjoint/ir/trap.h>

#include "compile/glsl_compiler.h"
#include "compile/lru_cache.h"
#include "vulkan/vk_runtime.h"

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace adjoint::detail {

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
    bool disjoint_views = false;   // ShaderOptions::disjoint_views: the aliasing check is off
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

// "8 x 8 x 4", for messages about blocks.
inline std::string show_block(const std::array<uint32_t, 3>& b) {
    return std::to_string(b[0]) + " x " + std::to_string(b[1]) + " x " + std::to_string(b[2]);
}

// Context::create_device with the caller's extra requirements (interop::create_device).
Device create_device(const DeviceOptions& options, std::string_view backend, const vk::ContextExtras& extras);

const std::shared_ptr<vk::Context>& vulkan_context(const DeviceImpl& device);
vk::Buffer& vulkan_buffer(const BufferImpl& buffer);
vk::Image& vulkan_image(const ImageImpl& image);

} // namespace adjoint::detail
