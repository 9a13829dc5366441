// One textured rectangle: four vertices of a triangle strip made from gl_VertexIndex, no vertex buffer.
#version 450
layout(push_constant) uniform Quad {
    vec4 rect;   // x0, y0, x1, y1 in normalized device coordinates (y down, as Vulkan's)
    vec4 uv;     // u0, v0, u1, v1
} quad;
layout(location = 0) out vec2 uv;
void main() {
    vec2 corner = vec2(float(gl_VertexIndex & 1), float(gl_VertexIndex >> 1));
    gl_Position = vec4(mix(quad.rect.xy, quad.rect.zw, corner), 0.0, 1.0);
    uv = mix(quad.uv.xy, quad.uv.zw, corner);
}
