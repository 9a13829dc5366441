#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
// kernel uint64_depth_test
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) buffer Buffer0 { float b0[]; };
layout(std430, set = 0, binding = 1) buffer Buffer1 { uint b1[]; };
layout(std430, set = 0, binding = 2) buffer Buffer2 { uint64_t b2[]; };
layout(push_constant, std430) uniform Push {
    layout(offset = 0) uvec3 dispatch_size;
    layout(offset = 16) uint64_t a3;
} pc;
void main() {
    const uint adjoint_group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (adjoint_group > (pc.dispatch_size.x - 1u) / 256u) return;
    const uvec3 adjoint_id = uvec3(adjoint_group * 256u + gl_LocalInvocationID.x, 0u, 0u);
    if (adjoint_id.x >= pc.dispatch_size.x) return;
    const uvec3 v6 = adjoint_id;
    const uint v9 = v6.x;
    const uint64_t v12 = uint64_t(v9);
    const float v14 = b0[v9];
    const uint v15 = floatBitsToUint(v14);
    const uint64_t v16 = uint64_t(v15);
    const uint64_t v18 = v16 << 32u;
    const uint64_t v19 = v18 | v12;
    const uint v23 = b1[v9];
    const uint64_t v26 = v19 + pc.a3;
    const uint64_t v27 = atomicMin(b2[v23], v26);
    const bool v32 = v27 == 18446744073709551615ul;
    if (v32) {
        const uint64_t v36 = v27 >> 1u;
        b2[0u] = v36;
    }
}
