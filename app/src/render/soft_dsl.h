// Soft rasterization (SoftRas, Liu et al. 2019; PyTorch3D's softmax blend) as DSL code used by the forward
// kernel and, inside $autodiff, by the backward one.
//
// Every triangle near a pixel covers it with probability D = sigmoid(sign * d^2 / sigma), d the distance
// from the pixel centre to the triangle's projected outline in NDC units (pixels * 2 / width), sign +1
// inside and -1 outside. The pixel's colour blends the triangles' colours (each shaded at the pixel's
// nearest point of the triangle) and the background with a softmax over normalized depth
// z = (far - depth) / (far - near) at temperature gamma:
//     w_j = D_j exp(z_j / gamma),   w_b = exp(eps / gamma),   rgb = (sum w_j C_j + w_b C_b) / (sum w_j + w_b),
// and alpha = 1 - prod(1 - D_j), the soft silhouette. Only triangles within reach of the pixel count
// (soft_reach2): beyond it a triangle's weight is below kSoftCutoff of the background's, so leaving it out
// changes the image by less than that. The image is smooth in the vertices and the camera but for one
// case (soft_fragment): a triangle turning edge-on, and $autodiff differentiates it as is.
#pragma once
#include "geometry_dsl.h"

#include <cmath>

namespace adjoint::app {

constexpr float kSoftCutoff = 1e-4f;        // relative weight below which a triangle is out of reach
constexpr float kSoftBackground = 1e-3f;    // the background's normalized depth (eps; SoftRas's default)
// In pass 2, triangles whose weight is below e^-18 (1.5e-8) of the largest are not shaded: below float
// precision of the sum.
constexpr float kSoftNegligible = -18.0f;

// The squared reach in NDC units: where D exp((1 - eps) / gamma) = kSoftCutoff, the largest weight a
// triangle between the near and far planes can have relative to the background's.
inline float soft_reach2(float sigma, float gamma) {
    return sigma * (std::log(1.0f / kSoftCutoff) + (1.0f - kSoftBackground) / gamma);
}

struct SoftSettings {
    Float sigma, gamma, reach2;   // reach2: soft_reach2(sigma, gamma)
    Float near, far;
};

// The triangles of a pixel's tile: list[begin .. end).
struct SoftTile {
    const BufferUInt& list;
    UInt begin, end;
};

// Where on the segment a-b (a != b) the point nearest to p lies: 0 at a, 1 at b.
inline Float segment_nearest(const Float2& p, const Float2& a, const Float2& b) {
    Float2 ab = b - a;
    return clamp(dot(p - a, ab) / dot(ab, ab), 0.0f, 1.0f);
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
    Float2 p = make_float2(cast<float>(pix.x) + 0.5f, cast<float>(pix.y) + 0.5f);
    Float3 l = make_float3(edge_function(f.q[1], f.q[2], p), edge_function(f.q[2], f.q[0], p),
                           edge_function(f.q[0], f.q[1], p)) / f.area;
    Bool inside = (l.x >= 0.0f) & (l.y >= 0.0f) & (l.z >= 0.0f);
    // Edge k is opposite vertex k, from vertex k + 1 to vertex k + 2.
    Float t0 = segment_nearest(p, f.q[1], f.q[2]), t1 = segment_nearest(p, f.q[2], f.q[0]),
          t2 = segment_nearest(p, f.q[0], f.q[1]);
    Float2 r0 = f.q[1] + (f.q[2] - f.q[1]) * t0 - p, r1 = f.q[2] + (f.q[0] - f.q[2]) * t1 - p,
           r2 = f.q[0] + (f.q[1] - f.q[0]) * t2 - p;
    Float e0 = dot(r0, r0), e1 = dot(r1, r1), e2 = dot(r2, r2);
    Float d2 = min(min(e0, e1), e2) * (4.0f / (cam.width * cam.width));
    f.logit = ite(inside, d2, -d2) / st.sigma;
    Bool pick0 = (e0 <= e1) & (e0 <= e2), pick1 = e1 <= e2;
    Float3 on_edge = ite(pick0, make_float3(0.0f, 1.0f - t0, t0),
                         ite(pick1, make_float3(t1, 0.0f, 1.0f - t1), make_float3(1.0f - t2, t2, 0.0f)));
    Float3 lc = ite(inside, l, on_edge);
    // Perspective-corrected; the depth is the view depth there.
    Float3 qb = lc * f.inv_w;
    Float sum = qb.x + qb.y + qb.z;
    f.b = qb / sum;
    Float depth = 1.0f / sum;
    f.depth = (st.far - depth) / (st.far - st.near);
    f.counts = (c0.w > 1e-6f) & (c1.w > 1e-6f) & (c2.w > 1e-6f) & (abs(f.area) > 1e-10f) & (depth >= st.near) &
               (depth <= st.far) & (inside | (d2 <= st.reach2));
    return f;
}

// The surface of a fragment at its point nearest to the pixel; the texture level of detail from the
// triangle's plane. One-sided (as PyTorch3D's shaders): the normal is not turned towards the camera, so
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
    Float3 bd = detach(plane(p)), bx = detach(plane(p + make_float2(1.0f, 0.0f))),
           by = detach(plane(p + make_float2(0.0f, 1.0f)));
    return interpolate_surface(in, cam, tri, f.t, f.w, f.b, bd, bx, by, false);
}

