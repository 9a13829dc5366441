// Shadows as DSL code: how much of a shadowing light a surface point sees, from every triangle of the scene
// projected along the light's ray through the point, with the soft rasterizer's edge function (soft_dsl.h).
//
// For a point p and a light (a sun's direction, or a point light's position), each triangle is projected onto
// the plane through p perpendicular to the ray p -> light (orthographically along a sun's rays, centrally from
// a point light), p at the origin. The triangle covers p when p's projection lies inside it and the triangle
// lies between p and the light: its height above p along the ray where the ray meets the triangle's plane
// (inside its outline or, for the band below, beside it) is more than `bias` (and, for a point light, less
// than the light's distance minus `bias`; in antialias and soft a ramp over one more `bias`, so that nothing
// jumps). Its coverage c:
//   hard:      1 inside, 0 outside (no boundary gradients);
//   antialias, soft: 1 inside, and outside a band that falls to 0 with the distance d from p's projection to
//              the outline, measured in the view's NDC units at p (the soft rasterizer's units): the soft edge
//              sigmoid(-d^2 / sigma) scaled to 1 at the outline and 0 at the reach (kSoftCutoff), with sigma the
//              scene's soft sigma (soft) or the one that puts the reach at one pixel (antialias).
// Visibility = prod (1 - c_i), accumulated as a sum of logarithms (an accumulator loop: $autodiff stores no
// tape for it). A triangle is fully opaque inside its outline, so the shared edges of a closed mesh leak no
// light in any mode; the soft band lies outside the outline, so a shadow's boundary moves continuously with
// the light and the occluders and $autodiff of this code carries that to their parameters.
#pragma once
#include "shadow_grid_dsl.h"
#include "soft_dsl.h"

