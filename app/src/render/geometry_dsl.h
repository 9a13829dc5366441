// DSL geometry shared by the differentiable stages: quaternion rotation, the look-at pinhole camera read
// from the parameter buffer, projection to pixels, and the visible surface at a pixel recomputed from the
// vertices (so that $autodiff sees how it moves with them). Templates over the buffers' types: plain
// buffers in forward kernels, differentiable ones where gradients are wanted.
#pragma once
#include "raster.h"
#include "shading.h"

#include <array>

namespace adjoint::app {

template <typename P>
Float4 read4(const P& buf, const UInt& at) {
    return make_float4(buf.read(at), buf.read(at + 1u), buf.read(at + 2u), buf.read(at + 3u));
}

// Rotates v by the quaternion q = (w, x, y, z) after normalizing it (the parameter is stored raw so that
// gradient steps may leave the unit sphere; the rotation it means does not).
inline Float3 rotate(const Float4& q_raw, const Float3& v) {
    Float4 q = q_raw * rsqrt(dot(q_raw, q_raw));
    Float3 u = make_float3(q.y, q.z, q.w);
    Float3 t = cross(u, v) * 2.0f;
    return v + t * q.x + cross(u, t);
}

// The look-at camera of a view (view_matrix / projection_matrix in scene.h, written out so that the
// gradient reaches eye, target and fov_y).
struct DslCamera {
    Float3 eye, side, up, forward;
    Float sx, sy, a, b;            // clip = (sx * x_view + ox * w, sy * y_view + oy * w, a * z_view + b, w = -z_view)
    Float ox, oy;                  // the principal point's offset from the centre, NDC (intrinsics)
    Float width, height;
    Float far, depth_k;            // far, and 2 near / (far - near): w - z = depth_k (far - w) (reversed())

