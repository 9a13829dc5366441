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
    const uint v5 = v2.x;
    const float v8 = b0[v5];
    const float v9 = subgroupAdd(v8);
    const bool v14 = v9 > 0.0;
    const uvec4 v15 = subgroupBallot(v14);
    uvec4 l16;
    l16 = v15;
    const uint v18 = gl_SubgroupInvocationID;
    const uint v19 = subgroupBroadcastFirst(v18);
    const bool v22 = subgroupElect();
    const bool v25 = v9 < 1000000.0;
    const bool v26 = subgroupAll(v25);
    const bool v27 = v22 && v26;
    const bool v29 = subgroupAllEqual(v19);
    const bool v30 = v27 && v29;
    if (v30) {
        const uint v33 = subgroupMax(v5);
        const uint v35 = subgroupExclusiveAdd(v19);
        const uint v36 = l16.x;
        const uint v37 = v36 + v35;
        const uint v38 = v37 + v33;
        const uint v39 = gl_SubgroupSize;
        const bool t0 = v39 == 0u;
        const uint v41 = t0 ? 0u : v5 / (t0 ? 1u : v39);
        b1[v41] = v38;
    }
}
