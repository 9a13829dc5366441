// What the GLSL emitter may use on a device: its atomics, uint64 and subgroup support, read from the
// device's features.
#pragma once
#include <adjoint/codegen/glsl.h>

#include "vulkan/vk_runtime.h"

namespace adjoint::detail {

// float_atomics false (DeviceOptions): compare-and-swap loops even where the device has float atomics.
// texel_reads false (DeviceOptions): storage buffers even where read-only buffers would be texel buffers.
codegen::GlslOptions glsl_options_for(const vk::DeviceInfo& device, bool float_atomics = true,
                                      bool texel_reads = true);

} // namespace adjoint::detail
