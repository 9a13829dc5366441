// What the GLSL emitter may use on a device: its atomics, uint64 and subgroup support, read from the
// device's features (ADJOINT_NO_FLOAT_ATOMICS=1 forces compare-and-swap loops for float atomics).
#pragma once
#include <adjoint/codegen/glsl.h>

#include "vulkan/vk_runtime.h"

namespace adjoint::detail {

codegen::GlslOptions glsl_options_for(const vk::DeviceInfo& device);

} // namespace adjoint::detail
