// The gradient tests' shared scene: an ico-sphere (vertex colours vary with position) in front of a floor, lit by
// a point and an ambient light, 48x48; `render` is the render block's JSON, `parameters` the free ones (none: no
// optimize block).
#pragma once
#include <string>

namespace adjoint::test {

inline std::string ball_scene(const std::string& render, const std::string& parameters) {
    return R"({
  "format": 1,
  "camera": { "eye": [0.3, 0.8, 3.2], "target": [0, 0, 0], "fov_y": 40, "resolution": [48, 48] },
  "background": [0.1, 0.12, 0.15],
  "materials": {
    "ball":  { "albedo": [0.8, 0.5, 0.3], "specular": [0.2, 0.2, 0.2], "shininess": 20 },
    "floor": { "albedo": [0.3, 0.4, 0.6] }
  },
  "meshes": [
    { "name": "ball",  "file": "meshes/ico_sphere.obj", "material": "ball", "scale": 0.7, "vertex_colors": true },
    { "name": "floor", "file": "meshes/plane.obj", "material": "floor", "translation": [0, -1.0, 0] }
  ],
  "lights": [
    { "name": "key",  "type": "point", "position": [1.5, 2.5, 2], "color": [1, 0.9, 0.8], "intensity": 9 },
    { "name": "fill", "type": "ambient", "color": [1, 1, 1], "intensity": 0.2 }
  ],
  "render": )" + render + (parameters.empty() ? std::string() : R"(,
  "optimize": { "target": "scene", "parameters": { )" + parameters + " } }") + R"(
})";
}

} // namespace adjoint::test
