// Workgroup counts for a dispatch: a pure function of the size, the kernel's block and the device's limits.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

namespace adjoint::detail {

// 1D kernels take ceil(n / block) groups, laid out as rows of at most max_groups[0] groups when there are
// more (the generated GLSL relinearizes the group as x + y * gl_NumWorkGroups.x and stops the last row's
// surplus groups before it forms their index, which could pass 2^32). 2D and 3D kernels take
// ceil(size / block) groups per dimension. Throws adjoint::Error naming the kernel when the device's group
// limits cannot hold the grid, or when group * block + local could pass 2^32 (possible only for sizes near
// 2^32 in blocks that are not powers of two). A size of 0 in any dimension plans no groups.
std::array<uint32_t, 3> plan_dispatch(std::string_view kernel, uint32_t dimension, std::array<uint32_t, 3> size,
                                      std::array<uint32_t, 3> block, std::array<uint32_t, 3> max_groups);

} // namespace adjoint::detail
