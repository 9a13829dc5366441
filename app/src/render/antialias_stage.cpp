// The antialiasing stage (nvdiffrast's antialias): silhouette edges blended across pixel pairs, forward in
// gather form, backward in scatter form through $autodiff (antialias_dsl.h).
#include "render/antialias_stage.h"

#include "render/antialias_dsl.h"

#include <algorithm>

namespace adjoint::app {

using gpu::kNone;

namespace {

// Each pixel walks its right and lower pairs once (pair_edge) and stores their edges for the two kernels below.
auto edges_kernel() {
    return Kernel2D([](BufferFloat4 colors, BufferUInt tri_ids, BufferFloat depth, BufferFloat3 positions,
                       BufferVar<uint3> triangles, BufferVar<uint3> opposite, BufferVar<uint3> neighbor,
                       BufferVar<gpu::ViewRec> views, UInt view, BufferFloat params,
                       BufferVar<gpu::TriSetup> setups, BufferVar<uint4> edges) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt width = dispatch_size().x, height = dispatch_size().y;
        DslCamera cam = camera_of(params, views.read(view));
        AntialiasInputs<BufferFloat3, BufferFloat4> in{positions, positions, triangles, opposite, neighbor,
                                                       colors, tri_ids, depth, width, &setups};
        UInt2 r[2] = {make_uint2(0u), make_uint2(0u)};
        for (int k = 0; k < 2; ++k) {
            $if (k == 0 ? pix.x + 1u < width : pix.y + 1u < height) {
                r[k] = encode_edge(pair_edge(in, cam, pix, k == 0 ? make_uint2(pix.x + 1u, pix.y)
                                                                 : make_uint2(pix.x, pix.y + 1u)));
            };
        }
        edges.write(pix.y * width + pix.x, make_uint4(r[0].x, r[0].y, r[1].x, r[1].y));
    });
}

// Gather form: a pixel adds the blends of its four pairs that change it (each pair's edge stored at its left or
// upper pixel: .xy the pair to the right, .zw the one below).
auto forward_kernel() {
    return Kernel2D([](BufferFloat4 colors, BufferUInt tri_ids, BufferFloat depth, BufferFloat3 positions,
                       BufferVar<uint3> triangles, BufferVar<uint3> opposite, BufferVar<uint3> neighbor,
                       BufferVar<gpu::ViewRec> views, UInt view, BufferFloat params, BufferVar<uint4> edges,
                       BufferFloat4 out) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt width = dispatch_size().x, height = dispatch_size().y;
        UInt at = pix.y * width + pix.x;
        Float4 c = colors.read(at);
        AntialiasInputs<BufferFloat3, BufferFloat4> in{positions, positions, triangles, opposite, neighbor,
                                                       colors, tri_ids, depth, width};
        // The four pairs' records first: only pixels beside a silhouette (a few percent) blend, and only they
        // need the camera (a dozen reads of the parameter buffer, which lavapipe makes per lane).
        const int dx[4] = {-1, 1, 0, 0}, dy[4] = {0, 0, -1, 1};
        UInt2 r[4], pa[4], pb[4];
        Bool any = false;
        for (int k = 0; k < 4; ++k) {
            Bool inside = dx[k] < 0 ? pix.x > 0u : dx[k] > 0 ? pix.x + 1u < width : dy[k] < 0 ? pix.y > 0u
                                                                                           : pix.y + 1u < height;
            UInt2 n = make_uint2(cast<uint32_t>(cast<int>(pix.x) + dx[k]), cast<uint32_t>(cast<int>(pix.y) + dy[k]));
            bool before = dx[k] < 0 || dy[k] < 0;
            pa[k] = before ? n : pix;
            pb[k] = before ? pix : n;
            r[k] = make_uint2(0u);
            $if (inside) {
                UInt4 rec = edges.read(pa[k].y * width + pa[k].x);
                r[k] = dx[k] != 0 ? rec.xy() : rec.zw();
            };
            any = any | ((r[k].y & kEdgeFound) != 0u);
        }
        $if (any) {
            DslCamera cam = camera_of(params, views.read(view));
            for (int k = 0; k < 4; ++k) {
                $if ((r[k].y & kEdgeFound) != 0u) {
                    UInt target = kNone;
                    Float4 delta = make_float4(0.0f);
                    pair_delta(in, cam, decode_edge(r[k], pa[k], pb[k], width), target, delta);
                    $if (target == at) { c = c + delta; };
                };
            }
        };
        out.write(at, c);
    });
}

