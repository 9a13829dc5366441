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
// camera but for a triangle turning edge-on (soft_fragment) and within about 1e-3 pixels of a reach (pass 1),
// and $autodiff differentiates it as is.
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

// Triangle `tri` at the centre of pixel `pix`: whether it counts there (in front of the camera, not
// degenerate, between the near and far planes at the pixel, within reach), its coverage logit
// (sign * d^2 / sigma), its normalized depth and what its surface is interpolated from: the point of the
// triangle nearest to the pixel centre in the image (the centre itself inside). PyTorch3D clamps the
// barycentrics to [0, 1] and renormalizes them instead; on a triangle seen nearly edge-on (every closed
// mesh's silhouette has some) that point jumps across the triangle when its projected area changes sign,
// and the image with it. The nearest point of a convex outline moves continuously in the image; what is
// left is its lift onto the triangle when the triangle turns edge-on (its projection folds over: a point
// beside it is nearest to one edge before and another after, at other depths), a jump of the order of a
// percent of the colour in the pixels beside it, as in SoftRas and PyTorch3D.
struct SoftFragment {
    Bool counts;
    Float logit, depth;
    UInt3 t;
    Float3 w[3];        // world positions
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
    Float d2 = o.d2 * (4.0f / (width * width));
    f.logit = ite(o.inside, d2, -d2) / st.sigma;
    Float3 lc = ite(o.inside, o.l, o.nearest);
    // Perspective-corrected; the depth is the view depth there.
    Float3 qb = lc * f.inv_w;
    Float sum = qb.x + qb.y + qb.z;
    f.b = qb / sum;
    Float depth = 1.0f / sum;
    f.depth = (st.far - depth) / (st.far - st.near);
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
    Float4 c0 = cam.clip(f.w[0]), c1 = cam.clip(f.w[1]), c2 = cam.clip(f.w[2]);
    f.q[0] = cam.pixel(c0);
    f.q[1] = cam.pixel(c1);
    f.q[2] = cam.pixel(c2);
    f.inv_w = make_float3(1.0f / c0.w, 1.0f / c1.w, 1.0f / c2.w);
    f.area = edge_function(f.q[0], f.q[1], f.q[2]);
    soft_cover(f, cam.width, st, pix);
    f.counts = f.counts & (c0.w > 1e-6f) & (c1.w > 1e-6f) & (c2.w > 1e-6f);
    return f;
}

// The surface of a fragment at its point nearest to the pixel; the texture level of detail from the
// triangle's plane (differentiated: see interpolate_surface). One-sided (as PyTorch3D's shaders): the normal is not turned towards the camera, so
// that the shading of a triangle seen edge-on, which the blend still weighs, does not jump.
template <typename PB>
Var<gpu::Surface> soft_surface(const VertexInputs<PB>& in, const DslCamera& cam, const UInt& tri,
                               const SoftFragment& f, const UInt2& pix) {
    auto plane = [&](const Float2& p) {
        Float3 e = make_float3(edge_function(f.q[1], f.q[2], p), edge_function(f.q[2], f.q[0], p),
                               edge_function(f.q[0], f.q[1], p)) / f.area * f.inv_w;
        return e / (e.x + e.y + e.z);
    };
    Float2 p = make_float2(cast<float>(pix.x) + 0.5f, cast<float>(pix.y) + 0.5f);
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

// Pass 1, on plain values: the largest log weight at the pixel, the background's included, to subtract from
// every log weight of pass 2 so that its exponentials stay finite for any sigma and gamma. The result does
// not depend on it, so it needs no gradient; but pass 2 (and the backward kernel, which repeats both
// passes) must find the fragment it came from again, or every weight could underflow. A fragment at the
// very edge of its reach can count in one pass and not in another (the same formulas, compiled into other
// code, may round differently), and with a small gamma a fragment in front takes the largest weight
// whatever its coverage. So only fragments with D' >= kSoftRobust, well inside their reach, set the largest;
// pass 2 caps the weights of the others at e^kSoftLargest of it, which changes the image only within
// about 1e-3 pixels of a reach (where with a small gamma it jumps anyway).
constexpr float kSoftRobust = 1e-6f;
constexpr float kSoftLargest = 64.0f;

// `start`: the largest of the earlier parts of the list (kSoftBackground / gamma, the background's, before
// the first).
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

// Pass 2: adds the fragments of `tile` (a part of the pixel's list) to the sums `s`. Its loop carries
// accumulators only, so $autodiff's reverse pass recomputes it and stores no tape. `weighed(k, tri)`, where
// given, is called for each entry (k: where it lies in the list) whose fragment enters the weights (the others
// add to `uncovered` only).
struct NoHook {
    void operator()(const UInt&, const UInt&) const {}
};
template <typename PB, typename P, typename Weighed = NoHook>
void soft_accumulate(const VertexInputs<PB>& in, const ShadeInputs<P>& shade_in, const ShadingPlan& groups,
                     const DslCamera& cam, const SoftSettings& st, const SoftTile& tile, const UInt2& pix,
                     const Float& max_log_weight, SoftSums& s, const Weighed& weighed = {}) {
    $for (i, 0u, tile.count) {
        UInt k = tile.entry(i);
        UInt tri = tile.list.read(k);
        SoftFragment f = soft_fragment(in, cam, st, tri, pix);
        $if (f.counts) {
            s.uncovered = s.uncovered + soft_uncovered(f);
            Float lw = soft_log_weight(f, st) - max_log_weight;
            $if (lw > kSoftNegligible) {
                weighed(k, tri);
                Float w = exp(min(lw, kSoftLargest));
                s.weights = s.weights + w;
                s.colors = s.colors + shade_surface(shade_in, groups, soft_surface(in, cam, tri, f, pix), cam.eye) * w;
            };
        };
    };
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
