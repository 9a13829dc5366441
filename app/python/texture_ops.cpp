// nvdiffrast's texture and texture_construct_mip for adjoint.torch: sampling and the mip chain as engine kernels
// over one flat float stack (every level of every texture and face), the backward the same DSL in $autodiff.
//
// Conventions (nvdiffrast's): uv (0, 0) is the corner of texel (row 0, column 0) in memory, texel centres at
// half-integers; cube faces +x, -x, +y, -y, +z, -z with OpenGL's face axes; a mip level is the 2x2 mean of the
// one below (a side of 1 stays 1); the level of detail is log2 of the major axis of the pixel's footprint in
// level-0 texels (from uv_da) plus mip_level_bias, clamped to [0, levels - 1].
// Layout: level l starts at table[l].x floats, [tex_minibatch, faces, h_l, w_l, channels]; table[l] = (offset,
// w, h, tex_minibatch x faces).
#include "runtime.h"

#include <algorithm>
#include <optional>

namespace adjoint::python {

namespace {

// Kernel settings: c0 = (filter, boundary, levels, channels), c1 = (pixels per image, tex batched, faces, flags).
enum Filter : uint32_t { Nearest = 0, Linear = 1, MipNearest = 2, MipLinear = 3 };
enum Boundary : uint32_t { Wrap = 0, Clamp = 1, Zero = 2, Cube = 3 };
constexpr uint32_t HasDa = 1u, HasBias = 2u;

// Face f's (sc, tc) and its major-axis value m (> 0 on the face) of a direction, OpenGL's cube table.
Float2 face_sc_tc(const UInt& f, const Float3& d) {
    Float sc = ite(f == 0u, -d.z, ite(f == 1u, d.z, ite(f == 5u, -d.x, d.x)));
    Float tc = ite(f == 2u, d.z, ite(f == 3u, -d.z, -d.y));
    return make_float2(sc, tc);
}
Float face_major(const UInt& f, const Float3& d) {
    return ite(f == 0u, d.x, ite(f == 1u, -d.x, ite(f == 2u, d.y, ite(f == 3u, -d.y, ite(f == 4u, d.z, -d.z)))));
}
UInt face_of(const Float3& d) {
    Float3 a = abs(d);
    Bool xm = a.x >= a.y && a.x >= a.z, ym = !xm && a.y >= a.z;
    return ite(xm, ite(d.x < 0.0f, 1u, 0u), ite(ym, ite(d.y < 0.0f, 3u, 2u), ite(d.z < 0.0f, 5u, 4u)));
}
// The direction through (sc, tc) of face f (the inverse of face_sc_tc at major value 1).
Float3 face_direction(const UInt& f, const Float& sc, const Float& tc) {
    Float x = ite(f == 0u, 1.0f, ite(f == 1u, -1.0f, ite(f == 5u, -sc, sc)));
    Float y = ite(f == 2u, 1.0f, ite(f == 3u, -1.0f, -tc));
    Float z = ite(f == 0u, -sc, ite(f == 1u, sc, ite(f == 2u, tc, ite(f == 3u, -tc, ite(f == 4u, 1.0f, -1.0f)))));
    return make_float3(x, y, z);
}

// One level's texel at integer coordinates (x, y) of face `face`, after the boundary mode: wrap and clamp
// fold the coordinate into the level, zero reads 0 outside, cube continues on the neighbouring face (across one
// edge: corner taps are filtered's).
template <bool IsCube, typename Tex>
Float tap(const Tex& tex, const UInt4& lv, const UInt& image, const UInt& faces, const UInt& face, const UInt& ch,
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
    Float v = tex.read(at);
    return ite(boundary == uint32_t(Zero) && !inside, 0.0f, v);
}

// Bilinear (or nearest) filtering of one level at (s, t) in [0, 1]-texture units.
template <bool IsCube, typename Tex>
Float filtered(const Tex& tex, const BufferVar<uint4>& table, const UInt& level, const UInt& image, const UInt& faces,
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
    Float a = tap<IsCube>(tex, lv, image, faces, face, ch, c0.w, c0.y, x0, y0);
    Float b = tap<IsCube>(tex, lv, image, faces, face, ch, c0.w, c0.y, x0 + 1, y0);
    Float c = tap<IsCube>(tex, lv, image, faces, face, ch, c0.w, c0.y, x0, y0 + 1);
    Float d = tap<IsCube>(tex, lv, image, faces, face, ch, c0.w, c0.y, x0 + 1, y0 + 1);
    if constexpr (IsCube) {
        // Three faces meet at a cube's corner, so a tap outside the face in both directions has no texel of its
        // own: it reads the mean of the other three taps (at most one tap is such a corner).
        Int w = cast<int>(lv.y);
        Bool out_x0 = x0 < 0 || x0 >= w, out_x1 = x0 + 1 < 0 || x0 + 1 >= w;
        Bool out_y0 = y0 < 0 || y0 >= w, out_y1 = y0 + 1 < 0 || y0 + 1 >= w;
        Float ca = ite(out_x0 && out_y0, (b + c + d) / 3.0f, a), cb = ite(out_x1 && out_y0, (a + c + d) / 3.0f, b);
        Float cc = ite(out_x0 && out_y1, (a + b + d) / 3.0f, c), cd = ite(out_x1 && out_y1, (a + b + c) / 3.0f, d);
        return lerp(lerp(ca, cb, t.x), lerp(cc, cd, t.x), t.y);
    }
    return lerp(lerp(a, b, t.x), lerp(c, d, t.x), t.y);
}

// The level of detail from the footprint's texel-space derivatives (ds/dX, ds/dY, dt/dX, dt/dY): half the log2
// of the squared major axis of the footprint ellipse. A degenerate footprint reads level 0.
Float footprint_level(const Float4& j) {
    Float a = j.x * j.x + j.z * j.z, b = j.y * j.y + j.w * j.w, c = j.x * j.y + j.z * j.w;
    Float disc = 0.25f * (a - b) * (a - b) + c * c;
    Float root = ite(disc > 1e-30f, sqrt(max(disc, 1e-30f)), 0.0f);
    Float major = 0.5f * (a + b) + root;
    return ite(major > 1e-30f, 0.5f * log2(max(major, 1e-30f)), -100.0f);
}

// The texture's value for pixel p, channel ch: the face and (s, t) of uv (a direction on a cube), the level of
// detail, and one or two filtered levels. Cube is a compile-time choice (uv and uv_da have 3 and 6 floats).
template <bool IsCube, typename Tex, typename Uv, typename Da, typename Bias>
Float texture_value(const Tex& tex, const BufferVar<uint4>& table, const Uv& uv, const Da& da, const Bias& bias,
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
    Float v = filtered<IsCube>(tex, table, l0, image, c1.z, face, ch, c0, st);
    $if (frac > 0.0f) {
        Float v1 = filtered<IsCube>(tex, table, min(l0 + 1u, c0.z - 1u), image, c1.z, face, ch, c0, st);
        v = lerp(v, v1, frac);
    };
    return v;
}

template <bool IsCube>
auto texture_kernel() {
    return Kernel1D([](BufferFloat tex, BufferVar<uint4> table, BufferFloat uv, BufferFloat da, BufferFloat bias,
                       UInt4 c0, UInt4 c1, BufferFloat out) noexcept {
        UInt i = dispatch_id().x;
        out.write(i, texture_value<IsCube>(tex, table, uv, da, bias, c0, c1, i / c0.w, i % c0.w));
    });
}

// A pixel's few floats (its uv, uv_da or mip_level_bias) held in variables and read as texture_value reads a
// buffer, at first + k for k < N: the backward kernel marks them for $autodiff and writes their gradients once.
template <int N>
struct PixelFloats {
    explicit PixelFloats(const UInt& at) : first(at) {}
    UInt first;
    Float v[N];
    Float read(const UInt& i) const {
        UInt k = i - first;
        Float r = v[N - 1];
        for (int j = N - 2; j >= 0; --j) r = ite(k == uint32_t(j), v[j], r);
        return r;
    }
};

// d loss / d out into the stack (every level read), uv, uv_da and mip_level_bias. A thread a pixel, over its
// channels: the pixel's uv, uv_da and bias gradients sum in registers and are written once (a thread a (pixel,
// channel) added them by float atomics, three threads to one element: py_texture_backward took 137 ms for a
// 512x512 texture magnified onto 1024x1024 pixels); the texels' go in by the stack's atomics.
template <bool IsCube>
auto texture_backward_kernel() {
    return Kernel1D([](DiffBufferFloat tex, BufferVar<uint4> table, BufferFloat uv, BufferFloat da, BufferFloat bias,
                       UInt4 c0, UInt4 c1, BufferFloat gout, BufferFloat guv, BufferFloat gda,
                       BufferFloat gbias) noexcept {
        constexpr int n = IsCube ? 3 : 2, nd = IsCube ? 6 : 4;
        UInt p = dispatch_id().x;
        Bool has_da = (c1.w & HasDa) != 0u, has_bias = (c1.w & HasBias) != 0u;
        PixelFloats<n> u(p * uint32_t(n));
        PixelFloats<nd> d(p * uint32_t(nd));
        PixelFloats<1> b(p);
        Float gu[n], gd[nd];
        for (int k = 0; k < n; ++k) {
            u.v[k] = uv.read(p * uint32_t(n) + uint32_t(k));
            gu[k] = 0.0f;
        }
        for (int k = 0; k < nd; ++k) {
            d.v[k] = ite(has_da, da.read(ite(has_da, p * uint32_t(nd) + uint32_t(k), 0u)), 0.0f);
            gd[k] = 0.0f;
        }
        b.v[0] = ite(has_bias, bias.read(ite(has_bias, p, 0u)), 0.0f);
        Float gb = 0.0f;
        $for (ch, c0.w) {
            Float g = gout.read(p * c0.w + ch);
            $if (g != 0.0f) {
                $autodiff {
                    for (int k = 0; k < n; ++k) requires_grad(u.v[k]);
                    for (int k = 0; k < nd; ++k) requires_grad(d.v[k]);
                    requires_grad(b.v[0]);
                    backward(g * texture_value<IsCube>(tex, table, u, d, b, c0, c1, p, ch));
                    for (int k = 0; k < n; ++k) gu[k] = gu[k] + grad(u.v[k]);
                    for (int k = 0; k < nd; ++k) gd[k] = gd[k] + grad(d.v[k]);
                    gb = gb + grad(b.v[0]);
                };
            };
        };
        for (int k = 0; k < n; ++k) guv.write(p * uint32_t(n) + uint32_t(k), gu[k]);
        $if (has_da) {
            for (int k = 0; k < nd; ++k) gda.write(p * uint32_t(nd) + uint32_t(k), gd[k]);
        };
        $if (has_bias) { gbias.write(p, gb); };
    });
}

// Level l + 1 from level l: each texel the mean of its 2x2 children (a side of 1 reads its one texel twice).
// `i` runs over level l + 1's floats; `read` reads level l's.
template <typename Read>
Float box(const Read& read, const UInt4& fine, const UInt4& coarse, const UInt& i, const UInt& channels) {
    UInt ch = i % channels, q = i / channels;
    UInt x = q % coarse.y, y = (q / coarse.y) % coarse.z, image = q / (coarse.y * coarse.z);
    UInt x0 = ite(fine.y > 1u, x * 2u, 0u), x1 = ite(fine.y > 1u, x * 2u + 1u, 0u);
    UInt y0 = ite(fine.z > 1u, y * 2u, 0u), y1 = ite(fine.z > 1u, y * 2u + 1u, 0u);
    UInt row0 = fine.x + (image * fine.z + y0) * fine.y * channels, row1 = fine.x + (image * fine.z + y1) * fine.y * channels;
    return 0.25f * (read(row0 + x0 * channels + ch) + read(row0 + x1 * channels + ch) +
                    read(row1 + x0 * channels + ch) + read(row1 + x1 * channels + ch));
}

auto mip_kernel() {
    return Kernel1D([](BufferFloat stack, BufferVar<uint4> table, UInt level, UInt channels) noexcept {
        UInt i = dispatch_id().x;
        UInt4 fine = table.read(level), coarse = table.read(level + 1u);
        stack.write(coarse.x + i, box([&](const UInt& k) { return stack.read(k); }, fine, coarse, i, channels));
    });
}

// The reverse of mip_kernel for one level, by $autodiff: each float of level l marks its own value, recomputes
// its parent's mean, and adds d parent / d itself times the parent's gradient into its own gradient.
auto mip_backward_kernel() {
    return Kernel1D([](BufferFloat stack, BufferFloat gstack, BufferVar<uint4> table, UInt level, UInt channels) noexcept {
        UInt k = dispatch_id().x;   // a float of level `level`
        UInt4 fine = table.read(level), coarse = table.read(level + 1u);
        UInt ch = k % channels, q = k / channels;
        UInt x = q % fine.y, y = (q / fine.y) % fine.z, image = q / (fine.y * fine.z);
        UInt parent = ((image * coarse.z + min(y / 2u, coarse.z - 1u)) * coarse.y + min(x / 2u, coarse.y - 1u)) * channels + ch;
        UInt self = fine.x + k;
        Float v = stack.read(self);
        $autodiff {
            requires_grad(v);
            Float mean = box([&](const UInt& at) { return ite(at == self, v, stack.read(at)); }, fine, coarse, parent, channels);
            backward(gstack.read(coarse.x + parent) * mean);
            gstack.write(self, gstack.read(self) + grad(v));
        };
    });
}

struct TextureShaders {
    Shader<1> sample2d, sample_cube, backward2d, backward_cube, mip, mip_backward;
};

TextureShaders& shaders(Runtime& rt) {
    if (!rt.texture_shaders)
        rt.texture_shaders = std::make_shared<TextureShaders>(TextureShaders{
            rt.device.compile(texture_kernel<false>(), {.name = "py_texture"}),
            rt.device.compile(texture_kernel<true>(), {.name = "py_texture_cube"}),
            rt.device.compile(texture_backward_kernel<false>(), {.name = "py_texture_backward"}),
            rt.device.compile(texture_backward_kernel<true>(), {.name = "py_texture_cube_backward"}),
            rt.device.compile(mip_kernel(), {.name = "py_texture_mip"}),
            rt.device.compile(mip_backward_kernel(), {.name = "py_texture_mip_backward"})});
    return *static_cast<TextureShaders*>(rt.texture_shaders.get());
}

// The level table as uint4 records and the number of floats in each level.
std::vector<uint4> level_table(const UArray& table, std::vector<uint32_t>& counts, uint32_t per_texel) {
    std::vector<uint4> t(size_t(table.shape(0)));
    for (size_t l = 0; l < t.size(); ++l) {
        t[l] = uint4{table.at(l, 0), table.at(l, 1), table.at(l, 2), table.at(l, 3)};
        counts.push_back(table.at(l, 1) * table.at(l, 2) * per_texel);
    }
    return t;
}

} // namespace

void bind_texture_ops(py::module_& m) {
    // stack: every level's floats, level 0 filled; table [L, 4] = (offset, w, h, images), images = tex minibatch x
    // faces. Fills levels 1.. with the mip chain and returns the whole stack.
    m.def("_texture_build_mip", [](const FArray& stack, const UArray& table, uint32_t images, uint32_t channels) {
        auto rt = runtime();
        OpStream op(*rt);
        Stream& stream = *op;
        std::vector<uint32_t> counts;
        auto t = level_table(table, counts, images * channels);
        auto s = rt->device.create_buffer<float>(std::max<size_t>(size_t(stack.size()), 1));
        auto tb = rt->device.create_buffer<uint4>(t.size());
        stream << s.copy_from(stack.data()) << tb.copy_from(t.data());
        for (uint32_t l = 0; l + 1 < t.size(); ++l) stream << shaders(*rt).mip(s, tb, l, channels).dispatch(counts[l + 1]);
        FArray out(std::vector<py::ssize_t>{stack.size()});
        stream << s.copy_to(out.mutable_data()) << synchronize();
        return out;
    });
    // The lookup: c0 = (filter, boundary, levels, channels), c1 = (pixels per image, tex batched, faces, flags);
    // uv [P, 2 or 3]; returns [P, channels]. With grad [P, channels]: (d stack, d uv, d uv_da, d bias), and with
    // `chain` the stack's gradient carried down the mip chain into level 0 as well.
    m.def("_texture", [](const FArray& stack, const UArray& table, const FArray& uv, std::optional<FArray> da,
                         std::optional<FArray> bias, std::array<uint32_t, 4> a0, std::array<uint32_t, 4> a1, bool cube,
                         std::optional<FArray> grad, bool chain) -> py::object {
        auto rt = runtime();
        OpStream op(*rt);
        Stream& stream = *op;
        std::vector<uint32_t> counts;
        auto t = level_table(table, counts, 1);
        auto tb = rt->device.create_buffer<uint4>(t.size());
        stream << tb.copy_from(t.data());
        const uint4 c0{a0[0], a0[1], a0[2], a0[3]}, c1{a1[0], a1[1], a1[2], a1[3]};
        const size_t pixels = size_t(uv.shape(0)), n = pixels * a0[3];
        auto& sh = shaders(*rt);
        // uv_da and mip_level_bias may be None: a buffer of one float then, never read.
        auto plain = [&](const std::optional<FArray>& a, const char* what) {
            return a ? upload<float>(*rt, stream, *a, size_t(a->size()), what) : rt->device.create_buffer<float>(1);
        };
        auto u = upload<float>(*rt, stream, uv, size_t(uv.size()), "uv");
        auto d = plain(da, "uv_da"), b = plain(bias, "mip_level_bias");
        if (!grad) {
            auto s = upload<float>(*rt, stream, stack, size_t(stack.size()), "stack");
            auto o = rt->device.create_buffer<float>(std::max<size_t>(n, 1));
            FArray out(std::vector<py::ssize_t>{uv.shape(0), py::ssize_t(a0[3])});
            if (n) stream << (cube ? sh.sample_cube : sh.sample2d)(s, tb, u, d, b, c0, c1, o).dispatch(n)
                          << o.copy_to(out.mutable_data());
            stream << synchronize();
            return out;
        }
        auto s = upload_diff<float>(*rt, stream, stack, size_t(stack.size()), "stack");
        auto g = upload<float>(*rt, stream, *grad, n, "grad");
        auto gu = rt->device.create_buffer<float>(std::max<size_t>(size_t(uv.size()), 1));
        auto gd = rt->device.create_buffer<float>(da ? std::max<size_t>(size_t(da->size()), 1) : 1);
        auto gb = rt->device.create_buffer<float>(bias ? std::max<size_t>(size_t(bias->size()), 1) : 1);
        if (pixels) stream << (cube ? sh.backward_cube : sh.backward2d)(s, tb, u, d, b, c0, c1, g, gu, gd, gb).dispatch(pixels);
        if (chain) {
            for (size_t l = t.size(); l-- > 1;)
                stream << sh.mip_backward(s.value, s.grad, tb, uint32_t(l - 1), a0[3]).dispatch(
                              size_t(t[l].w) * t[l - 1].y * t[l - 1].z * a0[3]);
        }
        // The gradients straight into arrays shaped as the inputs (empty for None), one synchronize for all.
        auto out_like = [&](const Buffer<float>& from, const std::optional<FArray>& like) {
            if (!like) return FArray(std::vector<py::ssize_t>{0});
            FArray out(std::vector<py::ssize_t>(like->shape(), like->shape() + like->ndim()));
            if (out.size()) stream << from.copy_to(out.mutable_data(), 0, size_t(out.size()));
            return out;
        };
        FArray g_stack = out_like(s.grad, stack), g_uv = out_like(gu, uv), g_da = out_like(gd, da), g_bias = out_like(gb, bias);
        stream << synchronize();
        return py::make_tuple(g_stack, g_uv, g_da, g_bias);
    }, py::arg("stack"), py::arg("table"), py::arg("uv"), py::arg("da"), py::arg("bias"), py::arg("c0"), py::arg("c1"),
       py::arg("cube"), py::arg("grad") = py::none(), py::arg("chain") = false);
}

} // namespace adjoint::python
