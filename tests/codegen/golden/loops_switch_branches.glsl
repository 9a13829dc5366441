#version 450
// kernel loops_switch_branches
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) buffer Buffer0 { int b0[]; };
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
    const int v5 = b0[v4];
    int l8;
    l8 = 0;
    int l12;
    l12 = 0;
    while (true) {
        const int v15 = l12;
        const bool v16 = v15 < v5;
        const bool v20 = !v16;
        if (v20) {
            break;
        }
        const int v24 = v15 % 2;
        const bool v25 = v24 == 0;
        if (v25) {
            const int v27 = l12;
            const int v28 = v27 + 1;
            l12 = v28;
            continue;
        }
        const int v32 = v15 % 3;
        switch (v32) {
        case 0: {
            const int v34 = l8;
            const int v35 = v34 + v15;
            l8 = v35;
        } break;
        case 1: {
            const int v37 = l8;
            const int v38 = v37 - 1;
            l8 = v38;
            break;
        } break;
        default: {
            const int v41 = l8;
            const int v42 = v41 * 2;
            l8 = v42;
        } break;
        }
        const int v44 = l8;
        const bool v46 = v44 > 100;
        if (v46) {
            break;
        }
        const int v49 = l12;
        const int v50 = v49 + 1;
        l12 = v50;
    }
    while (true) {
        const int v53 = l8;
        const bool v55 = v53 > 10;
        const bool v56 = !v55;
        if (v56) {
            break;
        }
        const int v59 = l8;
        const int v61 = v59 / 2;
        l8 = v61;
    }
    const int v63 = l8;
    const bool t0 = v5 == 0;
    const bool t1 = v5 == -1;
    const int v65 = t0 ? 0 : t1 ? -(v63) : v63 / (t0 || t1 ? 1 : v5);
    const int v66 = l8;
    const int v67 = v66 + v65;
    b1[v4] = v67;
}
