// Command streams: record transfers and dispatches into one command buffer, with barriers only at hazards.
#include "vulkan/vk_internal.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

namespace adjoint::vk {

namespace {

constexpr size_t kFirstStagingChunk = size_t(1) << 20;
constexpr uint32_t kPoolSets = 1024, kPoolBuffers = 4096, kPoolImages = 1024;

struct Staged {
    VkBuffer buffer;
    size_t offset;
    std::byte* host;
};

struct DescriptorPool {
    VkDescriptorPool pool = VK_NULL_HANDLE;
    uint32_t capacity[4] = {}; // sets, storage buffers, storage images, uniform texel buffers
    uint32_t left[4] = {};
};

} // namespace

struct Stream::Impl {
    std::shared_ptr<Context> ctx;
    VkDevice device = VK_NULL_HANDLE;
    VkCommandPool command_pool = VK_NULL_HANDLE;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    bool recording = false;
    size_t pending = 0;
    VkPipeline bound = VK_NULL_HANDLE;

    // Staging grows by adding chunks while recording (earlier chunks are still referenced), and is
    // consolidated into one chunk of the combined size at synchronize so steady state needs one.
    std::vector<RawBuffer> staging;
    size_t staging_used = 0; // bytes used in staging.back()

    struct Download {
        void* dst;
        const std::byte* src;
        size_t bytes;
    };
    std::vector<Download> downloads;

    std::vector<DescriptorPool> pools;
    size_t pool_index = 0; // pools before this one are exhausted for this submission

    // Resources touched since the last barrier; see hazard().
    std::unordered_set<uint64_t> written, read;

    DispatchTimer timer;   // kernel profiling (profile.cpp)

    // Scratch reused by every dispatch so that recording one allocates nothing in steady state.
    std::vector<std::pair<uint64_t, bool>> accesses;
    std::vector<VkDescriptorBufferInfo> buffer_infos;
    std::vector<VkDescriptorImageInfo> image_infos;
    std::vector<VkBufferView> texel_views;
    std::vector<VkWriteDescriptorSet> writes;

