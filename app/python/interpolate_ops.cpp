// nvdiffrast's interpolate for adjoint.torch, with its image-space derivatives (rast_db, diff_attrs): engine
// kernels over host arrays, forward in plain DSL, backward the same DSL inside $autodiff. Conventions as
// raster_ops.cpp's: rast [B, H, W, 4] = (u, v, z/w, triangle_id + 1), (u, v) weighing the triangle's first two
// vertices and 1 − u − v the third; attributes [Ba, V, A], Ba 1 for one set shared by every image.
#include "channels.h"
#include "runtime.h"

#include <algorithm>
#include <optional>
#include <string>

namespace adjoint::python {

namespace {

// Attributes a dispatch of interpolate's kernels takes: a thread's loops stay within lavapipe's budget.
constexpr uint32_t kAttrChunk = 1024;

// A thread a pixel, for attributes [a_first, a_end): the pixel's rast and triangle read once (a thread a (pixel,
// attribute) read them for each attribute: py_interpolate 19 ms at 1024x1024 with three).
auto interpolate_kernel() {
    return Kernel1D([](BufferFloat attr, BufferFloat4 rast, BufferUInt tri, UInt attrs, UInt a_first, UInt a_end,
                       UInt pixels_per_image, UInt vertices, UInt batched, BufferFloat out) noexcept {
        UInt p = dispatch_id().x;
        Float4 r = rast.read(p);
        Float covered = ite(r.w > 0.0f, 1.0f, 0.0f);
        UInt base = ite(batched > 0u, p / pixels_per_image * vertices, 0u);
        UInt t = cast<uint32_t>(max(r.w, 1.0f)) - 1u;
        UInt i[3] = {base + tri.read(t * 3u), base + tri.read(t * 3u + 1u), base + tri.read(t * 3u + 2u)};
        $for (a, a_first, a_end) {
            Float a0 = attr.read(i[0] * attrs + a), a1 = attr.read(i[1] * attrs + a), a2 = attr.read(i[2] * attrs + a);
            out.write(p * attrs + a, covered * (r.x * a0 + r.y * a1 + (1.0f - r.x - r.y) * a2));
        };
    });
}

// A thread a run of kGradRun pixels (of the images' pixels in order), for attributes [a_first, a_end) W at a time
// (channels.h; a chunk's bounds are multiples of W). For each group, each pixel's d loss / d (u, v) from it goes into
// the pixel's rast gradient (written by the very first group, added to after), and the group's attribute gradients
// are summed over the run per vertex triple and added once a triple (VertexRunSums). Up to four attributes are one
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
            VertexRunSums<W> sums(grad_attr, attrs, a);
            $for (j, 0u, kGradRun) {
                UInt p = first + j;
                $if (p < pixels) {
                    Float4 r = rast.read(p);
                    Float2 g_uv = make_float2(0.0f);
                    $if (r.w > 0.0f) {
                        // The corners of the triangle the pixel sees.
                        UInt base = ite(batched > 0u, p / pixels_per_image * vertices, 0u);
                        UInt t = cast<uint32_t>(max(r.w, 1.0f)) - 1u;
                        UInt i[3];
                        for (int k = 0; k < 3; ++k) i[k] = base + tri.read(t * 3u + uint32_t(k));
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
                        sums.add(i, [&](int k, int c) { return channel<W>(gv[k], c); });
                    };
                    $if (a == 0u) { grad_rast.write(p, make_float4(g_uv, 0.0f, 0.0f)); }
                    $else { grad_rast.write(p, grad_rast.read(p) + make_float4(g_uv, 0.0f, 0.0f)); };
                };
            };
            sums.finish();
        };
    });
}