    Float4 clip(const Float3& p) const {
        Float3 d = p - eye;
        Float z = -dot(forward, d);
        return make_float4(sx * dot(side, d) - ox * z, sy * dot(up, d) - oy * z, a * z + b, -z);
    }
    // Pixel coordinates (x right, y down) of a clip-space point in front of the camera, as the rasterizer computes
    // them (soft rasterization's corners; coverage, depth and barycentrics come from homogeneous_edges).
    Float2 pixel(const Float4& c) const { return projected_pixel(c, 1.0f / c.w, width, height); }
    // Clip w - z of clip coordinates c, from w: exact where w and z, far from the camera, would cancel (the
    // rasterizer's reversed depth, edge_record).
    Float reversed(const Float4& c) const { return depth_k * (far - c.w); }
    // The unit world direction through pixel coordinates q (the inverse of pixel(clip(·)) along a ray).
    Float3 ray(const Float2& q) const {
        Float nx = q.x / width * 2.0f - 1.0f, ny = 1.0f - q.y / height * 2.0f;
        return normalize(side * ((nx - ox) / sx) + up * ((ny - oy) / sy) + forward);
    }
};
// The centre of pixel `pix`.
inline Float2 pixel_centre(const UInt2& pix) {
    return make_float2(cast<float>(pix.x) + 0.5f, cast<float>(pix.y) + 0.5f);
}

template <typename P>
DslCamera camera_of(const P& params, const Expr<gpu::ViewRec>& v) {
    DslCamera c;
    c.eye = read3(params, v.eye);
    Float3 target = read3(params, v.target);
    Float fov = params.read(v.fov);
    c.forward = normalize(target - c.eye);
    c.side = normalize(cross(c.forward, v.up));
    c.up = cross(c.side, c.forward);
    // projection_matrix's terms (camera.cpp): with intrinsics sx = 2fx/w, sy = 2fy/h, ox = 2cx/w − 1,
    // oy = 1 − 2cy/h; with fov_y alone a centred principal point and square pixels.
    Float4 k = read4(params, v.intrinsics);
    Bool has = v.has_intrinsics != 0u;
    Float sy_fov = 1.0f / tan(fov * (3.14159265358979f / 360.0f));
    c.sy = ite(has, 2.0f * k.y / v.height, sy_fov);
    c.sx = ite(has, 2.0f * k.x / v.width, sy_fov * v.height / v.width);
    c.ox = ite(has, 2.0f * k.z / v.width - 1.0f, 0.0f);
    c.oy = ite(has, 1.0f - 2.0f * k.w / v.height, 0.0f);
    c.a = (v.far + v.near) / (v.near - v.far);
    c.b = 2.0f * v.far * v.near / (v.near - v.far);
    c.far = v.far;
    c.depth_k = 2.0f * v.near / (v.far - v.near);
    c.width = v.width;
    c.height = v.height;
    return c;
}

// The tangent frame of a triangle from its positions and texture coordinates (stored v grows down the
// texture): T = dP/du made orthogonal to the shading normal n, and w = ±1 so that cross(n, T)·w points to
// −dP/dv, up the texture (glTF's normal-map convention: green is +v up). Per triangle, not averaged per
// vertex as MikkTSpace does: the frame is exact for a flat-mapped triangle. (0, 0, 0, 0) where the UVs are
// degenerate.
inline Float4 tangent_frame(const Float3& p0, const Float3& p1, const Float3& p2, const Float2& uv0, const Float2& uv1,
                            const Float2& uv2, const Float3& n) {
    Float3 e1 = p1 - p0, e2 = p2 - p0;
    Float2 d1 = uv1 - uv0, d2 = uv2 - uv0;
    Float det = d1.x * d2.y - d2.x * d1.y;
    Bool valid = abs(det) > 1e-20f;
    Float inv = 1.0f / ite(valid, det, 1.0f);
    Float3 t = (e1 * d2.y - e2 * d1.y) * inv;       // dP/du
    Float3 up = (e1 * d2.x - e2 * d1.x) * inv;      // −dP/dv
    Float3 perp = t - n * dot(n, t);
    Float len = length(perp);
    valid = valid && len > 1e-12f;
    Float3 unit = perp / max(len, 1e-12f);
    Float w = ite(dot(cross(n, unit), up) < 0.0f, -1.0f, 1.0f);
    return ite(valid, make_float4(unit, w), make_float4(0.0f));
}

// x as read, or detached where its gradient is not wanted (a value no parameter of the run moves): its reads then
// scatter nothing. Inside $autodiff; `differentiated` is known when the kernel is recorded.
template <typename X>
X detached_unless(bool differentiated, const X& x) {
    if (!differentiated) return detach(x);
    return x;
}

// The vertex buffers a surface is interpolated from (world space, written by the vertex stage).
template <typename PB>
struct VertexInputs {
    const PB& positions;
    const PB& normals;
    const PB& colors;
    const BufferFloat2& uvs;
    const BufferVar<uint3>& triangles;
    const BufferUInt& triangle_material;
    bool tangents = true;  // compute the tangent frame (only a tangent-space texture reads it)
    // Inside $autodiff: whether the colours' gradient is wanted (ShadingPlan::vertex_color_gradients); if not, their
    // reads are detached, which spares every pixel 9 atomic adds into a gradient nobody reads.
    bool color_gradients = true;
    // Whether some mesh has vertex colours (ShadingPlan::vertex_colors); if none has, every colour is 1 and is not
    // read at all.
    bool has_colors = true;
};

// The vertex inputs as `plan` reads them (tangent frames, colours and their gradients only where some material or
// mesh has them): the one way every kernel builds them, so a kernel cannot read what the others leave out.
template <typename PB>
VertexInputs<PB> vertex_inputs(const ShadingPlan& plan, const PB& positions, const PB& normals, const PB& colors,
                               const BufferFloat2& uvs, const BufferVar<uint3>& triangles,
                               const BufferUInt& triangle_material) {
    return VertexInputs<PB>{positions, normals, colors, uvs, triangles, triangle_material,
                            plan.tangents, plan.vertex_color_gradients, plan.vertex_colors};
}

// The shading normal n at `position` on a triangle whose plane has the normal g (any length, either way round),
// turned to the side of the triangle the camera (at eye) sees: negated where n and the eye lie on opposite sides
// of the plane. Whether the triangle's winding agrees with its normals does not matter (the product of the two
// sides), and a smooth normal that leans away from the eye on a triangle the camera sees from n's side is kept:
// turning it by its own facing, as before, mirrored the lighting of the few pixels at a smooth mesh's silhouette
// where the interpolated normal leans past the view direction (lit pixels on the dark side, dark ones on the lit
// side).
inline Float3 facing_viewer(const Float3& n, const Float3& position, const Float3& g, const Float3& eye) {
    return ite(dot(g, n) * dot(g, eye - position) < 0.0f, -n, n);
}

// The attributes of triangle `tri` (vertices t, world positions w) at perspective-correct barycentrics b.
// bd, bx, by: the barycentrics of the triangle's plane at the pixel centre and one pixel right and down:
// the texture level of detail comes from them, and trilinear filtering blends two levels linearly in it, so
// the image moves with the footprint too (a camera that comes closer to a textured floor reads finer
// levels): differentiated, as nvdiffrast's uv_da. Leaving them out lost 12-17% of camera.json's gradient
// in height (eye.y, target.y) against central differences. two_sided: the normal is turned to the side of the
// triangle the camera sees (facing_viewer: the rasterizers' shading of the surface a pixel sees); soft
// rasterization keeps it as interpolated, since it shades triangles seen edge-on too, where turning it would
// make the image jump.
template <typename PB>
Var<gpu::Surface> interpolate_surface(const VertexInputs<PB>& in, const DslCamera& cam, const UInt& tri, const UInt3& t,
                                      const Float3 (&w)[3], const Float3& b, const Float3& bd, const Float3& bx,
                                      const Float3& by, bool two_sided = true) {
    Var<gpu::Surface> s;
    s.position = w[0] * b.x + w[1] * b.y + w[2] * b.z;
    Float3 n = normalize(in.normals.read(t.x) * b.x + in.normals.read(t.y) * b.y + in.normals.read(t.z) * b.z);
    Float3 g = cross(w[1] - w[0], w[2] - w[0]);
    s.normal = two_sided ? facing_viewer(n, s.position, g, cam.eye) : n;
    s.face_normal = normalize(g);
    auto color = [&](const UInt& v) { return detached_unless(in.color_gradients, Float3(in.colors.read(v))); };
    if (in.has_colors)
        s.color = color(t.x) * b.x + color(t.y) * b.y + color(t.z) * b.z;
    else
        s.color = make_float3(1.0f);
    Float2 uv0 = in.uvs.read(t.x), uv1 = in.uvs.read(t.y), uv2 = in.uvs.read(t.z);
    s.uv = uv0 * b.x + uv1 * b.y + uv2 * b.z;
    s.duv_dx = uv0 * (bx.x - bd.x) + uv1 * (bx.y - bd.y) + uv2 * (bx.z - bd.z);
    s.duv_dy = uv0 * (by.x - bd.x) + uv1 * (by.y - bd.y) + uv2 * (by.z - bd.z);
    if (in.tangents)
        s.tangent = tangent_frame(w[0], w[1], w[2], uv0, uv1, uv2, s.normal);
    else
        s.tangent = make_float4(0.0f);
    s.material = in.triangle_material.read(tri);
    return s;
}

// The surface of triangle `tri` seen through the centre of pixel `pix`: perspective-correct barycentrics from the
// triangle's edge functions (the rasterizer's, homogeneous_edges, on the same clip coordinates, about the pixel),
// then the interpolated attributes.
template <typename PB>
Var<gpu::Surface> surface_at(const VertexInputs<PB>& in, const DslCamera& cam, const UInt& tri, const UInt2& pix) {
    UInt3 t = in.triangles.read(tri);
    Float3 w[3] = {in.positions.read(t.x), in.positions.read(t.y), in.positions.read(t.z)};
    Float2 p = pixel_centre(pix);   // the edges' origin: exact at the pixel
    HomogeneousEdges e = homogeneous_edges(cam.clip(w[0]), cam.clip(w[1]), cam.clip(w[2]), cam.width, cam.height, p);
    auto bary = [&](const Float2& q) { return edge_barycentrics(edge_values(e, q)); };
    Float3 b = bary(p);
    Float3 bx = bary(p + make_float2(1.0f, 0.0f)), by = bary(p + make_float2(0.0f, 1.0f));
    return interpolate_surface(in, cam, tri, t, w, b, b, bx, by);
}

// A triangle cut by a plane (Sutherland-Hodgman, unrolled): d[k] is corner k's signed distance from the plane,
// negative on the side cut away. What is kept is a convex polygon of 3 or 4 corners, kept in 4 places (a triangle
// repeats one: a segment of length 0), in the triangle's winding. The odd corner a (on the other side of the plane
// from the other two) comes first, b and e follow it: a cut, x1 b e x2; a alone kept, x1 x2 x2 a; none cut, the
// triangle c0 c1 c2 c2; x1 and x2 are where edges a-b and e-a cross the plane. Every value is formed on both
// sides of the ites that pick among these (where an edge does not cross, its crossing is finite all the same), as
// $autodiff needs. The soft rasterizer cuts at the near plane (clip_triangle), a point light's shadows at a plane
// just in front of the light (project_for_shadow).
struct PlaneCut {
    Bool cut[3];
    Bool odd0, odd1;   // corner 0, else corner 1, else corner 2 is the odd one
    Bool none, a_cut;
    Float t1, t2;      // the crossings' places on edges a-b and e-a

