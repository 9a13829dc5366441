// Light-space grids for shadows as DSL code shared by their build (shadow_grid.cpp) and the lookup
// (shadow_dsl.h): a sun's frame of the plane across its rays, and a point light's cube faces.
#pragma once
#include "shading.h"

namespace adjoint::app {

// Floats per light in the grids' head buffer: [0, 8) the bounds gathered from the vertices (sun: lowest u, w,
// highest u, w; both: deepest vertex in the view, nearest vertex to a point light), [8, 16) the grid (sun:
// origin u, w and cells per world unit; 12: the band's reach it covers, world units for a sun, a tangent of
// the angle from a point light; 13: how far each triangle's footprint was grown).
constexpr uint32_t kShadowHead = 16;

// The first axis of a frame of the plane perpendicular to the unit vector `axis` (the second: axis x u).
inline Float3 shadow_frame_u(const Float3& axis) {
    return normalize(ite(abs(axis.x) > 0.9f, cross(axis, make_float3(0.0f, 1.0f, 0.0f)),
                         cross(axis, make_float3(1.0f, 0.0f, 0.0f))));
}

// Face k of a point light's cube (0..5: +x, -x, +y, -y, +z, -z) for the direction d from the light: d along
// the face's axis, then its two other components in a fixed order (y z, z x, x y); the face coordinates are
// the last two over the first (gnomonic: a straight edge stays straight, so a triangle in front of the face
// maps inside its vertices' bounding box).
inline Float3 shadow_face_axes(const Float3& d, int k) {
    const float s = k % 2 ? -1.0f : 1.0f;
    switch (k / 2) {
    case 0: return make_float3(s * d.x, d.y, d.z);
    case 1: return make_float3(s * d.y, d.z, d.x);
    default: return make_float3(s * d.z, d.x, d.y);
    }
}

// Where the direction d from a point light falls: the face of its largest component (ties to the lower axis)
// and that face's cell of the res x res grid, the faces' grids one after another.
struct ShadowFace {
    UInt cell;
};

inline ShadowFace shadow_face(const Float3& d, uint32_t res) {
    Float3 ad = abs(d);
    Bool bx = (ad.x >= ad.y) & (ad.x >= ad.z);
    Bool by = (!bx) & (ad.y >= ad.z);
    Float along = max(ite(bx, ad.x, ite(by, ad.y, ad.z)), 1e-30f);
    Float c1 = ite(bx, d.y, ite(by, d.z, d.x)) / along, c2 = ite(bx, d.z, ite(by, d.x, d.y)) / along;
    Float comp = ite(bx, d.x, ite(by, d.y, d.z));
    UInt face = ite(bx, 0u, ite(by, 2u, 4u)) + ite(comp < 0.0f, 1u, 0u);
    const Float r = float(res), half = 0.5f * float(res);
    UInt cx = cast<uint32_t>(clamp((c1 + 1.0f) * half, 0.0f, r - 1.0f));
    UInt cy = cast<uint32_t>(clamp((c2 + 1.0f) * half, 0.0f, r - 1.0f));
    return {face * (res * res) + cy * res + cx};
}

} // namespace adjoint::app
