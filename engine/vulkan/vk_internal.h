// The Impl structs behind vk_runtime.h, shared by the files of the Vulkan layer and by nothing else.
#pragma once
#include "vulkan/vk_check.h"
#include "vulkan/vk_runtime.h"

#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace adjoint::vk {

// A VkBuffer with its own memory; used both for user buffers and for a stream's staging.
struct RawBuffer {
    VkDevice device = VK_NULL_HANDLE;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void* mapped = nullptr; // set only for host-visible buffers
    size_t size = 0;

    RawBuffer() = default;
    RawBuffer(Context::Impl& ctx, size_t bytes, VkBufferUsageFlags usage, bool host_visible);
    RawBuffer(RawBuffer&& other) noexcept { swap(other); }
    RawBuffer& operator=(RawBuffer&& other) noexcept {
        swap(other);
        return *this;
    }
    ~RawBuffer();
    void swap(RawBuffer& other) noexcept;
};

struct Context::Impl {
    VkInstance instance = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
    VkPhysicalDevice physical = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    VkQueue queue = VK_NULL_HANDLE;
    uint32_t queue_family = 0;
    std::function<void(VkInstance)> on_instance_destroy; // ContextExtras::on_instance_destroy
    uint32_t instance_api_version = 0;
    VkCommandPool once_pool = VK_NULL_HANDLE; // for one-off setup work such as image layout transitions
    VkPhysicalDeviceMemoryProperties memory{};
    VkPhysicalDeviceLimits limits{};

    DeviceInfo info;
    std::vector<DeviceInfo> devices;
    DeviceChoice choice;
    bool validation = false;
    // Written by the debug messenger callback, which runs on whichever thread made the Vulkan call.
    mutable std::mutex messages_mutex;
    std::vector<std::string> messages;
    // The queue is externally synchronized (Vulkan spec): every stream of the device submits through it.
    std::mutex queue_mutex;
    KernelProfile profile;
    // Device buffers their owners released, by size, for the next buffer of that size: an optimization step
    // that makes its scratch buffers anew (the rasterizer's, 30 an iteration of a pose scene) then pays
    // vkAllocateMemory and vkFreeMemory once, not every iteration (on an H200 such an iteration took 4.7 ms
    // whatever its size, the texture iteration, which allocates nothing, 0.13). Released buffers are past
    // their last use: streams retain what they bind until synchronize(). At most kBufferPoolBytes are kept;
    // the rest are freed. Contents are whatever was left there, as Vulkan's fresh memory is undefined.
    static constexpr size_t kBufferPoolBytes = size_t(256) << 20;
    std::mutex buffer_pool_mutex;
    std::unordered_map<size_t, std::vector<RawBuffer>> buffer_pool;
    size_t buffer_pool_bytes = 0;
    uint64_t buffer_allocations = 0;   // under buffer_pool_mutex
    size_t buffer_bytes_in_use = 0;    // under buffer_pool_mutex: the Buffers alive (taken, not yet kept)
    RawBuffer take_buffer(size_t bytes);   // one of `bytes` kept, else a new one (counted)
    void keep_buffer(RawBuffer&& raw);     // into the pool, or freed when it is full

    ~Impl();
    // Submits under the queue lock; the caller waits on `fence` (no lock held while waiting).
    void submit(const VkSubmitInfo& info, VkFence fence);
    void wait_queue_idle();
    // A memory type allowed by `type_bits` with all of `required`; one that also has `preferred` wins.
    uint32_t find_memory(uint32_t type_bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred,
                         size_t bytes) const;
    // Records with `record`, submits, and waits until the queue is idle (the one-off pool and the queue
    // are locked meanwhile).
    void run_once(const std::function<void(VkCommandBuffer)>& record);
};

// A stream's kernel profiling (profile.cpp): timestamps around each dispatch of a submission that began
// while the context's KernelProfile was on, read back into it after the submission's fence.
class DispatchTimer {
public:
    static constexpr uint32_t kTimedDispatches = 2048;   // a submission's capacity; later ones count as untimed
    void begin(VkDevice device, VkCommandBuffer cmd, const KernelProfile& profile);
    void dispatch(VkCommandBuffer cmd, const std::string& pipeline, const std::function<void()>& record);
    void read(VkDevice device, KernelProfile& profile);   // then clear()
    void clear();
    void release(VkDevice device);

private:
    VkQueryPool queries_ = VK_NULL_HANDLE;   // made on first use
    bool timing_ = false;                    // decided when the submission begins
    std::vector<const std::string*> timed_;  // the pipelines timed, in query order
    uint64_t untimed_ = 0;
};

// Physical devices (device_info.cpp): extension lists, a device's DeviceInfo (index: its enumeration
// position), and the caller's extra requirements checked into DeviceInfo::unmet / queue_family.
bool has_extension(const std::vector<VkExtensionProperties>& list, const char* name);
std::vector<VkExtensionProperties> device_extensions(VkPhysicalDevice pd);
DeviceInfo describe(VkPhysicalDevice pd, uint32_t index);
void check_extras(DeviceInfo& d, VkPhysicalDevice pd, VkInstance instance, const ContextExtras& extras);

// The next id for hazard tracking; buffers and images share one sequence so one set can hold both.
uint64_t next_resource_id();


struct Buffer::Impl {
    std::shared_ptr<Context> ctx;
    RawBuffer raw;
    size_t requested = 0; // size() as asked for, before rounding to 4 bytes
    uint64_t id = next_resource_id();
    // Uniform texel buffer views of 1, 2 and 4 words a texel, made on first use (streams on several threads
    // may bind the buffer at once) and destroyed with the buffer, before it.
    std::mutex views_mutex;
    VkBufferView views[3] = {};
    VkBufferView texel_view(uint32_t words);
    ~Impl();
};

struct Image::Impl {
    std::shared_ptr<Context> ctx;
    VkImage image = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE;
    uint32_t width = 0, height = 0;
    uint64_t id = next_resource_id();
    ~Impl();
};

struct Pipeline::Impl {
    std::shared_ptr<Context> ctx;
    PipelineLayoutDesc desc;
    std::string name;
    VkShaderModule module = VK_NULL_HANDLE;
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
    ~Impl();
};

} // namespace adjoint::vk
