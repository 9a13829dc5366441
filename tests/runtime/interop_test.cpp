// The interop surface: devices with a caller's extensions and queue test, native handles, and the ordering
// between a stream's synchronize() and the caller's own command buffers on the engine's queue.
#include <adjoint/runtime/interop.h>

#include "support/device_fixture.h"
#include "support/error_text.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>

// Vulkan structs are written T{sType} on purpose: value-initialization zeroes the rest.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace adjoint::test {
namespace {

void expect_success(VkResult r) { ASSERT_EQ(r, VK_SUCCESS); }

// A host-visible buffer and a command buffer of the caller's own, on the engine's device and queue family.
struct CallerSide {
    interop::DeviceHandles h;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void* mapped = nullptr;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;

    CallerSide(const Device& device, VkDeviceSize bytes) : h(interop::handles(device)) {
        VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        info.size = bytes;
        info.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
        EXPECT_EQ(vkCreateBuffer(h.device, &info, nullptr, &buffer), VK_SUCCESS);
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(h.device, buffer, &req);
        VkPhysicalDeviceMemoryProperties props;
        vkGetPhysicalDeviceMemoryProperties(h.physical_device, &props);
        const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        alloc.allocationSize = req.size;
        for (uint32_t i = 0; i < props.memoryTypeCount; ++i)
            if ((req.memoryTypeBits & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want) {
                alloc.memoryTypeIndex = i;
                break;
            }
        EXPECT_EQ(vkAllocateMemory(h.device, &alloc, nullptr, &memory), VK_SUCCESS);
        EXPECT_EQ(vkBindBufferMemory(h.device, buffer, memory, 0), VK_SUCCESS);
        EXPECT_EQ(vkMapMemory(h.device, memory, 0, VK_WHOLE_SIZE, 0, &mapped), VK_SUCCESS);
        VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
        pool_info.queueFamilyIndex = h.queue_family;
        EXPECT_EQ(vkCreateCommandPool(h.device, &pool_info, nullptr, &pool), VK_SUCCESS);
        VkCommandBufferAllocateInfo cmd_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        cmd_info.commandPool = pool;
        cmd_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        cmd_info.commandBufferCount = 1;
        EXPECT_EQ(vkAllocateCommandBuffers(h.device, &cmd_info, &cmd), VK_SUCCESS);
        VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        EXPECT_EQ(vkCreateFence(h.device, &fence_info, nullptr, &fence), VK_SUCCESS);
    }
    ~CallerSide() {
        vkDestroyFence(h.device, fence, nullptr);
        vkDestroyCommandPool(h.device, pool, nullptr);
        vkDestroyBuffer(h.device, buffer, nullptr);
        vkFreeMemory(h.device, memory, nullptr);
    }

    // Records with `record` (after the barrier the contract asks for) and submits through the engine's queue.
    void submit(const Device& device, const std::function<void(VkCommandBuffer)>& record) {
        vkResetCommandBuffer(cmd, 0);
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        expect_success(vkBeginCommandBuffer(cmd, &begin));
        VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
        barrier.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                             VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
        record(cmd);
        // The host reads `buffer` after the fence: make the copies' writes visible to it.
        barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0,
                             nullptr, 0, nullptr);
        expect_success(vkEndCommandBuffer(cmd));
        expect_success(vkResetFences(h.device, 1, &fence));
        VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        submit.commandBufferCount = 1;
        submit.pCommandBuffers = &cmd;
        interop::with_queue(device, [&](VkQueue q) { expect_success(vkQueueSubmit(q, 1, &submit, fence)); });
    }
    void wait() { expect_success(vkWaitForFences(h.device, 1, &fence, VK_TRUE, UINT64_MAX)); }
};

TEST(InteropDevice, ExtrasReachTheInstanceAndTheDevice) {
    Context ctx;
    VkInstance seen = VK_NULL_HANDLE;
    bool surface_functions = false;
    std::vector<uint32_t> asked;
    int destroyed = 0;
    interop::DeviceRequirements r;
    r.instance_extensions = {VK_KHR_SURFACE_EXTENSION_NAME};
    r.device_extensions = {VK_KHR_SWAPCHAIN_EXTENSION_NAME};
    r.on_instance = [&](VkInstance instance) {
        seen = instance;
        surface_functions = vkGetInstanceProcAddr(instance, "vkDestroySurfaceKHR") != nullptr;
    };
    r.accept_queue_family = [&](VkInstance instance, VkPhysicalDevice, uint32_t family) {
        EXPECT_EQ(instance, seen);
        asked.push_back(family);
        return true;
    };
    r.on_instance_destroy = [&](VkInstance instance) {
        EXPECT_EQ(instance, seen);
        ++destroyed;
    };
    {
        Device device = interop::create_device(ctx, r);
        interop::DeviceHandles h = interop::handles(device);
        EXPECT_NE(seen, VK_NULL_HANDLE);
        EXPECT_EQ(h.instance, seen);
        EXPECT_TRUE(surface_functions);
        ASSERT_FALSE(asked.empty());
        EXPECT_EQ(h.queue_family, asked.back());
        EXPECT_GE(h.api_version, VK_API_VERSION_1_1);
        VkQueue queue = VK_NULL_HANDLE;
        vkGetDeviceQueue(h.device, h.queue_family, 0, &queue);
        EXPECT_EQ(queue, h.queue);
        EXPECT_NE(vkGetDeviceProcAddr(h.device, "vkCreateSwapchainKHR"), nullptr);
        EXPECT_EQ(destroyed, 0);
        EXPECT_EQ(device.validation_message_count(), 0u);
    }
    EXPECT_EQ(destroyed, 1);
}

TEST(InteropDevice, WithoutExtrasTheSwapchainIsNotEnabled) {
    // The counterpart of the test above: a plain device does not expose the swapchain's functions.
    interop::DeviceHandles h = interop::handles(shared_device());
    EXPECT_EQ(vkGetDeviceProcAddr(h.device, "vkCreateSwapchainKHR"), nullptr);
    EXPECT_EQ(vkGetInstanceProcAddr(h.instance, "vkDestroySurfaceKHR"), nullptr);
}

TEST(InteropDevice, AMissingInstanceExtensionIsNamed) {
    Context ctx;
    interop::DeviceRequirements r;
    r.instance_extensions = {"VK_KHR_no_such_instance_extension"};
    EXPECT_EQ(error_of([&] { interop::create_device(ctx, r); }),
              "the instance extension VK_KHR_no_such_instance_extension that the caller asked for is not available");
}

TEST(InteropDevice, DevicesWithoutTheExtensionArePassedOver) {
    Context ctx;
    interop::DeviceRequirements r;
    r.device_extensions = {"VK_KHR_no_such_device_extension"};
    std::string e = error_of([&] { interop::create_device(ctx, r); });
    EXPECT_NE(e.find("no usable Vulkan device"), std::string::npos) << e;
    EXPECT_NE(e.find("passed over: lacks the device extension VK_KHR_no_such_device_extension"), std::string::npos) << e;
}

TEST(InteropDevice, DevicesWithNoAcceptedQueueFamilyArePassedOver) {
    Context ctx;
    int created = 0, destroyed = 0;
    interop::DeviceRequirements r;
    r.on_instance = [&](VkInstance) { ++created; };
    r.accept_queue_family = [](VkInstance, VkPhysicalDevice, uint32_t) { return false; };
    r.on_instance_destroy = [&](VkInstance) { ++destroyed; };
    std::string e = error_of([&] { interop::create_device(ctx, r); });
    EXPECT_NE(e.find("passed over: no queue family with compute that the caller accepts"), std::string::npos) << e;
    EXPECT_EQ(created, 1);
    EXPECT_EQ(destroyed, 1);   // the caller could free what on_instance made
}

class Interop : public DeviceTest {};

Kernel1D fill_kernel = [](BufferFloat out) noexcept {
    auto i = dispatch_id().x;
    out.write(i, cast<float>(i) * 3.0f + 1.0f);
};

Kernel1D double_kernel = [](BufferFloat data) noexcept {
    auto i = dispatch_id().x;
    data.write(i, data.read(i) * 2.0f);
};

TEST_F(Interop, BufferHandleIsReadableAfterSynchronize) {
    constexpr size_t n = 1000;
    auto buffer = device.create_buffer<float>(n);
    stream << device.compile(fill_kernel)(buffer).dispatch(n) << synchronize();
    interop::BufferHandle b = interop::handle(buffer);
    EXPECT_EQ(b.size, n * sizeof(float));
    CallerSide caller(device, n * sizeof(float));
    caller.submit(device, [&](VkCommandBuffer cmd) {
        VkBufferCopy region{0, 0, n * sizeof(float)};
        vkCmdCopyBuffer(cmd, b.buffer, caller.buffer, 1, &region);
    });
    caller.wait();
    std::vector<float> got(n);
    std::memcpy(got.data(), caller.mapped, n * sizeof(float));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], float(i) * 3.0f + 1.0f) << i;
}

