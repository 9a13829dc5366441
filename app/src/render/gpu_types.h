// Device-side records of the renderer (std430 layouts shared by host and kernels).
#pragma once
#include <adjoint/adjoint.h>

namespace adjoint::app::gpu {

// One triangle after projection: pixel-space positions and 1/w per vertex (the tile boxes and soft rasterization
// read them), and the tiles it was binned to. 48 bytes.
struct TriSetup {
    float2 p0, p1, p2;      // pixel coordinates (x right, y down), of culled triangles too
    uint2 tiles;            // tile bbox, inclusive: (x0 | y0 << 16, x1 | y1 << 16); x0 > x1 when culled (behind
                            // the near plane, degenerate or off screen): kCulledTiles
    float3 inv_w;           // 1 / clip w per vertex
};
static_assert(sizeof(TriSetup) == 48);
constexpr uint32_t kCulledTiles = 1u;   // tiles.x of a culled triangle (x0 = 1 > x1 = 0 with tiles.y = 0)
// A triangle's edge functions in homogeneous pixel coordinates (Olano and Greer's 2D homogeneous rasterization,
// render/raster.h's edge_record): for pixel p, e_k.xyz · (p - origin_k, 1) is >= 0 for every k where p sees the
// triangle, in front of the camera, and proportional to the perspective-correct barycentric of corner k; (e0.w, e1.w,
// e2.w) · (p - origin_3, 1) is the reversed depth there, 1 at near and 0 at far. No corner is divided by its w, so a
// corner behind the camera, or on its plane, is as exact as any. Each edge is taken about its own origin, which a
// neighbour sharing it takes too (watertight). 64 bytes, so that the 2 million triangles' records fit one storage
// buffer (lavapipe's 128 MiB).
struct TriEdges {
    float4 e0, e1, e2;
    uint4 origins;   // the edges' and the depth plane's: whole pixel positions, x + 32768 | (y + 32768) << 16
};
static_assert(sizeof(TriEdges) == 64);
// Set in tiles.y of a triangle the rasterizer covers on its own (raster_small) rather than through the tile lists:
// its pixel box is small. The tile box beside it stays as it was (tile rows stay below 2^15).
constexpr uint32_t kSmallTriangle = 1u << 31;

// A pixel's visible surface as the shading reads it (in registers: the dynamic chain interpolates it per pixel
// and never stores it).
struct Surface {
    float3 position;        // world space
    float3 normal;          // world space, unit, facing the camera
    float3 face_normal;     // world space, unit, either way round: the triangle's plane (a shadow's receiver)
    float3 color;           // vertex colour (white when the mesh has none)
    float2 uv;
    float2 duv_dx, duv_dy;  // texture-coordinate derivatives per pixel, for the mip level
    float4 tangent;         // unit, orthogonal to the normal, along +u; w: the handedness of the bitangent
                            // (+v up in the texture, glTF's convention); 0 where the UVs give no frame
    uint32_t material;      // kNoMaterial for background
};

// A Surface as stored per pixel while the geometry does not move: without its tangent frame (stored apart, and
// only when a material reads it: SurfaceBuffers), which keeps the record at 80 bytes instead of 112; the
// shading of a 512x512 view reads it once per pixel.
struct SurfaceRecord {
    float3 position, normal, color;
    float2 uv, duv_dx, duv_dy;
    uint32_t material;
};

// A material: its model (material_models() index), where its values start in the parameter buffer (the
// model's properties in order) and its textures (indices into the scene's texture set, or kNone).
struct Material {
    uint32_t model;
    uint32_t values;
    uint32_t pad0, pad1;
    uint4 textures;
};

// A vertex of the concatenated meshes, for the differentiable vertex stage: where its values live in the
// parameter buffer (offsets in floats) and the faces around it when its normal is recomputed.
struct VertexRec {
    uint32_t mesh;          // index into the mesh table
    uint32_t position;      // its OBJ position (3 floats, object space)
    uint32_t color;         // its OBJ colour (3 floats), or kNone for white
    uint32_t faces_begin;   // [begin, end) in the face table: the faces around its OBJ position; empty when
    uint32_t faces_end;     // the normal is the OBJ's own (static, object space)
};

// A mesh's placement in the parameter buffer.
struct MeshRec {
    uint32_t translation, rotation, scale;
};

// A view: its camera's values in the parameter buffer and the fixed rest.
struct ViewRec {
    float3 up;
    uint32_t eye, target, fov;  // offsets in floats: 3, 3, 1 (degrees)
    // The offset of [fx, fy, cx, cy] (pixels); read only when the view has intrinsics (otherwise the
    // projection is fov's: centred, square pixels), so that camera.intrinsics is differentiated as eye is.
    uint32_t intrinsics, has_intrinsics;
    float near, far, width, height;
};

constexpr uint32_t kNone = 0xFFFFFFFFu;
// The rasterizer's screen tiles: 8x8 pixels, where a pixel tests its tile's whole triangle list (16x16 tested
// about 2.3x as many triangles a pixel at 5k triangles over 256x256: raster_depth 11.5 -> 5.0 ms; 4x4 made soft
// visibility's candidate lists slower to build).
constexpr uint32_t kTileSize = 8;

} // namespace adjoint::app::gpu

ADJOINT_STRUCT(adjoint::app::gpu::TriSetup, p0, p1, p2, tiles, inv_w)
ADJOINT_STRUCT(adjoint::app::gpu::TriEdges, e0, e1, e2, origins)
ADJOINT_STRUCT(adjoint::app::gpu::Surface, position, normal, face_normal, color, uv, duv_dx, duv_dy, tangent, material)
ADJOINT_STRUCT(adjoint::app::gpu::SurfaceRecord, position, normal, color, uv, duv_dx, duv_dy, material)
ADJOINT_STRUCT(adjoint::app::gpu::Material, model, values, pad0, pad1, textures)
ADJOINT_STRUCT(adjoint::app::gpu::VertexRec, mesh, position, color, faces_begin, faces_end)
ADJOINT_STRUCT(adjoint::app::gpu::MeshRec, translation, rotation, scale)
ADJOINT_STRUCT(adjoint::app::gpu::ViewRec, up, eye, target, fov, intrinsics, has_intrinsics, near, far, width,
               height)