// The image-space derivatives of one chosen attribute at one pixel, (d/dX, d/dY) from the barycentrics' (rast_db):
// a = a2 + u · (a0 − a2) + v · (a1 − a2), so da/dX = (a0 − a2) · du/dX + (a1 − a2) · dv/dX.
template <typename Attr, typename Db>
Float2 attribute_derivatives(const Attr& attr, const BufferFloat4& rast, const Db& db, const BufferUInt& tri,
                             const UInt& p, const UInt& a, const UInt& attrs, const UInt& base) {
    Float4 r = rast.read(p);
    UInt t = cast<uint32_t>(max(r.w, 1.0f)) - 1u;
    Float a0 = attr.read((base + tri.read(t * 3u)) * attrs + a), a1 = attr.read((base + tri.read(t * 3u + 1u)) * attrs + a),
          a2 = attr.read((base + tri.read(t * 3u + 2u)) * attrs + a);
    Float4 d = db.read(p);
    Float covered = ite(r.w > 0.0f, 1.0f, 0.0f);
    return covered * make_float2((a0 - a2) * d.x + (a1 - a2) * d.z, (a0 - a2) * d.y + (a1 - a2) * d.w);
}

// One thread per (pixel, chosen attribute); out_da interleaves (d/dX, d/dY) per chosen attribute.
auto interpolate_da_kernel() {
    return Kernel1D([](BufferFloat attr, BufferFloat4 rast, BufferFloat4 db, BufferUInt tri, BufferUInt chosen,
                       UInt attrs, UInt count, UInt pixels_per_image, UInt vertices, UInt batched,
                       BufferFloat2 out) noexcept {
        UInt i = dispatch_id().x;
        UInt p = i / count;
        UInt base = ite(batched > 0u, p / pixels_per_image * vertices, 0u);
        out.write(i, attribute_derivatives(attr, rast, db, tri, p, chosen.read(i % count), attrs, base));
    });
}

// A pixel's rast_db held in a variable, read as attribute_derivatives reads the buffer.
struct HeldFloat4 {
    Float4 v;
    Float4 read(const UInt&) const { return v; }
};

// A thread a pixel, over chosen attributes [c_first, c_end): the pixel's rast_db gradient sums in registers and is
// written once (added to the earlier chunks'), where a thread a (pixel, chosen attribute) added it by float atomics;
// the attributes' gradients go in by atomics.
auto interpolate_da_backward_kernel() {
    return Kernel1D([](DiffBufferFloat attr, BufferFloat4 rast, BufferFloat4 db, BufferUInt tri, BufferUInt chosen,
                       UInt attrs, UInt count, UInt c_first, UInt c_end, UInt pixels_per_image, UInt vertices,
                       UInt batched, BufferFloat2 grad_out, BufferFloat4 grad_db) noexcept {
        UInt p = dispatch_id().x;
        UInt base = ite(batched > 0u, p / pixels_per_image * vertices, 0u);
        HeldFloat4 d{db.read(p)};
        Float4 gd = ite(c_first > 0u, grad_db.read(p), make_float4(0.0f));
        $if (rast.read(p).w > 0.0f) {
            $for (k, c_first, c_end) {
                Float2 g = grad_out.read(p * count + k);
                $autodiff {
                    requires_grad(d.v);
                    backward(dot(g, attribute_derivatives(attr, rast, d, tri, p, chosen.read(k), attrs, base)));
                    gd = gd + grad(d.v);
                };
            };
        };
        grad_db.write(p, gd);
    });
}

// The kernels; the backward compiled on first use for each group width (a call compiles only what it runs).
struct InterpolateShaders {
    Shader<1> interpolate, interpolate_da, interpolate_da_backward;
    std::optional<Shader<1>> backward[4];   // [W - 1]

    template <int W>
    Shader<1>& get_backward(Device& device) {
        if (!backward[W - 1])
            backward[W - 1].emplace(device.compile(interpolate_backward_kernel<W>(),
                                                   {.name = "py_interpolate_backward" +
                                                            (W > 1 ? "_" + std::to_string(W) : std::string())}));
        return *backward[W - 1];
    }
    Shader<1>& backward_for(Device& device, uint32_t w) {
        return with_group_width(w, [&]<int W>() -> Shader<1>& { return get_backward<W>(device); });
    }
};