// A fragment's log weight, log D + z / gamma (log D = -softplus(-logit), finite for any logit).
inline Float soft_log_weight(const SoftFragment& f, const SoftSettings& st) {
    return -softplus(-f.logit) + f.depth / st.gamma;
}

// Pass 1, on plain values: the largest log weight at the pixel, the background's included. Subtracting it
// keeps every exponential of pass 2 at most 1 and the largest exactly 1, so nothing overflows and the sum
// is never 0, for any sigma and gamma. The result does not depend on it, so it needs no gradient.
template <typename PB>
Float soft_max_log_weight(const VertexInputs<PB>& in, const DslCamera& cam, const SoftSettings& st,
                          const SoftTile& tile, const UInt2& pix) {
    Float m = kSoftBackground / st.gamma;
    $for (k, tile.begin, tile.end) {
        UInt tri = tile.list.read(k);
        SoftFragment f = soft_fragment(in, cam, st, tri, pix);
        $if (f.counts) { m = max(m, soft_log_weight(f, st)); };
    };
    return m;
}

// Pass 2: the pixel's colour (rgb) and soft silhouette (alpha). Its loop carries accumulators only, so
// $autodiff's reverse pass recomputes it and stores no tape.
template <typename PB, typename P>
Float4 soft_pixel(const VertexInputs<PB>& in, const ShadeInputs<P>& shade_in, const std::vector<ShadeLight>& lights,
                  const DslCamera& cam, const SoftSettings& st, const SoftTile& tile, const UInt2& pix,
                  const Float& max_log_weight, const Float3& background) {
    Float weights = 0.0f, uncovered = 0.0f;   // uncovered: -log prod(1 - D) = sum softplus(logit)
    Float3 colors = make_float3(0.0f);
    $for (k, tile.begin, tile.end) {
        UInt tri = tile.list.read(k);
        SoftFragment f = soft_fragment(in, cam, st, tri, pix);
        $if (f.counts) {
            uncovered = uncovered + softplus(f.logit);
            Float lw = soft_log_weight(f, st) - max_log_weight;
            $if (lw > kSoftNegligible) {
                Float w = exp(lw);
                weights = weights + w;
                colors = colors + shade_surface(shade_in, lights, soft_surface(in, cam, tri, f, pix), cam.eye) * w;
            };
        };
    };
    Float wb = exp(kSoftBackground / st.gamma - max_log_weight);
    return make_float4((colors + background * wb) / (weights + wb), 1.0f - exp(-uncovered));
}

} // namespace adjoint::app
