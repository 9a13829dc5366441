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
    const uvec2 v12 = v5.xy;
    const uint v14 = v12.x;
    const uint v16 = v12.y;
    const uvec3 v17 = pc.dispatch_size;
    const uint v19 = v17.x;
    const uint v24 = v16 * v19;
    const uint v25 = v14 + v24;
    const S_GoldenParticle v29 = b0[v25];
    S_GoldenParticle l46;
    l46 = v29;
    const vec3 v49 = l46.m_pos;
    const float v51 = v49.x;
    const float v53 = v49.y;
    const float v55 = v49.z;
    const vec4 v63 = vec4(v51, v53, v55, 1.0);
    const vec4 v73 = pc.a2 * v63;
    const vec3 v82 = v73.xyz;
    l46.m_pos = v82;
    const vec2 v92 = l46.m_vel;
    const vec2 v97 = -v92;
    const vec2 v103 = l46.m_vel;
    const bvec2 v109 = greaterThan(v103, vec2(0.0));
    const vec2 v115 = l46.m_vel;
    const vec2 v120 = mix(v97, v115, v109);
    l46.m_vel = v120;
    const S_GoldenParticle v127 = l46;
    b0[v25] = v127;
    const vec3 v147 = l46.m_pos;
    const float v149 = v147.x;
    const float v151 = v147.y;
    const float v153 = v147.z;
    const float v161 = l46.m_mass;
    const vec4 v162 = vec4(v149, v151, v153, v161);
    imageStore(img1, ivec2(v12), v162);
}
