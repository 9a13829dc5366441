// Analytic antialiasing of silhouette edges (the approach of nvdiffrast's antialias op), as DSL code used by
// the forward kernel and, inside $autodiff, by the backward one.
//
// For two neighbouring pixels (a horizontal or a vertical pair) that see different triangles, the nearer
// of the two triangles is the occluder. The segment from its pixel's centre i to the other centre o leaves
// it through one edge; if that edge is shared with a neighbour that faces the camera too, the segment goes
// on through the neighbour, until it leaves through a silhouette edge (no neighbour across it, or a
// neighbour folded behind it: its opposite vertex lies on the walked triangle's own side of the edge). That
// edge crosses the segment at s in [0, 1] (0 at i), and the pair is blended as a box filter along the
// segment would: past the midpoint (s > 1/2) the occluder covers s - 1/2 of pixel o, which moves towards
// i's colour; before it, pixel i is uncovered by 1/2 - s and moves towards o's colour. The blend is
// continuous in the edge's position, and its derivative reaches the edge's two vertices (and the camera)
// through s. The walk itself (which edge) is found on plain values: only s is differentiated.
//
// Why a walk, and why it runs to the end. nvdiffrast tests only the occluder's own three edges: when the
// silhouette lies beyond them the pair is not blended. Near the silhouette of a smooth, dense mesh (the
// 5k-triangle knot of pose.json at 128x128) the triangles are seen edge-on, slivers far thinner than a
// pixel, and pixel i usually sees one a few slivers inside: that pair, and any walk cut short, drops its
// blend, and drops it where the edge is far from i (s > 1/2, long walks), so the image jumps by up to half
// a pixel's contrast, always the same way as the mesh moves, and the loss's slope is no longer the
// gradient (--check-gradients failed 5 of 7 pose rows with a 4-triangle cap). The walk moves forward along
// the segment with every triangle (each exit lies past the entry), so it ends by itself, after as many
// triangles as the segment crosses (a pair that needs one walks one: the cost follows the mesh, and the
// loop ends when the walk does). kWalkGuard only stops a degenerate (zero-area) fan from spinning; a cap of
// 16 still left 3 of the 7 pose rows failing (the former check, central differences).
#pragma once
#include "geometry_dsl.h"

