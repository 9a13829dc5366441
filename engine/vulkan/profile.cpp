// KernelProfile: per-pipeline device time, and DispatchTimer: the timestamp queries a stream writes around each
// dispatch and reads back at synchronize into it.
#include "vulkan/vk_internal.h"

#include <adjoint/core/error.h>

namespace adjoint::vk {

void KernelProfile::enable(bool on) {
    if (on && timestamp_bits == 0)
        throw Error("kernel profiling: this device's compute queue writes no timestamps (timestampValidBits 0)");
    enabled_.store(on, std::memory_order_relaxed);
}

void KernelProfile::add(const std::string& pipeline, double ms) {
    std::lock_guard lock(mutex_);
    Entry& e = entries_[pipeline];
    ++e.dispatches;
    e.ms += ms;
}

void KernelProfile::add_untimed(uint64_t dispatches) {
    std::lock_guard lock(mutex_);
    untimed_ += dispatches;
}

std::map<std::string, KernelProfile::Entry> KernelProfile::entries() const {
    std::lock_guard lock(mutex_);
    return entries_;
}

uint64_t KernelProfile::untimed() const {
    std::lock_guard lock(mutex_);
    return untimed_;
}

void KernelProfile::clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
    untimed_ = 0;
}

void DispatchTimer::begin(VkDevice device, VkCommandBuffer cmd, const KernelProfile& profile) {
    timing_ = profile.enabled();
    if (!timing_)
        return;
    if (!queries_) {
        VkQueryPoolCreateInfo q{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
        q.queryType = VK_QUERY_TYPE_TIMESTAMP;
        q.queryCount = 2 * kTimedDispatches;
        VK_CHECK(vkCreateQueryPool(device, &q, nullptr, &queries_));
    }
    vkCmdResetQueryPool(cmd, queries_, 0, 2 * kTimedDispatches);
}

void DispatchTimer::dispatch(VkCommandBuffer cmd, const std::string& pipeline, const std::function<void()>& record) {
    const bool timed = timing_ && timed_.size() < kTimedDispatches;
    const uint32_t query = 2 * uint32_t(timed_.size());
    if (timed)
        vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, query);
    record();
    if (timed) {
        vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, query + 1);
        timed_.push_back(&pipeline);
    } else if (timing_) {
        ++untimed_;
    }
}

void DispatchTimer::read(VkDevice device, KernelProfile& profile) {
    if (!timed_.empty()) {
        std::vector<uint64_t> t(2 * timed_.size());
        VK_CHECK(vkGetQueryPoolResults(device, queries_, 0, uint32_t(t.size()), t.size() * sizeof(uint64_t), t.data(),
                                       sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
        const uint64_t mask =
            profile.timestamp_bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << profile.timestamp_bits) - 1;
        for (size_t i = 0; i < timed_.size(); ++i) {
            const uint64_t ticks = (t[2 * i + 1] - t[2 * i]) & mask;
            profile.add(*timed_[i], double(ticks) * profile.timestamp_period_ns * 1e-6);
        }
    }
    if (untimed_)
        profile.add_untimed(untimed_);
    clear();
}

void DispatchTimer::clear() {
    timed_.clear();
    untimed_ = 0;
}

void DispatchTimer::release(VkDevice device) {
    if (queries_)
        vkDestroyQueryPool(device, queries_, nullptr);
    queries_ = VK_NULL_HANDLE;
}

} // namespace adjoint::vk
