// The Vulkan layer's interface: device choice, owned resources, pipelines and command streams. Knows no IR.
#pragma once
#include <vulkan/vulkan_core.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace adjoint::vk {

// ---- Device choice: a pure function over plain structs, testable with no driver. ----------------------
enum class DeviceKind { Discrete, Integrated, Virtual, Cpu, Other };
const char* to_string(DeviceKind kind);

struct DeviceInfo {
    uint32_t index = 0;               // position in vkEnumeratePhysicalDevices
    std::string name;                 // VkPhysicalDeviceProperties::deviceName
    DeviceKind kind = DeviceKind::Other;
    uint32_t api_version = 0;         // VK_MAKE_API_VERSION encoded
    bool has_compute_queue = false;
    uint32_t queue_family = 0;        // the family the engine's queue would come from
    std::string unmet;                // why the caller's extra requirements (ContextExtras) rule it out
    bool float_atomic_add = false;    // VK_EXT_shader_atomic_float: shaderBufferFloat32AtomicAdd
    bool float_atomic_min_max = false;// VK_EXT_shader_atomic_float2: shaderBufferFloat32AtomicMinMax
    bool shared_float_atomic_add = false;      // shaderSharedFloat32AtomicAdd
    bool shared_float_atomic_min_max = false;  // shaderSharedFloat32AtomicMinMax
    bool int64 = false;                        // shaderInt64
    bool int64_atomics = false;                // shaderBufferInt64Atomics (VK_KHR_shader_atomic_int64)
    bool shared_int64_atomics = false;         // shaderSharedInt64Atomics
    uint32_t subgroup_size = 0;                // VkPhysicalDeviceSubgroupProperties
    uint32_t subgroup_operations = 0;          // its supportedOperations, 0 unless compute is a supported stage
    uint32_t max_push_constants = 128;
    uint32_t max_workgroup_count[3] = {65535, 65535, 65535};
    uint32_t max_workgroup_size[3] = {128, 128, 64};   // maxComputeWorkGroupSize
    uint32_t max_workgroup_invocations = 128;          // maxComputeWorkGroupInvocations
    uint32_t max_shared_memory = 16384;                // maxComputeSharedMemorySize (bytes)
    uint64_t max_storage_buffer_range = 1u << 27;   // the most bytes one storage-buffer binding may cover
    uint32_t max_texel_buffer_elements = 0;         // maxTexelBufferElements
    // Every buffer a storage binding may cover can be read as a uniform texel buffer of any word size
    // (R32_UINT, R32G32_UINT and R32G32B32A32_UINT views, all maxStorageBufferRange / 4 words in range).
    bool texel_reads = false;
};

struct DeviceChoice {
    std::optional<uint32_t> chosen;   // index into the list given, or none
    std::vector<std::string> report;  // one line per device: why it was chosen or passed over
};

// Ranks discrete GPU > integrated > virtual > CPU > other, among devices with a compute queue and Vulkan
// 1.1+. `override_spec` (ADJOINT_DEVICE): empty = rank; all digits = that index; else a case-insensitive
// substring of the name. An override that matches nothing chooses none, and the report says why.
DeviceChoice choose_device(std::span<const DeviceInfo> devices, std::string_view override_spec);

// ---- Context: owns the instance, debug messenger, device, queue and command pool. -----------------------
// What a caller that also draws with the device (runtime/interop.h) needs beyond compute.
struct ContextExtras {
    std::vector<std::string> instance_extensions;
    std::vector<std::string> device_extensions;   // a device lacking one is passed over
    std::function<void(VkInstance)> on_instance;  // right after the instance exists, before device choice
    // Whether a queue family (one with compute) may be the engine's queue; a device with none is passed over.
    std::function<bool(VkInstance, VkPhysicalDevice, uint32_t)> accept_queue_family;
    std::function<void(VkInstance)> on_instance_destroy;  // after the device is gone, before the instance
};

struct ContextOptions {
    ContextExtras extras;
    bool validation = false;          // enable VK_LAYER_KHRONOS_validation + a counting debug messenger
    std::string device_override;      // as choose_device (the environment is not read: see from_environment)

