#version 450
// kernel callable_early_return
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
    const float v5 = float(v4);
    int l8;
    bool l9;
    l9 = false;
    while (true) {
        int l18;
        l18 = 0;
        while (true) {
            const int v21 = l18;
            const bool v22 = v21 < 8;
            const bool v26 = !v22;
            if (v26) {
                break;
            }
            const uint v29 = uint(v21);
            const float v30 = b0[v29];
            const bool v32 = v30 > v5;
            if (v32) {
                l8 = v21;
                l9 = true;
                break;
            }
            const int v38 = l18;
            const int v39 = v38 + 1;
            l18 = v39;
        }
        const bool v41 = l9;
        if (v41) {
            break;
        }
        l8 = -1;
        l9 = true;
        break;
        break;
    }
    const int v50 = l8;
    b1[v4] = v50;
}