namespace adjoint::app {

constexpr uint32_t kWalkGuard = 64;   // bounds only a degenerate walk (see above)

template <typename PB>
struct AntialiasInputs {
    const PB& positions;                   // world space (differentiable in the backward kernel)
    const BufferFloat3& positions_value;   // the same values, plain, for the walk
    const BufferVar<uint3>& triangles;
    const BufferVar<uint3>& opposite;      // GeometryTables::opposite
    const BufferVar<uint3>& neighbor;      // GeometryTables::neighbor
    const BufferUInt& triangle_ids;        // the G-buffer
    const BufferFloat& depth;              // the G-buffer's depth (GBuffer::depth): picks a pair's occluder
    const UInt& width;
    // The rasterizer's triangle edges (the G-buffer's), which the walk reads instead of computing them again from
    // the vertices (the same formula on the same values); nullptr: compute.
    const BufferVar<gpu::TriEdges>* edges = nullptr;
};

// Triangle `tri`'s edge functions (homogeneous_edges, >= 0 inside): from the rasterizer's record where it made them
// (for every triangle, culled ones too: raster.cpp's setup kernels), else from the vertices.
// `origin`: the pixel position they are taken about, `near`.
template <typename PB>
void triangle_edges(const AntialiasInputs<PB>& in, const DslCamera& plain_cam, const UInt& tri, const UInt3& t,
                    const Float2& near, Float3 (&e)[3], Float2& origin) {
    if (in.edges) {
        HomogeneousEdges h = record_edges(in.edges->read(tri), near);
        e[0] = h.e0;
        e[1] = h.e1;
        e[2] = h.e2;
        origin = near;
        return;
    }
    HomogeneousEdges h = homogeneous_edges(plain_cam.clip(in.positions_value.read(t.x)),
                                           plain_cam.clip(in.positions_value.read(t.y)),
                                           plain_cam.clip(in.positions_value.read(t.z)), plain_cam.width,
                                           plain_cam.height, near);
    e[0] = h.e0;
    e[1] = h.e1;
    e[2] = h.e2;
    origin = near;
}

// The scene's tables as walk_to_silhouette's mesh (<adjoint/app/screen_edges.h>).
template <typename PB>
struct WalkMesh {
    const AntialiasInputs<PB>& in;
    const DslCamera& cam;
    const Float2& near;   // a pixel of the walk (the occluder's): the edges' origin where they are computed here
    UInt3 triangle(const UInt& tri) const { return in.triangles.read(tri); }
    void edges(const UInt& tri, const UInt3& t, Float3 (&e)[3], Float2& origin, Bool&) const {
        triangle_edges(in, cam, tri, t, near, e, origin);
    }
    UInt neighbor(const UInt& tri, const UInt& k) const { return pick(in.neighbor.read(tri), k); }
    UInt far_vertex(const UInt& tri, const UInt& k) const { return pick(in.opposite.read(tri), k); }
    Float3 vertex_point(const UInt& v, Bool&) const {
        return homogeneous_pixel(cam.clip(in.positions_value.read(v)), cam.width, cam.height, make_float2(0.0f));
    }
};

// The silhouette edge a pair's segment leaves the occluder through, found on plain values.
struct PairEdge {
    UInt found = 0u;           // 1 when there is a blend
    UInt at_a = 1u;            // 1 when the pair's first pixel sees the occluder
    UInt va = 0u, vb = 0u;     // the edge's vertices
    UInt ii = 0u, io = 0u;     // pixel indices: the occluder's pixel and the other one
    Float2 ci, co;             // the two pixel centres
};

template <typename PB>
PairEdge pair_edge(const AntialiasInputs<PB>& in, const DslCamera& plain_cam, const UInt2& pa, const UInt2& pb) {
    PairEdge e;
    Bool horizontal = pa.y == pb.y;
    UInt ia = pa.y * in.width + pa.x, ib = pb.y * in.width + pb.x;
    UInt ta = in.triangle_ids.read(ia), tb = in.triangle_ids.read(ib);
    $if (ta != tb) {
        UInt at_a = 1u;
        $if (ta == gpu::kNone) { at_a = 0u; }
        $elif (tb != gpu::kNone) {
            $if (in.depth.read(ib) > in.depth.read(ia)) { at_a = 0u; };   // reversed depths: b nearer
        };
        e.at_a = at_a;
        UInt cur = ite(at_a == 1u, ta, tb), seen_at_o = ite(at_a == 1u, tb, ta);
        e.ii = ite(at_a == 1u, ia, ib);
        e.io = ite(at_a == 1u, ib, ia);
        Float2 ca = make_float2(cast<float>(pa.x) + 0.5f, cast<float>(pa.y) + 0.5f);
        Float2 cb = make_float2(cast<float>(pb.x) + 0.5f, cast<float>(pb.y) + 0.5f);
        e.ci = ite(at_a == 1u, ca, cb);
        e.co = ite(at_a == 1u, cb, ca);
        SilhouetteEdge w = walk_to_silhouette(WalkMesh<PB>{in, plain_cam, e.ci}, cur, seen_at_o, e.ci, e.co,
                                              horizontal, kWalkGuard);
        e.found = w.found;
        e.va = w.va;
        e.vb = w.vb;
    };
    return e;
}

// A pair's edge as AntialiasStage stores it between its kernels (one walk a pair, where the forward's gather
// and the backward would walk each pair three times): (va, vb | flags), the flags in vb's top bits (a vertex
// index stays below 2^29: a storage buffer holds at most 128 MiB).
constexpr uint32_t kEdgeFound = 1u << 31, kEdgeAtA = 1u << 30, kEdgeVertex = (1u << 29) - 1u;

inline UInt2 encode_edge(const PairEdge& e) {
    UInt flags = ite(e.found == 1u, kEdgeFound, 0u) | ite(e.at_a == 1u, kEdgeAtA, 0u);
    return ite(e.found == 1u, make_uint2(e.va, e.vb | flags), make_uint2(0u));
}

// The edge of the pair (pa, pb) (pa left of or above pb) from its record.
inline PairEdge decode_edge(const UInt2& r, const UInt2& pa, const UInt2& pb, const UInt& width) {
    PairEdge e;
    e.found = ite((r.y & kEdgeFound) != 0u, 1u, 0u);
    e.at_a = ite((r.y & kEdgeAtA) != 0u, 1u, 0u);
    e.va = r.x;
    e.vb = r.y & kEdgeVertex;
    UInt ia = pa.y * width + pa.x, ib = pb.y * width + pb.x;
    Float2 ca = make_float2(cast<float>(pa.x) + 0.5f, cast<float>(pa.y) + 0.5f);
    Float2 cb = make_float2(cast<float>(pb.x) + 0.5f, cast<float>(pb.y) + 0.5f);
    e.ii = ite(e.at_a == 1u, ia, ib);
    e.io = ite(e.at_a == 1u, ib, ia);
    e.ci = ite(e.at_a == 1u, ca, cb);
    e.co = ite(e.at_a == 1u, cb, ca);
    return e;
}

// The blend of a pair whose edge was found, col_i and col_o the shaded colours of its pixels e.ii and e.io (alpha
// = coverage): sets `target` to the pixel index that changes (gpu::kNone when none) and `delta` to what is added
// to its colour. Differentiable in the vertices, the camera and the colours.
template <typename PB>
void pair_delta(const AntialiasInputs<PB>& in, const DslCamera& cam, const PairEdge& e, const Float4& col_i,
                const Float4& col_o, UInt& target, Float4& delta) {
    target = gpu::kNone;
    delta = make_float4(0.0f);
    $if (e.found == 1u) {
        // Where the edge's line crosses the pair's segment, from the line in homogeneous pixel coordinates about
        // pixel centre ci (exact for a corner behind the camera too); its sign does not matter.
        auto point = [&](const UInt& v) {
            return homogeneous_pixel(cam.clip(in.positions.read(v)), cam.width, cam.height, e.ci);
        };
        Float3 line = homogeneous_line(point(e.va), point(e.vb));
        Float ei = line.z, eo = dot(line, make_float3(e.co - e.ci, 1.0f));
        Float s = clamp(ei / (ei - eo), 0.0f, 1.0f);
        $if (s > 0.5f) {
            target = e.io;
            delta = (col_i - col_o) * (s - 0.5f);
        }
        $else {
            target = e.ii;
            delta = (col_o - col_i) * (0.5f - s);
        };
    };
}

} // namespace adjoint::app