TEST_F(Interop, CallerWritesSubmittedEarlierComeBeforeTheStreamsNextCommands) {
    constexpr size_t n = 4096;
    auto buffer = device.create_buffer<float>(n);
    stream << buffer.fill_zero() << synchronize();
    interop::BufferHandle b = interop::handle(buffer);
    CallerSide caller(device, 16);
    uint32_t three;
    const float f3 = 3.0f;
    std::memcpy(&three, &f3, 4);
    // Not waited for: the engine's next submission must still see the fill (its opening barrier covers it).
    caller.submit(device, [&](VkCommandBuffer cmd) { vkCmdFillBuffer(cmd, b.buffer, 0, VK_WHOLE_SIZE, three); });
    std::vector<float> got(n);
    stream << device.compile(double_kernel)(buffer).dispatch(n) << buffer.copy_to(got.data()) << synchronize();
    caller.wait();
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], 6.0f) << i;
}

TEST_F(Interop, ImageHandleIsInGeneralLayoutAndCopies) {
    constexpr uint32_t w = 7, h = 5;
    auto image = device.create_image<float>(PixelFormat::RGBA32F, w, h);
    std::vector<float> texels(size_t(w) * h * 4);
    std::iota(texels.begin(), texels.end(), 0.5f);
    stream << image.copy_from(texels.data()) << synchronize();
    interop::ImageHandle ih = interop::handle(image);
    EXPECT_EQ(ih.width, w);
    EXPECT_EQ(ih.height, h);
    EXPECT_EQ(ih.layout, VK_IMAGE_LAYOUT_GENERAL);
    EXPECT_EQ(ih.format, VK_FORMAT_R32G32B32A32_SFLOAT);
    EXPECT_NE(ih.view, VK_NULL_HANDLE);
    CallerSide caller(device, texels.size() * sizeof(float));
    caller.submit(device, [&](VkCommandBuffer cmd) {
        VkBufferImageCopy region{};
        region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        region.imageExtent = {w, h, 1};
        vkCmdCopyImageToBuffer(cmd, ih.image, ih.layout, caller.buffer, 1, &region);
    });
    caller.wait();
    std::vector<float> got(texels.size());
    std::memcpy(got.data(), caller.mapped, got.size() * sizeof(float));
    EXPECT_EQ(got, texels);
}

TEST_F(Interop, WithQueueHoldsTheLockStreamsSubmitUnder) {
    constexpr size_t n = 256;
    auto buffer = device.create_buffer<float>(n);
    auto shader = device.compile(fill_kernel);
    std::atomic<bool> done{false};
    std::thread other;
    interop::with_queue(device, [&](VkQueue) {
        // Another thread's stream must not reach the queue while the caller holds it.
        other = std::thread([&] {
            Stream s = device.create_stream();
            s << shader(buffer).dispatch(n) << synchronize();
            done = true;
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        EXPECT_FALSE(done.load());
    });
    other.join();
    EXPECT_TRUE(done.load());
    std::vector<float> got(n);
    stream << buffer.copy_to(got.data()) << synchronize();
    EXPECT_EQ(got[5], 16.0f);
}

TEST_F(Interop, EmptyResourcesAreRefused) {
    EXPECT_EQ(error_of([] { interop::handle(Buffer<float>()); }),
              "interop::handle: the buffer is empty (default-constructed)");
    EXPECT_EQ(error_of([] { interop::handle(Image<float>()); }),
              "interop::handle: the image is empty (default-constructed)");
}

} // namespace
} // namespace adjoint::test
