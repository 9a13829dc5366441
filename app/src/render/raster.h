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

// The clip w a vertex is projected with where a pixel position is wanted (the corners the tile boxes and soft
// rasterization read; the antialias walk reads the edges): its own, kept at least kMinClipW from 0 with its sign (a
// vertex on the camera's plane counts as behind it, and projects mirrored through the image's centre, as any behind
// it). Coverage, depth and barycentrics do not divide by w (homogeneous_edges).
constexpr float kMinClipW = 1e-6f;
inline Float projective_w(const Float& w) { return ite(w > 0.0f, max(w, kMinClipW), min(w, -kMinClipW)); }

// Pixel coordinates (x right, y down) of clip coordinates c (OpenGL) given its 1 / w: the projection the tile boxes,
// the setups' corners, soft rasterization and DslCamera::pixel share.
inline Float2 projected_pixel(const Float4& c, const Float& inv_w, const Float& width, const Float& height) {
    return make_float2((c.x * inv_w * 0.5f + 0.5f) * width, (0.5f - c.y * inv_w * 0.5f) * height);
}

// Clip coordinates c (OpenGL) in homogeneous pixel coordinates about pixel position `origin`: (X, Y, W) with
// (X / W, Y / W) the pixel c projects to (x right, y down) less origin, W = c.w.
inline Float3 homogeneous_pixel(const Float4& c, const Float& width, const Float& height, const Float2& origin) {
    return make_float3((c.x * 0.5f + c.w * 0.5f) * width - c.w * origin.x,
                       (c.w * 0.5f - c.y * 0.5f) * height - c.w * origin.y, c.w);
}

// The edge functions of the triangle with clip coordinates c0 c1 c2 (gpu::TriEdges): E_k = h_{k+1} × h_{k+2} in
// homogeneous pixel coordinates h about `origin`, turned by the sign of det = h_0 · E_0. Then E_k · q / |det| =
// b_k / W for the ray through pixel p, q = (p - origin, 1): b the perspective-correct barycentrics of the point of
// the triangle's plane that projects to p, W its clip w (Cramer's rule on sum_k b_k h_k = W q), so all three are
// >= 0 exactly where p sees the triangle in front of the camera, whichever side of the camera's plane its corners
// lie on; and NDC z mapped to [0, 1] there is sum_k (E_k · q / |det|) (z_k + w_k) / 2 (the rasterizer keeps its
// reverse, with w_k - z_k: edge_record).
// E's terms, and the sums they cancel in, grow with the square of the distance from the origin: the differentiable
// stages take a pixel's barycentrics about the pixel itself (surface_at), the rasterizer each edge about a pixel near
// it (edge_record).
struct HomogeneousEdges {
    Float3 e0, e1, e2;   // turned: >= 0 inside
    Float det;           // h_0 · (h_1 × h_2), before the turn (0: degenerate)
    Float2 origin;
};
inline HomogeneousEdges homogeneous_edges(const Float4& c0, const Float4& c1, const Float4& c2, const Float& width,
                                          const Float& height, const Float2& origin) {
    Float3 h0 = homogeneous_pixel(c0, width, height, origin), h1 = homogeneous_pixel(c1, width, height, origin),
           h2 = homogeneous_pixel(c2, width, height, origin);
    Float3 e0 = cross(h1, h2), e1 = cross(h2, h0), e2 = cross(h0, h1);
    Float det = dot(h0, e0);
    Float turn = ite(det < 0.0f, -1.0f, 1.0f);
    return {e0 * turn, e1 * turn, e2 * turn, det, origin};
}
// A whole pixel position in a record (gpu::TriEdges::origins): x and y each + 32768 in 16 bits, within [-32767, 32767].
inline UInt pack_origin(const Float2& o) {
    Float2 c = clamp(round(o), make_float2(-32767.0f), make_float2(32767.0f)) + 32768.0f;
    return cast<uint32_t>(c.x) | (cast<uint32_t>(c.y) << 16u);
}
inline Float2 unpack_origin(const UInt& u) {
    return make_float2(cast<float>(u & 0xffffu), cast<float>(u >> 16u)) - 32768.0f;
}