    // Separate from construction so that ~Impl frees what was created if a later step throws.
    void init(std::shared_ptr<Context> c);
    ~Impl();
    void begin();
    void global_barrier();
    Staged stage(size_t bytes);
    void hazard();
    VkDescriptorSet allocate_set(VkDescriptorSetLayout layout, uint32_t buffers, uint32_t images, uint32_t texels);
    void recycle();
    // One copy between the host and `resource` through staging, the body of every upload and download:
    // stages `bytes` (filled from `from` for an upload), records `copy` after any hazard on the resource,
    // and queues the read-back into `to` (a download) for synchronize.
    template <typename Copy>
    void transfer(uint64_t resource, const void* from, void* to, size_t bytes, Copy&& copy);
};

template <typename Copy>
void Stream::Impl::transfer(uint64_t resource, const void* from, void* to, size_t bytes, Copy&& copy) {
    Staged staged = stage(bytes);
    if (from)
        std::memcpy(staged.host, from, bytes);
    begin();
    accesses.assign({{resource, from != nullptr}});
    hazard();
    copy(staged);
    if (to)
        downloads.push_back({to, staged.host, bytes});
    ++pending;
}

void Stream::Impl::init(std::shared_ptr<Context> c) {
    ctx = std::move(c);
    device = ctx->impl().device;
    VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool.queueFamilyIndex = ctx->impl().queue_family;
    VK_CHECK(vkCreateCommandPool(device, &pool, nullptr, &command_pool));
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = command_pool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    VK_CHECK(vkAllocateCommandBuffers(device, &alloc, &cmd));
    VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VK_CHECK(vkCreateFence(device, &fence_info, nullptr, &fence));
}

Stream::Impl::~Impl() {
    timer.release(device);
    for (auto& p : pools)
        vkDestroyDescriptorPool(device, p.pool, nullptr);
    if (fence)
        vkDestroyFence(device, fence, nullptr);
    if (command_pool)
        vkDestroyCommandPool(device, command_pool, nullptr); // frees cmd
}

void Stream::Impl::begin() {
    if (recording)
        return;
    VkCommandBufferBeginInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VK_CHECK(vkBeginCommandBuffer(cmd, &info));
    recording = true;
    bound = VK_NULL_HANDLE;
    timer.begin(device, cmd, ctx->impl().profile);
    // A fence wait makes earlier submissions' writes available but not visible to later commands; one
    // barrier per submission covers those, and work other streams submitted, without tracking across them.
    global_barrier();
}

// One global barrier covers every earlier write; a per-resource barrier would not be cheaper on the drivers
// we target, and a global one cannot miss a resource.
void Stream::Impl::global_barrier() {
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                            VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    vkCmdPipelineBarrier(cmd, stages, stages, 0, 1, &barrier, 0, nullptr, 0, nullptr);
    written.clear();
    read.clear();
}

Staged Stream::Impl::stage(size_t bytes) {
    // 16-byte alignment satisfies buffer-image copies of RGBA32F texels as well as plain buffer copies.
    size_t offset = (staging_used + 15) & ~size_t(15);
    if (staging.empty() || offset + bytes > staging.back().size) {
        size_t size = std::max(bytes, staging.empty() ? kFirstStagingChunk : staging.back().size * 2);
        staging.emplace_back(ctx->impl(), size,
                             VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, true);
        offset = 0;
    }
    staging_used = offset + bytes;
    return {staging.back().buffer, offset, static_cast<std::byte*>(staging.back().mapped) + offset};
}

void Stream::Impl::hazard() {
    bool needed = false;
    for (auto [id, write] : accesses)
        needed = needed || written.count(id) || (write && read.count(id));
    if (needed)
        global_barrier();
    for (auto [id, write] : accesses)
        (write ? written : read).insert(id);
}

VkDescriptorSet Stream::Impl::allocate_set(VkDescriptorSetLayout layout, uint32_t buffers, uint32_t images,
                                           uint32_t texels) {
    // Capacity is counted here rather than by handling VK_ERROR_OUT_OF_POOL_MEMORY, which drivers may not
    // report reliably (they may succeed by overcommitting, or return VK_ERROR_FRAGMENTED_POOL).
    const uint32_t need[4] = {1, buffers, images, texels};
    auto fits = [&](const DescriptorPool& p) {
        return p.left[0] >= need[0] && p.left[1] >= need[1] && p.left[2] >= need[2] && p.left[3] >= need[3];
    };
    while (pool_index < pools.size() && !fits(pools[pool_index]))
        ++pool_index;
    if (pool_index == pools.size()) {
        DescriptorPool p;
        p.capacity[0] = kPoolSets;
        p.capacity[1] = std::max(kPoolBuffers, buffers);
        p.capacity[2] = std::max(kPoolImages, images);
        p.capacity[3] = std::max(kPoolBuffers, texels);
        VkDescriptorPoolSize sizes[3] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, p.capacity[1]},
                                         {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, p.capacity[2]},
                                         {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, p.capacity[3]}};
        VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
        info.maxSets = p.capacity[0];
        info.poolSizeCount = 3;
        info.pPoolSizes = sizes;
        VK_CHECK(vkCreateDescriptorPool(device, &info, nullptr, &p.pool));
        std::copy_n(p.capacity, 4, p.left);
        pools.push_back(p);
    }
    DescriptorPool& p = pools[pool_index];
    VkDescriptorSetAllocateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    info.descriptorPool = p.pool;
    info.descriptorSetCount = 1;
    info.pSetLayouts = &layout;
    VkDescriptorSet set;
    VK_CHECK(vkAllocateDescriptorSets(device, &info, &set));
    for (int i = 0; i < 4; ++i)
        p.left[i] -= need[i];
    return set;
}

// Returns the stream to its empty state once the device is done with everything recorded.
void Stream::Impl::recycle() {
    recording = false;
    pending = 0;
    timer.clear();
    downloads.clear();
    written.clear();
    read.clear();
    VK_CHECK(vkResetCommandPool(device, command_pool, 0));
    for (size_t i = 0; i < pools.size() && i <= pool_index; ++i) {
        VK_CHECK(vkResetDescriptorPool(device, pools[i].pool, 0));
        std::copy_n(pools[i].capacity, 4, pools[i].left);
    }
    pool_index = 0;
    if (staging.size() > 1) {
        size_t total = 0;
        for (auto& chunk : staging)
            total += chunk.size;
        staging.clear();
        staging.emplace_back(ctx->impl(), total,
                             VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, true);
    }
    staging_used = 0;
}

Stream::Stream(std::shared_ptr<Context> ctx) : impl_(std::make_unique<Impl>()) {
    impl_->init(std::move(ctx));
}
Stream::~Stream() = default;
size_t Stream::pending_commands() const { return impl_->pending; }

namespace {
void check_range(const char* what, size_t offset, size_t bytes, size_t size) {
    if (offset > size || bytes > size - offset)
        fail(what, " of ", bytes, " bytes at offset ", offset, " overruns a buffer of ", size, " bytes");
}

VkBufferImageCopy image_region(Image& image, size_t offset) {
    VkBufferImageCopy region{};
    region.bufferOffset = offset;
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {image.width(), image.height(), 1};
    return region;
}
} // namespace

