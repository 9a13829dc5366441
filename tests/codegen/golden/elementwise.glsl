#version 450
// kernel elementwise
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) buffer Buffer0 { float b0[]; };
layout(std430, set = 0, binding = 1) buffer Buffer1 { float b1[]; };
layout(push_constant, std430) uniform Push {
    layout(offset = 0) uvec3 dispatch_size;
    layout(offset = 12) float a2;
} pc;
void main() {
    const uint adjoint_group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (adjoint_group > (pc.dispatch_size.x - 1u) / 256u) return;
    const uvec3 adjoint_id = uvec3(adjoint_group * 256u + gl_LocalInvocationID.x, 0u, 0u);
    if (adjoint_id.x >= pc.dispatch_size.x) return;
    const uvec3 v5 = adjoint_id;
    const uint v7 = v5.x;
    const float v8 = b0[v7];
    const float v14 = clamp(v8, 0.0, 1.0);
    const float v16 = sin(v8);
    const float v19 = v8 * pc.a2;
    const float v20 = v19 + v16;
    const float v21 = v20 - v14;
    b1[v7] = v21;
}