InterpolateShaders& shaders(Runtime& rt) {
    if (!rt.interpolate_shaders)
        rt.interpolate_shaders = std::make_shared<InterpolateShaders>(InterpolateShaders{
            rt.device.compile(interpolate_kernel(), {.name = "py_interpolate"}),
            rt.device.compile(interpolate_da_kernel(), {.name = "py_interpolate_da"}),
            rt.device.compile(interpolate_da_backward_kernel(), {.name = "py_interpolate_da_backward"}), {}});
    return *static_cast<InterpolateShaders*>(rt.interpolate_shaders.get());
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
        auto t = upload<uint32_t>(*rt, stream, tri, size_t(tri.shape(0)) * 3, "tri");
        if (!grad) {
            auto o = rt->device.create_buffer<float>(pixels * attrs);
            FArray out(std::vector<py::ssize_t>{batch, height, width, attrs});
            for (uint32_t first = 0; first < attrs; first += kAttrChunk)
                stream << shaders(*rt).interpolate(a, r, t, attrs, first, std::min(attrs, first + kAttrChunk),
                                                   height * width, vertices, uint32_t(batched), o)
                              .dispatch(pixels);
            stream << o.copy_to(out.mutable_data()) << synchronize();
            return out;
        }
        auto g = upload<float>(*rt, stream, *grad, pixels * attrs, "grad");
        auto ga_buffer = rt->device.create_buffer<float>(std::max<size_t>(size_t(attr.size()), 1));
        auto gr_buffer = rt->device.create_buffer<float4>(pixels);
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
        stream << ga_buffer.copy_to(ga.mutable_data()) << gr_buffer.copy_to(gr.mutable_data()) << synchronize();
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
        auto t = upload<uint32_t>(*rt, stream, tri, size_t(tri.shape(0)) * 3, "tri");
        auto c = upload<uint32_t>(*rt, stream, chosen, count, "chosen");
        const uint32_t per_image = height * width;
        if (!grad) {
            auto a = upload<float>(*rt, stream, attr, size_t(attr.size()), "attr");
            auto d = upload<float4>(*rt, stream, db, pixels, "db");
            auto o = rt->device.create_buffer<float2>(pixels * count);
            FArray out(std::vector<py::ssize_t>{batch, height, width, 2 * count});
            stream << shaders(*rt).interpolate_da(a, r, d, t, c, attrs, count, per_image, vertices, uint32_t(batched), o)
                          .dispatch(pixels * count)
                   << o.copy_to(out.mutable_data()) << synchronize();
            return out;
        }
        auto a = upload_diff<float>(*rt, stream, attr, size_t(attr.size()), "attr");
        auto d = upload<float4>(*rt, stream, db, pixels, "db");
        auto gd_buffer = rt->device.create_buffer<float4>(std::max<size_t>(pixels, 1));
        auto g = upload<float2>(*rt, stream, *grad, pixels * count, "grad");
        FArray ga(std::vector<py::ssize_t>{attr.shape(0), vertices, attrs}), gd(std::vector<py::ssize_t>{batch, height, width, 4});
        for (uint32_t first = 0; first < std::max(count, 1u); first += kAttrChunk)
            stream << shaders(*rt).interpolate_da_backward(a, r, d, t, c, attrs, count, first,
                                                           std::min(count, first + kAttrChunk), per_image, vertices,
                                                           uint32_t(batched), g, gd_buffer)
                          .dispatch(pixels);
        stream << a.grad.copy_to(ga.mutable_data()) << gd_buffer.copy_to(gd.mutable_data()) << synchronize();
        return py::make_tuple(ga, gd);
    }, py::arg("attr"), py::arg("rast"), py::arg("db"), py::arg("tri"), py::arg("chosen"), py::arg("batched"),
       py::arg("grad") = py::none());
}

} // namespace adjoint::python
