// nvdiffrast's interpolate for adjoint.torch, with its image-space derivatives (rast_db, diff_attrs): engine
// kernels over host arrays, forward in plain DSL, backward the same DSL inside $autodiff. Conventions as
// raster_ops.cpp's: rast [B, H, W, 4] = (u, v, z/w, triangle_id + 1), (u, v) weighing the triangle's first two
// vertices and 1 − u − v the third; attributes [Ba, V, A], Ba 1 for one set shared by every image.
#include "channels.h"
#include "runtime.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>

namespace adjoint::python {

namespace {

// Attributes a dispatch of interpolate's kernels takes: a thread's loops stay within lavapipe's budget.
constexpr uint32_t kAttrChunk = 1024;

// The corners of the triangle a covered pixel sees (`id`: rast's triangle id + 1), among the image's vertices (from
// `base`); triangle 0's where the pixel sees none (tri holds at least one: InterpolateShaders::triangles).
inline void corners(const BufferUInt& tri, const Float& id, const UInt& base, UInt (&i)[3]) {
    UInt t = cast<uint32_t>(max(id, 1.0f)) - 1u;
    for (int k = 0; k < 3; ++k) i[k] = base + tri.read(t * 3u + uint32_t(k));
}

// rast's id at pixel p, 0 (none) where it is not one of tri's `triangles` (or NaN), which would read past tri: such a
// pixel's ~p goes into `bad` by atomic max (0: none; the op then raises, naming the first).
inline Float checked_id(const Float4& r, const UInt& triangles, const BufferUInt& bad, const UInt& p) {
    Bool valid = (r.w >= 0.0f) & (r.w <= cast<float>(triangles));   // NaN fails both
    $if (!valid) { bad.atomic(0u).fetch_max(~p); };
    return ite(valid, r.w, 0.0f);
}

// body(p, r) for each pixel p of a thread's run of kGradRun from `first` (the images' pixels in order, below
// `pixels`), r its rast: the backward kernels' loop.
template <typename Body>
void for_each_run_pixel(const UInt& first, const UInt& pixels, const BufferFloat4& rast, Body&& body) {
    $for (j, 0u, kGradRun) {
        UInt p = first + j;
        $if (p < pixels) { body(p, Float4(rast.read(p))); };
    };
}

// A thread a pixel, for attributes [a_first, a_end): the pixel's rast and triangle read once (a thread a (pixel,
// attribute) read them for each attribute: py_interpolate 19 ms at 1024x1024 with three).
auto interpolate_kernel() {
    return Kernel1D([](BufferFloat attr, BufferFloat4 rast, BufferUInt tri, UInt triangles, UInt attrs, UInt a_first,
                       UInt a_end, UInt pixels_per_image, UInt vertices, UInt batched, BufferFloat out,
                       BufferUInt bad) noexcept {
        UInt p = dispatch_id().x;
        Float4 r = rast.read(p);
        Float id = checked_id(r, triangles, bad, p);
        Float covered = ite(id > 0.0f, 1.0f, 0.0f);
        UInt i[3];
        corners(tri, id, ite(batched > 0u, p / pixels_per_image * vertices, 0u), i);
        $for (a, a_first, a_end) {
            Float a0 = attr.read(i[0] * attrs + a), a1 = attr.read(i[1] * attrs + a), a2 = attr.read(i[2] * attrs + a);
            out.write(p * attrs + a, covered * (r.x * a0 + r.y * a1 + (1.0f - r.x - r.y) * a2));
        };
    });
}

// A thread a run of kGradRun pixels (of the images' pixels in order), for attributes [a_first, a_end) W at a time
// (channels.h; a chunk's bounds are multiples of W). For each group, each pixel's d loss / d (u, v) from it goes into
// the pixel's rast gradient (written by the very first group, added to after), and the group's attribute gradients
// are summed over the run per vertex and added once a vertex (RunSums). Up to four attributes are one
// group: a pixel's rast, triangle and corners are read once for them. (A first pass for d (u, v) and then one an
// attribute took py_interpolate_backward 29 ms at 1024x1024 with three, now 15; a thread a (pixel, attribute),
// adding into the pixel's rast gradient by float atomics, 65 ms.)
template <int W>
auto interpolate_backward_kernel() {
    return Kernel1D([](BufferFloat attr, BufferFloat4 rast, BufferUInt tri, UInt attrs, UInt a_first, UInt a_end,
                       UInt pixels, UInt pixels_per_image, UInt vertices, UInt batched, BufferFloat grad_out,
                       BufferFloat grad_attr, BufferFloat4 grad_rast) noexcept {
        UInt first = dispatch_id().x * kGradRun;
        $for (a, a_first, a_end, uint32_t(W)) {
            RunSums<3, W> sums(grad_attr);
            for_each_run_pixel(first, pixels, rast, [&](const UInt& p, const Float4& r) {
                Float2 g_uv = make_float2(0.0f);
                $if (r.w > 0.0f) {
                    UInt i[3];
                    corners(tri, r.w, ite(batched > 0u, p / pixels_per_image * vertices, 0u), i);
                    Chan<W> g = read_channels<W>(grad_out, p * attrs + a);
                    Float2 uv = r.xy();
                    Chan<W> v0 = read_channels<W>(attr, i[0] * attrs + a);
                    Chan<W> v1 = read_channels<W>(attr, i[1] * attrs + a);
                    Chan<W> v2 = read_channels<W>(attr, i[2] * attrs + a);
                    Chan<W> gv[3];
                    $autodiff {
                        requires_grad(uv, v0, v1, v2);
                        backward(sum_channels<W>(g * (v0 * uv.x + v1 * uv.y + v2 * (1.0f - uv.x - uv.y))));
                        g_uv = grad(uv);
                        gv[0] = grad(v0);
                        gv[1] = grad(v1);
                        gv[2] = grad(v2);
                    };
                    for (int k = 0; k < 3; ++k) sums.add(k, i[k] * attrs + a, gv[k]);
                };
                $if (a == 0u) { grad_rast.write(p, make_float4(g_uv, 0.0f, 0.0f)); }
                $else { grad_rast.write(p, grad_rast.read(p) + make_float4(g_uv, 0.0f, 0.0f)); };
            });
            sums.finish();
        };
    });
}

// The image-space derivatives (d/dX, d/dY) of a group of attributes at a pixel whose triangle's corners hold v0, v1,
// v2, from the barycentrics' (rast_db d = (du/dX, du/dY, dv/dX, dv/dY)): a = v2 + u · (v0 − v2) + v · (v1 − v2), so
// da/dX = (v0 − v2) · du/dX + (v1 − v2) · dv/dX.
template <int W>
struct Derivatives {
    Chan<W> dx, dy;
};
template <int W>
Derivatives<W> attribute_derivatives(const Chan<W>& v0, const Chan<W>& v1, const Chan<W>& v2, const Float4& d) {
    Chan<W> e0 = v0 - v2, e1 = v1 - v2;
    return {e0 * d.x + e1 * d.z, e0 * d.y + e1 * d.w};
}

// W floats of `buf`, float c at at + offset[c]: a group of chosen attributes, which need not lie side by side.
template <int W>
Chan<W> gather_channels(const BufferFloat& buf, const UInt& at, const std::array<UInt, W>& offset) {
    Float v[W];
    for (int c = 0; c < W; ++c) v[c] = buf.read(at + offset[c]);
    if constexpr (W == 1) return v[0];
    else if constexpr (W == 2) return make_float2(v[0], v[1]);
    else if constexpr (W == 3) return make_float3(v[0], v[1], v[2]);
    else return make_float4(v[0], v[1], v[2], v[3]);
}

// A thread a pixel, for chosen attributes [c_first, c_end): the pixel's rast, rast_db and triangle read once (a
// thread a (pixel, chosen attribute) read them for each: py_interpolate_da 12 ms at 1024x1024 with two, now 10-12);
// out interleaves (d/dX, d/dY) per chosen attribute.
auto interpolate_da_kernel() {
    return Kernel1D([](BufferFloat attr, BufferFloat4 rast, BufferFloat4 db, BufferUInt tri, UInt triangles,
                       BufferUInt chosen, UInt attrs, UInt count, UInt c_first, UInt c_end, UInt pixels_per_image,
                       UInt vertices, UInt batched, BufferFloat2 out, BufferUInt bad) noexcept {
        UInt p = dispatch_id().x;
        Float4 r = rast.read(p), d = db.read(p);
        Float id = checked_id(r, triangles, bad, p);
        Float covered = ite(id > 0.0f, 1.0f, 0.0f);
        UInt i[3];
        corners(tri, id, ite(batched > 0u, p / pixels_per_image * vertices, 0u), i);
        $for (k, c_first, c_end) {
            UInt a = chosen.read(k);
            Derivatives<1> e = attribute_derivatives<1>(attr.read(i[0] * attrs + a), attr.read(i[1] * attrs + a),
                                                        attr.read(i[2] * attrs + a), d);
            out.write(p * count + k, covered * make_float2(e.dx, e.dy));
        };
    });
}

// A thread a run of kGradRun pixels (the images' pixels in order), over chosen attributes [c_first, c_end) W at a time
// (a chunk's bounds are multiples of W): each pixel's rast_db gradient (written by the very first group, added to
// after), and the group's attribute gradients summed over the run per vertex and added once a vertex (RunSums). A
// thread a pixel, adding each chosen attribute's three vertex gradients by float atomics, took
// py_interpolate_da_backward 26 ms at 1024x1024 with two, now 15.
template <int W>
auto interpolate_da_backward_kernel() {
    return Kernel1D([](BufferFloat attr, BufferFloat4 rast, BufferFloat4 db, BufferUInt tri, BufferUInt chosen,
                       UInt attrs, UInt count, UInt c_first, UInt c_end, UInt pixels, UInt pixels_per_image,
                       UInt vertices, UInt batched, BufferFloat grad_out, BufferFloat grad_attr,
                       BufferFloat4 grad_db) noexcept {
        UInt first = dispatch_id().x * kGradRun;
        $for (k, c_first, c_end, uint32_t(W)) {
            std::array<UInt, W> a, offset;   // the group's attributes, and where each lies from the first
            for (int c = 0; c < W; ++c) {
                a[c] = chosen.read(k + uint32_t(c));
                offset[c] = a[c] - a[0];
            }
            RunSums<3, W> sums(grad_attr, offset);
            for_each_run_pixel(first, pixels, rast, [&](const UInt& p, const Float4& r) {
                Float4 gd = make_float4(0.0f);
                $if (r.w > 0.0f) {
                    UInt i[3];
                    corners(tri, r.w, ite(batched > 0u, p / pixels_per_image * vertices, 0u), i);
                    Float4 d = db.read(p);
                    Chan<W> v[3], gv[3];
                    for (int n = 0; n < 3; ++n) v[n] = gather_channels<W>(attr, i[n] * attrs + a[0], offset);
                    std::array<UInt, W> ox, oy;   // d loss / d (d/dX, d/dY) interleave per chosen attribute
                    for (int c = 0; c < W; ++c) {
                        ox[c] = 2u * uint32_t(c);
                        oy[c] = 2u * uint32_t(c) + 1u;
                    }
                    Chan<W> gx = gather_channels<W>(grad_out, (p * count + k) * 2u, ox),
                            gy = gather_channels<W>(grad_out, (p * count + k) * 2u, oy);
                    $autodiff {
                        requires_grad(d, v[0], v[1], v[2]);
                        Derivatives<W> e = attribute_derivatives<W>(v[0], v[1], v[2], d);
                        backward(sum_channels<W>(gx * e.dx + gy * e.dy));
                        gd = grad(d);
                        for (int n = 0; n < 3; ++n) gv[n] = grad(v[n]);
                    };
                    for (int n = 0; n < 3; ++n) sums.add(n, i[n] * attrs + a[0], gv[n]);
                };
                $if (k == 0u) { grad_db.write(p, gd); }
                $else { grad_db.write(p, grad_db.read(p) + gd); };
            });
            sums.finish();
        };
    });
}

// The kernels; the backward compiled on first use for each group width (a call compiles only what it runs).
struct InterpolateShaders {
    Shader<1> interpolate, interpolate_da;
    std::optional<Shader<1>> backward[4], da_backward[4];   // [W - 1]

