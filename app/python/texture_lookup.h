// nvdiffrast's texture lookup as DSL code, for texture_ops.cpp's kernels: the forward kernels read a buffer, the
// backward ones the same code inside $autodiff over taps they hold (HeldTaps). See texture_ops.cpp for the conventions
// and the stack's layout.
#pragma once
#include "channels.h"

#include <adjoint/adjoint.h>

namespace adjoint::python {

// Kernel settings: c0 = (filter, boundary, levels, channels), c1 = (pixels per image, tex batched, faces, flags).
enum Filter : uint32_t { Nearest = 0, Linear = 1, MipNearest = 2, MipLinear = 3 };
enum Boundary : uint32_t { Wrap = 0, Clamp = 1, Zero = 2, Cube = 3 };
constexpr uint32_t HasDa = 1u, HasBias = 2u;

// Face f's (sc, tc) and its major-axis value m (> 0 on the face) of a direction, OpenGL's cube table.
inline Float2 face_sc_tc(const UInt& f, const Float3& d) {
    Float sc = ite(f == 0u, -d.z, ite(f == 1u, d.z, ite(f == 5u, -d.x, d.x)));
    Float tc = ite(f == 2u, d.z, ite(f == 3u, -d.z, -d.y));
    return make_float2(sc, tc);
}
inline Float face_major(const UInt& f, const Float3& d) {
    return ite(f == 0u, d.x, ite(f == 1u, -d.x, ite(f == 2u, d.y, ite(f == 3u, -d.y, ite(f == 4u, d.z, -d.z)))));
}
inline UInt face_of(const Float3& d) {
    Float3 a = abs(d);
    Bool xm = a.x >= a.y && a.x >= a.z, ym = !xm && a.y >= a.z;
    return ite(xm, ite(d.x < 0.0f, 1u, 0u), ite(ym, ite(d.y < 0.0f, 3u, 2u), ite(d.z < 0.0f, 5u, 4u)));
}
// The direction through (sc, tc) of face f (the inverse of face_sc_tc at major value 1).
inline Float3 face_direction(const UInt& f, const Float& sc, const Float& tc) {
    Float x = ite(f == 0u, 1.0f, ite(f == 1u, -1.0f, ite(f == 5u, -sc, sc)));
    Float y = ite(f == 2u, 1.0f, ite(f == 3u, -1.0f, -tc));
    Float z = ite(f == 0u, -sc, ite(f == 1u, sc, ite(f == 2u, tc, ite(f == 3u, -tc, ite(f == 4u, 1.0f, -1.0f)))));
    return make_float3(x, y, z);
}

// One level's texel at integer coordinates (x, y) of face `face`, after the boundary mode: wrap and clamp
// fold the coordinate into the level, zero reads 0 outside, cube continues on the neighbouring face (across one
// edge: corner taps are filtered's).
template <bool IsCube, int W, typename Tex>
Chan<W> tap(const Tex& tex, const UInt4& lv, const UInt& image, const UInt& faces, const UInt& face, const UInt& ch,
            const UInt& channels, const UInt& boundary, const Int& x, const Int& y) {
    Int w = cast<int>(lv.y), h = cast<int>(lv.z);
    Bool inside = x >= 0 && x < w && y >= 0 && y < h;
    Int wx = ite(x < 0, x + w, ite(x >= w, x - w, x)), wy = ite(y < 0, y + h, ite(y >= h, y - h, y));
    Int cx = clamp(x, 0, w - 1), cy = clamp(y, 0, h - 1);
    Int fx = ite(boundary == uint32_t(Wrap), wx, cx), fy = ite(boundary == uint32_t(Wrap), wy, cy);
    UInt fface = face;
    if constexpr (IsCube) {
        // The texel centre's direction, projected onto the face it lies on.
        Float sc = (cast<float>(x) + 0.5f) * 2.0f / cast<float>(w) - 1.0f;
        Float tc = (cast<float>(y) + 0.5f) * 2.0f / cast<float>(h) - 1.0f;
        Float3 d = face_direction(face, sc, tc);
        UInt f2 = face_of(d);
        Float2 st = (face_sc_tc(f2, d) / face_major(f2, d) + 1.0f) * 0.5f;
        Int qx = cast<int>(floor(st.x * cast<float>(w))), qy = cast<int>(floor(st.y * cast<float>(h)));
        fx = ite(inside, x, qx);
        fy = ite(inside, y, qy);
        fface = ite(inside, face, f2);
    }
    UInt at = lv.x + (((image * faces + fface) * lv.z + cast<uint32_t>(clamp(fy, 0, h - 1))) * lv.y +
                      cast<uint32_t>(clamp(fx, 0, w - 1))) * channels + ch;
    Chan<W> v = read_channels<W>(tex, at);
    return ite(boundary == uint32_t(Zero) && !inside, spread<W>(0.0f), v);
}

// Bilinear (or nearest) filtering of one level at (s, t) in [0, 1]-texture units, channels [ch, ch + W).
template <bool IsCube, int W, typename Tex>
Chan<W> filtered(const Tex& tex, const BufferVar<uint4>& table, const UInt& level, const UInt& image, const UInt& faces,
               const UInt& face, const UInt& ch, const UInt4& c0, const Float2& st) {
    UInt4 lv = table.read(level);
    Float2 size = make_float2(cast<float>(lv.y), cast<float>(lv.z));
    Bool linear = c0.x != uint32_t(Nearest);   // mipmap-nearest picks the nearest level, filters it bilinearly
    // Wrap folds the coordinate into one period (derivative 1); clamp and zero bound texel space just beyond
    // the edges, where the value no longer changes, so that the integer coordinates stay small.
    Float2 folded = ite(c0.y == uint32_t(Wrap), st - floor(st), st);
    Float2 p = folded * size - ite(linear, 0.5f, 0.0f);
    p = ite(c0.y == uint32_t(Clamp) || c0.y == uint32_t(Zero), clamp(p, make_float2(-1.0f), size), p);
    Float2 f = floor(p);
    Float2 t = ite(linear, p - f, make_float2(0.0f));
    Int x0 = cast<int>(f.x), y0 = cast<int>(f.y);
    Chan<W> a = tap<IsCube, W>(tex, lv, image, faces, face, ch, c0.w, c0.y, x0, y0);
    Chan<W> b = tap<IsCube, W>(tex, lv, image, faces, face, ch, c0.w, c0.y, x0 + 1, y0);
    Chan<W> c = tap<IsCube, W>(tex, lv, image, faces, face, ch, c0.w, c0.y, x0, y0 + 1);
    Chan<W> d = tap<IsCube, W>(tex, lv, image, faces, face, ch, c0.w, c0.y, x0 + 1, y0 + 1);
    Chan<W> tx = spread<W>(t.x), ty = spread<W>(t.y);
    if constexpr (IsCube) {
        // Three faces meet at a cube's corner, so a tap outside the face in both directions has no texel of its
        // own: it reads the mean of the other three taps (at most one tap is such a corner).
        Int w = cast<int>(lv.y);
        Bool out_x0 = x0 < 0 || x0 >= w, out_x1 = x0 + 1 < 0 || x0 + 1 >= w;
        Bool out_y0 = y0 < 0 || y0 >= w, out_y1 = y0 + 1 < 0 || y0 + 1 >= w;
        Chan<W> ca = ite(out_x0 && out_y0, (b + c + d) / 3.0f, a), cb = ite(out_x1 && out_y0, (a + c + d) / 3.0f, b);
        Chan<W> cc = ite(out_x0 && out_y1, (a + b + d) / 3.0f, c), cd = ite(out_x1 && out_y1, (a + b + c) / 3.0f, d);
        return lerp(lerp(ca, cb, tx), lerp(cc, cd, tx), ty);
    }
    return lerp(lerp(a, b, tx), lerp(c, d, tx), ty);
}

// The level of detail from the footprint's texel-space derivatives (ds/dX, ds/dY, dt/dX, dt/dY): half the log2
// of the squared major axis of the footprint ellipse. A degenerate footprint reads level 0.
inline Float footprint_level(const Float4& j) {
    Float a = j.x * j.x + j.z * j.z, b = j.y * j.y + j.w * j.w, c = j.x * j.y + j.z * j.w;
    Float disc = 0.25f * (a - b) * (a - b) + c * c;
    Float root = ite(disc > 1e-30f, sqrt(max(disc, 1e-30f)), 0.0f);
    Float major = 0.5f * (a + b) + root;
    return ite(major > 1e-30f, 0.5f * log2(max(major, 1e-30f)), -100.0f);
}

// The texture's value for pixel p, channels [ch, ch + W): the face and (s, t) of uv (a direction on a cube), the
// level of detail, and one or two filtered levels. Cube is a compile-time choice (uv and uv_da have 3 and 6 floats),
// and so is W (1..4, group_width in channels.h): the face, footprint, level, taps and weights are worked out once for
// the group, not once a channel, whose values lie side by side in each tap.
template <bool IsCube, int W, typename Tex, typename Uv, typename Da, typename Bias>
Chan<W> texture_value(const Tex& tex, const BufferVar<uint4>& table, const Uv& uv, const Da& da, const Bias& bias,
                    const UInt4& c0, const UInt4& c1, const UInt& p, const UInt& ch) {
    constexpr uint32_t n = IsCube ? 3u : 2u;
    UInt image = ite(c1.y > 0u, p / c1.x, 0u), face = 0u;
    Float2 st;
    Float4 j = make_float4(0.0f);   // (ds/dX, ds/dY, dt/dX, dt/dY) in level-0 texels
    UInt4 base = table.read(0u);
    Float2 size = make_float2(cast<float>(base.y), cast<float>(base.z));
    if constexpr (IsCube) {
        Float3 d = make_float3(uv.read(p * n), uv.read(p * n + 1u), uv.read(p * n + 2u));
        face = face_of(d);
        Float m = face_major(face, d);
        Float2 q = face_sc_tc(face, d);
        st = (q / m + 1.0f) * 0.5f;
        $if ((c1.w & HasDa) != 0u) {
            Float3 dx = make_float3(da.read(p * 6u), da.read(p * 6u + 2u), da.read(p * 6u + 4u));
            Float3 dy = make_float3(da.read(p * 6u + 1u), da.read(p * 6u + 3u), da.read(p * 6u + 5u));
            Float2 sx = 0.5f * (face_sc_tc(face, dx) * m - q * face_major(face, dx)) / (m * m) * size;
            Float2 sy = 0.5f * (face_sc_tc(face, dy) * m - q * face_major(face, dy)) / (m * m) * size;
            j = make_float4(sx.x, sy.x, sx.y, sy.y);
        };
    } else {
        st = make_float2(uv.read(p * n), uv.read(p * n + 1u));
        $if ((c1.w & HasDa) != 0u) {
            j = make_float4(da.read(p * 4u) * size.x, da.read(p * 4u + 1u) * size.x, da.read(p * 4u + 2u) * size.y,
                            da.read(p * 4u + 3u) * size.y);
        };
    }
    Float level = 0.0f;
    $if (c0.x >= uint32_t(MipNearest)) {
        Float l = ite((c1.w & HasDa) != 0u, footprint_level(j), 0.0f);
        $if ((c1.w & HasBias) != 0u) { l = l + bias.read(p); };
        level = clamp(l, 0.0f, cast<float>(c0.z - 1u));
    };
    level = ite(c0.x == uint32_t(MipNearest), floor(level + 0.5f), level);
    Float whole = floor(level);
    Float frac = level - whole;
    UInt l0 = cast<uint32_t>(whole);
    Chan<W> v = filtered<IsCube, W>(tex, table, l0, image, c1.z, face, ch, c0, st);
    $if (frac > 0.0f) {
        Chan<W> v1 = filtered<IsCube, W>(tex, table, min(l0 + 1u, c0.z - 1u), image, c1.z, face, ch, c0, st);
        v = lerp(v, v1, spread<W>(frac));
    };
    return v;
}

} // namespace adjoint::python