// The pixel edge (a, b) is taken about: where its midpoint projects, or a corner in front of the camera's plane where
// the midpoint is not, else the image's centre; kept within the image grown by its size on each side, and rounded to
// a whole pixel. A function of the two corners in either order.
inline Float2 edge_origin(const Float4& a, const Float4& b, const Float& width, const Float& height) {
    Float4 m = (a + b) * 0.5f;
    // Where the midpoint is not in front, the corner with the larger w (ties by x, then y): the same whichever
    // order the corners come in (a seam's two sides may number them the other way round).
    Bool a_first = (a.w > b.w) | ((a.w == b.w) & ((a.x > b.x) | ((a.x == b.x) & (a.y > b.y))));
    Float4 c = ite(m.w > kMinClipW, m, ite(a_first, a, b));
    Float2 p = ite(c.w > kMinClipW, projected_pixel(c, 1.0f / max(c.w, kMinClipW), width, height),
                   make_float2(width, height) * 0.5f);
    return round(clamp(p, -make_float2(width, height), make_float2(width, height) * 2.0f));
}

// The rasterizer's record (gpu::TriEdges) of the triangle with clip coordinates c0 c1 c2 and vertices t. Watertight:
// two triangles that share an edge form its function from the same two corners, taken in the order of their vertex
// indices about the same origin (edge_origin), with the same operations, and the one whose winding runs the other way
// negates it; evaluated with the same operations at a pixel (edge_values), the two values are exact negatives. So a
// pixel centre near the edge falls to one of the two or, exactly on it, to both (the depth test then picks one), never
// to neither. exact() keeps a device from fusing products into an fma in one kernel or one triangle's corner and not
// another's. With the edges of each triangle taken about its own origin, a dense mesh's render at 1280x1280 had 2-8
// pixels that no triangle covered. The edges are turned by det's sign, and the depth plane taken, about `near`
// rounded (the centre of the triangle's pixel box on the screen), where det's terms are small (about the image's
// corner a small triangle's det, and with it its depth, was off by a percent).
// The depth is reversed, (W - Z) / 2W at the pixel: 1 at the near plane, 0 at the far one, sum_k E_k (w_k - z_k) /
// (2 |det|), from each corner's w - z (`reversed`) computed where it does not cancel (DslCamera::reversed). NDC z
// mapped to [0, 1] is 1 - n / W (f - W) / (f - n): far from the camera it lies within a float's rounding of 1, and a
// millimetre model at 1,200 units with near 0.05 was one speckle of back faces; its reverse, about n / W there,
// keeps a float's relative precision.
inline Var<gpu::TriEdges> edge_record(const Float4& c0, const Float4& c1, const Float4& c2, const Float3& reversed,
                                      const UInt3& t, const Float& width, const Float& height, const Float2& near) {
    const Float2 plane_at = round(clamp(near, make_float2(-32767.0f), make_float2(32767.0f)));
    HomogeneousEdges h = homogeneous_edges(c0, c1, c2, width, height, plane_at);
    Float turn = ite(h.det < 0.0f, -1.0f, 1.0f);
    Float scale = 0.5f / max(abs(h.det), 1e-30f);   // a degenerate triangle's depth is never read (never covered)
    Float3 d = (h.e0 * reversed.x + h.e1 * reversed.y + h.e2 * reversed.z) * scale;
    const Float4 c[3] = {c0, c1, c2};
    const UInt v[3] = {t.x, t.y, t.z};
    Float4 e[3];
    UInt origin[3];
    for (int k = 0; k < 3; ++k) {   // edge k: from corner k + 1 to corner k + 2
        const int i = (k + 1) % 3, j = (k + 2) % 3;
        Bool flip = v[i] > v[j];
        Float4 lo = ite(flip, c[j], c[i]), hi = ite(flip, c[i], c[j]);
        Float2 o = edge_origin(lo, hi, width, height);
        Float3 edge = exact(cross(homogeneous_pixel(lo, width, height, o), homogeneous_pixel(hi, width, height, o)));
        e[k] = make_float4(edge * (ite(flip, -1.0f, 1.0f) * turn), k == 0 ? d.x : k == 1 ? d.y : d.z);
        origin[k] = pack_origin(o);
    }
    Var<gpu::TriEdges> r;
    r.e0 = e[0];
    r.e1 = e[1];
    r.e2 = e[2];
    r.origins = make_uint4(origin[0], origin[1], origin[2], pack_origin(plane_at));
    return r;
}
// A record's edge (coefficients e about the whole pixel `packed`) at pixel position p. p - o is exact (a pixel
// centre less a whole pixel); the rest is written out, under exact(), so that no dot() or device decides the
// order. The rasterizer (edge_values) and the antialias walk's start (record_edge) both take it: their values
// agree bit for bit, and a pixel centre within an ulp of an edge is on the same side for both.
template <typename F>
Float edge_at(const F& e, const UInt& packed, const Float2& p) {
    Float2 q = p - unpack_origin(packed);
    return exact(e.x * q.x + e.y * q.y + e.z);
}
// A record's edge k about pixel position o (the antialias walk's: homogeneous_edges' e_k).
template <typename F>
Float3 record_edge(const F& e, const UInt& packed, const Float2& o) {
    return make_float3(e.x, e.y, edge_at(e, packed, o));
}
template <typename E>
HomogeneousEdges record_edges(const E& r, const Float2& o) {
    return {record_edge(r.e0, r.origins.x, o), record_edge(r.e1, r.origins.y, o), record_edge(r.e2, r.origins.z, o),
            Float(0.0f), o};
}
// The three edge functions at pixel position p (>= 0 inside), from the edges or their record; the depth there.
inline Float3 edge_values(const HomogeneousEdges& e, const Float2& p) {
    Float3 q = make_float3(p - e.origin, 1.0f);
    return make_float3(dot(e.e0, q), dot(e.e1, q), dot(e.e2, q));
}
template <typename E>
Float3 edge_values(const E& r, const Float2& p) {
    return make_float3(edge_at(r.e0, r.origins.x, p), edge_at(r.e1, r.origins.y, p), edge_at(r.e2, r.origins.z, p));
}
template <typename E>
Float edge_depth(const E& r, const Float2& p) {
    Float2 q = p - unpack_origin(r.origins.w);
    return r.e0.w * q.x + r.e1.w * q.y + r.e2.w;
}
// x, or 1 where x is 0: a divisor kept from 0 where the quotient is not used, so that it stays finite ($autodiff
// forms the derivatives of an ite's dropped side too).
inline Float nonzero(const Float& x) { return ite(x != 0.0f, x, Float(1.0f)); }
// Perspective-correct barycentrics from edge values: each over their sum (0 only where the pixel's ray runs along
// the triangle's plane, which sees no point of it: kept finite there).
inline Float3 edge_barycentrics(const Float3& v) { return v / nonzero(v.x + v.y + v.z); }

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
// the edges (Rasterizer::barycentrics() writes them out, for tests).
struct GBuffer {
    Buffer<gpu::TriSetup> setups;   // the projected triangles
    Buffer<gpu::TriEdges> edges;    // their edge functions (coverage, depth and barycentrics: homogeneous_edges)
    Buffer<uint32_t> triangle;
    uint32_t width = 0, height = 0;
    Buffer<float> depth;            // the visible triangle's reversed depth, 1 at near, 0 at far (edge_record)
    // The covered pixels' indices, in no order, and their count (covered_count[0]): the shading runs over
    // them alone (render/work_list.h).
    Buffer<uint32_t> covered, covered_count;
};

