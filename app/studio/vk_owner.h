// One owner per Vulkan object the studio makes, as the engine holds its own: move-only, destroyed with its owner.
#pragma once
#include <adjoint/runtime/interop.h>

#include <utility>

namespace adjoint::studio {

// `Destroy` is the object's vkDestroy* (or vkFreeMemory); `Parent` the device (or instance) it belongs to.
// Filled by a create call through out(): ADJOINT_VK_CHECK(vkCreateSampler(device, &info, nullptr,
// sampler.out(device))).
template <typename Parent, typename Handle, void (*Destroy)(Parent, Handle, const VkAllocationCallbacks*)>
class Owned {
public:
    Owned() = default;
    Owned(Owned&& other) noexcept
        : parent_(other.parent_), handle_(std::exchange(other.handle_, Handle(VK_NULL_HANDLE))) {}
    Owned& operator=(Owned&& other) noexcept {
        if (this != &other) {
            reset();
            parent_ = other.parent_;
            handle_ = std::exchange(other.handle_, Handle(VK_NULL_HANDLE));
        }
        return *this;
    }
    Owned(const Owned&) = delete;
    Owned& operator=(const Owned&) = delete;
    ~Owned() { reset(); }

    // Destroys what is held, and gives the slot a create call fills for `parent`.
    Handle* out(Parent parent) {
        reset();
        parent_ = parent;
        return &handle_;
    }
    void reset() {
        if (handle_ != VK_NULL_HANDLE) Destroy(parent_, std::exchange(handle_, Handle(VK_NULL_HANDLE)), nullptr);
    }
    Handle get() const { return handle_; }
    // For create-info fields that take an array of one (pSetLayouts, pAttachments, ...).
    const Handle* address() const { return &handle_; }
    explicit operator bool() const { return handle_ != VK_NULL_HANDLE; }

private:
    Parent parent_ = VK_NULL_HANDLE;
    Handle handle_ = VK_NULL_HANDLE;
};

namespace vko {
using Surface = Owned<VkInstance, VkSurfaceKHR, vkDestroySurfaceKHR>;
using Swapchain = Owned<VkDevice, VkSwapchainKHR, vkDestroySwapchainKHR>;
using RenderPass = Owned<VkDevice, VkRenderPass, vkDestroyRenderPass>;
using Framebuffer = Owned<VkDevice, VkFramebuffer, vkDestroyFramebuffer>;
using ImageView = Owned<VkDevice, VkImageView, vkDestroyImageView>;
using Image = Owned<VkDevice, VkImage, vkDestroyImage>;
using Buffer = Owned<VkDevice, VkBuffer, vkDestroyBuffer>;
using Memory = Owned<VkDevice, VkDeviceMemory, vkFreeMemory>;
using Sampler = Owned<VkDevice, VkSampler, vkDestroySampler>;
using DescriptorSetLayout = Owned<VkDevice, VkDescriptorSetLayout, vkDestroyDescriptorSetLayout>;
using DescriptorPool = Owned<VkDevice, VkDescriptorPool, vkDestroyDescriptorPool>;
using PipelineLayout = Owned<VkDevice, VkPipelineLayout, vkDestroyPipelineLayout>;
using Pipeline = Owned<VkDevice, VkPipeline, vkDestroyPipeline>;
using ShaderModule = Owned<VkDevice, VkShaderModule, vkDestroyShaderModule>;
using CommandPool = Owned<VkDevice, VkCommandPool, vkDestroyCommandPool>;
using Semaphore = Owned<VkDevice, VkSemaphore, vkDestroySemaphore>;
using Fence = Owned<VkDevice, VkFence, vkDestroyFence>;
} // namespace vko

// A memory type among `bits` with the properties `want`; with `fallback`, any of `bits` if none has them.
uint32_t find_memory_type(VkPhysicalDevice physical_device, uint32_t bits, VkMemoryPropertyFlags want,
                          bool fallback = false);

} // namespace adjoint::studio
