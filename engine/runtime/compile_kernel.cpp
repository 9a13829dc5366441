// Compiling a kernel for a device: the block size, lowering, GLSL, SPIR-V through the cache and the
// pipeline, kept in the device's kernel cache by a hash of the recorded IR.
#include <adjoint/runtime/device.h>

#include <adjoint/core/hash.h>
#include <adjoint/ir/printer.h>

#include "runtime/runtime_internal.h"

namespace adjoint {

namespace detail {
namespace {

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
    vk::PipelineLayoutDesc desc{k->layout.buffer_count, k->layout.image_count, k->layout.push_bytes,
                                k->layout.texel_words};
    k->pipeline = std::make_shared<vk::Pipeline>(device.ctx, result.spirv, desc, k->name);
    return k;
}

} // namespace
} // namespace detail

std::shared_ptr<detail::ShaderImpl> Device::compile_function(const std::shared_ptr<ir::Function>& f,
                                                            const ShaderOptions& options) {
    std::string name = options.name.empty() ? f->name() : options.name;
    // The lowering's options (loop limit, private tape budget) are the device's, fixed when it was made, and so
    // is this cache: the key leaves them out.
    uint64_t key = hash_string(ir::print(*f), hash_string(name));
    // The block option, and whether the kernel chose its own block (then no other is allowed).
    key = hash_string(detail::show_block(options.block) + "|" + format_location(f->block_loc), key);
    auto s = std::make_shared<detail::ShaderImpl>();
    s->device = impl_;
    s->bundles = f->bundles;
    s->disjoint_views = options.disjoint_views;
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

} // namespace adjoint