    // ADJOINT_VALIDATION (on unless unset, empty or "0") and ADJOINT_DEVICE: the one reading of the
    // environment that the runtime and the test fixtures share.
    static ContextOptions from_environment();
};

class Buffer;
class Image;
class Pipeline;
class Stream;

// Device time per pipeline, from timestamps written around each dispatch of a submission that began while
// profiling was on (vulkan/profile.cpp). Thread-safe: every stream of a context adds to its one profile.
class KernelProfile {
public:
    struct Entry {
        uint64_t dispatches = 0;
        double ms = 0.0;
    };
    // Throws adjoint::Error when the device's queue writes no timestamps (timestampValidBits 0).
    void enable(bool on);
    bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
    void add(const std::string& pipeline, double ms);
    void add_untimed(uint64_t dispatches);   // dispatches past a submission's query capacity
    std::map<std::string, Entry> entries() const;
    uint64_t untimed() const;
    void clear();
    uint32_t timestamp_bits = 0;   // the queue family's timestampValidBits (set by the context)
    double timestamp_period_ns = 1.0;

private:
    std::atomic<bool> enabled_{false};
    mutable std::mutex mutex_;
    std::map<std::string, Entry> entries_;
    uint64_t untimed_ = 0;
};

// The physical devices (usable or not) as a Context would see them, through a temporary instance without
// validation. Throws the no-driver Error where Context::create would.
std::vector<DeviceInfo> enumerate_devices();

// Thread-safe: resources, pipelines and streams may be created and used from several threads at once (each
// Stream by one thread at a time); submissions to the shared queue are serialized inside.
class Context {
public:
    // Throws adjoint::Error naming the failed call and VkResult, or listing the devices passed over. With no
    // Vulkan driver installed the error says so and how to install lavapipe; validation that was asked for
    // but cannot be loaded is an error too, never a silent downgrade.
    static std::shared_ptr<Context> create(const ContextOptions& options);
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    const DeviceInfo& device_info() const;
    std::vector<DeviceInfo> all_devices() const;        // what the instance saw, in enumeration order
    const DeviceChoice& choice() const;                 // report of the choice made
    // Validation messages of severity warning or error seen so far (when validation is on).
    uint64_t validation_message_count() const;
    std::vector<std::string> validation_messages() const;
    bool validation_enabled() const;
    KernelProfile& profile();
    // Device memory allocations made for Buffers so far: a released Buffer goes to the context's pool and the
    // next Buffer of its size takes it, allocating nothing (vulkan/buffer.cpp).
    uint64_t buffer_allocations() const;
    // Bytes of the Buffers alive now (rounded to words; the pool's kept ones and images not included).
    size_t buffer_bytes_in_use() const;

