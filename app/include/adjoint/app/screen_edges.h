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
inline Float2 pick(const Float2 (&p)[3], const UInt& k) { return ite(k == 0u, p[0], ite(k == 1u, p[1], p[2])); }

// The silhouette edge a walk ends at; found = 0: none (the walk entered the triangle the other pixel sees, met
// a triangle it cannot project, or ran out of steps).
struct SilhouetteEdge {
    UInt found = 0u;
    UInt va = 0u, vb = 0u;   // the edge's vertices
    Float orient = 1.0f;     // makes the edge function >= 0 inside the triangle it bounds
};

// Walks the segment from pixel centre ci (inside triangle `cur`) to co (where triangle `seen_at_o` is seen, or
// none) for at most `max_steps` triangles. Each triangle's exit is the first edge the segment leaves it through;
// past a shared edge whose neighbour faces the same way the walk goes on, and an edge with no neighbour or one
// folded behind it (the neighbour's far vertex on this triangle's side) is the silhouette. A horizontal pair
// (`horizontal`) blends only across edges more vertical than horizontal, a vertical pair the rest: when an
// edge passes a pixel centre, the next pair along the row or column takes over where this one ends.
//
// Mesh gives, on plain values (kNone: none):
//   UInt3 triangle(tri)                                 its vertices
//   void corners(tri, UInt3 vertices, Float2 (&p)[3], Float3& w_sign, Bool& valid)
//                                                       its corners in pixels and the signs of their clip w (-1:
//                                                       behind the camera, projected mirrored); valid = false stops
//   UInt neighbor(tri, k)                               the triangle across edge k (the edge opposite vertex k)
//   UInt far_vertex(tri, k)                             that neighbour's vertex off the edge
//   Float2 vertex_pixel(v, Float& w_sign, Bool& valid)  a vertex in pixels and the sign of its w; valid = false: no
//                                                       silhouette there
//
// A triangle with corners behind the camera (the renderer draws those: render/raster.cpp's setup_triangle) holds
// the points where every edge function, turned by the triangle's winding o and by the sign of the w of the corner
// opposite the edge, is >= 0; each edge is one line either way. A far vertex's side of an edge is turned by its own
// w's sign too. With every corner in front, all signs are 1 and the tests are the plain ones.
template <typename Mesh>
SilhouetteEdge walk_to_silhouette(const Mesh& mesh, UInt cur, const UInt& seen_at_o, const Float2& ci,
                                  const Float2& co, const Bool& horizontal, uint32_t max_steps) {
    constexpr uint32_t kNone = 0xFFFFFFFFu;
    SilhouetteEdge e;
    UInt done = 0u, steps = 0u;
    $while ((done == 0u) & (steps < max_steps)) {
        steps = steps + 1u;
        UInt3 t = mesh.triangle(cur);
        Float2 p[3];
        Float3 w_sign = make_float3(1.0f);
        Bool valid = true;
        mesh.corners(cur, t, p, w_sign, valid);
        Float o = ite(edge_function(p[0], p[1], p[2]) > 0.0f, 1.0f, -1.0f);
        Float ok[3] = {o * w_sign.x, o * w_sign.y, o * w_sign.z};   // edge k's turn
        Float best = 2.0f;
        UInt k_exit = 3u;
        for (int k = 0; k < 3; ++k) {   // edge k is opposite vertex k
            Float ei = edge_function(p[(k + 1) % 3], p[(k + 2) % 3], ci) * ok[k];
            Float eo = edge_function(p[(k + 1) % 3], p[(k + 2) % 3], co) * ok[k];
            Float s = ei / (ei - eo);
            $if ((ei >= 0.0f) & (eo < 0.0f) & (s < best)) {
                best = s;
                k_exit = uint32_t(k);
            };
        }
        $if (!valid | (k_exit == 3u)) { done = 1u; }
        $else {
            UInt e0 = pick(t, (k_exit + 1u) % 3u), e1 = pick(t, (k_exit + 2u) % 3u);
            Float2 q0 = pick(p, (k_exit + 1u) % 3u), q1 = pick(p, (k_exit + 2u) % 3u);
            UInt x = mesh.far_vertex(cur, k_exit);
            Float o_exit = ite(k_exit == 0u, ok[0], ite(k_exit == 1u, ok[1], ok[2]));
            UInt silhouette = 1u;
            $if (x != kNone) {
                Bool seen = true;
                Float x_sign = 1.0f;
                Float2 px = mesh.vertex_pixel(x, x_sign, seen);
                silhouette = ite(seen & (edge_function(q0, q1, px) * o_exit * x_sign > 0.0f), 1u, 0u);
            };
            $if (silhouette == 1u) {
                // Across the pair more than along it: then s moves at most ~1.4 pixels per pixel the edge moves.
                Float2 d = abs(q1 - q0);
                e.found = ite((horizontal & (d.y >= d.x)) | (!horizontal & (d.x > d.y)), 1u, 0u);
                done = 1u;
                e.va = e0;
                e.vb = e1;
                e.orient = o_exit;
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
