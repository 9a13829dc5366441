// Storage images: RGBA32F 2D images that live in the GENERAL layout from creation to destruction.
#include "vulkan/vk_internal.h"

namespace adjoint::vk {

Image::Impl::~Impl() {
    if (!ctx)
        return;
    VkDevice device = ctx->impl().device;
    if (view)
        vkDestroyImageView(device, view, nullptr);
    if (image)
        vkDestroyImage(device, image, nullptr);
    if (memory)
        vkFreeMemory(device, memory, nullptr);
}

Image::Image(std::shared_ptr<Context> ctx, uint32_t width, uint32_t height)
    : impl_(std::make_unique<Impl>()) {
    if (width == 0 || height == 0)
        fail("Image of ", width, "x", height, ": both sides must be at least 1");
    const uint32_t max_side = ctx->impl().limits.maxImageDimension2D;
    if (width > max_side || height > max_side)
        fail("Image of ", width, "x", height, ": a side exceeds the device limit of ", max_side);
    impl_->ctx = ctx;
    impl_->width = width;
    impl_->height = height;
    Context::Impl& c = ctx->impl();
    const size_t bytes = size_t(width) * height * 16;

    VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    info.imageType = VK_IMAGE_TYPE_2D;
    info.format = VK_FORMAT_R32G32B32A32_SFLOAT;
    info.extent = {width, height, 1};
    info.mipLevels = 1;
    info.arrayLayers = 1;
    info.samples = VK_SAMPLE_COUNT_1_BIT;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;
    info.usage =
        VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    VK_CHECK_ALLOC(vkCreateImage(c.device, &info, nullptr, &impl_->image), bytes);

    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(c.device, impl_->image, &req);
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex =
        c.find_memory(req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, req.size);
    VK_CHECK_ALLOC(vkAllocateMemory(c.device, &alloc, nullptr, &impl_->memory), req.size);
    VK_CHECK(vkBindImageMemory(c.device, impl_->image, impl_->memory, 0));

    VkImageViewCreateInfo view{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    view.image = impl_->image;
    view.viewType = VK_IMAGE_VIEW_TYPE_2D;
    view.format = info.format;
    view.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    VK_CHECK(vkCreateImageView(c.device, &view, nullptr, &impl_->view));

    // One transition at creation means streams never track layouts: GENERAL serves copies and kernels alike.
    c.run_once([&](VkCommandBuffer cmd) {
        VkImageMemoryBarrier barrier{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
        barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
        barrier.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
        barrier.newLayout = VK_IMAGE_LAYOUT_GENERAL;
        barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        barrier.image = impl_->image;
        barrier.subresourceRange = view.subresourceRange;
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                             VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0,
                             nullptr, 0, nullptr, 1, &barrier);
    });
}

Image::~Image() = default;
uint32_t Image::width() const { return impl_->width; }
uint32_t Image::height() const { return impl_->height; }
uint64_t Image::id() const { return impl_->id; }

} // namespace adjoint::vk
