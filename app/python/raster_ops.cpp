// nvdiffrast's rasterize for adjoint.torch, as engine kernels over host arrays: forward in plain DSL, backward the
// same DSL inside $autodiff (interpolate is interpolate_ops.cpp).
//
// Conventions (nvdiffrast's): clip-space positions [B, V, 4], int32 triangles [T, 3], outputs [B, H, W, 4] of
// (u, v, z/w, triangle_id + 1) with 0 where nothing covers the pixel; row 0 is the bottom row (y = −1), pixel
// centres at +0.5; (u, v) weigh the triangle's first two vertices, 1 − u − v the third, perspective-correct.
// A pixel tests the triangles binned into its tile (raster_bins.h) and keeps the nearest, the lowest triangle
// index among equals, whatever the lists' order. Triangles crossing w = 0 are
// clipped as nvdiffrast clips them, without cutting them: a pixel sees the point of the triangle's plane that
// projects to it only where that point has w > 0 and −w <= z <= w (homogeneous rasterization).
#include "channels.h"
#include "raster_bins.h"
#include "runtime.h"

#include <algorithm>
#include <optional>

namespace adjoint::python {

namespace {

// A triangle's corners, for hit and bary_derivatives: scaled by one factor, about 2^(20 - floor(log2 m)), where the
// largest |x|, |y| or |w|, m, is 2^40 or more. Their barycentrics and depth are ratios of products of two corners'
// coordinates, unchanged by a common factor, and those products overflowed float past about 1e19 (a screen-filling
// triangle at +-1e19, w = 1, covered no pixel; nvdiffrast clips it). Scaled to about 2^20, a w of 1 stays a normal
// float (2^-107 at most). Ordinary corners (below 2^40) are left exactly as they are.
void scale_corners(Float4& p0, Float4& p1, Float4& p2) {
    const Float m = max(max(max(max(abs(p0.x), abs(p0.y)), abs(p0.w)), max(max(abs(p1.x), abs(p1.y)), abs(p1.w))),
                        max(max(abs(p2.x), abs(p2.y)), abs(p2.w)));
    const Float k = ite(m >= 1.0995116e12f && m <= 3.4028235e38f, exp2(20.0f - floor(log2(m))), 1.0f);
    p0 = p0 * k;
    p1 = p1 * k;
    p2 = p2 * k;
}

// Clip-space barycentrics of the point that projects to NDC (x, y): Σ b_i (p_i.xy − (x, y) · p_i.w) = 0 with
// Σ b_i = 1, and z/w there. `inside` when all three are >= 0 and the point is in front (Σ b_i w_i > 0).
struct Hit {
    Float3 b;
    Float depth;
    Bool inside;
};
// The corners as scale_corners leaves them.
Hit hit(const Float4& p0, const Float4& p1, const Float4& p2, const Float& x, const Float& y) {
    Float2 a0 = p0.xy() - make_float2(x, y) * p0.w, a1 = p1.xy() - make_float2(x, y) * p1.w,
           a2 = p2.xy() - make_float2(x, y) * p2.w;
    Float3 c = make_float3(a1.x * a2.y - a1.y * a2.x, a2.x * a0.y - a2.y * a0.x, a0.x * a1.y - a0.y * a1.x);
    Float s = c.x + c.y + c.z;
    Bool ok = s != 0.0f;
    Float safe = ite(ok, s, 1.0f);
    Float3 b = c / safe;
    Float w = b.x * p0.w + b.y * p1.w + b.z * p2.w;
    Float depth = (b.x * p0.z + b.y * p1.z + b.z * p2.z) / ite(w != 0.0f, w, 1.0f);
    return {b, depth, ok && w > 0.0f && b.x >= 0.0f && b.y >= 0.0f && b.z >= 0.0f};
}

// The barycentrics' image-space derivatives (du/dX, du/dY, dv/dX, dv/dY) at NDC (x, y), `scale` NDC units per
// pixel: the quotient rule on hit's b = c / Σ c, where each a_j = p_j.xy − (x, y) · p_j.w moves by −p_j.w.
// Written out (not $autodiff of hit) so that the backward can differentiate it with respect to the positions.
// The corners as scale_corners leaves them.
Float4 bary_derivatives(const Float4& p0, const Float4& p1, const Float4& p2, const Float& x, const Float& y,
                        const Float2& scale) {
    Float2 a0 = p0.xy() - make_float2(x, y) * p0.w, a1 = p1.xy() - make_float2(x, y) * p1.w,
           a2 = p2.xy() - make_float2(x, y) * p2.w;
    Float3 c = make_float3(a1.x * a2.y - a1.y * a2.x, a2.x * a0.y - a2.y * a0.x, a0.x * a1.y - a0.y * a1.x);
    Float3 cx = make_float3(p2.w * a1.y - p1.w * a2.y, p0.w * a2.y - p2.w * a0.y, p1.w * a0.y - p0.w * a1.y);
    Float3 cy = make_float3(p1.w * a2.x - p2.w * a1.x, p2.w * a0.x - p0.w * a2.x, p0.w * a1.x - p1.w * a0.x);
    Float s = c.x + c.y + c.z;
    Float inv = 1.0f / ite(s != 0.0f, s, 1.0f);
    Float sx = cx.x + cx.y + cx.z, sy = cy.x + cy.y + cy.z;
    Float3 bx = (cx - c * (sx * inv)) * inv, by = (cy - c * (sy * inv)) * inv;
    return make_float4(bx.x * scale.x, by.x * scale.y, bx.y * scale.x, by.y * scale.y);
}

Float4 vertex(const BufferFloat4& pos, const BufferUInt& tri, const UInt& base, const UInt& t, int k) {
    return pos.read(base + tri.read(t * 3u + uint32_t(k)));
}

// Entries of a tile's list one dispatch tests (kRasterPart of lavapipe's 65,535 loop iterations): a longer list
// (70,000 triangles over one tile) is taken in parts, each going on from the hit the earlier ones kept in `out`.
constexpr uint32_t kRasterPart = 16384;

// A thread a 2x2 quad of pixels, the quads of a tile consecutive threads, so that a SIMD group's lanes loop over one
// list and each entry's triangle is read once for four pixels (a thread a pixel took 42-44 ms at 1024x1024;
// the scene renderer's depth test does the same, app/GUIDE.md). Dispatched at batch * tiles * (tile / 2)^2.
auto rasterize_kernel() {
    return Kernel1D([](BufferFloat4 pos, BufferUInt tri, UInt vertices, BufferUInt bin_offset, BufferUInt bin_count,
                       BufferUInt bins, UInt tile, UInt tiles_x, UInt tiles_y, UInt width, UInt height, UInt peel,
                       BufferFloat4 previous, BufferFloat4 out, BufferFloat4 db, UInt first, UInt last) noexcept {
        UInt half = tile / 2u, quad = dispatch_id().x;
        UInt bin = quad / (half * half), q = quad % (half * half);   // bin: (b * tiles_y + ty) * tiles_x + tx
        UInt b = bin / (tiles_x * tiles_y), tx = bin % tiles_x, ty = bin / tiles_x % tiles_y;
        UInt x0 = tx * tile + q % half * 2u, y0 = ty * tile + q / half * 2u;
        UInt base = b * vertices;
        UInt n = bin_count.read(bin), list_begin = bin_offset.read(bin);
        UInt begin = list_begin + min(first, n), end = list_begin + min(first + kRasterPart, n);
        Float2 scale = make_float2(2.0f / cast<float>(width), 2.0f / cast<float>(height));
        constexpr int kQuad = 4;
        Bool valid[kQuad];
        UInt at[kQuad], id[kQuad];
        Float fx[kQuad], fy[kQuad], best[kQuad];
        Float2 uv[kQuad];
        Float4 prev[kQuad];
        Bool open[kQuad];
        for (int j = 0; j < kQuad; ++j) {
            UInt x = x0 + uint32_t(j % 2), y = y0 + uint32_t(j / 2);
            valid[j] = (x < width) & (y < height);
            at[j] = ite(valid[j], (b * height + y) * width + x, 0u);
            fx[j] = (cast<float>(x) + 0.5f) * scale.x - 1.0f;
            fy[j] = (cast<float>(y) + 0.5f) * scale.y - 1.0f;
            best[j] = 2.0f;
            id[j] = 0u;
            uv[j] = make_float2(0.0f);
            $if (first > 0u) {   // going on from the earlier parts' hit
                Float4 kept = out.read(at[j]);
                $if (kept.w > 0.0f) {
                    best[j] = kept.z;
                    id[j] = cast<uint32_t>(kept.w);
                    uv[j] = kept.xy();
                };
            };
            // Depth peeling: only surfaces behind the previous layer's, (z/w, id) ordered as the first layer picks
            // (the nearest, the lowest id among equals); nothing where the previous layer saw nothing.
            prev[j] = previous.read(ite(peel > 0u, at[j], 0u));
            open[j] = valid[j] & (peel == 0u || prev[j].w > 0.0f);
        }
        $for (k, begin, end) {
            UInt t = bins.read(k);
            Float4 p0 = vertex(pos, tri, base, t, 0), p1 = vertex(pos, tri, base, t, 1), p2 = vertex(pos, tri, base, t, 2);
            scale_corners(p0, p1, p2);   // once a triangle, for the quad's four pixels
            for (int j = 0; j < kQuad; ++j) {
                Hit h = hit(p0, p1, p2, fx[j], fy[j]);
                Bool behind = peel == 0u || h.depth > prev[j].z ||
                              (h.depth == prev[j].z && cast<float>(t + 1u) > prev[j].w);
                Bool nearer = h.depth < best[j] || (h.depth == best[j] && t + 1u < id[j]);
                $if (open[j] && behind && h.inside && h.depth >= -1.0f && h.depth <= 1.0f && nearer) {
                    best[j] = h.depth;
                    id[j] = t + 1u;
                    uv[j] = h.b.xy();
                };
            }
        };
        for (int j = 0; j < kQuad; ++j) {
            $if (valid[j]) {
                out.write(at[j], ite(id[j] > 0u, make_float4(uv[j], best[j], cast<float>(id[j])), make_float4(0.0f)));
                // The barycentrics' derivatives (du/dX, du/dY, dv/dX, dv/dY); NDC moves 2 / size per pixel.
                $if (last != 0u) {
                    Float4 d = make_float4(0.0f);
                    $if (id[j] > 0u) {
                        UInt t = id[j] - 1u;
                        Float4 q0 = vertex(pos, tri, base, t, 0), q1 = vertex(pos, tri, base, t, 1),
                               q2 = vertex(pos, tri, base, t, 2);
                        scale_corners(q0, q1, q2);
                        d = bary_derivatives(q0, q1, q2, fx[j], fy[j], scale);
                    };
                    db.write(at[j], d);
                };
            };
        }
    });
}

// The backward kernel takes a run of kGradRun pixels of a row a thread and sums the run's gradients per triangle
// in registers, adding each sum to the vertices once (the run's pixels mostly see one or two triangles at a
// megapixel): float atomics, a compare-and-swap each on lavapipe, were 30 of its 39 ms at 1024x1024 as 12 a
// pixel (one atomic a subgroup where its threads shared an element measured no faster).

// d loss / d (u, v, z/w) and d loss / d rast_db (when `with_db`) of each covered pixel into the positions of
// its triangle's vertices, `grad_pos` [B * V * 4]. Dispatched (runs of the row, rows of all images).
auto rasterize_backward_kernel() {
    return Kernel2D([](BufferFloat4 pos, BufferUInt tri, UInt vertices, UInt width, UInt height, BufferFloat4 rast,
                       BufferFloat4 grad_out, BufferFloat4 grad_db, UInt with_db, BufferFloat grad_pos) noexcept {
        UInt row = dispatch_id().y, x0 = dispatch_id().x * kGradRun;
        UInt base = row / height * vertices;
        Float y = (cast<float>(row % height) + 0.5f) * 2.0f / cast<float>(height) - 1.0f;
        Float2 scale = make_float2(2.0f / cast<float>(width), 2.0f / cast<float>(height));
        RunSums<3, 4> sums(grad_pos);
        $for (j, 0u, kGradRun) {
            UInt x = x0 + j, at = row * width + x;
            Bool inside = x < width;
            Float4 r = rast.read(ite(inside, at, 0u));
            UInt id = ite(inside, cast<uint32_t>(r.w), 0u);
            $if (id > 0u) {
                UInt t = id - 1u;
                Float px = (cast<float>(x) + 0.5f) * 2.0f / cast<float>(width) - 1.0f;
                Float4 g = grad_out.read(at), gd = ite(with_db != 0u, grad_db.read(ite(with_db != 0u, at, 0u)), make_float4(0.0f));
                UInt i[3] = {base + tri.read(t * 3u), base + tri.read(t * 3u + 1u), base + tri.read(t * 3u + 2u)};
                Float4 p[3] = {pos.read(i[0]), pos.read(i[1]), pos.read(i[2])};
                Float4 gp[3];
                $autodiff {
                    requires_grad(p[0], p[1], p[2]);
                    // The factor's own derivative is 0 (floor), and the ratios' are unchanged by it: d/dp f(k p) is
                    // k f'(k p) = f'(p) for f of degree 0.
                    Float4 q0 = p[0], q1 = p[1], q2 = p[2];
                    scale_corners(q0, q1, q2);
                    Hit h = hit(q0, q1, q2, px, y);
                    Float seed = g.x * h.b.x + g.y * h.b.y + g.z * h.depth;
                    $if (with_db != 0u) { seed = seed + dot(gd, bary_derivatives(q0, q1, q2, px, y, scale)); };
                    backward(seed);
                    for (int k = 0; k < 3; ++k) gp[k] = grad(p[k]);
                };
                for (int k = 0; k < 3; ++k) sums.add(k, i[k] * 4u, gp[k]);
            };
        };
        sums.finish();
    });
}

struct RasterShaders {
    Shader<1> rasterize;
    Shader<2> rasterize_backward;
};

RasterShaders& shaders(Runtime& rt) {
    if (!rt.raster_shaders)
        rt.raster_shaders = std::make_shared<RasterShaders>(RasterShaders{rt.device.compile(rasterize_kernel(), {.name = "py_rasterize"}),
                                rt.device.compile(rasterize_backward_kernel(), {.name = "py_rasterize_backward"})});
    return *static_cast<RasterShaders*>(rt.raster_shaders.get());
}

} // namespace

void bind_raster_ops(py::module_& m) {
    // pos [B, V, 4], tri [T, 3] (checked by the caller) -> (rast [B, H, W, 4], db [B, H, W, 4]); with `previous`
    // (a layer's rast) the next depth layer behind it (DepthPeeler).
    m.def("_rasterize", [](const FArray& pos, const UArray& tri, uint32_t height, uint32_t width,
                           std::optional<FArray> previous) {
        auto rt = runtime();
        OpStream op(*rt);
        Stream& stream = *op;
        const uint32_t batch = uint32_t(pos.shape(0)), vertices = uint32_t(pos.shape(1)), triangles = uint32_t(tri.shape(0));
        auto p = upload<float4>(*rt, stream, pos, size_t(batch) * vertices, "pos");
        auto t = upload<uint32_t>(*rt, stream, tri, size_t(triangles) * 3, "tri");
        const size_t n = size_t(batch) * height * width;
        auto out = device_buffer<float4>(*rt, n, "rast"), db = device_buffer<float4>(*rt, n, "rast_db");
        auto prev = previous ? upload<float4>(*rt, stream, *previous, n, "previous") : rt->device.create_buffer<float4>(1);
        FArray o(std::vector<py::ssize_t>{batch, height, width, 4}), d(std::vector<py::ssize_t>{batch, height, width, 4});
        const TriangleBins bins = bin_triangles(*rt, stream, p, t, batch, vertices, triangles, width, height);
        const uint32_t parts = std::max(1u, (bins.longest + kRasterPart - 1) / kRasterPart);
        for (uint32_t part = 0; part < parts; ++part)
            stream << shaders(*rt).rasterize(p, t, vertices, bins.offset, bins.count, bins.list, bins.tile,
                                             bins.tiles_x, bins.tiles_y, width, height, uint32_t(bool(previous)), prev,
                                             out, db, part * kRasterPart, uint32_t(part + 1 == parts))
                          .dispatch(batch * bins.tiles_x * bins.tiles_y * (bins.tile / 2) * (bins.tile / 2));
        copy_out(stream, out, o);
        copy_out(stream, db, d);
        stream << synchronize();
        return py::make_tuple(o, d);
    }, py::arg("pos"), py::arg("tri"), py::arg("height"), py::arg("width"), py::arg("previous") = py::none());
    m.def("_rasterize_backward", [](const FArray& pos, const UArray& tri, const FArray& rast, const FArray& grad,
                                    std::optional<FArray> grad_db) {
        auto rt = runtime();
        OpStream op(*rt);
        Stream& stream = *op;
        const uint32_t batch = uint32_t(rast.shape(0)), height = uint32_t(rast.shape(1)), width = uint32_t(rast.shape(2));
        const uint32_t vertices = uint32_t(pos.shape(1));
        const size_t n = size_t(batch) * height * width;
        auto p = upload<float4>(*rt, stream, pos, size_t(batch) * vertices, "pos");
        auto gp = device_buffer<float>(*rt, size_t(batch) * vertices * 4, "pos gradient");
        stream << gp.fill_zero();
        auto t = upload<uint32_t>(*rt, stream, tri, size_t(tri.shape(0)) * 3, "tri");
        auto r = upload<float4>(*rt, stream, rast, n, "rast"), g = upload<float4>(*rt, stream, grad, n, "grad");
        auto gd = grad_db ? upload<float4>(*rt, stream, *grad_db, n, "grad_db") : rt->device.create_buffer<float4>(1);
        FArray out(std::vector<py::ssize_t>{batch, vertices, 4});
        stream << shaders(*rt).rasterize_backward(p, t, vertices, width, height, r, g, gd, uint32_t(bool(grad_db)), gp)
                      .dispatch((width + kGradRun - 1) / kGradRun, height * batch);
        copy_out(stream, gp, out);
        stream << synchronize();
        return out;
    }, py::arg("pos"), py::arg("tri"), py::arg("rast"), py::arg("grad"), py::arg("grad_db") = py::none());
}

} // namespace adjoint::python
