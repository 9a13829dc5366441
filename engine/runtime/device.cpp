// Context and Device: device creation from DeviceOptions (the environment's by default), the device list,
// and the device's resources and caches.
#include <adjoint/runtime/device.h>

#include "runtime/glsl_options.h"
#include "runtime/runtime_internal.h"

#include <cstdlib>
#include <string_view>

namespace adjoint {

Context::Context(std::string_view program_path) : program_path_(program_path) {}

Device Context::create_device(std::string_view backend) {
    return detail::create_device(DeviceOptions::from_environment(), backend, {});
}

Device Context::create_device(const DeviceOptions& options, std::string_view backend) {
    return detail::create_device(options, backend, {});
}

std::vector<PhysicalDevice> Context::list_devices() const {
    std::vector<PhysicalDevice> list;
    for (const vk::DeviceInfo& d : vk::enumerate_devices()) list.push_back({d.index, d.name, vk::to_string(d.kind)});
    return list;
}

DeviceOptions DeviceOptions::from_environment() {
    DeviceOptions o;
    vk::ContextOptions vk = vk::ContextOptions::from_environment();   // ADJOINT_DEVICE, ADJOINT_VALIDATION
    o.device = vk.device_override;
    o.validation = vk.validation;
    if (const char* cas = std::getenv("ADJOINT_NO_FLOAT_ATOMICS"); cas && std::string_view(cas) != "0")
        o.float_atomics = false;
    if (const char* texel = std::getenv("ADJOINT_NO_TEXEL_READS"); texel && std::string_view(texel) != "0")
        o.texel_reads = false;
    if (const char* limit = std::getenv("ADJOINT_LOOP_LIMIT"))
        o.loop_limit = uint32_t(std::strtoul(limit, nullptr, 10));
    if (const char* bytes = std::getenv("ADJOINT_LOCAL_TAPE_BYTES"))
        o.local_tape_bytes = uint32_t(std::strtoul(bytes, nullptr, 10));
    return o;
}

Device detail::create_device(const DeviceOptions& options, std::string_view backend, const vk::ContextExtras& extras) {
    if (!backend.empty() && backend != "vulkan")
        fail("unknown backend '", backend, "': Adjoint runs on \"vulkan\" (lavapipe where no GPU is present)");
    vk::ContextOptions vk_options;
    vk_options.device_override = options.device;
    vk_options.validation = options.validation;
    vk_options.extras = extras;
    auto impl = std::make_shared<detail::DeviceImpl>();
    impl->ctx = vk::Context::create(vk_options);
    const auto& info = impl->ctx->device_info();
    impl->glsl = detail::glsl_options_for(info, options.float_atomics, options.texel_reads);
    // Lavapipe (llvmpipe) stops loops after 65,535 iterations per group of threads: measured by the probe
    // in tests/runtime/loop_limit_test.cpp; the lowering then checks every loop against that limit.
    if (info.name.find("llvmpipe") != std::string::npos) impl->lowering.loop_limit = {65535, "lavapipe"};
    // Its compiler also miscompiles some loops that leave by a test at the end of their body (ir/passes.h);
    // ADJOINT_NO_LOOP_ROTATION=1 leaves them as they are (to measure what the rotation costs).
    const char* no_rotation = std::getenv("ADJOINT_NO_LOOP_ROTATION");
    impl->lowering.rotate_trailing_exits = info.name.find("llvmpipe") != std::string::npos &&
                                           !(no_rotation && std::string_view(no_rotation) != "0");
    if (options.loop_limit) impl->lowering.loop_limit = {*options.loop_limit, info.name};   // 0: no check
    // A GPU keeps private memory for every resident thread, and NVIDIA's driver refused kernels whose tapes
    // took 16 KB a thread (VK_ERROR_UNKNOWN on an H200): half that there, lavapipe's stack takes 16 KB.
    impl->lowering.local_tape_bytes = options.local_tape_bytes.value_or(
        info.kind == vk::DeviceKind::Cpu ? autodiff::kDefaultLocalTapeBytes : autodiff::kDefaultLocalTapeBytes / 2);
    impl->key = info.name + "|" + std::to_string(info.api_version) + "|" + (impl->glsl.float_atomic_add ? "fa" : "") +
                (impl->glsl.float_atomic_min_max ? "fm" : "") + (impl->glsl.texel_reads ? "tr" : "");
    impl->cache.set_memory_capacity(Device::kDefaultKernelCacheCapacity);
    return Device(std::move(impl));
}

std::string Device::name() const { return impl_->ctx->device_info().name; }

uint64_t Device::max_buffer_bytes() const { return impl_->ctx->device_info().max_storage_buffer_range; }

uint32_t Device::subgroup_size() const {
    const auto& info = impl_->ctx->device_info();
    return info.subgroup_operations & codegen::kSubgroupBasic ? info.subgroup_size : 0;
}

bool Device::int64_atomics() const {
    const auto& info = impl_->ctx->device_info();
    return info.int64 && info.int64_atomics;
}

size_t Device::buffer_bytes_in_use() const { return impl_->ctx->buffer_bytes_in_use(); }

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

} // namespace adjoint
