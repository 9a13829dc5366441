// The panel's texels as they are: they hold sRGB-encoded colour, as the UNORM swapchain expects.
#version 450
layout(set = 0, binding = 0) uniform sampler2D image;
layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 colour;
void main() {
    colour = vec4(texture(image, uv).rgb, 1.0);
}
