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
    const float v8 = b0[v7];
    const float v13 = v8;
    float l15;
    l15 = v13;
    uint l21;
    l21 = 0u;
    uint l52;
    l52 = 0u;
    float l56[64];
    while (true) {
        const uint v24 = l21;
        const bool v25 = v24 < pc.a2;
        const bool v26 = !v25;
        if (v26) {
            break;
        }
        const uint v57 = l52;
        const bool v59 = v57 >= 64u;
        if (v59) {
            atomicCompSwap(adjoint_status[0], 0u, 1888781222u);
        }
        const uint v64 = min(v57, 63u);
        const float v65 = l15;
        l56[v64] = v65;
        const uint v68 = v57 + 1u;
        l52 = v68;
        const float v29 = l15;
        const bool v31 = v29 > 1.0;
        if (v31) {
            const float v33 = l15;
            const float v35 = v33 * 0.5;
            l15 = v35;
        } else {
            const float v37 = l15;
            const float v38 = l15;
            const float v39 = v37 * v38;
            const float v41 = v39 + 0.25;
            l15 = v41;
        }
        const uint v43 = l21;
        const uint v44 = v43 + 1u;
        l21 = v44;
    }
    float l73;
    l73 = -0.0;
    l73 = 1.0;
    uint l81;
    const uint v82 = l52;
    l81 = v82;
    while (true) {
        const uint v85 = l81;
        const bool v87 = v85 == 0u;
        if (v87) {
            break;
        }
        const uint v91 = v85 - 1u;
        l81 = v91;
        const uint v94 = min(v91, 63u);
        const float v95 = l56[v94];
        const bool v104 = v95 > 1.0;
        float l152;
        float l155;
        if (v104) {
        } else {
            l152 = v95;
            l155 = v95;
        }
        if (v104) {
            const float v118 = l73;
            l73 = -0.0;
            const float v121 = v118 * 0.5;
            l73 = v121;
        } else {
            const float v126 = l73;
            l73 = -0.0;
            const float v157 = l155;
            const float v129 = v126 * v157;
            const float v154 = l152;
            const float v130 = v126 * v154;
            l73 = v130;
            const float v135 = v130 + v129;
            l73 = v135;
        }
    }
    const float v137 = l73;
    l73 = -0.0;
    const bool v147 = v137 == 0.0;
    const float v50 = v147 ? 0.0 : v137;
    b1[v7] = v50;
}