// Scatter form: a pixel differentiates its right and lower pairs (their stored edges), each seeded with
// d loss / d the pixel the pair changes.
auto backward_kernel(bool camera_free) {
    return Kernel2D([camera_free](DiffBufferFloat4 colors, BufferUInt tri_ids, BufferFloat depth,
                                  DiffBufferFloat3 positions, BufferFloat3 positions_value,
                                  BufferVar<uint3> triangles, BufferVar<uint3> opposite,
                                  BufferVar<uint3> neighbor, BufferVar<gpu::ViewRec> views, UInt view,
                                  DiffBufferFloat params, BufferFloat params_value, BufferVar<uint4> stored,
                                  BufferFloat dfinal) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt width = dispatch_size().x, height = dispatch_size().y;
        AntialiasInputs<DiffBufferFloat3, DiffBufferFloat4> in{positions, positions_value, triangles, opposite,
                                                                 neighbor, colors, tri_ids, depth, width};
        UInt4 rec = stored.read(pix.y * width + pix.x);
        PairEdge edges[2] = {decode_edge(rec.xy(), pix, make_uint2(pix.x + 1u, pix.y), width),
                             decode_edge(rec.zw(), pix, make_uint2(pix.x, pix.y + 1u), width)};
        $if ((edges[0].found == 1u) | (edges[1].found == 1u)) {   // the camera only here (see forward_kernel)
            auto vr = views.read(view);
            DslCamera plain_cam = camera_of(params_value, vr);
            $autodiff {
                DslCamera cam = camera_free ? camera_of(params, vr) : plain_cam;
                Float total = 0.0f;
                for (int k = 0; k < 2; ++k) {
                    UInt target = kNone;
                    Float4 delta = make_float4(0.0f);
                    pair_delta(in, cam, edges[k], target, delta);
                    $if (target != kNone) { total = total + dot(delta, read4(dfinal, 4u * target)); };
                }
                adjoint::backward(total);
            };
        };
    });
}

} // namespace

AntialiasStage::AntialiasStage(Device& device, bool camera_free, uint32_t pixels)
    : edges_kernel_(device.compile(edges_kernel(), {.name = "antialias_edges"})),
      forward_(device.compile(forward_kernel(), {.name = "antialias_forward"})),
      backward_(device.compile(backward_kernel(camera_free), {.name = "antialias_backward"})),
      edges_(device.create_buffer<uint4>(std::max(pixels, 1u))) {}

void AntialiasStage::forward(Stream& stream, const StageBuffers& b, uint32_t view, const GBuffer& gbuffer,
                             const Buffer<float>& params, const Buffer<float4>& colors,
                             const Buffer<float4>& out) const {
    stream << edges_kernel_(colors, gbuffer.triangle, gbuffer.depth, b.world.positions.value,
                            b.data.geometry.triangles, b.tables.opposite, b.tables.neighbor, b.views, view, params,
                            gbuffer.setups, edges_)
                  .dispatch(gbuffer.width, gbuffer.height);
    edges_view_ = view;
    edges_gbuffer_ = &gbuffer;
    stream << forward_(colors, gbuffer.triangle, gbuffer.depth, b.world.positions.value, b.data.geometry.triangles,
                       b.tables.opposite, b.tables.neighbor, b.views, view, params, edges_, out)
                  .dispatch(gbuffer.width, gbuffer.height);
}

void AntialiasStage::backward(Stream& stream, const StageBuffers& b, uint32_t view, const GBuffer& gbuffer,
                              const DiffBuffer<float>& params, const DiffBuffer<float4>& colors,
                              const Buffer<float>& dfinal) const {
    if (edges_view_ != view || edges_gbuffer_ != &gbuffer)
        fail("AntialiasStage::backward: view ", view, " was not the last one this stage's forward() antialiased "
             "(its silhouette edges are found there)");
    stream << backward_(colors, gbuffer.triangle, gbuffer.depth, b.world.positions, b.world.positions.value,
                        b.data.geometry.triangles, b.tables.opposite, b.tables.neighbor, b.views, view, params,
                        params.value, edges_, dfinal)
                  .dispatch(gbuffer.width, gbuffer.height);
}

} // namespace adjoint::app
