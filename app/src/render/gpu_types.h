// Device-side records of the renderer (std430 layouts shared by host and kernels).
#pragma once
#include <adjoint/adjoint.h>

namespace adjoint::app::gpu {

// One triangle after projection: pixel-space positions, 1/w and NDC depth per vertex; valid = 0 when culled
// (behind the near plane, degenerate or off screen).
struct TriSetup {
    float2 p0, p1, p2;      // pixel coordinates (x right, y down)
    float3 inv_w;           // 1 / clip w per vertex
    float3 z;               // depth per vertex, NDC z mapped to [0, 1] (0 at near)
    uint4 tiles;            // tile bbox: x0, y0, x1, y1 (inclusive)
    uint32_t valid;
};

// A pixel's visible surface, interpolated once per view while the geometry does not move.
struct Surface {
    float3 position;        // world space
    float3 normal;          // world space, unit, facing the camera
    float3 color;           // vertex colour (white when the mesh has none)
    float2 uv;
    float2 duv_dx, duv_dy;  // texture-coordinate derivatives per pixel, for the mip level
    uint32_t material;      // kNoMaterial for background
};

// Where a material's values live in the parameter buffer (offsets in floats).
struct Material {
    uint32_t albedo;        // 3 floats, when untextured
    uint32_t texture;       // index into the scene's texture set (Scene::textures), or kNone
    uint32_t specular;      // 3 floats
    uint32_t shininess;     // 1 float
};

constexpr uint32_t kNone = 0xFFFFFFFFu;
constexpr uint32_t kTileSize = 16;

} // namespace adjoint::app::gpu

ADJOINT_STRUCT(adjoint::app::gpu::TriSetup, p0, p1, p2, inv_w, z, tiles, valid)
ADJOINT_STRUCT(adjoint::app::gpu::Surface, position, normal, color, uv, duv_dx, duv_dy, material)
ADJOINT_STRUCT(adjoint::app::gpu::Material, albedo, texture, specular, shininess)
