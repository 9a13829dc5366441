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
    const int v9 = b0[v4];
    int l13;
    l13 = 0;
    int l18;
    l18 = 0;
    while (true) {
        const int v21 = l18;
        const bool v22 = v21 < v9;
        const bool v27 = !v22;
        if (v27) {
            break;
        }
        const int v31 = v21 % 2;
        const bool v33 = v31 == 0;
        if (v33) {
            const int v35 = l18;
            const int v36 = v35 + 1;
            l18 = v36;
            continue;
        }
        const int v40 = v21 % 3;
        switch (v40) {
        case 0: {
            const int v42 = l13;
            const int v43 = v42 + v21;
            l13 = v43;
        } break;
        case 1: {
            const int v45 = l13;
            const int v47 = v45 - 1;
            l13 = v47;
            break;
        } break;
        default: {
            const int v50 = l13;
            const int v52 = v50 * 2;
            l13 = v52;
        } break;
        }
        const int v54 = l13;
        const bool v56 = v54 > 100;
        if (v56) {
            break;
        }
        const int v59 = l18;
        const int v60 = v59 + 1;
        l18 = v60;
    }
    while (true) {
        const int v63 = l13;
        const bool v65 = v63 > 10;
        const bool v66 = !v65;
        if (v66) {
            break;
        }
        const int v69 = l13;
        const int v71 = v69 / 2;
        l13 = v71;
    }
    const int v73 = l13;
    b1[v4] = v73;
}