    struct Impl;
    Impl& impl() { return *impl_; }

private:
    explicit Context(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// A storage buffer of `bytes` bytes (at least 4). Contents are undefined until written.
class Buffer {
public:
    Buffer(std::shared_ptr<Context> ctx, size_t bytes);
    ~Buffer();
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    size_t size() const;
    uint64_t id() const;              // unique per process, used for hazard tracking
    struct Impl;
    Impl& impl() { return *impl_; }
private:
    std::unique_ptr<Impl> impl_;
};

// A 2D storage image, RGBA32F, usable as a GLSL `image2D` with layout(rgba32f). Kept in GENERAL layout.
class Image {
public:
    Image(std::shared_ptr<Context> ctx, uint32_t width, uint32_t height);
    ~Image();
    Image(const Image&) = delete;
    Image& operator=(const Image&) = delete;
    uint32_t width() const;
    uint32_t height() const;
    uint64_t id() const;
    struct Impl;
    Impl& impl() { return *impl_; }
private:
    std::unique_ptr<Impl> impl_;
};

// Descriptor set 0: bindings 0..buffer_count-1 are buffers, then image_count storage images. A buffer binding
// is a storage buffer, or where texel_words[i] is 1, 2 or 4 a uniform texel buffer through a view of that many
// 32-bit words a texel (R32_UINT, R32G32_UINT, R32G32B32A32_UINT; codegen's ArgSlot::texel_words); an empty
// texel_words makes them all storage buffers. One push-constant range of push_constant_bytes (0 allowed)
// visible to the compute stage.
struct PipelineLayoutDesc {
    uint32_t buffer_count = 0;
    uint32_t image_count = 0;
    uint32_t push_constant_bytes = 0;
    std::vector<uint32_t> texel_words = {};   // = {}: initializers that leave it out draw no warning

    uint32_t texel_words_of(uint32_t binding) const { return binding < texel_words.size() ? texel_words[binding] : 0; }
};

// The view format of a uniform texel buffer of `words` 32-bit words a texel.
VkFormat texel_format(uint32_t words);

class Pipeline {
public:
    // `name` is used in error messages. Throws if the layout exceeds device limits.
    Pipeline(std::shared_ptr<Context> ctx, std::span<const uint32_t> spirv, const PipelineLayoutDesc& layout,
             std::string name);
    ~Pipeline();
    Pipeline(const Pipeline&) = delete;
    Pipeline& operator=(const Pipeline&) = delete;
    const PipelineLayoutDesc& layout() const;
    const std::string& name() const;
    struct Impl;
    Impl& impl() { return *impl_; }
private:
    std::unique_ptr<Impl> impl_;
};

// What one dispatch binds: buffers and images in binding order, then the push-constant bytes.
struct Bindings {
    std::vector<Buffer*> buffers;
    std::vector<Image*> images;
    std::vector<std::byte> push_constants;
    // Which buffers/images the kernel writes (same order as above); a resource not written is only read.
    std::vector<bool> buffer_written;
    std::vector<bool> image_written;
};

// Records many commands into one command buffer; submits and waits at synchronize(). Commands run in
// the order recorded; the stream inserts a barrier only where a command touches a resource that an
// earlier command of the same submission wrote (or writes one that an earlier command read).
class Stream {
public:
    explicit Stream(std::shared_ptr<Context> ctx);
    ~Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    // The host data is copied at call time; the caller may reuse `src` at once.
    void upload(Buffer& dst, size_t offset, const void* src, size_t bytes);
    // `dst` is written during synchronize(); it must stay valid until then.
    void download(Buffer& src, size_t offset, void* dst, size_t bytes);
    void upload(Image& dst, const void* src);          // width*height*16 bytes, tightly packed
    void download(Image& src, void* dst);
    void fill_zero(Buffer& dst);
    // `bytes` from `src` at byte `src_offset` to `dst` at `dst_offset` (distinct buffers), on the device.
    void copy(Buffer& src, size_t src_offset, Buffer& dst, size_t dst_offset, size_t bytes);
    void dispatch(Pipeline& pipeline, const Bindings& bindings, uint32_t groups_x, uint32_t groups_y,
                  uint32_t groups_z);
    // Submits everything recorded, waits, completes downloads, recycles staging and descriptors.
    // Throws adjoint::Error on device loss (VK_ERROR_DEVICE_LOST) or other failures.
    void synchronize();
    size_t pending_commands() const;

    struct Impl;
private:
    std::unique_ptr<Impl> impl_;
};

// ---- The native objects, for callers that draw with the same device (runtime/interop.h) ----------------
struct NativeContext {
    VkInstance instance = VK_NULL_HANDLE;
    VkPhysicalDevice physical_device = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    VkQueue queue = VK_NULL_HANDLE;
    uint32_t queue_family = 0;
    uint32_t api_version = 0;         // the instance's apiVersion
};
NativeContext native(Context& ctx);
VkBuffer native(Buffer& buffer);
struct NativeImage {
    VkImage image = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE;
};
NativeImage native(Image& image);
// Runs `fn` with the queue that every stream of `ctx` submits to, so callers submit and present in turn.
void with_queue(Context& ctx, const std::function<void(VkQueue)>& fn);

} // namespace adjoint::vk