namespace adjoint::app {

// The smallest visibility: log(1 - c) is clamped here, so a point inside an occluder gets exactly this (0 for
// the image) with no gradient.
constexpr float kShadowFloor = 1e-8f;

struct ShadowInputs {
    Visibility mode;
    Float bias;         // world units along the ray (ShadowPlan::bias)
    Float sigma;        // NDC units squared, as the soft rasterizer's
    Float ndc_scale;    // NDC units per world unit at the point (it moves with the point and the camera)
    uint32_t triangles; // the scene's triangle count
};

// A triangle projected for the point p: the heights h of its vertices above p along the ray towards the light,
// and its outline on the plane through p across the ray, a polygon of 3 or 4 corners q (a triangle repeats its
// last). A sun projects orthographically: the triangle itself. A point light projects centrally, and only the
// triangle's part on p's side of the plane through the light across the ray: the rest cannot lie between p
// and the light, and its corners would project through the light, mirrored (a wall reaching past a lamp was
// dropped whole, and leaked its shadow). `front`: some part lies on p's side (always for a sun). `plane_h`: for
// a point light, the height above p at which the ray meets the triangle's plane (`meets`: it does, the plane
// not parallel to the ray), from the plane's normal in the frame (u, w, axis) and its offset from p.
struct ShadowTriangle {
    Float2 q[4];
    Float2 c[4];   // a point light's corners before the division by s (their edges' signs are q's, exactly)
    Float h[3];
    Bool front;
    Float plane_h;
    Bool meets;
    Float3 normal;   // a point light's: (n.u, n.w, n.axis)
    Float offset;    // n.(v0 - p)
};

inline ShadowTriangle project_for_shadow(const Float3 (&v)[3], const Float3& p, const Float3& axis, const Float3& u,
                                         const Float3& w, const ShadowSource& src, const Float& dist) {
    ShadowTriangle t;
    t.front = Bool(true);
    Float2 q[3];
    for (int k = 0; k < 3; ++k) {
        Float3 rel = v[k] - p;
        t.h[k] = dot(rel, axis);
        q[k] = make_float2(dot(rel, u), dot(rel, w));
    }
    if (!src.point) {
        for (int k = 0; k < 3; ++k) t.q[k] = q[k];
        t.q[3] = q[2];
        return t;
    }
    // Each vertex's scale s = (its depth from the light) / dist: its projection is q / s. Cut at s = kFront
    // (plane_cut, as clip_triangle cuts at the near plane). kFront is a thousandth of the way from the light to p:
    // what lies nearer the light casts no shadow. At a millionth, clipped corners projected a million times further
    // out, and the edge functions lost the digits that decide a point beside a wall's diagonal (it leaked 6% of
    // the light in soft).
    const float kFront = 1e-3f;
    Float s[3], d[3];
    for (int k = 0; k < 3; ++k) {
        s[k] = (dist - t.h[k]) / dist;
        d[k] = s[k] - kFront;
    }
    const PlaneCut pc = plane_cut(d);
    const std::array<Float2, 4> corner = pc.corners(q);
    // The crossings' s is kFront but for rounding.
    const std::array<Float, 4> sc = pc.corners(s);
    for (int i = 0; i < 4; ++i) {
        t.c[i] = corner[i];
        t.q[i] = corner[i] / max(sc[i], kFront);
    }
    t.front = !(pc.cut[0] & pc.cut[1] & pc.cut[2]);
    // The plane's height along the ray: exact, where interpolating the vertices' heights with the projection's
    // barycentrics is not (central projection is not affine), and a floor's neighbour in p's own plane stood
    // above p by up to a few bias at a low lamp and darkened it.
    Float3 n = cross(v[1] - v[0], v[2] - v[0]);
    t.normal = make_float3(dot(n, u), dot(n, w), dot(n, axis));
    t.offset = dot(n, v[0] - p);
    t.meets = abs(t.normal.z) > 1e-6f * length(n);
    t.plane_h = t.offset / ite(t.meets, t.normal.z, Float(1.0f));
    return t;
}

// Where the origin lies against the convex polygon q[0..3] (twice its signed area `area`, not 0): inside, and
// its squared distance to the outline. The inside test takes each edge's side from the corners before their
// division by s > 0 (c: q_i = c_i / s_i, so q_i x q_j has the sign of c_i x c_j): a clipped corner lies a
// thousand times further out, and the edge function taken about it lost the digits that decide a point beside
// the edge (10 to 50 times the errors of an unclipped triangle).
struct PolygonOutline {
    Bool inside;
    Float d2;
    Float2 nearest;   // the outline's point nearest to the origin
};

inline PolygonOutline polygon_outline_at_origin(const Float2 (&q)[4], const Float2 (&c)[4], const Float& area) {
    PolygonOutline o;
    o.inside = Bool(true);
    o.d2 = 3e38f;
    o.nearest = q[0];
    for (int i = 0; i < 4; ++i) {
        const int j = (i + 1) % 4;
        o.inside = o.inside & ((c[i].x * c[j].y - c[i].y * c[j].x) * area >= 0.0f);
        Float2 ab = q[j] - q[i];
        Float t = clamp(dot(-q[i], ab) / max(dot(ab, ab), 1e-30f), 0.0f, 1.0f);
        Float2 r = q[i] + ab * t;
        Bool nearer = dot(r, r) < o.d2;
        o.nearest = ite(nearer, r, o.nearest);
        o.d2 = ite(nearer, dot(r, r), o.d2);
    }
    return o;
}

// A / b, b kept from 0 (below `least` by its magnitude: where it is, the quotient is not used).
inline Float guarded_over(const Float& a, const Float& b, const Float& least) {
    return a / ite(abs(b) > least, b, least);
}

// The height above p, along `ray` (per unit of height: its axis component is 1) from the point `at` of the
// plane across the axis, at which that line meets the plane of normal n (in the frame (u, w, axis)) and offset
// n.(x - p) for its points x; `least`: where |n.ray| is below it the line runs along the plane and the height is
// not used.
inline Float plane_height(const Float3& n, const Float& offset, const Float2& at, const Float3& ray,
                          const Float& least) {
    return guarded_over(offset - dot(n.xy(), at), dot(n, ray), least);
}

// log(1 - coverage) of p by one projected triangle (0 when it does not lie between p and the light). `receiver`:
// the normal of p's triangle in the frame (u, w, axis).
inline Float shadow_log_uncovered(const ShadowTriangle& t, const ShadowInputs& st, const Float& dist, bool point,
                                  const Float3& receiver) {
    Float area = edge_function(t.q[0], t.q[1], t.q[2]);
    if (point) area = area + edge_function(t.q[0], t.q[2], t.q[3]);
    Float extent = max(max(dot(t.q[1] - t.q[0], t.q[1] - t.q[0]), dot(t.q[2] - t.q[0], t.q[2] - t.q[0])), 1e-30f);
    if (point) extent = max(extent, dot(t.q[3] - t.q[0], t.q[3] - t.q[0]));
    Bool valid = t.front & (abs(area) > 1e-7f * extent);   // not seen edge-on from the light
    if (point) valid = valid & t.meets;
    Float safe_area = ite(valid, area, 1.0f);
    Bool inside;
    Float d2, h;
    // The outline's point nearest to p's projection, and the triangle's height above p along the line from the
    // light through it (ray: that line's direction per unit of height).
    Float2 nearest;
    Float nearest_h;
    Float3 ray = make_float3(0.0f, 0.0f, 1.0f);
    if (point) {
        PolygonOutline o = polygon_outline_at_origin(t.q, t.c, safe_area);
        inside = o.inside;
        d2 = o.d2;
        h = t.plane_h;
        nearest = o.nearest;
        ray = make_float3(-nearest / dist, 1.0f);
        // (A triangle of no area has a normal of 0: the floor keeps the quotient's unused side finite.)
        nearest_h = plane_height(t.normal, t.offset, nearest, ray, max(1e-6f * length(t.normal), 1e-30f));
    } else {
        Outline o = outline_seen_from(make_float2(0.0f), t.q[0], t.q[1], t.q[2], safe_area);
        inside = o.inside;
        d2 = o.d2;
        h = o.l.x * t.h[0] + o.l.y * t.h[1] + o.l.z * t.h[2];
        nearest = t.q[0] * o.nearest.x + t.q[1] * o.nearest.y + t.q[2] * o.nearest.z;
        nearest_h = o.nearest.x * t.h[0] + o.nearest.y * t.h[1] + o.nearest.z * t.h[2];
    }
    Float c;
    if (st.mode == Visibility::hard) {
        Bool between = h > st.bias;
        if (point) between = between & (h < dist - st.bias);
        c = ite(inside & between, 1.0f, 0.0f);
    } else {
        Float x = min(d2 * (st.ndc_scale * st.ndc_scale) / st.sigma, 60.0f);
        Float band = max((sigmoid(-x) - kSoftCutoff) / (0.5f - kSoftCutoff), 0.0f);
        // Between p and the light: a ramp from 0 at `bias` to 1 at twice that (and back to 0 at the light),
        // not a step: the soft band of a triangle beside p (a convex edge's neighbour, whose outline passes
        // by p) reaches p at heights near the bias, and a step there would make the image jump. The height is
        // the plane's, not the height at the outline's point nearest to p: that point lies up to the band's
        // width away, so a neighbour in p's own plane (a flat floor's other triangle) stood above p along an
        // oblique ray and darkened a line along their shared edge.
        Float between = clamp((h - st.bias) / st.bias, 0.0f, 1.0f);
        if (point) between = between * clamp((dist - st.bias - h) / st.bias, 0.0f, 1.0f);
        // The band is the antialiasing of a shadow's boundary on p's triangle: cast by a triangle whose outline
        // stands above that triangle's plane by more than it lies beside p, measured along the line from the light
        // through the outline's point nearest to p. A neighbour on a convex surface lies below the plane, or above
        // it by its distance times the small angle between the faces: its band darkened every lit face as far as a
        // pixel reaches, the whole lit side of a sphere at 16x16 (137 for 195). A convex edge's other face meets
        // the plane at the edge: measured from p itself (where the other face's plane stands far above p along a
        // steep ray), its band darkened a lit face along a box's top edge (208 for 154 at 64x64). The triangle's
        // own plane, not that of the interpolated normal, which tilts away from it: a smooth box's edges and a
        // sphere's terminator kept false bands. Ramped from a height of the distance d to d + max(d, bias): 1 at
        // the outline (d = 0) wherever `between` is above 0, so the coverage meets the inside's there.
        Float d = sqrt(d2);
        Float over_surface = plane_height(receiver, 0.0f, nearest, ray, 1e-6f);
        Float stands = clamp((nearest_h - over_surface - d) / max(d, st.bias), 0.0f, 1.0f);
        c = ite(inside, 1.0f, band * stands) * between;
    }
    return ite(valid, log(max(1.0f - c, kShadowFloor)), 0.0f);
}

// A shadowing light's grid (render/shadow_grid.h) as the shading kernels read it; `head` null: no grid, every
// triangle is a candidate (the brute-force oracle).
struct ShadowGridRef {
    const BufferFloat* head = nullptr;   // kShadowHead floats per light of the light buffer
    const BufferUInt* slot = nullptr;    // per light: its grid among the shadowing lights
    const BufferUInt* cells = nullptr;   // per cell: its list's offset and length
    const BufferUInt* list = nullptr;    // the lists' triangle indices
    ShadowGridShape shape;
};

// The kernels' grid arguments as the plan reads them: none when the plan tests every triangle.
inline ShadowGridRef shadow_grid_ref(const ShadingPlan& plan, const BufferFloat& head, const BufferUInt& slot,
                                     const BufferUInt& cells, const BufferUInt& list) {
    if (!plan.shadow.any || !plan.shadow.grid) return {};
    return {&head, &slot, &cells, &list, plan.shadow.shape};
}

// The candidates of the point p for one light: [begin, end) of the grid's list (`indirect`), or of every
// triangle where the grid's bound does not cover p (its band reaches further than the grid was grown by, or
// it stands at a point light): then the brute-force loop, with the same result.
struct ShadowCandidates {
    UInt begin, end;
    Bool indirect;
};

inline ShadowCandidates shadow_candidates(const ShadowGridRef& g, const UInt& light, const ShadowSource& src,
                                          const Float3& p0, const Float3& u0, const Float3& w0, const Float& dist0,
                                          const Float& reach, uint32_t triangles) {
    if (!g.head) return {UInt(0u), UInt(triangles), Bool(false)};
    const UInt h = light * kShadowHead;
    const UInt base = g.slot->read(light) * g.shape.cells;
    Bool use, in;
    UInt cell;
    if (!src.point) {
        const Float res = float(g.shape.sun);
        Float fx = (dot(p0, u0) - g.head->read(h + 8u)) * g.head->read(h + 10u);
        Float fy = (dot(p0, w0) - g.head->read(h + 9u)) * g.head->read(h + 11u);
        in = (fx >= 0.0f) & (fx < res) & (fy >= 0.0f) & (fy < res);
        cell = cast<uint32_t>(clamp(fy, 0.0f, res - 1.0f)) * g.shape.sun + cast<uint32_t>(clamp(fx, 0.0f, res - 1.0f));
        use = reach <= g.head->read(h + 12u);
    } else {
        ShadowFace f = shadow_face(p0 - detach(src.at), g.shape.point);
        in = Bool(true);
        cell = f.cell;
        use = (dist0 > 0.0f) & (reach <= g.head->read(h + 12u) * dist0);
    }
    UInt at = 2u * (base + cell);
    UInt off = g.cells->read(at), n = g.cells->read(at + 1u);
    return {ite(use & in, off, 0u), ite(use, ite(in, off + n, 0u), UInt(triangles)), use};
}

// The fraction of the light `src` (index `light` in the light buffer) that the point p sees, over every
// triangle that can cover it: the candidates of p's cell in the light's grid (or every triangle). `plain`: the
// same positions as plain values, for a cheap first test of each triangle (its projection's bounding box grown
// by the band's reach, and a vertex above the bias): only the triangles that pass it are read from
// `positions`, so that the backward pass scatters gradients for those alone (on lavapipe each scatter is a
// compare-and-swap loop; scattering zeros for every triangle cost 7 times the forward).
template <typename PB>
Float shadow_visibility(const PB& positions, const BufferFloat3& plain, const BufferVar<uint3>& triangles,
                        const ShadowGridRef& grid, const ShadowInputs& st, const ShadowSource& src,
                        const UInt& light, const Float3& p, const Float3& n) {
    Float3 axis = src.at;
    Float dist = 1e30f;
    if (src.point) {
        Float3 a = src.at - p;
        dist = length(a);
        axis = a / dist;
    }
    // A frame of the plane perpendicular to the ray (distances in it do not depend on which).
    Float3 u = shadow_frame_u(axis);
    Float3 w = cross(axis, u);
    // The normal of p's triangle in that frame (shadow_log_uncovered's `receiver`).
    Float3 receiver = make_float3(dot(n, u), dot(n, w), dot(n, axis));
    // The band's reach in world units at p (where the soft edge falls to 0), with a slack for rounding.
    Float reach = 0.0f;
    if (st.mode != Visibility::hard) reach = sqrt(soft_reach2(1.0f) * st.sigma) / st.ndc_scale * 1.01f;
    // The first test decides a branch only: on detached values, so that $autodiff adds nothing for it.
    const Float3 p0 = detach(p), axis0 = detach(axis), u0 = detach(u), w0 = detach(w);
    const Float dist0 = detach(dist);
    ShadowCandidates cand = shadow_candidates(grid, light, src, p0, u0, w0, dist0, detach(reach), st.triangles);
    Float log_visible = 0.0f;
    $for (k, cand.begin, cand.end) {
        UInt i = k;
        if (grid.head) {
            $if (cand.indirect) { i = grid.list->read(k); };
        }
        UInt3 t = triangles.read(i);
        Float3 pv[3] = {plain.read(t.x), plain.read(t.y), plain.read(t.z)};
        ShadowTriangle c = project_for_shadow(pv, p0, axis0, u0, w0, src, dist0);
        Float2 lo = min(min(c.q[0], c.q[1]), min(c.q[2], c.q[3])), hi = max(max(c.q[0], c.q[1]), max(c.q[2], c.q[3]));
        Bool near = c.front & (lo.x <= reach) & (lo.y <= reach) & (hi.x >= -reach) & (hi.y >= -reach) &
                    (max(max(c.h[0], c.h[1]), c.h[2]) > st.bias);
        $if (near) {
            Float3 v[3] = {positions.read(t.x), positions.read(t.y), positions.read(t.z)};
            ShadowTriangle s = project_for_shadow(v, p, axis, u, w, src, dist);
            log_visible = log_visible + shadow_log_uncovered(s, st, dist, src.point, receiver);
        };
    };
    return exp(log_visible);
}

// The settings for one view's camera at the point p: the NDC scale from p's depth in the view (differentiated:
// a point on a moving mesh sees its shadows' bands widen and narrow with its depth).
inline ShadowInputs shadow_inputs(const ShadingPlan& plan, const DslCamera& cam, const Float3& p) {
    Float depth = max(dot(cam.forward, p - cam.eye), 1e-6f);
    return {plan.shadow.mode, plan.shadow.bias, plan.shadow.sigma, cam.sx / depth, plan.shadow.triangles};
}

// The ShadeInputs hook: shadows from `positions` (world vertices) seen from the camera `cam`.
template <typename PB>
ShadowHook shadow_hook(const ShadingPlan& plan, const PB& positions, const BufferFloat3& plain,
                       const BufferVar<uint3>& triangles, const ShadowGridRef& grid, const DslCamera& cam) {
    if (!plan.shadow.any) return {};
    return [&plan, &positions, &plain, &triangles, grid, cam](const ShadowSource& src, const UInt& light,
                                                               const Float3& p, const Float3& n) -> Float {
        return shadow_visibility(positions, plain, triangles, grid, shadow_inputs(plan, cam, p), src, light, p, n);
    };
}

} // namespace adjoint::app
