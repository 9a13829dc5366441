// The shadow grids' build kernels (render/shadow_grid.h): bounds from the vertices, each grid's shape, count
// per cell, a scan, fill.
#include "render/shadow_grid.h"

#include "render/geometry_dsl.h"
#include "render/shadow_grid_dsl.h"
#include "render/soft_dsl.h"

#include <algorithm>
#include <cmath>

namespace adjoint::app {

namespace {

constexpr uint32_t kVertexChunk = 128;   // vertices per thread of the bounds kernel
constexpr uint32_t kScanChunk = 256;     // cells per thread of the scan (every grid's cells are a multiple)
// The most candidates one shaded point may loop over, all shadowing lights together: lavapipe stops an
// invocation's loops after 65,535 iterations, and the shading has loops of its own.
constexpr uint32_t kLoopBudget = 60000;

uint32_t round16(double x, uint32_t lo, uint32_t hi) {
    return std::clamp(uint32_t(std::ceil(x / 16.0)) * 16u, lo, hi);
}

ParamReads plain_reads(const BufferFloat& params) {
    return {[&params](const UInt& at) -> Float { return params.read(at); },
            [](const UInt&, const Float2&, const Float&) -> Float3 { return make_float3(0.0f); }};
}

// The light's plane frame (a sun) from where it stands, as the lookup computes it (shadow_dsl.h).
struct SunFrame {
    Float3 u, w;
};
SunFrame sun_frame(const ShadowSource& src) {
    Float3 u = shadow_frame_u(src.at);
    return {u, cross(src.at, u)};
}

// The vertices' bounds for one light (chunks of kVertexChunk vertices a thread, one atomic per bound).
auto bounds_kernel(const LightModel* model) {
    return Kernel1D([model](BufferFloat3 positions, UInt vertices, BufferFloat params, BufferVar<LightSlots> lights,
                            UInt light, BufferVar<gpu::ViewRec> views, UInt view, BufferFloat head) noexcept {
        UInt c = dispatch_id().x;
        const ParamReads reads = plain_reads(params);
        ShadowSource src = model->shadow_source(reads, lights.read(light));
        DslCamera cam = camera_of(params, views.read(view));
        SunFrame f = sun_frame(src);
        Float2 lo = make_float2(1e30f), hi = make_float2(-1e30f);
        Float deepest = 0.0f, nearest = 1e30f;
        $for (i, c * kVertexChunk, min(c * kVertexChunk + kVertexChunk, vertices)) {
            Float3 v = positions.read(i);
            deepest = max(deepest, max(dot(cam.forward, v - cam.eye), 1e-6f));
            if (src.point) {
                nearest = min(nearest, length(v - src.at));
            } else {
                Float2 q = make_float2(dot(v, f.u), dot(v, f.w));
                lo = min(lo, q);
                hi = max(hi, q);
            }
        };
        UInt h = light * kShadowHead;
        head.atomic(h + 4u).fetch_max(deepest);
        if (src.point) {
            head.atomic(h + 5u).fetch_min(nearest);
        } else {
            head.atomic(h).fetch_min(lo.x);
            head.atomic(h + 1u).fetch_min(lo.y);
            head.atomic(h + 2u).fetch_max(hi.x);
            head.atomic(h + 3u).fetch_max(hi.y);
        }
    });
}

// The grid from the bounds (one thread). `reach_k`: the band's reach in NDC units, with the shading's slack
// (0 in hard), so that the reach in world units at depth z is reach_k z / sx.
auto shape_kernel(const LightModel* model, uint32_t res) {
    return Kernel1D([model, res](BufferFloat params, BufferVar<LightSlots> lights, BufferVar<gpu::ViewRec> views,
                                 UInt view, BufferFloat head, UInt light, Float reach_k) noexcept {
        const bool point = model->shadow_source(plain_reads(params), lights.read(light)).point;
        UInt h = light * kShadowHead;
        DslCamera cam = camera_of(params, views.read(view));
        // The reach at the deepest vertex, and a slack for the rounding of points interpolated inside the hull.
        Float reach = reach_k * head.read(h + 4u) / cam.sx * 1.002f;
        if (point) {
            Float tan_max = min(reach / max(head.read(h + 5u), 1e-30f), 0.1f);
            head.write(h + 12u, tan_max);
            head.write(h + 13u, 4.2f * tan_max + 1e-4f);
        } else {
            Float2 lo = make_float2(head.read(h), head.read(h + 1u)), hi = make_float2(head.read(h + 2u), head.read(h + 3u));
            // The slack covers the rounding between the shading's projection (v - p) and the grid's (v, p apart).
            Float2 ext = max(abs(lo), abs(hi));
            Float grow = reach + 1e-5f * (max(ext.x, ext.y) + reach) + 1e-30f;
            Float2 origin = lo - grow, size = max(hi - lo + 2.0f * grow, make_float2(1e-30f));
            head.write(h + 8u, origin.x);
            head.write(h + 9u, origin.y);
            head.write(h + 10u, float(res) / size.x);
            head.write(h + 11u, float(res) / size.y);
            head.write(h + 12u, reach);
            head.write(h + 13u, grow);
        }
    });
}

// Calls visit(cell) for every cell of the light's grid that the triangle's grown footprint touches.
template <typename Visit>
void footprint_cells(const Float3 (&v)[3], const ShadowSource& src, const BufferFloat& head, const UInt& h,
                     uint32_t res, Visit visit) {
    const Float grow = head.read(h + 13u);
    auto rect = [&](const Float2& lo, const Float2& hi, const Float2& origin, const Float2& scale, const UInt& base) {
        const Float r = float(res) - 1.0f;
        UInt2 a = make_uint2(cast<uint32_t>(clamp((lo.x - origin.x) * scale.x, 0.0f, r)),
                             cast<uint32_t>(clamp((lo.y - origin.y) * scale.y, 0.0f, r)));
        UInt2 b = make_uint2(cast<uint32_t>(clamp((hi.x - origin.x) * scale.x, 0.0f, r)),
                             cast<uint32_t>(clamp((hi.y - origin.y) * scale.y, 0.0f, r)));
        $for (y, a.y, b.y + 1u) {
            $for (x, a.x, b.x + 1u) { visit(base + y * res + x); };
        };
    };
    if (!src.point) {
        SunFrame f = sun_frame(src);
        Float2 q[3];
        for (int k = 0; k < 3; ++k) q[k] = make_float2(dot(v[k], f.u), dot(v[k], f.w));
        Float2 origin = make_float2(head.read(h + 8u), head.read(h + 9u));
        Float2 scale = make_float2(head.read(h + 10u), head.read(h + 11u));
        rect(min(min(q[0], q[1]), q[2]) - grow, max(max(q[0], q[1]), q[2]) + grow, origin, scale, UInt(0u));
        return;
    }
    const Float2 origin = make_float2(-1.0f), scale = make_float2(0.5f * float(res));
    for (int face = 0; face < 6; ++face) {
        Float3 a[3];
        Bool all_front = Bool(true), any_front = Bool(false);
        for (int k = 0; k < 3; ++k) {
            Float3 d = v[k] - src.at;
            a[k] = shadow_face_axes(d, face);
            all_front = all_front & (a[k].x > 1e-6f * length(d));
            any_front = any_front | (a[k].x > 0.0f);
        }
        const UInt base = UInt(uint32_t(face) * res * res);
        $if (all_front) {
            Float2 q[3];
            for (int k = 0; k < 3; ++k) q[k] = make_float2(a[k].y, a[k].z) / a[k].x;
            Float2 lo = min(min(q[0], q[1]), q[2]) - grow, hi = max(max(q[0], q[1]), q[2]) + grow;
            $if ((hi.x >= -1.0f) & (hi.y >= -1.0f) & (lo.x <= 1.0f) & (lo.y <= 1.0f)) {
                rect(lo, hi, origin, scale, base);
            };
        }
        $elif (any_front) {   // partly behind the face's plane: its image is unbounded, so the whole face
            rect(make_float2(-1.0f), make_float2(1.0f), origin, scale, base);
        };
    }
}

// Per triangle: count it into its cells (fill: 0), or write it into their lists (fill: 1).
auto cells_kernel(const LightModel* model, ShadowGridShape shape, bool fill) {
    return Kernel1D([model, shape, fill](BufferFloat3 positions, BufferVar<uint3> triangles, BufferFloat params,
                                       BufferVar<LightSlots> lights, UInt light, BufferFloat head, UInt base,
                                       BufferUInt cells, BufferUInt cursor, BufferUInt list) noexcept {
        UInt i = dispatch_id().x;
        ShadowSource src = model->shadow_source(plain_reads(params), lights.read(light));
        const uint32_t res = src.point ? shape.point : shape.sun;
        UInt3 t = triangles.read(i);
        Float3 v[3] = {positions.read(t.x), positions.read(t.y), positions.read(t.z)};
        footprint_cells(v, src, head, light * kShadowHead, res, [&](const UInt& cell) {
            UInt at = base + cell;
            if (fill) {
                UInt k = cursor.atomic(at).fetch_add(1u);
                list.write(cells.read(2u * at) + k, i);
            } else {
                cells.atomic(2u * at + 1u).fetch_add(1u);
            }
        });
    });
}

auto reset_kernel() {
    return Kernel1D([](BufferFloat head, UInt light) noexcept {
        UInt h = light * kShadowHead;
        head.write(h, 1e30f);
        head.write(h + 1u, 1e30f);
        head.write(h + 2u, -1e30f);
        head.write(h + 3u, -1e30f);
        head.write(h + 4u, 0.0f);
        head.write(h + 5u, 1e30f);
    });
}

// The scan over every grid's cells, in chunks: each chunk's sum and longest list, the chunks' offsets (one
// thread), each cell's offset.
auto scan_chunks_kernel() {
    return Kernel1D([](BufferUInt cells, BufferUInt chunk_sum, BufferUInt chunk_max) noexcept {
        UInt c = dispatch_id().x;
        UInt sum = 0u, most = 0u;
        $for (t, c * kScanChunk, c * kScanChunk + kScanChunk) {
            UInt n = cells.read(2u * t + 1u);
            sum += n;
            most = max(most, n);
        };
        chunk_sum.write(c, sum);
        chunk_max.write(c, most);
    });
}

auto scan_top_kernel() {
    return Kernel1D([](BufferUInt chunk_sum, BufferUInt chunk_offset, UInt chunks) noexcept {
        UInt run = 0u;
        $for (c, 0u, chunks) {
            chunk_offset.write(c, run);
            run += chunk_sum.read(c);
        };
        chunk_offset.write(chunks, run);
    });
}

auto scan_fill_kernel() {
    return Kernel1D([](BufferUInt cells, BufferUInt chunk_offset) noexcept {
        UInt c = dispatch_id().x;
        UInt run = chunk_offset.read(c);
        $for (t, c * kScanChunk, c * kScanChunk + kScanChunk) {
            cells.write(2u * t, run);
            run += cells.read(2u * t + 1u);
        };
    });
}

} // namespace

struct ShadowGrid::Kernels {
    Shader<1> a, b, c, d;   // per light type: bounds, shape, count, fill; the scan: reset, chunks, top, fill
};

ShadowGridShape shadow_grid_shape(uint32_t triangles) {
    ShadowGridShape s;
    // About two cells per triangle along a sun's grid side, half that per cube face (six of them).
    s.sun = round16(2.0 * std::sqrt(double(triangles)), 16, 128);
    s.point = round16(std::sqrt(double(triangles)), 16, 48);
    s.cells = std::max(s.sun * s.sun, 6 * s.point * s.point);
    return s;
}

ShadowGrid::ShadowGrid(Device& device, Stream& stream, const SceneData& data) : device_(device), data_(data) {
    const ShadingPlan& plan = data.shading;
    const ShadowPlan& sp = plan.shadow;
    uint32_t light_count = 1;
    for (const LightGroup& g : plan.lights) light_count = std::max(light_count, g.end);
    slot_host_.assign(light_count, 0u);
    for (const LightGroup& g : plan.lights) {
        if (g.shadows && sp.any && !sp.grid) every_triangle_ += (g.end - g.begin) * data.geometry.triangle_count;
        if (!g.shadows || !sp.any || !sp.grid) continue;
        auto& k = kernels_[g.model];
        if (!k)
            k = std::make_unique<Kernels>(Kernels{
                device.compile(bounds_kernel(g.model), {.name = "shadow_grid_bounds"}),
                device.compile(shape_kernel(g.model, sp.shape.sun), {.name = "shadow_grid_shape"}),
                device.compile(cells_kernel(g.model, sp.shape, false), {.name = "shadow_grid_count"}),
                device.compile(cells_kernel(g.model, sp.shape, true), {.name = "shadow_grid_fill"})});
        for (uint32_t i = g.begin; i < g.end; ++i) {
            slot_host_[i] = uint32_t(lights_.size());
            lights_.push_back(i);
            models_.push_back(g.model);
        }
    }
    const size_t cells = std::max<size_t>(lights_.size(), 1) * sp.shape.cells;
    buf_ = {device.create_buffer<float>(size_t(light_count) * kShadowHead), upload(device, stream, slot_host_),
            device.create_buffer<uint32_t>(2 * cells), device.create_buffer<uint32_t>(1)};
    cursor_ = device.create_buffer<uint32_t>(cells);
    chunk_sum_ = device.create_buffer<uint32_t>(cells / kScanChunk);
    chunk_max_ = device.create_buffer<uint32_t>(cells / kScanChunk);
    chunk_offset_ = device.create_buffer<uint32_t>(cells / kScanChunk + 1);
    if (!lights_.empty())
        scan_ = std::make_unique<Kernels>(Kernels{device.compile(reset_kernel(), {.name = "shadow_grid_reset"}),
                                                  device.compile(scan_chunks_kernel(), {.name = "shadow_grid_scan"}),
                                                  device.compile(scan_top_kernel(), {.name = "shadow_grid_scan_top"}),
                                                  device.compile(scan_fill_kernel(), {.name = "shadow_grid_offsets"})});
}

ShadowGrid::~ShadowGrid() = default;

uint32_t ShadowGrid::point_loops() const {
    if (lights_.empty()) return every_triangle_;
    uint32_t n = 0;
    for (uint32_t l : longest_) n += l;
    return n;
}

void ShadowGrid::build(Stream& stream, const StageBuffers& b, uint32_t view, const Buffer<float>& params) {
    if (lights_.empty()) return;
    const ShadowPlan& sp = data_.shading.shadow;
    const auto& g = b.data.geometry;
    const uint32_t vertex_chunks = (g.vertex_count + kVertexChunk - 1) / kVertexChunk;
    const float reach_k = sp.mode == Visibility::hard ? 0.0f : std::sqrt(soft_reach2(1.0f) * sp.sigma) * 1.01f;
    const Buffer<float3>& positions = b.world.positions.value;
    stream << buf_.cells.fill_zero() << cursor_.fill_zero();
    for (size_t s = 0; s < lights_.size() && g.triangle_count > 0; ++s) {
        const Kernels& k = *kernels_.at(models_[s]);
        const uint32_t light = lights_[s];
        stream << scan_->a(buf_.head, light).dispatch(1u)
               << k.a(positions, g.vertex_count, params, b.data.lights, light, b.views, view, buf_.head)
                      .dispatch(vertex_chunks)
               << k.b(params, b.data.lights, b.views, view, buf_.head, light, reach_k).dispatch(1u)
               << k.c(positions, g.triangles, params, b.data.lights, light, buf_.head, uint32_t(s * sp.shape.cells),
                      buf_.cells, cursor_, buf_.list)
                      .dispatch(g.triangle_count);
    }
    const uint32_t chunks = uint32_t(lights_.size() * sp.shape.cells / kScanChunk);
    std::vector<uint32_t> offsets(chunks + 1), most(chunks);
    stream << scan_->b(buf_.cells, chunk_sum_, chunk_max_).dispatch(chunks)
           << scan_->c(chunk_sum_, chunk_offset_, chunks).dispatch(1u)
           << scan_->d(buf_.cells, chunk_offset_).dispatch(chunks) << chunk_offset_.copy_to(offsets.data())
           << chunk_max_.copy_to(most.data()) << synchronize();
    const uint32_t per_light = sp.shape.cells / kScanChunk;
    longest_.assign(lights_.size(), 0u);
    for (uint32_t c = 0; c < chunks; ++c) longest_[c / per_light] = std::max(longest_[c / per_light], most[c]);
    const uint32_t budget = kLoopBudget / uint32_t(lights_.size());
    for (size_t s = 0; s < lights_.size(); ++s)
        if (longest_[s] > budget)
            throw SceneError(sp.file, sp.where[lights_[s]],
                             "light \"" + sp.names[lights_[s]] + "\": its shadows would test " +
                                 std::to_string(longest_[s]) +
                                 " triangles at one point (one cell of its light-space grid), more than the " +
                                 std::to_string(budget) + " that lavapipe's loop limit leaves each of the scene's " +
                                 std::to_string(lights_.size()) + " shadowing lights; use fewer, smaller triangles "
                                 "where its shadows fall, or fewer shadowing lights");
    if (offsets[chunks] > list_capacity_) {
        list_capacity_ = offsets[chunks];
        buf_.list = device_.create_buffer<uint32_t>(list_capacity_);
    }
    for (size_t s = 0; s < lights_.size() && g.triangle_count > 0; ++s)
        stream << kernels_.at(models_[s])
                      ->d(positions, g.triangles, params, b.data.lights, lights_[s], buf_.head,
                          uint32_t(s * sp.shape.cells), buf_.cells, cursor_, buf_.list)
                      .dispatch(g.triangle_count);
}

} // namespace adjoint::app
