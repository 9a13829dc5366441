// DSL code on triangle edges in screen space: the rasterizer's edge function, and antialiasing's walk from a
// pixel pair's occluder across shared edges to the silhouette edge the pair's segment leaves through
// (nvdiffrast's antialias, carried on past the occluder's own edges). The renderer (render/raster.h,
// render/antialias_dsl.h, which says why the walk runs on) and adjoint.torch's antialias op
// (python/antialias_ops.cpp) both use them, the walk each over its own mesh tables.
#pragma once
#include <adjoint/adjoint.h>

namespace adjoint::app {

// Twice the signed area of (a, b, p): positive when p is left of a -> b in pixel space (y down). The
// rasterizer's, which the differentiable stages use too (their barycentrics must be its).
inline Float edge_function(const Float2& a, const Float2& b, const Float2& p) {
    return (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x);
}

inline UInt pick(const UInt3& v, const UInt& k) { return ite(k == 0u, v.x, ite(k == 1u, v.y, v.z)); }

// The silhouette edge a walk ends at; found = 0: none (the walk entered the triangle the other pixel sees, met
// a triangle it cannot project, or ran out of steps).
struct SilhouetteEdge {
    UInt found = 0u;
    UInt va = 0u, vb = 0u;   // the edge's vertices
};

// The line through two points in homogeneous pixel coordinates (x, y, w): L · (p, 1) is 0 on it, and is the
// 2D edge function of their projections times both w's. Exact for points behind the camera or on its plane too;
// best taken about a pixel near p (homogeneous coordinates less w times that pixel), where its terms are small.
inline Float3 homogeneous_line(const Float3& a, const Float3& b) { return cross(a, b); }

// Walks the segment from pixel centre ci (inside triangle `cur`) to co (where triangle `seen_at_o` is seen, or
// none) for at most `max_steps` triangles. Each triangle's exit is the first edge the segment leaves it through;
// past a shared edge whose neighbour faces the same way the walk goes on, and an edge with no neighbour or one
// folded behind it (the neighbour's far vertex on this triangle's side) is the silhouette. A horizontal pair
// (`horizontal`) blends only across edges more vertical than horizontal, a vertical pair the rest: when an
// edge passes a pixel centre, the next pair along the row or column takes over where this one ends.
//
// Mesh gives, on plain values (kNone: none):
//   UInt3 triangle(tri)                                 its vertices
//   void edges(tri, UInt3 vertices, Float3 (&e)[3], Float2& origin, Bool& valid)
//                                                       its edge functions in homogeneous pixel coordinates about
//                                                       pixel position origin (at p: e · (p - origin, 1)), edge k
//                                                       opposite vertex k, each >= 0 inside (the rasterizer's
//                                                       TriEdges: exact for corners behind the camera too); valid =
//                                                       false stops
//   UInt neighbor(tri, k)                               the triangle across edge k
//   UInt far_vertex(tri, k)                             that neighbour's vertex off the edge
//   Float3 vertex_point(v, Bool& valid)                 a vertex in homogeneous pixel coordinates (about pixel 0, 0);
//                                                       valid = false: no silhouette there
template <typename Mesh>
SilhouetteEdge walk_to_silhouette(const Mesh& mesh, UInt cur, const UInt& seen_at_o, const Float2& ci,
                                  const Float2& co, const Bool& horizontal, uint32_t max_steps) {
    constexpr uint32_t kNone = 0xFFFFFFFFu;
    SilhouetteEdge e;
    UInt done = 0u, steps = 0u;
    $while ((done == 0u) & (steps < max_steps)) {
        steps = steps + 1u;
        UInt3 t = mesh.triangle(cur);
        Float3 edge[3];
        Float2 origin = make_float2(0.0f);
        Bool valid = true;
        mesh.edges(cur, t, edge, origin, valid);
        Float3 qi = make_float3(ci - origin, 1.0f), qo = make_float3(co - origin, 1.0f);
        Float best = 2.0f;
        UInt k_exit = 3u;
        for (int k = 0; k < 3; ++k) {   // edge k is opposite vertex k
            Float ei = dot(edge[k], qi), eo = dot(edge[k], qo);
            Float s = ei / (ei - eo);
            $if ((ei >= 0.0f) & (eo < 0.0f) & (s < best)) {
                best = s;
                k_exit = uint32_t(k);
            };
        }
        $if (!valid | (k_exit == 3u)) { done = 1u; }
        $else {
            UInt e0 = pick(t, (k_exit + 1u) % 3u), e1 = pick(t, (k_exit + 2u) % 3u);
            Float3 exit = ite(k_exit == 0u, edge[0], ite(k_exit == 1u, edge[1], edge[2]));
            UInt x = mesh.far_vertex(cur, k_exit);
            UInt silhouette = 1u;
            $if (x != kNone) {
                Bool seen = true;
                Float3 hx = mesh.vertex_point(x, seen);
                silhouette = ite(seen & (dot(exit, hx - make_float3(origin * hx.z, 0.0f)) > 0.0f), 1u, 0u);
            };
            $if (silhouette == 1u) {
                // Across the pair more than along it: then s moves at most ~1.4 pixels per pixel the edge moves. The
                // edge runs along (-exit.y, exit.x).
                Float2 d = abs(make_float2(exit.y, exit.x));
                e.found = ite((horizontal & (d.y >= d.x)) | (!horizontal & (d.x > d.y)), 1u, 0u);
                done = 1u;
                e.va = e0;
                e.vb = e1;
            }
            $else {
                UInt next = mesh.neighbor(cur, k_exit);
                // Into the triangle pixel o sees: an interior edge, nothing to blend.
                $if (next == seen_at_o) { done = 1u; }
                $else { cur = next; };
            };
        };
    };
    return e;
}

} // namespace adjoint::app
