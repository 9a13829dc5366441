// Per-kernel device time: timestamps around every dispatch of a device's streams while profiling is on.
#pragma once
#include <adjoint/runtime/device.h>

#include <cstdint>
#include <string>
#include <vector>

namespace adjoint {

struct KernelTime {
    std::string kernel;        // the kernel's name (ShaderOptions::name, else its file and line)
    uint64_t dispatches = 0;
    double ms = 0.0;           // device time summed over its dispatches
};

// Profiling starts with the next submission of each stream (synchronize() ends one). Throws adjoint::Error
// when the device writes no timestamps from its compute queue. The cost: two timestamps a dispatch.
void set_kernel_profiling(Device& device, bool on);
bool kernel_profiling(const Device& device);
// What was measured since the last clear, slowest first; `untimed` counts dispatches past the 2,048 a
// submission can time (they ran, unmeasured).
std::vector<KernelTime> kernel_times(const Device& device, uint64_t* untimed = nullptr);
void clear_kernel_times(Device& device);
// A table of kernel_times: name, dispatches, total and mean ms and the share of the total, one kernel a line.
std::string kernel_time_table(const std::vector<KernelTime>& times);

} // namespace adjoint
