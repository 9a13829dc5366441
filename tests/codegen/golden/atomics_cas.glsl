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
    const uint v10 = v4 % 4u;
    uint v12_old = b0[v10];
    while (true) {
        uint v12_prev = atomicCompSwap(b0[v10], v12_old, floatBitsToUint(uintBitsToFloat(v12_old) + 1.0));
        if (v12_prev == v12_old) break;
        v12_old = v12_prev;
    }
    const float v12 = uintBitsToFloat(v12_old);
    const float v14 = float(v4);
    uint v15_old = b0[4u];
    while (true) {
        uint v15_prev = atomicCompSwap(b0[4u], v15_old, floatBitsToUint(max(uintBitsToFloat(v15_old), v14)));
        if (v15_prev == v15_old) break;
        v15_old = v15_prev;
    }
    const float v15 = uintBitsToFloat(v15_old);
    const int v18 = atomicAdd(b1[0u], 1);
}
