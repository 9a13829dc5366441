// nvdiffrast's antialias for adjoint.torch: analytic antialiasing of silhouette edges over clip-space
// positions. The forward pass lists the pairs that walk and those that blend, and each pixel gathers its blends;
// the backward pass is $autodiff of each listed blend (gradients to the colours and, through where each edge
// crosses a pixel pair, to the positions).
//
// The method is the one app/src/render/antialias_dsl.h applies to the scene renderer, whose walk it shares
// (walk_to_silhouette, <adjoint/app/screen_edges.h>), over nvdiffrast's inputs (clip-space pos, rast's triangle ids and z/w, a topology table instead of the scene's
// geometry tables): two neighbouring pixels that see different triangles are a pair; the nearer triangle
// (smaller z/w; a covered pixel beats an empty one) is the occluder. The segment from its pixel centre i to
// the other centre o is walked across shared edges whose neighbour faces the same way (at most kWalk
// triangles) until it leaves through a silhouette edge, which crosses it at s in [0, 1]; the pair is then
// blended as a box filter along the segment: s > 1/2 moves pixel o towards i's colour by s − 1/2, else pixel
// i moves towards o's colour by 1/2 − s. For an edge across the pair's direction this is the pixel's exact
// area coverage. Edges with a vertex at w <= 0 are not blended.
#include "runtime.h"

#include <adjoint/app/screen_edges.h>

#include <algorithm>
#include <optional>