void Stream::upload(Buffer& dst, size_t offset, const void* src, size_t bytes) {
    check_range("upload", offset, bytes, dst.size());
    if (bytes == 0)
        return;
    Impl& s = *impl_;
    s.transfer(dst.id(), src, nullptr, bytes, [&](const Staged& staged) {
        VkBufferCopy region{staged.offset, offset, bytes};
        vkCmdCopyBuffer(s.cmd, staged.buffer, dst.impl().raw.buffer, 1, &region);
    });
}

void Stream::download(Buffer& src, size_t offset, void* dst, size_t bytes) {
    check_range("download", offset, bytes, src.size());
    if (bytes == 0)
        return;
    Impl& s = *impl_;
    s.transfer(src.id(), nullptr, dst, bytes, [&](const Staged& staged) {
        VkBufferCopy region{offset, staged.offset, bytes};
        vkCmdCopyBuffer(s.cmd, src.impl().raw.buffer, staged.buffer, 1, &region);
    });
}

void Stream::upload(Image& dst, const void* src) {
    Impl& s = *impl_;
    s.transfer(dst.id(), src, nullptr, size_t(dst.width()) * dst.height() * 16, [&](const Staged& staged) {
        VkBufferImageCopy region = image_region(dst, staged.offset);
        vkCmdCopyBufferToImage(s.cmd, staged.buffer, dst.impl().image, VK_IMAGE_LAYOUT_GENERAL, 1, &region);
    });
}

void Stream::download(Image& src, void* dst) {
    Impl& s = *impl_;
    s.transfer(src.id(), nullptr, dst, size_t(src.width()) * src.height() * 16, [&](const Staged& staged) {
        VkBufferImageCopy region = image_region(src, staged.offset);
        vkCmdCopyImageToBuffer(s.cmd, src.impl().image, VK_IMAGE_LAYOUT_GENERAL, staged.buffer, 1, &region);
    });
}

void Stream::fill_zero(Buffer& dst) {
    Impl& s = *impl_;
    s.begin();
    s.accesses.assign({{dst.id(), true}});
    s.hazard();
    vkCmdFillBuffer(s.cmd, dst.impl().raw.buffer, 0, VK_WHOLE_SIZE, 0);
    ++s.pending;
}

void Stream::copy(Buffer& src, size_t src_offset, Buffer& dst, size_t dst_offset, size_t bytes) {
    check_range("copy", src_offset, bytes, src.size());
    check_range("copy", dst_offset, bytes, dst.size());
    if (src.id() == dst.id()) fail("copy of a buffer into itself");
    if (bytes == 0)
        return;
    Impl& s = *impl_;
    s.begin();
    s.accesses.assign({{src.id(), false}, {dst.id(), true}});
    s.hazard();
    VkBufferCopy region{src_offset, dst_offset, bytes};
    vkCmdCopyBuffer(s.cmd, src.impl().raw.buffer, dst.impl().raw.buffer, 1, &region);
    ++s.pending;
}

