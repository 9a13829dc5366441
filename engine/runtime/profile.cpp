// The public face of the Vulkan layer's KernelProfile (runtime/profile.h).
#include <adjoint/runtime/profile.h>

#include "runtime/runtime_internal.h"
#include "vulkan/vk_runtime.h"

#include <algorithm>
#include <cstdio>

namespace adjoint {

namespace {

vk::KernelProfile& profile_of(const Device& device) { return detail::vulkan_context(*device.impl())->profile(); }

} // namespace

void set_kernel_profiling(Device& device, bool on) { profile_of(device).enable(on); }

bool kernel_profiling(const Device& device) { return profile_of(device).enabled(); }

std::vector<KernelTime> kernel_times(const Device& device, uint64_t* untimed) {
    const vk::KernelProfile& p = profile_of(device);
    std::vector<KernelTime> out;
    for (const auto& [name, e] : p.entries()) out.push_back({name, e.dispatches, e.ms});
    std::stable_sort(out.begin(), out.end(), [](const KernelTime& a, const KernelTime& b) { return a.ms > b.ms; });
    if (untimed) *untimed = p.untimed();
    return out;
}

void clear_kernel_times(Device& device) { profile_of(device).clear(); }

std::string kernel_time_table(const std::vector<KernelTime>& times) {
    double total = 0.0;
    size_t width = 6;
    for (const KernelTime& t : times) {
        total += t.ms;
        width = std::max(width, t.kernel.size());
    }
    std::string out;
    char line[512];
    std::snprintf(line, sizeof(line), "%-*s %10s %12s %10s %6s\n", int(width), "kernel", "dispatches", "total ms",
                  "mean ms", "share");
    out += line;
    for (const KernelTime& t : times) {
        std::snprintf(line, sizeof(line), "%-*s %10llu %12.3f %10.4f %5.1f%%\n", int(width), t.kernel.c_str(),
                      static_cast<unsigned long long>(t.dispatches), t.ms, t.ms / double(std::max<uint64_t>(t.dispatches, 1)),
                      total > 0.0 ? 100.0 * t.ms / total : 0.0);
        out += line;
    }
    return out;
}

} // namespace adjoint