namespace adjoint::python {

namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;
constexpr uint32_t kWalk = 4;

struct AaInputs {
    const BufferFloat4& pos;    // plain values, for the walk
    const BufferUInt& tri;      // [T * 3]
    const BufferUInt& topo;     // [T * 6]: the triangle across edge k (opposite vertex k), then its far vertex
    const BufferFloat4& rast;   // [B * H * W]
    UInt width, height, base;   // base: the image's first vertex (0 when pos is shared)
};

// A clip-space position in pixel units (x right, y up from the bottom row), as rast's pixel centres are.
Float2 to_pixel(const Float4& p, const UInt& width, const UInt& height) {
    Float inv = 1.0f / p.w;
    return make_float2((p.x * inv * 0.5f + 0.5f) * cast<float>(width), (p.y * inv * 0.5f + 0.5f) * cast<float>(height));
}

struct PairEdge {
    UInt found = 0u;
    UInt va = 0u, vb = 0u;   // the silhouette edge's vertices (indices into tri's space)
    UInt ii = 0u, io = 0u;   // pixel indices: the occluder's and the other one
    Float2 ci, co;           // the two pixel centres
};

// rast's image and the topology table as walk_to_silhouette's mesh (<adjoint/app/screen_edges.h>).
struct TopologyMesh {
    const AaInputs& in;
    const Float2& near;   // a pixel of the walk: the edges' origin, where their terms are small
    UInt3 triangle(const UInt& tri) const {
        return make_uint3(in.tri.read(tri * 3u), in.tri.read(tri * 3u + 1u), in.tri.read(tri * 3u + 2u));
    }
    // In homogeneous pixel coordinates (x right, y up, as to_pixel) about pixel position o.
    Float3 point(const Float4& q, const Float2& o) const {
        return make_float3((q.x * 0.5f + q.w * 0.5f) * cast<float>(in.width) - q.w * o.x,
                           (q.y * 0.5f + q.w * 0.5f) * cast<float>(in.height) - q.w * o.y, q.w);
    }
    // A corner behind the camera stops the walk (valid = false), as nvdiffrast's antialias does.
    void edges(const UInt&, const UInt3& t, Float3 (&e)[3], Float2& origin, Bool& valid) const {
        Float4 q[3] = {in.pos.read(in.base + t.x), in.pos.read(in.base + t.y), in.pos.read(in.base + t.z)};
        valid = (q[0].w > 0.0f) & (q[1].w > 0.0f) & (q[2].w > 0.0f);
        origin = near;
        Float3 h[3] = {point(q[0], near), point(q[1], near), point(q[2], near)};
        for (int k = 0; k < 3; ++k) e[k] = app::homogeneous_line(h[(k + 1) % 3], h[(k + 2) % 3]);
        Float turn = ite(dot(h[0], e[0]) < 0.0f, -1.0f, 1.0f);
        for (int k = 0; k < 3; ++k) e[k] = e[k] * turn;
    }
    UInt neighbor(const UInt& tri, const UInt& k) const { return in.topo.read(tri * 6u + k); }
    UInt far_vertex(const UInt& tri, const UInt& k) const { return in.topo.read(tri * 6u + 3u + k); }
    Float3 vertex_point(const UInt& v, Bool& valid) const {
        Float4 q = in.pos.read(in.base + v);
        valid = q.w > 0.0f;
        return point(q, make_float2(0.0f));
    }
};

// The silhouette edge between pixels a and b (indices `ia`, `ib`, centres `ca`, `cb`), found on plain values.
PairEdge pair_edge(const AaInputs& in, const UInt& ia, const UInt& ib, const Float2& ca, const Float2& cb,
                   Bool horizontal) {
    PairEdge e;
    Float4 ra = in.rast.read(ia), rb = in.rast.read(ib);
    UInt ta = cast<uint32_t>(ra.w), tb = cast<uint32_t>(rb.w);   // triangle id + 1, 0 for none
    $if (ta != tb) {
        Bool at_a = (ta != 0u) & ((tb == 0u) | (ra.z < rb.z));
        UInt cur = ite(at_a, ta, tb) - 1u, seen_at_o = ite(at_a, tb, ta) - 1u;   // kNone when empty
        e.ii = ite(at_a, ia, ib);
        e.io = ite(at_a, ib, ia);
        e.ci = ite(at_a, ca, cb);
        e.co = ite(at_a, cb, ca);
        app::SilhouetteEdge w =
            app::walk_to_silhouette(TopologyMesh{in, e.ci}, cur, seen_at_o, e.ci, e.co, horizontal, kWalk);
        e.found = w.found;
        e.va = w.va;
        e.vb = w.vb;
    };
    return e;
}

// A found pair's blend: `target` (kNone when none) moves towards `source` by `weight`. Differentiable in pos.
template <typename P>
void pair_weight(const P& pos, const AaInputs& in, const PairEdge& e, UInt& target, UInt& source, Float& weight) {
    target = kNone;
    source = 0u;
    weight = 0.0f;
    $if (e.found == 1u) {
        Float2 a = to_pixel(pos.read(in.base + e.va), in.width, in.height);
        Float2 b = to_pixel(pos.read(in.base + e.vb), in.width, in.height);
        Float ei = app::edge_function(a, b, e.ci), eo = app::edge_function(a, b, e.co);   // s: either sign
        Float s = clamp(ei / (ei - eo), 0.0f, 1.0f);
        $if (s > 0.5f) {
            target = e.io;
            source = e.ii;
            weight = s - 0.5f;
        }
        $else {
            target = e.ii;
            source = e.io;
            weight = 0.5f - s;
        };
    };
}

Float2 centre(const UInt2& p) { return make_float2(cast<float>(p.x) + 0.5f, cast<float>(p.y) + 0.5f); }

// The kernels run over lists, not over every pixel: a pair of pixels that see different triangles walks (a
// fifth of the pairs or fewer, most of them inner edges), a pair whose walk ends on a silhouette blends (a few
// percent). One thread a pixel that walked wherever its pairs needed it made every SIMD group of 8 pixels with one
// such pair run the walk under a mask: the forward pass took 65-70 ms at 1024x1024 (a 6,400-triangle sphere),
// the backward 40 (tools/bench/torch_megapixel.py). Pair e = 2a + k is pixel a's pair with its right neighbour
// (k = 0) or the one above it (k = 1).
constexpr uint32_t kRun = 16;   // pixels of a row one thread of the pairs kernel lists (one atomic a run)
constexpr uint32_t kStride = 8; // list entries a thread of the walk and blend kernels takes

UInt2 pair_pixels(const UInt& e, const UInt& width) {   // the pair's two pixel indices, lower one first
    UInt a = e >> 1u;
    return make_uint2(a, ite((e & 1u) == 0u, a + 1u, a + width));
}
UInt2 pixel_xy(const UInt& at, const UInt& width, const UInt& height) {   // column, row within its image
    return make_uint2(at % width, (at / width) % height);
}

// Lists pair e wherever its two pixels see different triangles (or a triangle and nothing): a thread a run of kRun
// pixels of a row, with one atomic for the run.
auto pairs_kernel() {
    return Kernel2D([](BufferFloat4 rast, UInt width, UInt height, BufferUInt walks, BufferUInt count) noexcept {
        UInt y = dispatch_id().y, x0 = dispatch_id().x * kRun;
        Bool has_up = (y % height) + 1u < height;
        UInt flags = 0u, n = 0u;   // bit 2i + k: pair k of the run's pixel i
        $for (i, 0u, kRun) {
            UInt x = x0 + i, at = y * width + x;
            $if (x < width) {
                UInt t = cast<uint32_t>(rast.read(at).w);
                Bool has_right = x + 1u < width;
                UInt right = ite(has_right, cast<uint32_t>(rast.read(ite(has_right, at + 1u, at)).w), t);
                UInt up = ite(has_up, cast<uint32_t>(rast.read(ite(has_up, at + width, at)).w), t);
                UInt take_right = ite(right != t, 1u, 0u), take_up = ite(up != t, 1u, 0u);
                flags = flags | (take_right << (2u * i)) | (take_up << (2u * i + 1u));
                n = n + take_right + take_up;
            };
        };
        $if (n > 0u) {
            UInt slot = count.atomic(0u).fetch_add(n);
            $for (b, 0u, 2u * kRun) {
                $if (((flags >> b) & 1u) != 0u) {
                    walks.write(slot, 2u * (y * width + x0) + b);
                    slot = slot + 1u;
                };
            };
        };
    });
}

// A blend as the walk kernel lists it: (e, the silhouette edge's vertices va and vb, bits): bit 0 set when the
// pair's lower pixel is the occluder's.
PairEdge edge_of(const UInt4& r, const UInt& width, const UInt& height) {
    UInt2 ab = pair_pixels(r.x, width);
    Bool lower = (r.w & 1u) != 0u;
    PairEdge e;
    e.found = 1u;
    e.va = r.y;
    e.vb = r.z;
    e.ii = ite(lower, ab.x, ab.y);
    e.io = ite(lower, ab.y, ab.x);
    e.ci = centre(pixel_xy(e.ii, width, height));
    e.co = centre(pixel_xy(e.io, width, height));
    return e;
}

AaInputs inputs_of(const BufferFloat4& pos, const BufferUInt& tri, const BufferUInt& topo, const BufferFloat4& rast,
                   const UInt& width, const UInt& height, const UInt& vertices, const UInt& batched, const UInt& at) {
    return AaInputs{pos, tri, topo, rast, width, height, ite(batched > 0u, at / (width * height) * vertices, 0u)};
}

// Each listed pair walks to its silhouette edge (pair_edge); a pair that finds one is listed as a blend, while
// `capacity` holds them (the host refuses the call past it).
auto walk_kernel() {
    return Kernel1D([](BufferFloat4 pos, BufferUInt tri, BufferUInt topo, BufferFloat4 rast, UInt width, UInt height,
                       UInt vertices, UInt batched, BufferUInt walks, BufferUInt count, UInt capacity,
                       BufferVar<uint4> blends) noexcept {
        $for (i, dispatch_id().x, count.read(0u), dispatch_size().x) {
            UInt e = walks.read(i);
            UInt2 ab = pair_pixels(e, width);
            AaInputs in = inputs_of(pos, tri, topo, rast, width, height, vertices, batched, ab.x);
            PairEdge pe = pair_edge(in, ab.x, ab.y, centre(pixel_xy(ab.x, width, height)),
                                    centre(pixel_xy(ab.y, width, height)), (e & 1u) == 0u);
            $if (pe.found == 1u) {
                UInt slot = count.atomic(1u).fetch_add(1u);
                $if (slot < capacity) {
                    UInt bits = ite(pe.ii == ab.x, 1u, 0u);
                    blends.write(slot, make_uint4(e, pe.va, pe.vb, bits));
                };
            };
        };
    });
}

// Each blend's weight into its pair's slot of `weights` (zero elsewhere): positive when the pair's upper pixel
// moves, negative when its lower one does.
auto blend_kernel() {
    return Kernel1D([](BufferFloat4 pos, BufferUInt tri, BufferUInt topo, BufferFloat4 rast, UInt width, UInt height,
                       UInt vertices, UInt batched, BufferVar<uint4> blends, UInt n, BufferFloat weights) noexcept {
        $for (i, dispatch_id().x, n, dispatch_size().x) {
            UInt4 r = blends.read(i);
            PairEdge e = edge_of(r, width, height);
            AaInputs in = inputs_of(pos, tri, topo, rast, width, height, vertices, batched, e.ii);
            UInt target = kNone, source = 0u;
            Float weight = 0.0f;
            pair_weight(pos, in, e, target, source, weight);
            weights.write(r.x, ite(target == pair_pixels(r.x, width).y, weight, -weight));
        };
    });
}

// The antialiased colours of pixel `at`: its own plus the blends of its four pairs that move it (left, right,
// below, above: the order the sums always took), C channels.
void gather_pixel(const BufferFloat& color, const BufferFloat& weights, const UInt& channels, const UInt& width,
                  const UInt& height, const UInt& at, const BufferFloat& out) {
    UInt2 xy = pixel_xy(at, width, height);
    Bool has_left = xy.x > 0u, has_right = xy.x + 1u < width, has_down = xy.y > 0u, has_up = xy.y + 1u < height;
    // Pair slots (2a + k) and, for each, the sign of a weight that moves this pixel and the other pixel.
    UInt slot[4] = {2u * (at - 1u), 2u * at, 2u * (at - width) + 1u, 2u * at + 1u};
    Bool inside[4] = {has_left, has_right, has_down, has_up};
    UInt other[4] = {at - 1u, at + 1u, at - width, at + width};
    const float moves_me[4] = {1.0f, -1.0f, 1.0f, -1.0f};   // I am the upper pixel of my left and lower pairs
    UInt src[4];
    Float w[4];
    for (int k = 0; k < 4; ++k) {
        Float s = ite(inside[k], weights.read(ite(inside[k], slot[k], 0u)), 0.0f) * moves_me[k];
        w[k] = max(s, 0.0f);
        src[k] = ite(s > 0.0f, other[k], at);
    }
    $for (c, channels) {
        Float mine = color.read(at * channels + c);
        Float v = mine;
        for (int k = 0; k < 4; ++k) v = v + w[k] * (color.read(src[k] * channels + c) - mine);
        out.write(at * channels + c, v);
    };
}

// `out` starts as a copy of the colours; each blend's target pixel gathers its blends into it (a pixel that several
// blends move gathers once for each, writing the same values: no atomics, the same sums whatever the order). One
// thread a pixel gathering took 35 ms at 1024x1024 where a few thousand pixels change.
auto gather_kernel() {
    return Kernel1D([](BufferFloat color, BufferFloat weights, UInt channels, UInt width, UInt height,
                       BufferVar<uint4> blends, UInt n, BufferFloat out) noexcept {
        $for (i, dispatch_id().x, n, dispatch_size().x) {
            UInt e = blends.read(i).x;
            Float w = weights.read(e);
            UInt2 ab = pair_pixels(e, width);
            $if (w != 0.0f) { gather_pixel(color, weights, channels, width, height, ite(w > 0.0f, ab.y, ab.x), out); };
        };
    });
}

// Each blend differentiated, seeded with d loss / d the pixel it moves: into the colours and the positions.
auto backward_kernel() {
    return Kernel1D([](DiffBufferFloat color, BufferFloat4 rast, DiffBufferFloat4 pos, BufferFloat4 pos_value,
                       BufferUInt tri, BufferUInt topo, UInt channels, UInt width, UInt height, UInt vertices,
                       UInt batched, BufferVar<uint4> blends, UInt n, BufferFloat grad) noexcept {
        $for (i, dispatch_id().x, n, dispatch_size().x) {
            PairEdge e = edge_of(blends.read(i), width, height);
            AaInputs in = inputs_of(pos_value, tri, topo, rast, width, height, vertices, batched, e.ii);
            $autodiff {
                UInt target = kNone, source = 0u;
                Float weight = 0.0f;
                pair_weight(pos, in, e, target, source, weight);
                Float total = 0.0f;
                $for (c, channels) {
                    Float diff = color.read(source * channels + c) - color.read(target * channels + c);
                    total = total + grad.read(target * channels + c) * weight * diff;
                };
                adjoint::backward(total);
            };
        };
    });
}

struct AntialiasShaders {
    Shader<2> pairs;
    Shader<1> walk, blend, gather, backward;
};

AntialiasShaders& shaders(Runtime& rt) {
    if (!rt.antialias_shaders)
        rt.antialias_shaders = std::make_shared<AntialiasShaders>(
            AntialiasShaders{rt.device.compile(pairs_kernel(), {.name = "py_antialias_pairs"}),
                             rt.device.compile(walk_kernel(), {.name = "py_antialias_walk"}),
                             rt.device.compile(blend_kernel(), {.name = "py_antialias_blend"}),
                             rt.device.compile(gather_kernel(), {.name = "py_antialias_gather"}),
                             rt.device.compile(backward_kernel(), {.name = "py_antialias_backward"})});
    return *static_cast<AntialiasShaders*>(rt.antialias_shaders.get());
}

uint32_t list_threads(size_t entries) { return uint32_t(std::max<size_t>(1, (entries + kStride - 1) / kStride)); }

} // namespace

