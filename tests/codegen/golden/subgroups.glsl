#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
// kernel subgroups
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) buffer Buffer0 { float b0[]; };
layout(std430, set = 0, binding = 1) buffer Buffer1 { uint b1[]; };
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
    const float v12 = b0[v4];
    const float v13 = subgroupAdd(v12);
    const bool v18 = v13 > 0.0;
    const uvec4 v19 = subgroupBallot(v18);
    uvec4 l28;
    l28 = v19;
    const uint v30 = gl_SubgroupInvocationID;
    const uint v31 = subgroupBroadcastFirst(v30);
    const bool v34 = subgroupElect();
    const bool v37 = v13 < 1000000.0;
    const bool v38 = subgroupAll(v37);
    const bool v39 = v34 && v38;
    const bool v41 = subgroupAllEqual(v31);
    const bool v42 = v39 && v41;
    if (v42) {
        const uint v45 = subgroupMax(v4);
        const uint v47 = subgroupExclusiveAdd(v31);
        const uint v49 = l28.x;
        const uint v50 = v49 + v47;
        const uint v51 = v50 + v45;
        const uint v52 = gl_SubgroupSize;
        const uint v54 = v4 / v52;
        b1[v54] = v51;
    }
}
