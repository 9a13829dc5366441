#version 450
// kernel atomics_cas
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) buffer Buffer0 { uint b0[]; };
layout(std430, set = 0, binding = 1) buffer Buffer1 { int b1[]; };
layout(push_constant, std430) uniform Push {
    layout(offset = 0) uvec3 dispatch_size;
} pc;
void main() {
    const uint adjoint_group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (adjoint_group > (pc.dispatch_size.x - 1u) / 256u) return;
    const uvec3 adjoint_id = uvec3(adjoint_group * 256u + gl_LocalInvocationID.x, 0u, 0u);
    if (adjoint_id.x >= pc.dispatch_size.x) return;
    const uvec3 v2 = adjoint_id;
    const uint v4 = v2.x;
    const uint v6 = v4 % 4u;
    uint v8_old = b0[v6];
    while (true) {
        uint v8_prev = atomicCompSwap(b0[v6], v8_old, floatBitsToUint(uintBitsToFloat(v8_old) + 1.0));
        if (v8_prev == v8_old) break;
        v8_old = v8_prev;
    }
    const float v8 = uintBitsToFloat(v8_old);
    const float v9 = float(v4);
    uint v10_old = b0[4u];
    while (true) {
        uint v10_prev = atomicCompSwap(b0[4u], v10_old, floatBitsToUint(max(uintBitsToFloat(v10_old), v9)));
        if (v10_prev == v10_old) break;
        v10_old = v10_prev;
    }
    const float v10 = uintBitsToFloat(v10_old);
    const int v13 = atomicAdd(b1[0u], 1);
}