void bind_antialias_ops(py::module_& m) {
    // color [B, H, W, C], rast [B, H, W, 4], pos [Bp, V, 4] (Bp 1 and batched false: shared), tri [T, 3], topo
    // [T, 6] (checked by the caller) -> (the antialiased colours [B, H, W, C], the blends [N, 4] for the backward);
    // with blends and grad given, the backward: (d color, d pos).
    m.def("_antialias", [](const FArray& color, const FArray& rast, const FArray& pos, const UArray& tri,
                           const UArray& topo, bool batched, std::optional<UArray> blends,
                           std::optional<FArray> grad) -> py::object {
        auto rt = runtime();
        OpStream op(*rt);
        Stream& stream = *op;
        AntialiasShaders& sh = shaders(*rt);
        const uint32_t batch = uint32_t(color.shape(0)), height = uint32_t(color.shape(1)), width = uint32_t(color.shape(2));
        const uint32_t channels = uint32_t(color.shape(3)), vertices = uint32_t(pos.shape(1));
        const size_t pixels = size_t(batch) * height * width, values = pixels * channels;
        auto r = upload<float4>(*rt, stream, rast, pixels, "rast");
        auto t = upload<uint32_t>(*rt, stream, tri, size_t(tri.size()), "tri");
        auto h = upload<uint32_t>(*rt, stream, topo, size_t(topo.size()), "topo");
        const uint32_t bat = uint32_t(batched);
        if (grad) {
            if (!blends) throw py::value_error("_antialias: the backward needs the forward's blends");
            const uint32_t n = uint32_t(blends->size() / 4);
            auto b = upload<uint4>(*rt, stream, *blends, n, "blends");
            auto p = upload<float4>(*rt, stream, pos, size_t(pos.shape(0)) * vertices, "pos");
            auto c = upload_diff<float>(*rt, stream, color, values, "color");
            auto pd = upload_diff<float4>(*rt, stream, pos, size_t(pos.shape(0)) * vertices, "pos");
            auto g = upload<float>(*rt, stream, *grad, values, "grad");
            FArray gc(std::vector<py::ssize_t>{batch, height, width, channels});
            FArray gp(std::vector<py::ssize_t>{pos.shape(0), vertices, 4});
            if (n) stream << sh.backward(c, r, pd, p, t, h, channels, width, height, vertices, bat, b, n, g)
                                 .dispatch(list_threads(n));
            copy_out(stream, c.grad, gc);
            copy_out(stream, pd.grad, gp);
            stream << synchronize();
            return py::make_tuple(gc, gp);
        }
        auto p = upload<float4>(*rt, stream, pos, size_t(pos.shape(0)) * vertices, "pos");
        auto c = upload<float>(*rt, stream, color, values, "color");
        // Lists: the walking pairs (at most two a pixel), the blends (as many as the device's largest buffer holds:
        // never fewer than a blend a pixel where rast itself fits).
        const size_t pairs = std::max<size_t>(2 * pixels, 1);
        const size_t capacity = std::min<size_t>(pairs, rt->device.max_buffer_bytes() / sizeof(uint4));
        auto walks = device_buffer<uint32_t>(*rt, pairs, "the pixel pairs");
        auto list = rt->device.create_buffer<uint4>(capacity);
        auto count = rt->device.create_buffer<uint32_t>(2);
        auto weights = device_buffer<float>(*rt, pairs, "the pixel pairs' weights");
        uint32_t counts[2] = {0, 0};
        stream << count.fill_zero() << weights.fill_zero()
               << sh.pairs(r, width, height, walks, count).dispatch((width + kRun - 1) / kRun, height * batch)
               << sh.walk(p, t, h, r, width, height, vertices, bat, walks, count, uint32_t(capacity), list)
                      .dispatch(list_threads(pairs))
               << count.copy_to(counts) << synchronize();
        if (counts[1] > capacity)
            throw py::value_error("antialias: " + std::to_string(counts[1]) + " silhouette pairs, more than the " +
                                  std::to_string(capacity) + " the device's largest buffer lists; antialias fewer images at once");
        UArray found(std::vector<py::ssize_t>{py::ssize_t(counts[1]), 4});
        auto o = device_buffer<float>(*rt, std::max<size_t>(values, 1), "out");
        FArray out(std::vector<py::ssize_t>{batch, height, width, channels});
        stream << c.copy_to(o);
        if (counts[1])
            stream << sh.blend(p, t, h, r, width, height, vertices, bat, list, counts[1], weights)
                          .dispatch(list_threads(counts[1]))
                   << sh.gather(c, weights, channels, width, height, list, counts[1], o).dispatch(list_threads(counts[1]))
                   << list.copy_to(found.mutable_data(), 0, counts[1]);
        copy_out(stream, o, out);
        stream << synchronize();
        return py::make_tuple(out, found);
    }, py::arg("color"), py::arg("rast"), py::arg("pos"), py::arg("tri"), py::arg("topo"), py::arg("batched"),
       py::arg("blends") = py::none(), py::arg("grad") = py::none());
}

} // namespace adjoint::python
