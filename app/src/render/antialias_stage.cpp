// The antialiasing stage (nvdiffrast's antialias): silhouette edges blended across pixel pairs, found once a
// pair and listed; forward and backward (through $autodiff) run over the blending pairs alone (antialias_dsl.h).
#include "render/antialias_stage.h"

#include "render/antialias_dsl.h"
#include "render/work_list.h"

#include <algorithm>

namespace adjoint::app {

using gpu::kNone;

namespace {

// The stage's lists, each of pair ids 2a + k (pixel a's right pair for k = 0, its lower one for k = 1), and their
// counts in count_[kWalks] and count_[kBlends].
constexpr uint32_t kWalks = 0, kBlends = 1;

// The blend list is sparse (1,006 blends against 80,123 walks and 262,144 pixels at 50k triangles and
// 512x512; 510 against 14,234 and 65,536 at 5k and 256x256), so the backward kernel is dispatched at a 64th of
// the pixels rather than kListStride's 8th: on lavapipe each dispatched block pays its threads' start (the
// camera's reads) whether or not any entry reaches it, which made antialias_backward 1.2-1.4 ms at 50k/512x512
// where at 64 it took 0.49-0.52 (app/GUIDE.md; the forward kernel, then dispatched alike, 0.86-0.91 against
// 0.32-0.34). A thread takes at most 128 entries (every pair blending); a blend runs no loop of its own (lavapipe's
// loop budget).
constexpr uint32_t kBlendStride = 64;

// The forward kernel's one block (its loops over the list share lavapipe's loop budget: two passes of up to
// 2 * pixels / kForwardBlock entries a thread, within it for every view check_scene_fits admits).
constexpr uint32_t kForwardBlock = 256;

// The blending pairs' colours take 4 float4 a pixel (two pairs of two pixels) in one buffer: no more than a view's
// surfaces, which check_scene_fits holds to the device's largest buffer.
static_assert(4 * sizeof(float4) <= sizeof(gpu::SurfaceRecord));

// Each of the stage's kernels after the first runs over a list (render/work_list.h), so only the pairs that need
// it pay for the walk (the pairs that see two triangles, about a fifth) or the blend (those that blend, a few
// percent).
template <typename F>
void for_listed(const BufferUInt& list, const BufferUInt& count, uint32_t which, const UInt& width, F&& f) {
    for_each_listed(list, count, which, [&](const UInt& e) {
        UInt a = e >> 1u;
        UInt2 pa = make_uint2(a % width, a / width);
        Bool right = (e & 1u) == 0u;
        f(e, pa, ite(right, make_uint2(pa.x + 1u, pa.y), make_uint2(pa.x, pa.y + 1u)));
    });
}

// Per run of kRowRun pixels of a row (render/work_list.h): lists their right and lower pairs that see two different
// triangles (or a triangle and the background) for the walk, with one atomic for the run (a tenth to a sixth of the
// pairs are listed, and an atomic a pair was most of the kernel's time on lavapipe).
static_assert(2 * kRowRun <= 32, "two pairs a pixel: one flag bit each in a uint");
auto pairs_kernel() {
    return Kernel2D([](BufferUInt tri_ids, BufferUInt walks, BufferUInt count, UInt width, UInt height) noexcept {
        UInt y = dispatch_id().y, first = y * width + dispatch_id().x * kRowRun;
        UInt flags = 0u, n = 0u;   // bit 2i + k: the run's pixel i's pair k is listed
        UInt t = tri_ids.read(first);   // the run's pixel, then its right neighbour's (x0 < width: the dispatch)
        for_each_in_row_run(width, [&](const UInt& i, const UInt& x, const UInt& at) {
            Bool has_right = x + 1u < width, has_down = y + 1u < height;
            UInt right = ite(has_right, tri_ids.read(ite(has_right, at + 1u, at)), t);
            UInt down = ite(has_down, tri_ids.read(ite(has_down, at + width, at)), t);
            UInt take_right = ite(right != t, 1u, 0u), take_down = ite(down != t, 1u, 0u);
            flags = flags | (take_right << (2u * i)) | (take_down << (2u * i + 1u));
            n = n + take_right + take_down;
            t = right;
        });
        append_flagged(walks, count, kWalks, flags, n, [&](const UInt& b) { return 2u * first + b; });
    });
}

// Each listed pair walks to its silhouette edge once (pair_edge); a pair that blends stores its edge and joins the
// list the other kernels run over.
auto walk_kernel() {
    return Kernel1D([](BufferUInt tri_ids, BufferFloat depth, BufferFloat3 positions,
                       BufferVar<uint3> triangles,
                       BufferVar<uint3> opposite, BufferVar<uint3> neighbor, BufferVar<gpu::ViewRec> views,
                       UInt view, BufferFloat params, BufferVar<gpu::TriEdges> triangle_edges, BufferUInt walks,
                       BufferUInt count, UInt width, BufferVar<uint2> edges, BufferUInt blends) noexcept {
        DslCamera cam = camera_of(params, views.read(view));
        for_listed(walks, count, kWalks, width, [&](const UInt& e, const UInt2& pa, const UInt2& pb) {
            AntialiasInputs<BufferFloat3> in{positions, positions, triangles, opposite, neighbor, tri_ids, depth,
                                             width, &triangle_edges};
            UInt2 r = encode_edge(pair_edge(in, cam, pa, pb));
            Bool found = (r.y & kEdgeFound) != 0u;
            $if (found) { edges.write(e, r); };
            append_listed(blends, count, kBlends, found, e);
        });
    });
}

// Scatter form, in one block (kForwardBlock threads, a multiple of the SIMD width): its threads first keep each
// blending pair's two shaded colours, then, once every thread has (sync_block: no colour is read after a blend was
// added to it), add each pair's blend to the pixel it changes, in the image itself (up to four pairs change a pixel,
// hence the float atomics). A thread reads back only the colours it kept. Blending in place spares the pairs kernel
// a copy of the image, about half its time; keeping the colours in the walk, under its `$if (found)`, cost every
// walked pair their reads (antialias_edges 4.5 -> 5.3 ms at 50k/512x512, lavapipe running a branch's code under a
// mask), and in a kernel of their own its start (0.33-0.43 ms): app/GUIDE.md. One block suits the short list: about
// 1,000 pairs at 50k.
auto forward_kernel() {
    return Kernel1D([](BufferFloat4 image, BufferUInt tri_ids, BufferFloat depth, BufferFloat3 positions,
                       BufferVar<uint3> triangles, BufferVar<uint3> opposite, BufferVar<uint3> neighbor,
                       BufferVar<gpu::ViewRec> views, UInt view, BufferFloat params, BufferVar<uint2> edges,
                       BufferFloat4 originals, BufferUInt blends, BufferUInt count, UInt width,
                       BufferFloat image_floats) noexcept {
        set_block_size(kForwardBlock);
        for_listed(blends, count, kBlends, width, [&](const UInt& id, const UInt2& pa, const UInt2& pb) {
            PairEdge e = decode_edge(edges.read(id), pa, pb, width);
            originals.write(2u * id, image.read(e.ii));
            originals.write(2u * id + 1u, image.read(e.io));
        });
        sync_block();
        AntialiasInputs<BufferFloat3> in{positions, positions, triangles, opposite, neighbor, tri_ids, depth, width};
        DslCamera cam = camera_of(params, views.read(view));
        for_listed(blends, count, kBlends, width, [&](const UInt& id, const UInt2& pa, const UInt2& pb) {
            PairEdge e = decode_edge(edges.read(id), pa, pb, width);
            UInt target = kNone;
            Float4 delta = make_float4(0.0f);
            pair_delta(in, cam, e, originals.read(2u * id), originals.read(2u * id + 1u), target, delta);
            $if (target != kNone) {
                image_floats.atomic(4u * target).fetch_add(delta.x);
                image_floats.atomic(4u * target + 1u).fetch_add(delta.y);
                image_floats.atomic(4u * target + 2u).fetch_add(delta.z);
                image_floats.atomic(4u * target + 3u).fetch_add(delta.w);
            };
        });
    });
}

// Each listed pair differentiated at the colours it blended, seeded with d loss / d the pixel it changes; the
// colours' gradients go to the two pixels' shaded colours.
auto backward_kernel(bool camera_free) {
    return Kernel1D([camera_free](BufferUInt tri_ids, BufferFloat depth, DiffBufferFloat3 positions,
                                  BufferFloat3 positions_value, BufferVar<uint3> triangles,
                                  BufferVar<uint3> opposite, BufferVar<uint3> neighbor,
                                  BufferVar<gpu::ViewRec> views, UInt view, DiffBufferFloat params,
                                  BufferFloat params_value, BufferVar<uint2> edges, BufferFloat4 originals,
                                  BufferUInt blends, BufferUInt count, UInt width, BufferFloat dfinal,
                                  BufferFloat color_grad) noexcept {
        AntialiasInputs<DiffBufferFloat3> in{positions, positions_value, triangles, opposite, neighbor, tri_ids,
                                             depth, width};
        auto vr = views.read(view);
        DslCamera plain_cam = camera_of(params_value, vr);
        for_listed(blends, count, kBlends, width, [&](const UInt& id, const UInt2& pa, const UInt2& pb) {
            PairEdge e = decode_edge(edges.read(id), pa, pb, width);
            Float4 col_i = originals.read(2u * id), col_o = originals.read(2u * id + 1u);
            Float4 grad_i, grad_o;
            $autodiff {
                requires_grad(col_i, col_o);
                DslCamera cam = camera_free ? camera_of(params, vr) : plain_cam;
                UInt target = kNone;
                Float4 delta = make_float4(0.0f);
                pair_delta(in, cam, e, col_i, col_o, target, delta);
                Float total = 0.0f;
                $if (target != kNone) { total = dot(delta, read4(dfinal, 4u * target)); };
                adjoint::backward(total);
                grad_i = grad(col_i);
                grad_o = grad(col_o);
            };
            for (uint32_t c = 0; c < 4; ++c) {
                color_grad.atomic(4u * e.ii + c).fetch_add(grad_i[c]);
                color_grad.atomic(4u * e.io + c).fetch_add(grad_o[c]);
            }
        });
    });
}

} // namespace

AntialiasStage::AntialiasStage(Device& device, bool camera_free, uint32_t pixels)
    : pairs_kernel_(device.compile(pairs_kernel(), {.name = "antialias_pairs"})),
      walk_kernel_(device.compile(walk_kernel(), {.name = "antialias_edges"})),
      forward_(device.compile(forward_kernel(), {.name = "antialias_forward"})),
      backward_(device.compile(backward_kernel(camera_free), {.name = "antialias_backward"})),
      edges_(device.create_buffer<uint2>(2 * size_t(std::max(pixels, 1u)))),
      originals_(device.create_buffer<float4>(4 * size_t(std::max(pixels, 1u)))),
      walks_(device.create_buffer<uint32_t>(2 * size_t(std::max(pixels, 1u)))),
      blends_(device.create_buffer<uint32_t>(2 * size_t(std::max(pixels, 1u)))),
      count_(device.create_buffer<uint32_t>(2)) {}

void AntialiasStage::forward(Stream& stream, const StageBuffers& b, uint32_t view, const GBuffer& gbuffer,
                             const Buffer<float>& params, const Buffer<float4>& image) const {
    const uint32_t threads = list_threads(size_t(gbuffer.width) * gbuffer.height);   // a list holds up to 2 a pixel
    stream << count_.fill_zero()
           << pairs_kernel_(gbuffer.triangle, walks_, count_, gbuffer.width, gbuffer.height)
                  .dispatch(row_runs(gbuffer.width), gbuffer.height)
           << walk_kernel_(gbuffer.triangle, gbuffer.depth, b.world.positions.value, b.data.geometry.triangles,
                           b.tables.opposite, b.tables.neighbor, b.views, view, params, gbuffer.edges, walks_, count_,
                           gbuffer.width, edges_, blends_)
                  .dispatch(threads);
    edges_view_ = view;
    edges_gbuffer_ = &gbuffer;
    stream << forward_(image, gbuffer.triangle, gbuffer.depth, b.world.positions.value, b.data.geometry.triangles,
                       b.tables.opposite, b.tables.neighbor, b.views, view, params, edges_, originals_, blends_, count_,
                       gbuffer.width, image.as<float>())   // the blends go in by float atomics
                  .dispatch(kForwardBlock);
}

std::vector<uint32_t> AntialiasStage::walked_pairs(Stream& stream) const {
    uint32_t counts[2];
    stream << count_.copy_to(counts) << synchronize();
    std::vector<uint32_t> pairs(counts[kWalks]);
    if (!pairs.empty()) stream << walks_.copy_to(pairs.data(), 0, pairs.size()) << synchronize();
    std::sort(pairs.begin(), pairs.end());
    return pairs;
}

void AntialiasStage::backward(Stream& stream, const StageBuffers& b, uint32_t view, const GBuffer& gbuffer,
                              const DiffBuffer<float>& params, const Buffer<float>& color_grad,
                              const Buffer<float>& dfinal) const {
    if (edges_view_ != view || edges_gbuffer_ != &gbuffer)
        fail("AntialiasStage::backward: view ", view, " was not the last one this stage's forward() antialiased "
             "(its silhouette edges are found there)");
    stream << backward_(gbuffer.triangle, gbuffer.depth, b.world.positions, b.world.positions.value,
                        b.data.geometry.triangles, b.tables.opposite, b.tables.neighbor, b.views, view, params,
                        params.value, edges_, originals_, blends_, count_, gbuffer.width, dfinal, color_grad)
                  .dispatch(list_threads(size_t(gbuffer.width) * gbuffer.height, kBlendStride));
}

} // namespace adjoint::app
