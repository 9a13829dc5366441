// Workgroup counts for a dispatch, 1D rows included (see dispatch_grid.h).
#include "runtime/dispatch_grid.h"

#include <adjoint/core/error.h>

namespace adjoint::detail {

std::array<uint32_t, 3> plan_dispatch(std::string_view kernel, uint32_t dimension, std::array<uint32_t, 3> size,
                                      std::array<uint32_t, 3> block, std::array<uint32_t, 3> max_groups) {
    if (size[0] == 0 || size[1] == 0 || size[2] == 0) return {0, 0, 0};
    // In 64 bits: n + block - 1 wraps around for n near 2^32 and would dispatch (almost) nothing.
    std::array<uint64_t, 3> groups{};
    for (int i = 0; i < 3; ++i) groups[i] = (uint64_t(size[i]) + block[i] - 1) / block[i];
    // A thread's index (group * block + local) must not pass 2^32, where it would wrap to a low index and
    // run that thread twice; only a block that is not a power of two can get there.
    for (int i = 0; i < 3; ++i)
        if (groups[i] * block[i] > (uint64_t(1) << 32))
            fail("dispatch of '", kernel, "': ", size[i], " threads in dimension ", i, " in blocks of ", block[i],
                 " would number threads past 2^32; dispatch fewer, or use a power-of-two block size");
    if (dimension == 1 && groups[0] > max_groups[0]) {
        // More groups than the device allows in x become rows in y.
        const uint64_t needed = groups[0];
        groups[1] = (needed + max_groups[0] - 1) / max_groups[0];
        groups[0] = max_groups[0];
        if (groups[1] > max_groups[1])
            fail("dispatch of '", kernel, "': ", size[0], " threads need ", needed, " workgroups of ", block[0],
                 ", more than the device's limits of ", max_groups[0], " x ", max_groups[1], " hold");
    }
    for (int i = 0; i < 3; ++i)
        if (groups[i] > max_groups[i])
            fail("dispatch of '", kernel, "': ", groups[i], " workgroups in dimension ", i,
                 " exceed the device limit of ", max_groups[i], " (", size[i], " threads in blocks of ", block[i],
                 ")");
    return {uint32_t(groups[0]), uint32_t(groups[1]), uint32_t(groups[2])};
}

} // namespace adjoint::detail
