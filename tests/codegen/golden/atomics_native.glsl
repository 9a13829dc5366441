#version 450
#extension GL_EXT_shader_atomic_float : require
#extension GL_EXT_shader_atomic_float2 : require
// kernel atomics_native
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) buffer Buffer0 { float b0[]; };
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
    const float v8 = atomicAdd(b0[v6], 1.0);
    const float v9 = float(v4);
    const float v10 = atomicMax(b0[4u], v9);
    const int v13 = atomicAdd(b1[0u], 1);
}
