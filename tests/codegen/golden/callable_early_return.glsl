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
    const float v9 = float(v4);
    int l13;
    bool l14;
    l14 = false;
    while (true) {
        int l23;
        l23 = 0;
        while (true) {
            const int v26 = l23;
            const bool v27 = v26 < 8;
            const bool v32 = !v27;
            if (v32) {
                break;
            }
            const uint v35 = uint(v26);
            const float v36 = b0[v35];
            const bool v38 = v36 > v9;
            if (v38) {
                l13 = v26;
                l14 = true;
                break;
            }
            const int v44 = l23;
            const int v45 = v44 + 1;
            l23 = v45;
        }
        const bool v47 = l14;
        if (v47) {
            break;
        }
        l13 = -1;
        l14 = true;
        break;
        break;
    }
    const int v56 = l13;
    b1[v4] = v56;
}
