// Hard rasterization in compute: triangle setup, binning to 8x8 screen tiles, per-pixel depth test with
// perspective-correct barycentrics (the G-buffer), and attribute interpolation into per-pixel surfaces.
#pragma once
#include "gpu_types.h"

#include <adjoint/app/screen_edges.h>   // edge_function

#include <algorithm>
#include <memory>

namespace adjoint::app {

// The 8x8 screen tile holding pixel `pix`, row-major over tiles_x tiles a row.
inline UInt tile_of(const UInt2& pix, const UInt& tiles_x) {
    return (pix.y / gpu::kTileSize) * tiles_x + pix.x / gpu::kTileSize;
}

// Kernels that take a 2x2 quad of pixels a thread and loop over its tile's list run one thread per quad of every
// tile, the tile's quads consecutive: kTileQuads threads a tile, row by row (Kernel1D, tiles * kTileQuads threads).
// Lavapipe runs 8 consecutive threads as the lanes of one SIMD group, every lane until the longest loop of
// them ends; these 8 then share one tile, one list and one entry an iteration, where quads in image rows (8
// quads, 16 pixels) spanned two tiles' lists.
constexpr uint32_t kTileQuads = (gpu::kTileSize / 2) * (gpu::kTileSize / 2);
struct TileQuad {
    UInt tile;
    UInt2 corner;   // the quad's top left pixel
};
inline TileQuad tile_quad(const UInt& id, const UInt& tiles_x) {
    UInt tile = id / kTileQuads, within = id % kTileQuads;
    constexpr uint32_t row = gpu::kTileSize / 2;
    return {tile, make_uint2((tile % tiles_x) * gpu::kTileSize + (within % row) * 2u,
                             (tile / tiles_x) * gpu::kTileSize + (within / row) * 2u)};
}

// The clip w a vertex is projected with: its own, kept at least kMinClipW from 0 with its sign (a vertex on the
// camera's plane counts as behind it). A triangle with corners on both sides of the plane is drawn from its
// corners' projections, the ones behind the camera mirrored through it (raster.cpp's setup_triangle): the formulas
// hold for them with the signs of w, and only w = 0 has no projection.
constexpr float kMinClipW = 1e-6f;
inline Float projective_w(const Float& w) { return ite(w > 0.0f, max(w, kMinClipW), min(w, -kMinClipW)); }

// All meshes of a scene, concatenated, in world space.
struct DeviceGeometry {
    Buffer<float3> positions, normals, colors;
    Buffer<float2> uvs;
    Buffer<uint3> triangles;
    Buffer<uint32_t> triangle_material;
    uint32_t vertex_count = 0, triangle_count = 0;
    bool tangents = false;  // interpolation computes tangent frames (a material reads a normal texture)
};

// One view: the camera and the resolution. The camera is a host matrix, or (params set) the look-at camera
// whose eye, target and fov_y live in the parameter buffer at views[view]'s slots, projected on the device as
// the differentiable stages project it: a camera that is a parameter is never read back.
struct ViewCamera {
    float4x4 view_proj;     // world -> clip, OpenGL convention (NDC y up, z in [-1, 1] from near to far)
    float3 eye;
    uint32_t width = 0, height = 0;
    const Buffer<float>* params = nullptr;
    const Buffer<gpu::ViewRec>* views = nullptr;
    uint32_t view = 0;
};

// The G-buffer of a view: visible triangle (gpu::kNone for background) and its depth per pixel, row-major. The
// barycentrics are not stored: the differentiable stages recompute them from the vertices, interpolate() from
// the setups (Rasterizer::barycentrics() writes them out, for tests).
struct GBuffer {
    Buffer<gpu::TriSetup> setups;   // the projected triangles (interpolation needs their screen positions)
    Buffer<uint32_t> triangle;
    uint32_t width = 0, height = 0;
    Buffer<float> depth;            // the visible triangle's depth, NDC z mapped to [0, 1] (0 at near)
    // The covered pixels' indices, in no order, and their count (covered_count[0]): the shading runs over
    // them alone (render/work_list.h).
    Buffer<uint32_t> covered, covered_count;
};

// The triangles binned to screen tiles (gpu::kTileSize square): tile t's triangles are
// list[offset[t] .. offset[t] + count[t]). After them the list keeps `own` entries a pixel for the caller, from
// list[reserved_at] on (Rasterizer::bin, OwnLists; soft rasterization lays them out by screen tile: soft_own).
// Each tile's list has its triangles of positive projected area (one winding: for a closed mesh, the side
// facing the camera or the other) before the rest: `sides` holds how many, and `nearest` per tile and side
// (2t, 2t + 1) the largest 1 / clip w of their vertices, as float bits (0: none). Soft rasterization's
// selection skips a side that cannot beat what it kept (soft_select_held).
struct TileBins {
    Buffer<gpu::TriSetup> setups;   // the projected triangles
    Buffer<uint32_t> offset, count, list;
    uint32_t width = 0, height = 0, tiles_x = 0, reserved_at = 0;
    uint32_t longest = 0;   // the longest tile list
    Buffer<uint32_t> sides, nearest;
    uint32_t own = 0;       // entries a pixel after the lists (OwnLists)
    uint32_t tiles() const { return tiles_x * ((height + gpu::kTileSize - 1) / gpu::kTileSize); }
};

// What a caller of Rasterizer::bin keeps in the list buffer after the tile lists, so that one buffer holds both
// and a kernel can loop over either (soft rasterization's per-pixel lists): `per_pixel` entries for each of
// `pixels`; with `fit`, fewer a pixel where the tile lists leave less room than that below the device's largest
// storage buffer (or 2^28 entries, 1 GiB).
struct OwnLists {
    uint32_t pixels = 0, per_pixel = 0;
    bool fit = false;
};

// One view's visible surfaces, stored: a record per pixel and, when the scene's materials read tangent frames,
// a tangent per pixel (otherwise a buffer of one, never read).
struct SurfaceBuffers {
    Buffer<gpu::SurfaceRecord> records;
    Buffer<float4> tangents;
    SurfaceBuffers(Device& device, size_t pixels, bool with_tangents)
        : records(device.create_buffer<gpu::SurfaceRecord>(std::max<size_t>(pixels, 1))),
          tangents(device.create_buffer<float4>(with_tangents ? std::max<size_t>(pixels, 1) : 1)) {}
};

class Rasterizer {
public:
    // small_triangles: cover small triangles on their own where the device has 64-bit atomics (raster.cpp);
    // false bins every triangle (the tests compare the two).
    explicit Rasterizer(Device& device, bool small_triangles = true);
    ~Rasterizer();
    // Projects and bins one view's triangles, each into the tiles its pixel bounding box grown by `margin`
    // pixels touches (soft rasterization's reach; 0 for hard). Synchronizes once (the tile lists are sized
    // from their counts). The list buffer keeps `own` after the lists (TileBins::own says how many a pixel).
    // small_span > 0: a triangle whose box spans fewer pixel rows and columns is marked small
    // (gpu::kSmallTriangle) and binned nowhere (rasterize() covers it on its own).
    TileBins bin(Stream& stream, const DeviceGeometry& geometry, const ViewCamera& view, float margin = 0,
                 OwnLists own = {}, uint32_t small_span = 0);
    // Rasterizes and interpolates one view; synchronizes twice (binning, then the G-buffer).
    GBuffer rasterize(Stream& stream, const DeviceGeometry& geometry, const ViewCamera& view);
    void interpolate(Stream& stream, const DeviceGeometry& geometry, const ViewCamera& view, const GBuffer& gbuffer,
                     SurfaceBuffers& surfaces);
    // The perspective-correct barycentrics (b1, b2; b0 = 1 - b1 - b2) of each pixel's triangle, (0, 0) where none:
    // what interpolate() computes, written out.
    Buffer<float2> barycentrics(Stream& stream, const GBuffer& gbuffer);

private:
    struct Kernels;
    Device& device_;
    std::unique_ptr<Kernels> k_;
};

} // namespace adjoint::app
