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
    const uint v6 = v4.x;
    const uint v8 = v4.y;
    const uint v12 = v8 * 8u;
    const uint v20 = v6 + v12;
    const bool v25 = v20 == 0u;
    if (v25) {
        s3[0u] = floatBitsToUint(0.0);
    }
    const uvec3 v30 = gl_GlobalInvocationID;
    const uint v32 = v30.x;
    const float v37 = b0[v32];
    s2[v20] = v37;
    memoryBarrierShared();
    barrier();
    const uint v44 = 63u - v20;
    const float v45 = s2[v44];
    uint v46_old = s3[0u];
    while (true) {
        uint v46_prev = atomicCompSwap(s3[0u], v46_old, floatBitsToUint(uintBitsToFloat(v46_old) + v45));
        if (v46_prev == v46_old) break;
        v46_old = v46_prev;
    }
    const float v46 = uintBitsToFloat(v46_old);
    memoryBarrierShared();
    barrier();
    if (v25) {
        const float v53 = uintBitsToFloat(s3[0u]);
        const uvec3 v54 = gl_WorkGroupID;
        const uint v56 = v54.x;
        b1[v56] = v53;
    }
}
