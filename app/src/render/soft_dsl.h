// Soft rasterization (SoftRas, Liu et al. 2019; PyTorch3D's softmax blend) as DSL code used by the forward
// kernel and, inside $autodiff, by the backward one.
//
// Every triangle near a pixel covers it with probability D = sigmoid(sign * d^2 / sigma), d the distance
// from the pixel centre to the triangle's projected outline in NDC units (pixels * 2 / width), sign +1
// inside and -1 outside. As in SoftRas's and PyTorch3D's kernels, a triangle counts only where D is above
// eps = kSoftCutoff (their blur radius: d^2 < sigma ln(1 / eps - 1)), so each pixel loops over the few
// triangles binned near it. Unlike them, the coverage used is D' = (D - eps) / (1 - eps), which is 0 at the
// reach instead of jumping from eps to 0: with a small gamma a triangle in front of the pixel's surface
// weighs eps e^(dz / gamma) the moment it comes within reach, enough to take the pixel over, and the image
// (and the finite differences that check its gradients) would jump. The pixel's colour blends the
// triangles' colours (each shaded at the pixel's nearest point of the triangle) and the background with a
// softmax over normalized depth z = (far - depth) / (far - near) at temperature gamma:
//     w_j = D'_j exp(z_j / gamma),   w_b = exp(eps_b / gamma),   rgb = (sum w_j C_j + w_b C_b) / (sum w_j + w_b),
// and alpha = 1 - prod(1 - D'_j), the soft silhouette. The image is continuous in the vertices and the
// camera but for a triangle turning edge-on (soft_fragment) and, with a small gamma, at a reach (D' just inside
// it is below float's resolution, log D' clamped at -69: a fragment in front outweighs the surface from the moment
// it comes within reach), and $autodiff differentiates it as is.
#pragma once
#include "geometry_dsl.h"

#include <cmath>

namespace adjoint::app {

constexpr float kSoftCutoff = 1e-4f;        // coverage below which a triangle is out of reach (SoftRas's)
constexpr float kSoftBackground = 1e-3f;    // the background's normalized depth (eps_b; SoftRas's default)
// In pass 2, triangles whose weight is below e^-18 (1.5e-8) of the largest are not shaded: below float
// precision of the sum.
constexpr float kSoftNegligible = -18.0f;

// The squared reach in NDC units: where D = kSoftCutoff.
inline float soft_reach2(float sigma) {
    return sigma * std::log(1.0f / kSoftCutoff - 1.0f);
}

struct SoftSettings {
    Float sigma, gamma, reach2;   // reach2: soft_reach2(sigma)
    Float near, far;
    // Whether the kernel carries soft_fragment's clipping (a triangle nearer than the near plane). Lavapipe runs
    // an $if's body for every group that reaches it, taken or not: the clipping made soft iterations a third to a
    // half slower where no triangle needs it (app/GUIDE.md), so SoftStage compiles it in only for views that
    // have such triangles (TileBins::nearer); without it, such a triangle counts where all its corners lie
    // beyond the camera's plane and the pixel sees it beyond the near plane.
    bool clip = false;

