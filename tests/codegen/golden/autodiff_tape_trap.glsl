#version 450
// kernel autodiff_tape_trap
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) buffer Buffer0 { float b0[]; };
layout(std430, set = 0, binding = 1) buffer Buffer1 { float b1[]; };
layout(std430, set = 0, binding = 2) buffer Status { uint adjoint_status[]; };
layout(push_constant, std430) uniform Push {
    layout(offset = 0) uvec3 dispatch_size;
    layout(offset = 12) uint a2;
} pc;
void main() {
    const uint adjoint_group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (adjoint_group > (pc.dispatch_size.x - 1u) / 256u) return;
    const uvec3 adjoint_id = uvec3(adjoint_group * 256u + gl_LocalInvocationID.x, 0u, 0u);
    if (adjoint_id.x >= pc.dispatch_size.x) return;
    const uvec3 v5 = adjoint_id;
    const uint v7 = v5.x;
    const float v12 = b0[v7];
    const float v17 = v12;
    float l19;
    l19 = v17;
    uint l25;
    l25 = 0u;
    uint l56;
    l56 = 0u;
    float l60[64];
    while (true) {
        const uint v28 = l25;
        const bool v29 = v28 < pc.a2;
        const bool v30 = !v29;
        if (v30) {
            break;
        }
        const uint v61 = l56;
        const bool v63 = v61 >= 64u;
        if (v63) {
            atomicCompSwap(adjoint_status[0], 0u, 441042180u);
        }
        const uint v68 = min(v61, 63u);
        const float v69 = l19;
        l60[v68] = v69;
        const uint v72 = v61 + 1u;
        l56 = v72;
        const float v33 = l19;
        const bool v35 = v33 > 1.0;
        if (v35) {
            const float v37 = l19;
            const float v39 = v37 * 0.5;
            l19 = v39;
        } else {
            const float v41 = l19;
            const float v42 = l19;
            const float v43 = v41 * v42;
            const float v45 = v43 + 0.25;
            l19 = v45;
        }
        const uint v47 = l25;
        const uint v48 = v47 + 1u;
        l25 = v48;
    }
    float l77;
    l77 = -0.0;
    l77 = 1.0;
    uint l85;
    const uint v86 = l56;
    l85 = v86;
    while (true) {
        const uint v89 = l85;
        const bool v91 = v89 == 0u;
        if (v91) {
            break;
        }
        const uint v95 = v89 - 1u;
        l85 = v95;
        const uint v98 = min(v95, 63u);
        const float v99 = l60[v98];
        const bool v108 = v99 > 1.0;
        float l155;
        float l158;
        if (v108) {
        } else {
            l155 = v99;
            l158 = v99;
        }
        if (v108) {
            const float v122 = l77;
            l77 = -0.0;
            const float v125 = v122 * 0.5;
            l77 = v125;
        } else {
            const float v130 = l77;
            l77 = -0.0;
            const float v160 = l158;
            const float v133 = v130 * v160;
            const float v157 = l155;
            const float v134 = v130 * v157;
            l77 = v134;
            const float v139 = v134 + v133;
            l77 = v139;
        }
    }
    const float v141 = l77;
    l77 = -0.0;
    const bool v151 = v141 == 0.0;
    const float v54 = v151 ? 0.0 : v141;
    b1[v7] = v54;
}