// The triangles binned to screen tiles (gpu::kTileSize square): tile t's triangles are
// list[offset[t] .. offset[t] + count[t]). After them the list keeps `own` entries a pixel for the caller, from
// list[reserved_at] on (Rasterizer::bin, OwnLists; soft rasterization lays them out by screen tile: soft_own).
// Each tile's list has its triangles of positive projected area (one winding: for a closed mesh, the side
// facing the camera or the other) before the rest: `sides` holds how many, and `nearest` per tile and side
// (2t, 2t + 1) the largest 1 / clip w of their vertices, as float bits (0: none; infinite where a triangle has a
// corner on or behind the camera's plane, whose part beyond the near plane reaches it). Soft rasterization's
// selection skips a side that cannot beat what it kept (soft_select_held).
struct TileBins {
    Buffer<gpu::TriSetup> setups;   // the projected triangles
    Buffer<gpu::TriEdges> edges;    // their edge functions
    Buffer<uint32_t> offset, count, list;
    uint32_t width = 0, height = 0, tiles_x = 0, reserved_at = 0;
    uint32_t longest = 0;   // the longest tile list
    Buffer<uint32_t> sides, nearest;
    uint32_t own = 0;       // entries a pixel after the lists (OwnLists)
    uint32_t nearer = 0;    // the triangles binned with a corner nearer than the near plane (soft clips them)
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