    // A squared distance in pixels as sigma measures it: in NDC units, the image's width spanning 2.
    Float ndc_d2(const Float& d2_px, const Float& width) const { return d2_px * (4.0f / (width * width)); }
    // The coverage logit, sign * d^2 / sigma (positive inside), of a squared NDC distance.
    Float logit(const Bool& inside, const Float& d2) const { return ite(inside, d2, -d2) / sigma; }
    // A view depth as the depth softmax weighs it: 1 at the near plane, 0 at the far one.
    Float depth_weight(const Float& depth) const { return (far - depth) / (far - near); }
};

// The triangles a pixel loops over: `count` entries of `list` from `begin`, `stride` apart: its own candidates
// (own: the pixel may reorder them; soft_own) or its tile's (stride 1; soft_triangles).
struct SoftTile {
    const BufferUInt& list;
    UInt begin, count, stride;
    Bool own;
    UInt entry(const UInt& i) const { return begin + i * stride; }   // where the i-th lies in `list`
};

// The entries [first, first + count) of a pixel's triangles, clamped to their end: what one dispatch visits.
// Lavapipe ends a group of invocations' loops after 65,535 iterations in all, so a longer list (70,000
// triangles over one tile) is taken in parts, one a dispatch, whose sums carry over (SoftStage).
inline SoftTile soft_part(const SoftTile& t, const UInt& first, const UInt& count) {
    UInt skip = min(first, t.count);
    return SoftTile{t.list, t.entry(skip), min(count, t.count - skip), t.stride, t.own};
}

// What pass 2 sums over a pixel's triangles: the blend's weights and weighted colours, and -log prod(1 - D').
struct SoftSums {
    Float weights, uncovered;
    Float3 colors;
};

// Where on the segment a-b (a != b) the point nearest to p lies: 0 at a, 1 at b.
inline Float segment_nearest(const Float2& p, const Float2& a, const Float2& b) {
    Float2 ab = b - a;
    return clamp(dot(p - a, ab) / dot(ab, ab), 0.0f, 1.0f);
}

// A projected triangle q0 q1 q2 (twice its signed area `area`, not 0) seen from the point p, in pixels:
// whether p is inside, p's barycentrics l, and the outline's point nearest to p: its squared distance and
// its barycentrics. Edge k is opposite vertex k, from vertex k + 1 to vertex k + 2.
struct Outline {
    Bool inside;
    Float3 l;
    Float d2;
    Float3 nearest;
};

inline Outline outline_seen_from(const Float2& p, const Float2& q0, const Float2& q1, const Float2& q2,
                                 const Float& area) {
    Outline o;
    o.l = make_float3(edge_function(q1, q2, p), edge_function(q2, q0, p), edge_function(q0, q1, p)) / area;
    o.inside = (o.l.x >= 0.0f) & (o.l.y >= 0.0f) & (o.l.z >= 0.0f);
    Float t0 = segment_nearest(p, q1, q2), t1 = segment_nearest(p, q2, q0), t2 = segment_nearest(p, q0, q1);
    Float2 r0 = q1 + (q2 - q1) * t0 - p, r1 = q2 + (q0 - q2) * t1 - p, r2 = q0 + (q1 - q0) * t2 - p;
    Float e0 = dot(r0, r0), e1 = dot(r1, r1), e2 = dot(r2, r2);
    o.d2 = min(min(e0, e1), e2);
    Bool pick0 = (e0 <= e1) & (e0 <= e2), pick1 = e1 <= e2;
    o.nearest = ite(pick0, make_float3(0.0f, 1.0f - t0, t0),
                    ite(pick1, make_float3(t1, 0.0f, 1.0f - t1), make_float3(1.0f - t2, t2, 0.0f)));
    return o;
}

// The part of a triangle at view depth >= near, for a triangle that reaches nearer than the near plane (a floor
// running under the camera): its projected corners cannot describe it (a corner behind the camera projects mirrored
// through the image's centre). Cut at clip w = near (plane_cut, geometry_dsl.h), it is a convex polygon of 3
// or 4 corners, kept in 4 places (a triangle repeats one: a segment of length 0); a triangle with no corner nearer
// than the plane (the selection decides from another rounding of its corners) is its own polygon. The clip
// coordinates are chosen before any is projected, and every division is of a value kept from 0, so that no value
// an ite drops is infinite or NaN: $autodiff forms the derivatives of both sides. Built once a triangle
// (clip_triangle); seen from each pixel (ClippedTriangle::seen_from).
struct ClippedOutline {
    Bool any;       // some part lies beyond the near plane, not degenerate in the image
    Bool inside;
    Float d2;       // squared distance from p to the outline, pixels
    Float3 b;       // perspective-correct barycentrics (of the triangle's own corners) of the point used
    Float depth;    // its view depth (clip w), at least near
    UInt edge;      // where p is outside: the triangle's edge nearest to it (k: opposite corner k), or 3: the plane's
};

struct ClippedTriangle {
    Float4 c[3];        // the triangle's clip coordinates
    Float width, height, near;
    Float2 q[4];        // the polygon's corners in pixels
    Float3 bary[4];     // their barycentrics (of the triangle's corners)
    Float iw[4];        // 1 / their clip w
    UInt on[4];         // the edge segment i (corner i to i + 1) lies on: ClippedOutline::edge
    Float area;         // twice the polygon's signed area
    Bool any;

