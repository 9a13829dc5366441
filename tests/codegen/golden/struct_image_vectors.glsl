#version 450
// kernel struct_image_vectors
layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;
struct S_GoldenParticle {
    vec3 m_pos;
    float _pad1_0;
    float m_mass;
    vec2 m_vel;
};
layout(std430, set = 0, binding = 0) buffer Buffer0 { S_GoldenParticle b0[]; };
layout(set = 0, binding = 1, rgba32f) uniform image2D img1;
layout(push_constant, std430) uniform Push {
    layout(offset = 0) uvec3 dispatch_size;
    layout(offset = 16) mat4 a2;
} pc;
void main() {
    if (any(greaterThanEqual(gl_GlobalInvocationID, pc.dispatch_size))) return;
    const uvec3 v5 = gl_GlobalInvocationID;
    const uvec2 v6 = v5.xy;
    const uvec3 v7 = pc.dispatch_size;
    const uint v9 = v6.y;
    const uint v11 = v7.x;
    const uint v12 = v9 * v11;
    const uint v13 = v6.x;
    const uint v14 = v13 + v12;
    const S_GoldenParticle v18 = b0[v14];
    S_GoldenParticle l19;
    l19 = v18;
    const vec3 v21 = l19.m_pos;
    const float v22 = v21.x;
    const float v23 = v21.y;
    const float v25 = v21.z;
    const vec4 v27 = vec4(v22, v23, v25, 1.0);
    const vec4 v29 = pc.a2 * v27;
    const vec3 v30 = v29.xyz;
    l19.m_pos = v30;
    const vec2 v32 = l19.m_vel;
    const vec2 v33 = -v32;
    const vec2 v34 = l19.m_vel;
    const bvec2 v36 = greaterThan(v34, vec2(0.0));
    const vec2 v37 = l19.m_vel;
    const vec2 v38 = mix(v33, v37, v36);
    l19.m_vel = v38;
    const S_GoldenParticle v40 = l19;
    b0[v14] = v40;
    const vec3 v43 = l19.m_pos;
    const float v44 = v43.x;
    const float v45 = v43.y;
    const float v46 = v43.z;
    const float v47 = l19.m_mass;
    const vec4 v48 = vec4(v44, v45, v46, v47);
    imageStore(img1, ivec2(v6), v48);
}