void Stream::dispatch(Pipeline& pipeline, const Bindings& b, uint32_t groups_x, uint32_t groups_y,
                      uint32_t groups_z) {
    const PipelineLayoutDesc& desc = pipeline.layout();
    const std::string& name = pipeline.name();
    if (b.buffers.size() != desc.buffer_count || b.images.size() != desc.image_count)
        fail("dispatch of '", name, "': bound ", b.buffers.size(), " buffers and ", b.images.size(),
             " images, the pipeline declares ", desc.buffer_count, " and ", desc.image_count);
    if (b.push_constants.size() != desc.push_constant_bytes)
        fail("dispatch of '", name, "': ", b.push_constants.size(),
             " bytes of push constants, the pipeline declares ", desc.push_constant_bytes);
    const uint32_t groups[3] = {groups_x, groups_y, groups_z};
    Impl& s = *impl_;
    for (int i = 0; i < 3; ++i)
        if (groups[i] > s.ctx->device_info().max_workgroup_count[i])
            fail("dispatch of '", name, "': ", groups[i], " workgroups in dimension ", i,
                 " exceed the device limit of ", s.ctx->device_info().max_workgroup_count[i]);
    const size_t max_range = s.ctx->impl().limits.maxStorageBufferRange;
    const size_t max_texels = s.ctx->impl().limits.maxTexelBufferElements;
    uint32_t texels = 0;
    for (size_t i = 0; i < b.buffers.size(); ++i) {
        if (!b.buffers[i])
            fail("dispatch of '", name, "': buffer binding ", i, " is null");
        const size_t bytes = b.buffers[i]->impl().raw.size;
        if (const uint32_t words = desc.texel_words_of(uint32_t(i))) {
            ++texels;
            if (bytes / (4 * words) > max_texels)
                fail("dispatch of '", name, "': buffer binding ", i, " has ", bytes, " bytes, ", bytes / (4 * words),
                     " texels of ", words, " words, over the device's texel-buffer limit of ", max_texels);
        } else if (bytes > max_range) {
            fail("dispatch of '", name, "': buffer binding ", i, " has ", bytes,
                 " bytes, over the device's storage-buffer range of ", max_range);
        }
    }
    for (size_t i = 0; i < b.images.size(); ++i)
        if (!b.images[i])
            fail("dispatch of '", name, "': image binding ", i, " is null");
    if (groups_x == 0 || groups_y == 0 || groups_z == 0)
        return;

    s.begin();
    // A resource whose written flag is missing counts as written: a needless barrier is cheaper than a race.
    s.accesses.clear();
    for (size_t i = 0; i < b.buffers.size(); ++i)
        s.accesses.emplace_back(b.buffers[i]->id(), i >= b.buffer_written.size() || b.buffer_written[i]);
    for (size_t i = 0; i < b.images.size(); ++i)
        s.accesses.emplace_back(b.images[i]->id(), i >= b.image_written.size() || b.image_written[i]);
    s.hazard();

    Pipeline::Impl& p = pipeline.impl();
    if (s.bound != p.pipeline) {
        vkCmdBindPipeline(s.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
        s.bound = p.pipeline;
    }
    const uint32_t nb = desc.buffer_count, ni = desc.image_count;
    if (nb + ni > 0) {
        VkDescriptorSet set = s.allocate_set(p.set_layout, nb - texels, ni, texels);
        s.buffer_infos.resize(nb);
        s.image_infos.resize(ni);
        s.texel_views.resize(nb);
        s.writes.resize(nb + ni);
        for (uint32_t i = 0; i < nb + ni; ++i) {
            VkWriteDescriptorSet& w = s.writes[i];
            w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
            w.dstSet = set;
            w.dstBinding = i;
            w.descriptorCount = 1;
            if (i < nb && desc.texel_words_of(i)) {
                s.texel_views[i] = b.buffers[i]->impl().texel_view(desc.texel_words_of(i));
                w.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
                w.pTexelBufferView = &s.texel_views[i];
            } else if (i < nb) {
                s.buffer_infos[i] = {b.buffers[i]->impl().raw.buffer, 0, VK_WHOLE_SIZE};
                w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
                w.pBufferInfo = &s.buffer_infos[i];
            } else {
                s.image_infos[i - nb] = {VK_NULL_HANDLE, b.images[i - nb]->impl().view,
                                         VK_IMAGE_LAYOUT_GENERAL};
                w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
                w.pImageInfo = &s.image_infos[i - nb];
            }
        }
        vkUpdateDescriptorSets(s.device, nb + ni, s.writes.data(), 0, nullptr);
        vkCmdBindDescriptorSets(s.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
    }
    if (!b.push_constants.empty())
        vkCmdPushConstants(s.cmd, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                           static_cast<uint32_t>(b.push_constants.size()), b.push_constants.data());
    s.timer.dispatch(s.cmd, pipeline.name(), [&] { vkCmdDispatch(s.cmd, groups_x, groups_y, groups_z); });
    ++s.pending;
}

void Stream::synchronize() {
    Impl& s = *impl_;
    if (!s.recording)
        return;
    bool submitted = false;
    try {
        if (!s.downloads.empty()) {
            // Device writes become visible to the host only through a barrier to the host stage.
            VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
            barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
            barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
            vkCmdPipelineBarrier(s.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                                 &barrier, 0, nullptr, 0, nullptr);
        }
        VK_CHECK(vkEndCommandBuffer(s.cmd));
        VK_CHECK(vkResetFences(s.device, 1, &s.fence));
        VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        submit.commandBufferCount = 1;
        submit.pCommandBuffers = &s.cmd;
        s.ctx->impl().submit(submit, s.fence);
        submitted = true;
        VK_CHECK(vkWaitForFences(s.device, 1, &s.fence, VK_TRUE, UINT64_MAX));
    } catch (...) {
        // Leave the stream reusable (and destructible) even though this submission's results are lost.
        if (submitted)
            s.ctx->impl().wait_queue_idle();
        try {
            s.recycle();
        } catch (...) {
        }
        throw;
    }
    for (const auto& d : s.downloads)
        std::memcpy(d.dst, d.src, d.bytes);
    s.timer.read(s.device, s.ctx->impl().profile);
    s.recycle();
}

} // namespace adjoint::vk
