#version 450
// kernel shared_sync_block_cas
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) buffer Buffer0 { float b0[]; };
layout(std430, set = 0, binding = 1) buffer Buffer1 { float b1[]; };
shared float s2[64];
shared uint s3[1];
layout(push_constant, std430) uniform Push {
    layout(offset = 0) uvec3 dispatch_size;
} pc;
void main() {
    if (any(greaterThanEqual(gl_GlobalInvocationID, pc.dispatch_size))) return;
    const uvec3 v4 = gl_LocalInvocationID;
    const uint v6 = v4.y;
    const uint v8 = v6 * 8u;
    const uint v11 = v4.x;
    const uint v12 = v11 + v8;
    const bool v17 = v12 == 0u;
    if (v17) {
        s3[0u] = floatBitsToUint(0.0);
    }
    const uvec3 v21 = gl_GlobalInvocationID;
    const uint v22 = v21.x;
    const float v23 = b0[v22];
    s2[v12] = v23;
    memoryBarrierShared();
    barrier();
    const uint v29 = 63u - v12;
    const float v30 = s2[v29];
    uint v31_old = s3[0u];
    while (true) {
        uint v31_prev = atomicCompSwap(s3[0u], v31_old, floatBitsToUint(uintBitsToFloat(v31_old) + v30));
        if (v31_prev == v31_old) break;
        v31_old = v31_prev;
    }
    const float v31 = uintBitsToFloat(v31_old);
    memoryBarrierShared();
    barrier();
    if (v17) {
        const float v36 = uintBitsToFloat(s3[0u]);
        const uvec3 v37 = gl_WorkGroupID;
        const uint v38 = v37.x;
        b1[v38] = v36;
    }
}