    // Seen from pixel position p: inside the polygon, the barycentrics of the point p sees, from the triangle's
    // homogeneous edge functions about p (surface_at's); outside, those of the outline's point nearest to p,
    // interpolated perspective-correctly between its segment's ends as soft_cover does.
    ClippedOutline seen_from(const Float2& p) const;
};

inline ClippedTriangle clip_triangle(const Float4 (&c)[3], const Float& width, const Float& height,
                                     const Float& near) {
    ClippedTriangle ct;
    for (int k = 0; k < 3; ++k) ct.c[k] = c[k];
    ct.width = width;
    ct.height = height;
    ct.near = near;
    const Float d[3] = {c[0].w - near, c[1].w - near, c[2].w - near};
    const PlaneCut pc = plane_cut(d);
    const Float3 unit[3] = {make_float3(1.0f, 0.0f, 0.0f), make_float3(0.0f, 1.0f, 0.0f),
                            make_float3(0.0f, 0.0f, 1.0f)};
    const std::array<Float4, 4> corner = pc.corners(c);
    const std::array<Float3, 4> bary = pc.corners(unit);
    // The edge each segment lies on (the index of the corner opposite it; 3: the plane's line or a segment of
    // length 0).
    UInt ia = pc.turn(UInt(0u), UInt(1u), UInt(2u)), ib = pc.turn(UInt(1u), UInt(2u), UInt(0u)),
         ie = pc.turn(UInt(2u), UInt(0u), UInt(1u));
    ct.on[0] = ite(pc.none, UInt(2u), ite(pc.a_cut, ie, UInt(3u)));
    ct.on[1] = ite(pc.none, UInt(0u), ite(pc.a_cut, ia, UInt(3u)));
    ct.on[2] = ite(pc.none, UInt(3u), ib);
    ct.on[3] = ite(pc.none, UInt(1u), ite(pc.a_cut, UInt(3u), ie));
    for (int i = 0; i < 4; ++i) {
        ct.bary[i] = bary[i];
        ct.iw[i] = 1.0f / max(corner[i].w, near);   // >= near but for rounding
        ct.q[i] = projected_pixel(corner[i], ct.iw[i], width, height);
    }
    ct.area = edge_function(ct.q[0], ct.q[1], ct.q[2]) + edge_function(ct.q[0], ct.q[2], ct.q[3]);
    Bool all_cut = pc.cut[0] & pc.cut[1] & pc.cut[2];
    ct.any = (!all_cut) & (abs(ct.area) > 1e-10f);
    return ct;
}

inline ClippedOutline ClippedTriangle::seen_from(const Float2& p) const {
    ClippedOutline o;
    o.any = any;
    o.inside = true;
    Float best = 3e38f;
    Float3 best_b = bary[0];
    Float best_iw = iw[0];
    o.edge = 3u;
    for (int i = 0; i < 4; ++i) {
        const int j = (i + 1) % 4;
        o.inside = o.inside & (edge_function(q[i], q[j], p) * area >= 0.0f);
        Float2 ab = q[j] - q[i];
        Float t = clamp(dot(p - q[i], ab) / max(dot(ab, ab), 1e-30f), 0.0f, 1.0f);
        Float2 r = q[i] + ab * t - p;
        Float d2 = dot(r, r);
        Bool nearer = d2 < best;
        best = ite(nearer, d2, best);
        Float wi = (1.0f - t) * iw[i], wj = t * iw[j];
        best_b = ite(nearer, (bary[i] * wi + bary[j] * wj) / (wi + wj), best_b);
        best_iw = ite(nearer, wi + wj, best_iw);
        o.edge = ite(nearer, on[i], o.edge);
    }
    o.d2 = best;
    // Inside: the barycentrics of the point p sees (all >= 0 there, their sum > 0).
    HomogeneousEdges h = homogeneous_edges(c[0], c[1], c[2], width, height, p);
    // (Outside, where their sum may be as small as anything, a corner's in their place keeps the quotient finite.)
    Float3 inside_b =
        edge_barycentrics(ite(o.inside, make_float3(h.e0.z, h.e1.z, h.e2.z), make_float3(1.0f, 0.0f, 0.0f)));
    o.b = ite(o.inside, inside_b, best_b);
    // At least near: rounding put points on the plane's line an ulp before it, which the selection's near test
    // dropped (with faces_per_pixel, about 1% of the fragments beyond a near line in view).
    o.depth = max(ite(o.inside, dot(inside_b, make_float3(c[0].w, c[1].w, c[2].w)), 1.0f / best_iw), near);
    return o;
}

// Triangle `tri` at the centre of pixel `pix`: whether it counts there (in front of the camera, not
// degenerate, between the near and far planes at the pixel, within reach), its coverage logit
// (sign * d^2 / sigma), its normalized depth and what its surface is interpolated from: the point of the
// triangle nearest to the pixel centre in the image (the centre itself inside). PyTorch3D clamps the
// barycentrics to [0, 1] and renormalizes them instead; on a triangle seen nearly edge-on (every closed
// mesh's silhouette has some) that point jumps across the triangle when its projected area changes sign,
// and the image with it. The nearest point of a convex outline moves continuously in the image; what is
// left is its lift onto the triangle when the triangle turns edge-on (its projection folds over: a point
// beside it is nearest to one edge before and another after, at other depths), a jump of the order of a
// percent of the colour in the pixels beside it, as in SoftRas and PyTorch3D. With st.clip, a triangle that
// reaches nearer than the near plane is the polygon of its part beyond it (clip_triangle): its
// outline there is the plane's line, beyond which its coverage fades as beyond any edge.
struct SoftFragment {
    Bool counts;
    Bool clipped;       // reaches nearer than the near plane: q, inv_w and area are not set
    UInt edge;          // clipped: ClippedOutline::edge
    Float logit, depth;
    UInt3 t;
    Float3 w[3];        // world positions
    Float4 c[3];        // clip coordinates
    Float2 q[3];        // pixel positions
    Float3 inv_w;       // 1 / clip w per vertex
    Float area;         // twice the signed pixel area
    Float3 b;           // perspective-correct barycentrics of the triangle's point nearest to the pixel
};

// The pixel's part of a fragment, from its projected triangle (f.q, f.inv_w, f.area): counts (but for the
// clip w test, which needs the clip coordinates), logit, depth and b.
inline void soft_cover(SoftFragment& f, const Float& width, const SoftSettings& st, const UInt2& pix) {
    Float2 p = make_float2(cast<float>(pix.x) + 0.5f, cast<float>(pix.y) + 0.5f);
    Outline o = outline_seen_from(p, f.q[0], f.q[1], f.q[2], f.area);
    Float d2 = st.ndc_d2(o.d2, width);
    f.logit = st.logit(o.inside, d2);
    Float3 lc = ite(o.inside, o.l, o.nearest);
    // Perspective-corrected; the depth is the view depth there.
    Float3 qb = lc * f.inv_w;
    Float sum = qb.x + qb.y + qb.z;
    f.b = qb / sum;
    Float depth = 1.0f / sum;
    f.depth = st.depth_weight(depth);
    f.counts = (abs(f.area) > 1e-10f) & (depth >= st.near) & (depth <= st.far) & (o.inside | (d2 < st.reach2));
}

template <typename PB>
SoftFragment soft_fragment(const VertexInputs<PB>& in, const DslCamera& cam, const SoftSettings& st, const UInt& tri,
                           const UInt2& pix) {
    SoftFragment f;
    f.t = in.triangles.read(tri);
    f.w[0] = in.positions.read(f.t.x);
    f.w[1] = in.positions.read(f.t.y);
    f.w[2] = in.positions.read(f.t.z);
    for (int k = 0; k < 3; ++k) f.c[k] = cam.clip(f.w[k]);
    auto projected = [&] {
        for (int k = 0; k < 3; ++k) f.q[k] = cam.pixel(f.c[k]);
        f.inv_w = make_float3(1.0f / f.c[0].w, 1.0f / f.c[1].w, 1.0f / f.c[2].w);
        f.area = edge_function(f.q[0], f.q[1], f.q[2]);
        soft_cover(f, cam.width, st, pix);
    };
    if (!st.clip) {
        f.clipped = false;
        projected();
        f.counts = f.counts & (f.c[0].w > 1e-6f) & (f.c[1].w > 1e-6f) & (f.c[2].w > 1e-6f);
        return f;
    }
    f.clipped = min(min(f.c[0].w, f.c[1].w), f.c[2].w) < st.near;
    f.edge = 3u;
    $if (f.clipped) {
        ClippedOutline o = clip_triangle(f.c, cam.width, cam.height, st.near).seen_from(pixel_centre(pix));
        Float d2 = st.ndc_d2(o.d2, cam.width);
        f.logit = st.logit(o.inside, d2);
        f.b = o.b;
        f.edge = o.edge;
        f.depth = st.depth_weight(o.depth);
        f.counts = o.any & (o.depth <= st.far) & (o.inside | (d2 < st.reach2));
    }
    $else { projected(); };
    return f;
}

// The surface of a fragment at its point nearest to the pixel; the texture level of detail from the
// triangle's plane (differentiated: see interpolate_surface), whose barycentrics at the pixel and its neighbours
// come from the homogeneous edge functions about the pixel (surface_at's, for clipped fragments too). One-sided
// (as PyTorch3D's shaders): the normal is not turned towards the camera, so that the shading of a triangle seen
// edge-on, which the blend still weighs, does not jump.
template <typename PB>
Var<gpu::Surface> soft_surface(const VertexInputs<PB>& in, const DslCamera& cam, const UInt& tri,
                               const SoftFragment& f, const UInt2& pix) {
    Float2 p = pixel_centre(pix);
    HomogeneousEdges e = homogeneous_edges(f.c[0], f.c[1], f.c[2], cam.width, cam.height, p);
    auto plane = [&](const Float2& at) { return edge_barycentrics(edge_values(e, at)); };
    Float3 bd = plane(p), bx = plane(p + make_float2(1.0f, 0.0f)), by = plane(p + make_float2(0.0f, 1.0f));
    return interpolate_surface(in, cam, tri, f.t, f.w, f.b, bd, bx, by, false);
}

// A fragment's log weight, log D' + z / gamma, and its term of -log prod(1 - D'), both 0 at the reach. Written
// with softplus (-log(1 - D) = softplus(logit)) so that they stay finite and exact for any logit, D near 1
// included; the clamps only catch rounding at the reach.
inline Float soft_log_weight(const SoftFragment& f, const SoftSettings& st) {
    const float log_keep = std::log1p(-kSoftCutoff);   // log(1 - eps)
    return log(max(sigmoid(f.logit) - kSoftCutoff, 1e-30f)) - log_keep + f.depth / st.gamma;
}
inline Float soft_uncovered(const SoftFragment& f) {
    return max(softplus(f.logit) + std::log1p(-kSoftCutoff), 0.0f);
}

// The own lists follow the tile lists in `list`, `capacity` entries a pixel, a screen tile's pixels together. Exact
// soft (every candidate) lays them out entry by entry, `own_stride` = kOwnStride: entry j of the tile's 64 pixels,
// then entry j + 1, so that the selection's writes from a tile's pixels, which run side by side, go to neighbouring
// words. Laid out a pixel after another, each pixel's up to 256 entries together, those writes (each a scalar store
// on lavapipe) went to a new cache line and, 1 KiB apart, often a new page each: exact soft's soft_select took 61 ms
// at 5k/256x256, where the same kernel without its writes took 3, and 17 laid out entry by entry. Reading them
// back that way is a little slower (soft_forward and soft_backward 1-3 ms of 25-28), so faces_per_pixel's K,
// which are written once at the end, keep each pixel's entries together (`own_stride` = 1). The room reserved
// is soft_own_pixels(), whole tiles.
constexpr uint32_t kOwnStride = gpu::kTileSize * gpu::kTileSize;
inline uint32_t soft_own_pixels(uint32_t width, uint32_t height) {
    return ((width + gpu::kTileSize - 1) / gpu::kTileSize) * ((height + gpu::kTileSize - 1) / gpu::kTileSize) *
           kOwnStride;
}
// Where entry 0 of pixel pix's own list lies; entry j lies j * own_stride after it.
inline UInt soft_own(const UInt& own_base, const UInt& capacity, const UInt& own_stride, const UInt& tiles_x,
                     const UInt2& pix) {
    UInt in_tile = (pix.y % gpu::kTileSize) * gpu::kTileSize + pix.x % gpu::kTileSize;
    return own_base + tile_of(pix, tiles_x) * (capacity * kOwnStride) +
           ite(own_stride == 1u, in_tile * capacity, in_tile);
}

// The triangles a pixel's passes loop over: its own candidates where they fitted (from own_begin, soft_own), else
// its tile's.
inline SoftTile soft_triangles(const BufferUInt& list, const BufferUInt& tile_offset, const BufferUInt& tile_count,
                               const UInt& tiles_x, const BufferUInt& pixel_count, const UInt& own_begin,
                               const UInt& capacity, const UInt& own_stride, const UInt2& pix) {
    UInt at = pix.y * dispatch_size().x + pix.x;
    UInt tile_at = tile_of(pix, tiles_x);
    UInt n = pixel_count.read(at);
    Bool own = n <= capacity;
    return SoftTile{list, ite(own, own_begin, tile_offset.read(tile_at)), ite(own, n, tile_count.read(tile_at)),
                    ite(own, own_stride, 1u), own};
}

// The largest log weight at the pixel (the background's included) is subtracted from every log weight, so that the
// exponentials stay finite for any sigma and gamma; the result does not depend on it. Pass 2 raises it as it sums
// (an online softmax: the sums so far are scaled down to each new largest), so a fragment that counts in the sums
// sets it. The backward pass repeats the sums at the forward's final largest, capping the weight of a fragment that
// its rounding lets count there and not in the forward (at the very edge of its reach) at e^kSoftLargest of it
// (finite, not meaningful: that pixel's gradient is lost either way, as it is where the forward's largest came
// from such a fragment and the backward does not count it, whose other weights may then fall below the cut).
// Pass 2 also marks the entries it weighs (above kSoftNegligible of the largest so far), which the backward pass
// loops over. With faces_per_pixel that is all: a list holds at most K, heaviest first when held in registers
// (at 5k triangles, 256x256, soft_forward 6.7-7.8 ms against 8.2-8.8 with a pass 1: three alternated runs). The
// exact blend's lists, in tile order and hundreds long, take pass 1 first, so that pass 2 marks few the final
// largest does not weigh. Pass 1 takes only fragments with D' >= kSoftRobust, well inside their reach: with a small
// gamma a fragment in front at the very edge of its reach takes the largest weight whatever its coverage, and if
// pass 2 (other code, which may round differently) did not count it, no weight might be left above the cut.
constexpr float kSoftRobust = 1e-6f;
constexpr float kSoftLargest = 64.0f;

// Pass 1, on plain values: the largest log weight of `tile`'s robust fragments and `start` (the earlier parts'
// largest; kSoftBackground / gamma, the background's, before the first).
template <typename PB>
Float soft_max_log_weight(const VertexInputs<PB>& in, const DslCamera& cam, const SoftSettings& st,
                          const SoftTile& tile, const UInt2& pix, const Float& start) {
    Float m = start;
    $for (i, 0u, tile.count) {
        UInt tri = tile.list.read(tile.entry(i));
        SoftFragment f = soft_fragment(in, cam, st, tri, pix);
        $if (f.counts & (sigmoid(f.logit) - kSoftCutoff >= kSoftRobust)) { m = max(m, soft_log_weight(f, st)); };
    };
    return m;
}

// Pass 2: adds the fragments of `tile` (a part of the pixel's list) to the sums `s`, their log weights less the
// largest `m`; with `online` (the forward pass, soft_accumulate_online), raising `m` to any fragment's that is
// larger as it goes and scaling the sums so far down to it. Its loop carries accumulators only, so $autodiff's
// reverse pass recomputes it and stores no tape. `weighed(k, tri)`, where given, is called for each entry (k: where
// it lies in the list) whose fragment enters the weights (the others add to `uncovered` only): above
// kSoftNegligible of the largest so far, so those of the final largest and, where the largest rose after them, a
// few more.
template <bool online, typename PB, typename P, typename Weighed>
void soft_accumulate_into(const VertexInputs<PB>& in, const ShadeInputs<P>& shade_in, const ShadingPlan& groups,
                          const DslCamera& cam, const SoftSettings& st, const SoftTile& tile, const UInt2& pix,
                          Float& m, SoftSums& s, const Weighed& weighed) {
    $for (i, 0u, tile.count) {
        UInt k = tile.entry(i);
        UInt tri = tile.list.read(k);
        SoftFragment f = soft_fragment(in, cam, st, tri, pix);
        $if (f.counts) {
            s.uncovered = s.uncovered + soft_uncovered(f);
            Float log_weight = soft_log_weight(f, st);
            if constexpr (online) {
                $if (log_weight > m) {
                    Float scale = exp(m - log_weight);
                    s.weights = s.weights * scale;
                    s.colors = s.colors * scale;
                    m = log_weight;
                };
            }
            Float lw = log_weight - m;
            $if (lw > kSoftNegligible) {
                weighed(k, tri);
                Float w = exp(min(lw, kSoftLargest));
                s.weights = s.weights + w;
                s.colors = s.colors + shade_surface(shade_in, groups, soft_surface(in, cam, tri, f, pix), cam.eye) * w;
            };
        };
    };
}

// The forward pass's, raising `max_log_weight`; the backward pass's and the diagnostics', at the forward's final.
template <typename PB, typename P, typename Weighed>
void soft_accumulate_online(const VertexInputs<PB>& in, const ShadeInputs<P>& shade_in, const ShadingPlan& groups,
                            const DslCamera& cam, const SoftSettings& st, const SoftTile& tile, const UInt2& pix,
                            Float& max_log_weight, SoftSums& s, const Weighed& weighed) {
    soft_accumulate_into<true>(in, shade_in, groups, cam, st, tile, pix, max_log_weight, s, weighed);
}
template <typename PB, typename P>
void soft_accumulate(const VertexInputs<PB>& in, const ShadeInputs<P>& shade_in, const ShadingPlan& groups,
                     const DslCamera& cam, const SoftSettings& st, const SoftTile& tile, const UInt2& pix,
                     const Float& max_log_weight, SoftSums& s) {
    Float m = max_log_weight;
    soft_accumulate_into<false>(in, shade_in, groups, cam, st, tile, pix, m, s, [](const UInt&, const UInt&) {});
}

// Where a pixel loops over its own candidates, pass 2 moves the entries whose fragments enter the weights to
// the front of its list (swapping each with the first entry not yet moved: entries behind the loop's
// position only, so every entry is read once, and the list keeps its entries) and counts them. Where the
// loss gives alpha no gradient (the colour losses), the others contribute exactly zero to the gradient
// (they add to `uncovered` only), and the backward pass loops over the front. With a small gamma that is
// the front layer of the surface: about half of a closed mesh's candidates. A pixel that loops over its tile's
// list (its candidates overflowed its own list's room) copies its weighed entries into its own list instead,
// while they fit: then its backward pass loops over those alone too (at 50k triangles and 512x512 a pixel has
// about 480 candidates, about 120 places on lavapipe, and a front layer that mostly fits in them).
constexpr uint32_t kSoftAllWeighed = ~0u;   // the pixel's count when its weighed entries did not fit its own list

// The pixel's colour (rgb) and soft silhouette (alpha) from the sums over all its triangles.
inline Float4 soft_finish(const SoftSums& s, const Float& max_log_weight, const Float3& background,
                          const SoftSettings& st) {
    Float wb = exp(kSoftBackground / st.gamma - max_log_weight);
    return make_float4((s.colors + background * wb) / (s.weights + wb), 1.0f - exp(-s.uncovered));
}

} // namespace adjoint::app
