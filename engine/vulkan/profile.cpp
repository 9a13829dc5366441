// KernelProfile: per-pipeline device time gathered from the streams' timestamp queries (stream.cpp writes
// them around each dispatch and reads them back at synchronize).
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

} // namespace adjoint::vk