    template <typename T>
    T turn(const T& x0, const T& x1, const T& x2) const { return ite(odd0, x0, ite(odd1, x1, x2)); }
    // Any per-corner value (positions, barycentrics) at the polygon's corners, interpolated at the crossings.
    template <typename T>
    std::array<T, 4> corners(const T (&x)[3]) const {
        T a = turn(x[0], x[1], x[2]), b = turn(x[1], x[2], x[0]), e = turn(x[2], x[0], x[1]);
        T x1 = a + (b - a) * t1, x2 = e + (a - e) * t2;
        return {ite(none, x[0], x1), ite(none, x[1], ite(a_cut, b, x2)), ite(none, x[2], ite(a_cut, e, x2)),
                ite(none, x[2], ite(a_cut, x2, a))};
    }
};

inline PlaneCut plane_cut(const Float (&d)[3]) {
    PlaneCut pc;
    for (int k = 0; k < 3; ++k) pc.cut[k] = d[k] < 0.0f;
    pc.odd0 = (pc.cut[0] != pc.cut[1]) & (pc.cut[0] != pc.cut[2]);
    pc.odd1 = (pc.cut[1] != pc.cut[0]) & (pc.cut[1] != pc.cut[2]);
    pc.none = !(pc.cut[0] | pc.cut[1] | pc.cut[2]);
    pc.a_cut = pc.turn(pc.cut[0], pc.cut[1], pc.cut[2]);
    Float da = pc.turn(d[0], d[1], d[2]), db = pc.turn(d[1], d[2], d[0]), de = pc.turn(d[2], d[0], d[1]);
    pc.t1 = da / nonzero(da - db);
    pc.t2 = de / nonzero(de - da);
    return pc;
}

} // namespace adjoint::app
