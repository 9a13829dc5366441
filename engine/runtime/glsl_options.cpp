// The emitter's options from a device's features (see glsl_options.h).
#include "runtime/glsl_options.h"

namespace adjoint::detail {

codegen::GlslOptions glsl_options_for(const vk::DeviceInfo& d, bool float_atomics, bool texel_reads) {
    codegen::GlslOptions o;
    o.float_atomic_add = d.float_atomic_add;
    o.float_atomic_min_max = d.float_atomic_min_max;
    o.shared_float_atomic_add = d.shared_float_atomic_add;
    o.shared_float_atomic_min_max = d.shared_float_atomic_min_max;
    if (!float_atomics)
        o.float_atomic_add = o.float_atomic_min_max = o.shared_float_atomic_add = o.shared_float_atomic_min_max = false;
    o.int64 = d.int64;
    o.int64_atomics = d.int64_atomics;
    o.shared_int64_atomics = d.shared_int64_atomics;
    o.subgroup_features = d.subgroup_operations;
    // Read-only buffers as texel buffers on CPU devices (lavapipe), whose storage-buffer reads loop over the
    // lanes (GlslOptions::texel_reads); a GPU reads either as fast, and its buffers may outgrow the texel limit.
    o.texel_reads = texel_reads && d.kind == vk::DeviceKind::Cpu && d.texel_reads;
    return o;
}

} // namespace adjoint::detail