    Shader<1>& backward_for(Device& device, uint32_t w) {
        return with_group_width(w, [&]<int W>() -> Shader<1>& {
            return get(device, backward[W - 1], interpolate_backward_kernel<W>(), "py_interpolate_backward", W);
        });
    }
    Shader<1>& da_backward_for(Device& device, uint32_t w) {
        return with_group_width(w, [&]<int W>() -> Shader<1>& {
            return get(device, da_backward[W - 1], interpolate_da_backward_kernel<W>(), "py_interpolate_da_backward",
                       W);
        });
    }

private:
    template <typename K>
    static Shader<1>& get(Device& device, std::optional<Shader<1>>& slot, const K& kernel, const std::string& name,
                          int w) {
        if (!slot) slot.emplace(device.compile(kernel, {.name = name + (w > 1 ? "_" + std::to_string(w) : "")}));
        return *slot;
    }
};

InterpolateShaders& shaders(Runtime& rt) {
    if (!rt.interpolate_shaders)
        rt.interpolate_shaders = std::make_shared<InterpolateShaders>(InterpolateShaders{
            rt.device.compile(interpolate_kernel(), {.name = "py_interpolate"}),
            rt.device.compile(interpolate_da_kernel(), {.name = "py_interpolate_da"}), {}, {}});
    return *static_cast<InterpolateShaders*>(rt.interpolate_shaders.get());
}

// tri on the device, with at least one triangle (zeros where it has none): the kernels read a pixel's corners
// whatever it sees, triangle 0's where it sees none.
Buffer<uint32_t> upload_triangles(Runtime& rt, Stream& stream, const UArray& tri) {
    const size_t n = size_t(tri.shape(0)) * 3;
    if (n) return upload<uint32_t>(rt, stream, tri, n, "tri");
    auto t = device_buffer<uint32_t>(rt, 3, "tri");
    stream << t.fill_zero();
    return t;
}

// After the forward kernels (checked_id): a ValueError naming the first pixel whose triangle id is not one of tri's.
void expect_triangle_ids(uint32_t bad, const FArray& rast, size_t triangles) {
    if (!bad) return;
    const uint32_t p = ~bad;
    std::ostringstream m;
    m << "rast: pixel " << p << " holds triangle id + 1 = " << rast.data()[4 * size_t(p) + 3] << ", where tri has "
      << triangles << " triangles";
    throw py::value_error(m.str());
}

} // namespace

void bind_interpolate_ops(py::module_& m) {
    // attr [Ba, V, A] (Ba 1: shared), rast [B, H, W, 4] -> [B, H, W, A]; with grad given, the backward:
    // (d attr [Ba, V, A], d rast [B, H, W, 4]).
    m.def("_interpolate", [](const FArray& attr, const FArray& rast, const UArray& tri, bool batched,
                             std::optional<FArray> grad) -> py::object {
        auto rt = runtime();
        OpStream op(*rt);
        Stream& stream = *op;
        const uint32_t vertices = uint32_t(attr.shape(1)), attrs = uint32_t(attr.shape(2));
        const uint32_t batch = uint32_t(rast.shape(0)), height = uint32_t(rast.shape(1)), width = uint32_t(rast.shape(2));
        const size_t pixels = size_t(batch) * height * width;
        auto a = upload<float>(*rt, stream, attr, size_t(attr.size()), "attr");
        auto r = upload<float4>(*rt, stream, rast, pixels, "rast");
        auto t = upload_triangles(*rt, stream, tri);
        const uint32_t triangles = uint32_t(tri.shape(0));
        if (!grad) {
            auto o = device_buffer<float>(*rt, pixels * attrs, "out");
            auto bad = device_buffer<uint32_t>(*rt, 1, "bad");
            uint32_t flag = 0;
            FArray out(std::vector<py::ssize_t>{batch, height, width, attrs});
            stream << bad.fill_zero();
            for (uint32_t first = 0; first < attrs; first += kAttrChunk)
                stream << shaders(*rt).interpolate(a, r, t, triangles, attrs, first,
                                                   std::min(attrs, first + kAttrChunk), height * width, vertices,
                                                   uint32_t(batched), o, bad)
                              .dispatch(pixels);
            copy_out(stream, o, out);
            stream << bad.copy_to(&flag) << synchronize();
            expect_triangle_ids(flag, rast, triangles);
            return out;
        }
        auto g = upload<float>(*rt, stream, *grad, pixels * attrs, "grad");
        auto ga_buffer = device_buffer<float>(*rt, std::max<size_t>(size_t(attr.size()), 1), "attr gradient");
        auto gr_buffer = device_buffer<float4>(*rt, pixels, "rast gradient");
        stream << ga_buffer.fill_zero();
        FArray ga(std::vector<py::ssize_t>{attr.shape(0), vertices, attrs}), gr(std::vector<py::ssize_t>{batch, height, width, 4});
        // Chunks of whole groups; without attributes rast's gradient is 0.
        const uint32_t w = group_width(attrs), chunk = kAttrChunk / w * w;
        if (attrs == 0) stream << gr_buffer.fill_zero();
        for (uint32_t first = 0; first < attrs; first += chunk)
            stream << shaders(*rt).backward_for(rt->device, w)(a, r, t, attrs, first, std::min(attrs, first + chunk),
                                                               uint32_t(pixels), height * width, vertices,
                                                               uint32_t(batched), g, ga_buffer, gr_buffer)
                          .dispatch((pixels + kGradRun - 1) / kGradRun);
        copy_out(stream, ga_buffer, ga);
        copy_out(stream, gr_buffer, gr);
        stream << synchronize();
        return py::make_tuple(ga, gr);
    }, py::arg("attr"), py::arg("rast"), py::arg("tri"), py::arg("batched"), py::arg("grad") = py::none());
    // attr [Ba, V, A], rast and db [B, H, W, 4], chosen attribute indices -> [B, H, W, 2 · len(chosen)]; with
    // grad given, the backward: (d attr [Ba, V, A], d db [B, H, W, 4]).
    m.def("_interpolate_da", [](const FArray& attr, const FArray& rast, const FArray& db, const UArray& tri,
                                const UArray& chosen, bool batched, std::optional<FArray> grad) -> py::object {
        auto rt = runtime();
        OpStream op(*rt);
        Stream& stream = *op;
        const uint32_t vertices = uint32_t(attr.shape(1)), attrs = uint32_t(attr.shape(2)), count = uint32_t(chosen.size());
        const uint32_t batch = uint32_t(rast.shape(0)), height = uint32_t(rast.shape(1)), width = uint32_t(rast.shape(2));
        const size_t pixels = size_t(batch) * height * width;
        auto r = upload<float4>(*rt, stream, rast, pixels, "rast");
        auto t = upload_triangles(*rt, stream, tri);
        const uint32_t triangles = uint32_t(tri.shape(0));
        auto c = upload<uint32_t>(*rt, stream, chosen, count, "chosen");
        const uint32_t per_image = height * width;
        if (!grad) {
            auto a = upload<float>(*rt, stream, attr, size_t(attr.size()), "attr");
            auto d = upload<float4>(*rt, stream, db, pixels, "db");
            auto o = device_buffer<float2>(*rt, pixels * count, "out_da");
            auto bad = device_buffer<uint32_t>(*rt, 1, "bad");
            uint32_t flag = 0;
            FArray out(std::vector<py::ssize_t>{batch, height, width, 2 * count});
            stream << bad.fill_zero();
            for (uint32_t first = 0; first < count; first += kAttrChunk)
                stream << shaders(*rt).interpolate_da(a, r, d, t, triangles, c, attrs, count, first,
                                                      std::min(count, first + kAttrChunk), per_image, vertices,
                                                      uint32_t(batched), o, bad)
                              .dispatch(pixels);
            copy_out(stream, o, out);
            stream << bad.copy_to(&flag) << synchronize();
            expect_triangle_ids(flag, rast, triangles);
            return out;
        }
        auto a = upload<float>(*rt, stream, attr, size_t(attr.size()), "attr");
        auto d = upload<float4>(*rt, stream, db, pixels, "db");
        auto ga_buffer = device_buffer<float>(*rt, std::max<size_t>(size_t(attr.size()), 1), "attr gradient");
        auto gd_buffer = device_buffer<float4>(*rt, std::max<size_t>(pixels, 1), "rast_db gradient");
        auto g = upload<float>(*rt, stream, *grad, pixels * count * 2, "grad");
        stream << ga_buffer.fill_zero();
        FArray ga(std::vector<py::ssize_t>{attr.shape(0), vertices, attrs}), gd(std::vector<py::ssize_t>{batch, height, width, 4});
        // Chunks of whole groups; without chosen attributes rast_db's gradient is 0.
        const uint32_t w = group_width(count), chunk = kAttrChunk / w * w;
        if (count == 0) stream << gd_buffer.fill_zero();
        for (uint32_t first = 0; first < count; first += chunk)
            stream << shaders(*rt).da_backward_for(rt->device, w)(a, r, d, t, c, attrs, count, first,
                                                                  std::min(count, first + chunk), uint32_t(pixels),
                                                                  per_image, vertices, uint32_t(batched), g,
                                                                  ga_buffer, gd_buffer)
                          .dispatch((pixels + kGradRun - 1) / kGradRun);
        copy_out(stream, ga_buffer, ga);
        copy_out(stream, gd_buffer, gd);
        stream << synchronize();
        return py::make_tuple(ga, gd);
    }, py::arg("attr"), py::arg("rast"), py::arg("db"), py::arg("tri"), py::arg("chosen"), py::arg("batched"),
       py::arg("grad") = py::none());
}

} // namespace adjoint::python
