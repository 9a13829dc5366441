// nvdiffrast's antialias for adjoint.torch: analytic antialiasing of silhouette edges over clip-space
// positions, forward in gather form, backward in scatter form inside $autodiff (gradients to the colours and,
// through where each edge crosses a pixel pair, to the positions).
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
    Float orient = 1.0f;     // makes the edge function >= 0 inside the occluder
    Float2 ci, co;           // the two pixel centres
};

// rast's image and the topology table as walk_to_silhouette's mesh (<adjoint/app/screen_edges.h>).
struct TopologyMesh {
    const AaInputs& in;
    UInt3 triangle(const UInt& tri) const {
        return make_uint3(in.tri.read(tri * 3u), in.tri.read(tri * 3u + 1u), in.tri.read(tri * 3u + 2u));
    }
    void corners(const UInt&, const UInt3& t, Float2 (&p)[3], Bool& valid) const {
        Float4 q[3] = {in.pos.read(in.base + t.x), in.pos.read(in.base + t.y), in.pos.read(in.base + t.z)};
        valid = (q[0].w > 0.0f) & (q[1].w > 0.0f) & (q[2].w > 0.0f);
        for (int k = 0; k < 3; ++k) p[k] = to_pixel(q[k], in.width, in.height);
    }
    UInt neighbor(const UInt& tri, const UInt& k) const { return in.topo.read(tri * 6u + k); }
    UInt far_vertex(const UInt& tri, const UInt& k) const { return in.topo.read(tri * 6u + 3u + k); }
    Float2 vertex_pixel(const UInt& v, Bool& valid) const {
        Float4 q = in.pos.read(in.base + v);
        valid = q.w > 0.0f;
        return to_pixel(q, in.width, in.height);
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
        app::SilhouetteEdge w = app::walk_to_silhouette(TopologyMesh{in}, cur, seen_at_o, e.ci, e.co, horizontal, kWalk);
        e.found = w.found;
        e.va = w.va;
        e.vb = w.vb;
        e.orient = w.orient;
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
        Float ei = app::edge_function(a, b, e.ci) * e.orient, eo = app::edge_function(a, b, e.co) * e.orient;
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

struct PixelAt {
    UInt2 pix;     // column, row within the image (row 0 at the bottom)
    UInt image, at;
};
PixelAt pixel_at(const UInt& height) {
    UInt2 id = dispatch_id().xy();
    return {make_uint2(id.x, id.y % height), id.y / height, id.y * dispatch_size().x + id.x};
}
Float2 centre(const UInt2& p) { return make_float2(cast<float>(p.x) + 0.5f, cast<float>(p.y) + 0.5f); }

// The pair of pixel `px` with its neighbour (dx, dy) in {(1, 0), (0, 1)} or their negatives, ordered (lower,
// upper) so that both pixels of a pair find the same edge.
PairEdge neighbour_pair(const AaInputs& in, const PixelAt& px, int dx, int dy) {
    UInt2 n = make_uint2(cast<uint32_t>(cast<int>(px.pix.x) + dx), cast<uint32_t>(cast<int>(px.pix.y) + dy));
    UInt ni = cast<uint32_t>(cast<int>(px.at) + dy * cast<int>(in.width) + dx);
    bool before = dx < 0 || dy < 0;
    return before ? pair_edge(in, ni, px.at, centre(n), centre(px.pix), dy == 0)
                  : pair_edge(in, px.at, ni, centre(px.pix), centre(n), dy == 0);
}

Bool neighbour_inside(const PixelAt& px, const UInt& width, const UInt& height, int dx, int dy) {
    return dx < 0 ? px.pix.x > 0u : dx > 0 ? px.pix.x + 1u < width : dy < 0 ? px.pix.y > 0u : px.pix.y + 1u < height;
}

// Gather: a pixel adds the blends of its four pairs that move it; C channels per pixel.
auto antialias_kernel() {
    return Kernel2D([](BufferFloat color, BufferFloat4 rast, BufferFloat4 pos, BufferUInt tri, BufferUInt topo,
                       UInt channels, UInt height, UInt vertices, UInt batched, BufferFloat out) noexcept {
        PixelAt px = pixel_at(height);
        UInt width = dispatch_size().x;
        AaInputs in{pos, tri, topo, rast, width, height, ite(batched > 0u, px.image * vertices, 0u)};
        const int dx[4] = {-1, 1, 0, 0}, dy[4] = {0, 0, -1, 1};
        UInt src[4];
        Float w[4];
        for (int k = 0; k < 4; ++k) {
            src[k] = px.at;
            w[k] = 0.0f;
            $if (neighbour_inside(px, width, height, dx[k], dy[k])) {
                UInt target = kNone, source = 0u;
                Float weight = 0.0f;
                pair_weight(pos, in, neighbour_pair(in, px, dx[k], dy[k]), target, source, weight);
                $if (target == px.at) {
                    src[k] = source;
                    w[k] = weight;
                };
            };
        }
        $for (c, channels) {
            Float mine = color.read(px.at * channels + c);
            Float v = mine;
            for (int k = 0; k < 4; ++k) v = v + w[k] * (color.read(src[k] * channels + c) - mine);
            out.write(px.at * channels + c, v);
        };
    });
}

// Scatter: a pixel differentiates its right and upper pairs, each seeded with d loss / d the pixel it moves.
auto antialias_backward_kernel() {
    return Kernel2D([](DiffBufferFloat color, BufferFloat4 rast, DiffBufferFloat4 pos, BufferFloat4 pos_value,
                       BufferUInt tri, BufferUInt topo, UInt channels, UInt height, UInt vertices, UInt batched,
                       BufferFloat grad) noexcept {
        PixelAt px = pixel_at(height);
        UInt width = dispatch_size().x;
        AaInputs in{pos_value, tri, topo, rast, width, height, ite(batched > 0u, px.image * vertices, 0u)};
        PairEdge edges[2];
        for (int k = 0; k < 2; ++k) {
            $if (neighbour_inside(px, width, height, 1 - k, k)) { edges[k] = neighbour_pair(in, px, 1 - k, k); };
        }
        $if ((edges[0].found == 1u) | (edges[1].found == 1u)) {
            $autodiff {
                Float total = 0.0f;
                for (int k = 0; k < 2; ++k) {
                    UInt target = kNone, source = 0u;
                    Float weight = 0.0f;
                    pair_weight(pos, in, edges[k], target, source, weight);
                    $if (target != kNone) {
                        $for (c, channels) {
                            Float diff = color.read(source * channels + c) - color.read(target * channels + c);
                            total = total + grad.read(target * channels + c) * weight * diff;
                        };
                    };
                }
                adjoint::backward(total);
            };
        };
    });
}

struct AntialiasShaders {
    Shader<2> forward, backward;
};

AntialiasShaders& shaders(Runtime& rt) {
    if (!rt.antialias_shaders)
        rt.antialias_shaders = std::make_shared<AntialiasShaders>(
            AntialiasShaders{rt.device.compile(antialias_kernel(), {.name = "py_antialias"}),
                             rt.device.compile(antialias_backward_kernel(), {.name = "py_antialias_backward"})});
    return *static_cast<AntialiasShaders*>(rt.antialias_shaders.get());
}

} // namespace

void bind_antialias_ops(py::module_& m) {
    // color [B, H, W, C], rast [B, H, W, 4], pos [Bp, V, 4] (Bp 1 and batched false: shared), tri [T, 3], topo
    // [T, 6] (checked by the caller) -> [B, H, W, C]; with grad given, the backward: (d color, d pos).
    m.def("_antialias", [](const FArray& color, const FArray& rast, const FArray& pos, const UArray& tri,
                           const UArray& topo, bool batched, std::optional<FArray> grad) -> py::object {
        auto rt = runtime();
        OpStream op(*rt);
        Stream& stream = *op;
        const uint32_t batch = uint32_t(color.shape(0)), height = uint32_t(color.shape(1)), width = uint32_t(color.shape(2));
        const uint32_t channels = uint32_t(color.shape(3)), vertices = uint32_t(pos.shape(1));
        const size_t pixels = size_t(batch) * height * width, values = pixels * channels;
        auto r = upload<float4>(*rt, stream, rast, pixels, "rast");
        auto t = upload<uint32_t>(*rt, stream, tri, size_t(tri.size()), "tri");
        auto h = upload<uint32_t>(*rt, stream, topo, size_t(topo.size()), "topo");
        auto p = upload<float4>(*rt, stream, pos, size_t(pos.shape(0)) * vertices, "pos");
        if (!grad) {
            auto c = upload<float>(*rt, stream, color, values, "color");
            auto o = rt->device.create_buffer<float>(std::max<size_t>(values, 1));
            FArray out(std::vector<py::ssize_t>{batch, height, width, channels});
            stream << shaders(*rt).forward(c, r, p, t, h, channels, height, vertices, uint32_t(batched), o)
                          .dispatch(width, height * batch)
                   << o.copy_to(out.mutable_data()) << synchronize();
            return out;
        }
        auto c = upload_diff<float>(*rt, stream, color, values, "color");
        auto pd = upload_diff<float4>(*rt, stream, pos, size_t(pos.shape(0)) * vertices, "pos");
        auto g = upload<float>(*rt, stream, *grad, values, "grad");
        FArray gc(std::vector<py::ssize_t>{batch, height, width, channels});
        FArray gp(std::vector<py::ssize_t>{pos.shape(0), vertices, 4});
        stream << shaders(*rt).backward(c, r, pd, p, t, h, channels, height, vertices, uint32_t(batched), g)
                      .dispatch(width, height * batch)
               << c.grad.copy_to(gc.mutable_data()) << pd.grad.copy_to(gp.mutable_data()) << synchronize();
        return py::make_tuple(gc, gp);
    }, py::arg("color"), py::arg("rast"), py::arg("pos"), py::arg("tri"), py::arg("topo"), py::arg("batched"),
       py::arg("grad") = py::none());
}

} // namespace adjoint::python
