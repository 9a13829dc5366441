// The rasterizer's kernels. Tiles bound the work per pixel: each pixel loops only over the triangles
// binned to its 8x8 tile. Binning is exact (count, scan, fill) so no tile list can overflow. Where the device
// has 64-bit atomics, a small triangle (pixel box within kSmallSpan x kSmallSpan) is not binned: one thread
// covers its few pixels and keeps the nearest (depth, id) per pixel with an atomic max of the inverted packed
// key (raster_small), and the tile pass starts from it. A pixel of a dense mesh used to test the 20-50
// triangles of its tile, reading each one's setup per lane; the small triangles' pass reads it once.
#include "raster.h"

#include "render/geometry_dsl.h"
#include "render/work_list.h"

#include <adjoint/core/error.h>

#include <optional>
#include <type_traits>
#include <vector>

namespace adjoint::app {

using gpu::kNone;
using gpu::kTileSize;

namespace {

constexpr uint32_t kScanChunk = 256;   // tiles per thread in the scan (keeps loops short on lavapipe)
// Tile-list entries a pixel tests in one dispatch of raster_depth: lavapipe ends a group of neighbouring
// invocations' loops after 65,535 iterations in all, so a longer list (200,000 triangles over one tile) is
// tested in several dispatches, each continuing from the nearest triangle the earlier ones found.
constexpr uint32_t kRasterPass = 16384;
// The pixel box (in pixel rows and columns) within which a triangle is small (see the top).
constexpr uint32_t kSmallSpan = 8;

} // namespace

struct Rasterizer::Kernels {
    Shader<1> setup, setup_camera, fill, scan_chunks, scan_top, scan_fill;
    std::optional<Shader<1>> small;   // where the device has 64-bit atomics
    Shader<2> raster, interpolate;
    std::optional<Shader<2>> barycentrics;   // compiled on the first barycentrics()
};

namespace {

// A triangle's setup from its vertices' clip coordinates: the projected triangle, counted into every tile its
// pixel bounding box, grown by `margin` pixels, touches; or, with `small_span` (0: none), marked small and counted
// into none when that box spans fewer than small_span pixel columns and rows.
Var<gpu::TriSetup> setup_triangle(const Float4& c0, const Float4& c1, const Float4& c2, BufferUInt& tile_count,
                                  const UInt& width, const UInt& height, const UInt& tiles_x, const Float& margin,
                                  const UInt& small_span) {
    Float w = cast<float>(width), h = cast<float>(height);
    Var<gpu::TriSetup> s;
    s.tiles = make_uint2(gpu::kCulledTiles, 0u);
    $if ((c0.w > 1e-6f) & (c1.w > 1e-6f) & (c2.w > 1e-6f)) {
        Float3 iw = make_float3(1.0f / c0.w, 1.0f / c1.w, 1.0f / c2.w);
        Float2 p0 = make_float2((c0.x * iw.x * 0.5f + 0.5f) * w, (0.5f - c0.y * iw.x * 0.5f) * h);
        Float2 p1 = make_float2((c1.x * iw.y * 0.5f + 0.5f) * w, (0.5f - c1.y * iw.y * 0.5f) * h);
        Float2 p2 = make_float2((c2.x * iw.z * 0.5f + 0.5f) * w, (0.5f - c2.y * iw.z * 0.5f) * h);
        Float3 z = make_float3(c0.z * iw.x, c1.z * iw.y, c2.z * iw.z) * 0.5f + 0.5f;   // GL NDC z to [0, 1]
        Float area = edge_function(p0, p1, p2);
        Float2 lo = min(min(p0, p1), p2) - margin, hi = max(max(p0, p1), p2) + margin;
        Bool on_screen = (hi.x >= 0.0f) & (hi.y >= 0.0f) & (lo.x < w) & (lo.y < h);
        Bool in_depth = (max(max(z.x, z.y), z.z) >= 0.0f) & (min(min(z.x, z.y), z.z) <= 1.0f);
        $if ((abs(area) > 1e-10f) & on_screen & in_depth) {
            Float2 clo = clamp(lo, make_float2(0.0f), make_float2(w - 1.0f, h - 1.0f));
            Float2 chi = clamp(hi, make_float2(0.0f), make_float2(w - 1.0f, h - 1.0f));
            UInt4 tiles = make_uint4(cast<uint32_t>(clo.x) / kTileSize, cast<uint32_t>(clo.y) / kTileSize,
                                     cast<uint32_t>(chi.x) / kTileSize, cast<uint32_t>(chi.y) / kTileSize);
            s.p0 = p0;
            s.p1 = p1;
            s.p2 = p2;
            s.inv_w = iw;
            s.z = z;
            s.tiles = make_uint2(tiles.x | (tiles.y << 16u), tiles.z | (tiles.w << 16u));
            Float2 span = floor(hi) - floor(lo);
            $if ((span.x < cast<float>(small_span)) & (span.y < cast<float>(small_span))) {
                s.tiles = make_uint2(s.tiles.x, s.tiles.y | gpu::kSmallTriangle);
            }
            $else {
                $for (ty, tiles.y, tiles.w + 1u) {
                    $for (tx, tiles.x, tiles.z + 1u) { tile_count.atomic(ty * tiles_x + tx).fetch_add(1u); };
                };
            };
        };
    };
    return s;
}

// With the camera as a host matrix (the static chain, whose camera is fixed).
auto setup_kernel() {
    return Kernel1D([](BufferFloat3 positions, BufferVar<uint3> triangles, BufferVar<gpu::TriSetup> out,
                       BufferUInt tile_count, Float4x4 view_proj, UInt width, UInt height, UInt tiles_x,
                       Float margin, UInt small_span) noexcept {
        UInt i = dispatch_id().x;
        UInt3 t = triangles.read(i);
        Float4 c0 = view_proj * make_float4(positions.read(t.x), 1.0f);
        Float4 c1 = view_proj * make_float4(positions.read(t.y), 1.0f);
        Float4 c2 = view_proj * make_float4(positions.read(t.z), 1.0f);
        out.write(i, setup_triangle(c0, c1, c2, tile_count, width, height, tiles_x, margin, small_span));
    });
}

// With the camera read from the parameter buffer as the differentiable stages read it (camera_of): the
// dynamic chain, whose camera may be a parameter, projects without reading it back.
auto setup_camera_kernel() {
    return Kernel1D([](BufferFloat3 positions, BufferVar<uint3> triangles, BufferVar<gpu::TriSetup> out,
                       BufferUInt tile_count, BufferFloat params, BufferVar<gpu::ViewRec> views, UInt view,
                       UInt width, UInt height, UInt tiles_x, Float margin, UInt small_span) noexcept {
        UInt i = dispatch_id().x;
        UInt3 t = triangles.read(i);
        DslCamera cam = camera_of(params, views.read(view));
        Float4 c0 = cam.clip(positions.read(t.x)), c1 = cam.clip(positions.read(t.y)), c2 = cam.clip(positions.read(t.z));
        out.write(i, setup_triangle(c0, c1, c2, tile_count, width, height, tiles_x, margin, small_span));
    });
}

// Each chunk's sum of tile counts, and its longest tile list (the host sizes raster_depth's passes by it).
auto scan_chunks_kernel() {
    return Kernel1D([](BufferUInt count, BufferUInt chunk_sum, BufferUInt chunk_longest, UInt tiles) noexcept {
        UInt c = dispatch_id().x;
        UInt sum = 0u, longest = 0u;
        $for (t, c * kScanChunk, min(c * kScanChunk + kScanChunk, tiles)) {
            UInt n = count.read(t);
            sum += n;
            longest = max(longest, n);
        };
        chunk_sum.write(c, sum);
        chunk_longest.write(c, longest);
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
    return Kernel1D([](BufferUInt count, BufferUInt chunk_offset, BufferUInt offset, BufferUInt cursor,
                       BufferUInt back_cursor, BufferUInt nearest, UInt tiles) noexcept {
        UInt c = dispatch_id().x;
        UInt run = chunk_offset.read(c);
        $for (t, c * kScanChunk, min(c * kScanChunk + kScanChunk, tiles)) {
            offset.write(t, run);
            cursor.write(t, 0u);
            back_cursor.write(t, 0u);
            nearest.write(2u * t, 0u);
            nearest.write(2u * t + 1u, 0u);
            run += count.read(t);
        };
    });
}

// Each tile's list: its triangles of positive projected area from the front (`cursor` counts them), the others
// from the back (TileBins::sides); per side, the largest 1 / clip w of their vertices (TileBins::nearest).
auto fill_kernel() {
    return Kernel1D([](BufferVar<gpu::TriSetup> setups, BufferUInt offset, BufferUInt count, BufferUInt cursor,
                       BufferUInt back_cursor, BufferUInt nearest, BufferUInt list, UInt tiles_x) noexcept {
        UInt i = dispatch_id().x;
        auto s = setups.read(i);
        UInt2 packed = s.tiles;
        UInt4 tiles = make_uint4(packed.x & 0xFFFFu, packed.x >> 16u, packed.y & 0xFFFFu, packed.y >> 16u);
        $if ((tiles.x <= tiles.z) & ((packed.y & gpu::kSmallTriangle) == 0u)) {
            Bool first_side = edge_function(s.p0, s.p1, s.p2) > 0.0f;
            // 1 / w > 0 on a binned triangle (every vertex in front of the camera): its bits order as the floats.
            UInt near_bits = bit_cast<uint32_t>(max(max(s.inv_w.x, s.inv_w.y), s.inv_w.z));
            $for (ty, tiles.y, tiles.w + 1u) {
                $for (tx, tiles.x, tiles.z + 1u) {
                    UInt tile = ty * tiles_x + tx;
                    $if (first_side) {
                        list.write(offset.read(tile) + cursor.atomic(tile).fetch_add(1u), i);
                        nearest.atomic(2u * tile).fetch_max(near_bits);
                    }
                    $else {
                        UInt from_back = back_cursor.atomic(tile).fetch_add(1u);
                        list.write(offset.read(tile) + count.read(tile) - 1u - from_back, i);
                        nearest.atomic(2u * tile + 1u).fetch_max(near_bits);
                    };
                };
            };
        };
    });
}

// Triangle setup `s` at pixel centre p: whether the rasterizer counts p inside it (the depth within [0, 1]), the
// depth there and the barycentrics l. One function for both passes (raster_small, raster_depth), so that they
// agree on every pixel.
struct Coverage {
    Bool inside;
    Float z;
    Float3 l;
};
template <typename S>
Coverage cover(const S& s, const Float2& p) {
    Float area = edge_function(s.p0, s.p1, s.p2);
    Float l0 = edge_function(s.p1, s.p2, p) / area;
    Float l1 = edge_function(s.p2, s.p0, p) / area;
    Float l2 = 1.0f - l0 - l1;
    Float z = l0 * s.z.x + l1 * s.z.y + l2 * s.z.z;
    return {(l0 >= 0.0f) & (l1 >= 0.0f) & (l2 >= 0.0f) & (z >= 0.0f) & (z <= 1.0f), z, make_float3(l0, l1, l2)};
}
// The perspective-correct barycentrics of vertices 1 and 2 (what the G-buffer stores) from screen-space ones.
template <typename S>
Float2 perspective_bary(const S& s, const Float3& l) {
    Float q0 = l.x * s.inv_w.x, q1 = l.y * s.inv_w.y, q2 = l.z * s.inv_w.z;
    Float inv = 1.0f / (q0 + q1 + q2);
    return make_float2(q1 * inv, q2 * inv);
}

// The small triangles, one thread each over its pixel box: per pixel the nearest (depth, id), ties to the lower id,
// as an atomic max of the key with both halves inverted (the buffer starts at 0, below every key). Non-negative
// floats order like their bits (the sign bit is cleared: -0 is 0).
auto small_kernel() {
    return Kernel1D([](BufferVar<gpu::TriSetup> setups, BufferUInt64 nearest, UInt width, UInt height) noexcept {
        UInt i = dispatch_id().x;
        auto s = setups.read(i);
        $if ((s.tiles.y & gpu::kSmallTriangle) != 0u) {
            Float2 lo = max(floor(min(min(s.p0, s.p1), s.p2)), make_float2(0.0f));
            Float2 hi = min(floor(max(max(s.p0, s.p1), s.p2)),
                            make_float2(cast<float>(width) - 1.0f, cast<float>(height) - 1.0f));
            $for (y, cast<uint32_t>(lo.y), cast<uint32_t>(hi.y) + 1u) {
                $for (x, cast<uint32_t>(lo.x), cast<uint32_t>(hi.x) + 1u) {
                    Coverage c = cover(s, make_float2(cast<float>(x) + 0.5f, cast<float>(y) + 0.5f));
                    $if (c.inside) {
                        UInt64 key = (cast<uint64_t>(~(bit_cast<uint>(c.z) & 0x7fffffffu)) << 32u) | cast<uint64_t>(~i);
                        nearest.atomic(y * width + x).fetch_max(key);
                    };
                };
            };
        };
    });
}

// Nearest triangle per pixel; ties in depth go to the lower triangle id, so the result does not depend
// on the order the atomics filled the tile lists. One pass tests the tile list's entries [first, first +
// kRasterPass); a later pass (first > 0) starts from the nearest triangle and depth the earlier ones wrote, the
// first (with Small) from the small triangles' nearest, which raster_small left in `nearest`.
// Small: the device has 64-bit atomics (a uint64 buffer needs shaderInt64: without Small `nearest` is a uint
// buffer, never read).
template <bool Small>
auto raster_kernel() {
    using Nearest = std::conditional_t<Small, BufferUInt64, BufferUInt>;
    return Kernel2D([](BufferVar<gpu::TriSetup> setups, BufferUInt offset, BufferUInt count, BufferUInt list,
                       BufferUInt tri_out, BufferFloat depth, UInt tiles_x, UInt first, UInt last, Nearest nearest,
                       BufferUInt covered, BufferUInt covered_count) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt width = dispatch_size().x;
        UInt at = pix.y * width + pix.x;
        UInt tile = tile_of(pix, tiles_x);
        Float2 p = make_float2(cast<float>(pix.x) + 0.5f, cast<float>(pix.y) + 0.5f);
        Float best_z = 2.0f;
        UInt best = kNone;
        $if (first > 0u) {
            best = tri_out.read(at);
            best_z = depth.read(at);
        }
        $else {
            if constexpr (Small) {
                UInt64 key = nearest.read(at);
                $if (key != 0ull) {   // both halves inverted (small_kernel)
                    best = ~cast<uint32_t>(key & 0xffffffffull);
                    best_z = bit_cast<float>(~cast<uint32_t>(key >> 32u));
                };
            }
        };
        UInt n = count.read(tile);
        UInt begin = offset.read(tile);
        $for (k, begin + min(first, n), begin + min(first + kRasterPass, n)) {
            UInt ti = list.read(k);
            auto s = setups.read(ti);
            Coverage c = cover(s, p);
            Bool closer = (c.z < best_z) | ((c.z == best_z) & (ti < best));
            $if (c.inside & closer) {
                best_z = c.z;
                best = ti;
            };
        };
        tri_out.write(at, best);
        depth.write(at, best_z);
        append_listed(covered, covered_count, 0, (last != 0u) & (best != kNone), at);
    });
}

// Interpolates the visible triangle's attributes; texture-coordinate derivatives come from the
// barycentrics one pixel right and one pixel down on the same triangle's plane.
auto interpolate_kernel() {
    return Kernel2D([](BufferVar<gpu::TriSetup> setups, BufferUInt tri_in,
                       BufferFloat3 positions, BufferFloat3 normals, BufferFloat3 colors, BufferFloat2 uvs,
                       BufferVar<uint3> triangles, BufferUInt triangle_material,
                       BufferVar<gpu::SurfaceRecord> out, BufferFloat4 tangents_out, Float3 eye,
                       UInt tangents) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x;
        UInt ti = tri_in.read(at);
        Var<gpu::SurfaceRecord> s;
        s.material = kNone;
        $if (ti != kNone) {
            UInt3 t = triangles.read(ti);
            auto st = setups.read(ti);
            Float2 p = make_float2(cast<float>(pix.x) + 0.5f, cast<float>(pix.y) + 0.5f);
            Float2 b = perspective_bary(st, cover(st, p).l);
            Float b0 = 1.0f - b.x - b.y;
            s.position = positions.read(t.x) * b0 + positions.read(t.y) * b.x + positions.read(t.z) * b.y;
            Float3 n = normalize(normals.read(t.x) * b0 + normals.read(t.y) * b.x + normals.read(t.z) * b.y);
            s.normal = ite(dot(n, eye - s.position) < 0.0f, -n, n);
            s.color = colors.read(t.x) * b0 + colors.read(t.y) * b.x + colors.read(t.z) * b.y;
            Float2 uv0 = uvs.read(t.x), uv1 = uvs.read(t.y), uv2 = uvs.read(t.z);
            s.uv = uv0 * b0 + uv1 * b.x + uv2 * b.y;
            Float area = edge_function(st.p0, st.p1, st.p2);
            auto uv_at = [&](const Float2& p) {
                Float l0 = edge_function(st.p1, st.p2, p) / area * st.inv_w.x;
                Float l1 = edge_function(st.p2, st.p0, p) / area * st.inv_w.y;
                Float l2 = edge_function(st.p0, st.p1, p) / area * st.inv_w.z;
                Float inv = 1.0f / (l0 + l1 + l2);
                return (uv0 * l0 + uv1 * l1 + uv2 * l2) * inv;
            };
            Float2 c = uv_at(p);
            s.duv_dx = uv_at(p + make_float2(1.0f, 0.0f)) - c;
            s.duv_dy = uv_at(p + make_float2(0.0f, 1.0f)) - c;
            $if (tangents != 0u) {
                tangents_out.write(at, tangent_frame(positions.read(t.x), positions.read(t.y), positions.read(t.z),
                                                     uv0, uv1, uv2, s.normal));
            };
            s.material = triangle_material.read(ti);
        };
        out.write(at, s);
    });
}

auto barycentrics_kernel() {
    return Kernel2D([](BufferVar<gpu::TriSetup> setups, BufferUInt tri_in, BufferFloat2 out) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x;
        UInt ti = tri_in.read(at);
        Float2 b = make_float2(0.0f);
        $if (ti != kNone) {
            auto st = setups.read(ti);
            b = perspective_bary(st, cover(st, make_float2(cast<float>(pix.x) + 0.5f, cast<float>(pix.y) + 0.5f)).l);
        };
        out.write(at, b);
    });
}

} // namespace

Rasterizer::Rasterizer(Device& device, bool small_triangles) : device_(device) {
    const bool small = small_triangles && device.int64_atomics();
    k_ = std::make_unique<Kernels>(Kernels{
        device.compile(setup_kernel(), {.name = "raster_setup"}),
        device.compile(setup_camera_kernel(), {.name = "raster_setup_camera"}),
        device.compile(fill_kernel(), {.name = "raster_fill"}),
        device.compile(scan_chunks_kernel(), {.name = "raster_scan_chunks"}),
        device.compile(scan_top_kernel(), {.name = "raster_scan_top"}),
        device.compile(scan_fill_kernel(), {.name = "raster_scan_fill"}),
        std::nullopt,
        small ? device.compile(raster_kernel<true>(), {.name = "raster_depth"})
              : device.compile(raster_kernel<false>(), {.name = "raster_depth"}),
        device.compile(interpolate_kernel(), {.name = "raster_interpolate"}), std::nullopt});
    if (small) k_->small.emplace(device.compile(small_kernel(), {.name = "raster_small"}));
}

Rasterizer::~Rasterizer() = default;

TileBins Rasterizer::bin(Stream& stream, const DeviceGeometry& g, const ViewCamera& view, float margin,
                         uint32_t reserve, uint32_t small_span) {
    uint32_t tiles_x = (view.width + kTileSize - 1) / kTileSize, tiles_y = (view.height + kTileSize - 1) / kTileSize;
    uint32_t tiles = tiles_x * tiles_y, chunks = (tiles + kScanChunk - 1) / kScanChunk;
    TileBins b{device_.create_buffer<gpu::TriSetup>(std::max(g.triangle_count, 1u)), device_.create_buffer<uint32_t>(tiles),
               device_.create_buffer<uint32_t>(tiles), Buffer<uint32_t>{}, view.width, view.height, tiles_x, 0, 0,
               device_.create_buffer<uint32_t>(std::max(tiles, 1u)),        // the fill's cursor: each tile's first side
               device_.create_buffer<uint32_t>(std::max(2 * tiles, 1u))};
    auto back_cursor = device_.create_buffer<uint32_t>(std::max(tiles, 1u));
    auto chunk_sum = device_.create_buffer<uint32_t>(chunks);
    auto chunk_longest = device_.create_buffer<uint32_t>(chunks);
    auto chunk_offset = device_.create_buffer<uint32_t>(chunks + 1);
    std::vector<uint32_t> offsets(chunks + 1), longest(chunks);
    stream << b.count.fill_zero();
    if (g.triangle_count > 0 && view.params)
        stream << k_->setup_camera(g.positions, g.triangles, b.setups, b.count, *view.params, *view.views, view.view,
                                   view.width, view.height, tiles_x, margin, small_span)
                      .dispatch(g.triangle_count);
    else if (g.triangle_count > 0)
        stream << k_->setup(g.positions, g.triangles, b.setups, b.count, view.view_proj, view.width, view.height, tiles_x,
                            margin, small_span)
                      .dispatch(g.triangle_count);
    stream << k_->scan_chunks(b.count, chunk_sum, chunk_longest, tiles).dispatch(chunks)
           << k_->scan_top(chunk_sum, chunk_offset, chunks).dispatch(1u)
           << k_->scan_fill(b.count, chunk_offset, b.offset, b.sides, back_cursor, b.nearest, tiles).dispatch(chunks)
           << chunk_offset.copy_to(offsets.data()) << chunk_longest.copy_to(longest.data()) << synchronize();
    uint32_t total = offsets[chunks];
    b.longest = *std::max_element(longest.begin(), longest.end());
    b.reserved_at = total;
    b.list = device_.create_buffer<uint32_t>(std::max(uint64_t(total) + reserve, uint64_t(1)));
    if (g.triangle_count > 0)
        stream << k_->fill(b.setups, b.offset, b.count, b.sides, back_cursor, b.nearest, b.list, tiles_x)
                      .dispatch(g.triangle_count);
    return b;
}

GBuffer Rasterizer::rasterize(Stream& stream, const DeviceGeometry& g, const ViewCamera& view) {
    const bool small = k_->small.has_value();
    TileBins b = bin(stream, g, view, 0.0f, 0, small ? kSmallSpan : 0);
    const size_t pixels = size_t(view.width) * view.height;
    GBuffer gb{b.setups, device_.create_buffer<uint32_t>(pixels), view.width, view.height,
               device_.create_buffer<float>(pixels), device_.create_buffer<uint32_t>(std::max<size_t>(pixels, 1)),
               device_.create_buffer<uint32_t>(1)};
    stream << gb.covered_count.fill_zero();
    auto passes = [&](const auto& nearest) {
        uint32_t first = 0;
        do {
            const uint32_t last = first + kRasterPass >= b.longest ? 1 : 0;   // lists the covered pixels
            stream << k_->raster(b.setups, b.offset, b.count, b.list, gb.triangle, gb.depth, b.tiles_x, first, last,
                                 nearest, gb.covered, gb.covered_count)
                          .dispatch(view.width, view.height);
            first += kRasterPass;
        } while (first < b.longest);
    };
    if (small) {
        auto nearest = device_.create_buffer<uint64_t>(std::max<size_t>(pixels, 1));
        stream << nearest.fill_zero();
        if (g.triangle_count > 0)
            stream << (*k_->small)(b.setups, nearest, view.width, view.height).dispatch(g.triangle_count);
        passes(nearest);
    } else {
        passes(device_.create_buffer<uint32_t>(1));
    }
    stream << synchronize();
    return gb;
}

void Rasterizer::interpolate(Stream& stream, const DeviceGeometry& g, const ViewCamera& view, const GBuffer& gb,
                             SurfaceBuffers& surfaces) {
    stream << k_->interpolate(gb.setups, gb.triangle, g.positions, g.normals, g.colors, g.uvs, g.triangles,
                              g.triangle_material, surfaces.records, surfaces.tangents, view.eye,
                              g.tangents ? 1u : 0u)
                  .dispatch(view.width, view.height);
}

Buffer<float2> Rasterizer::barycentrics(Stream& stream, const GBuffer& gb) {
    if (!k_->barycentrics) k_->barycentrics.emplace(device_.compile(barycentrics_kernel(), {.name = "raster_barycentrics"}));
    auto out = device_.create_buffer<float2>(std::max<size_t>(size_t(gb.width) * gb.height, 1));
    stream << (*k_->barycentrics)(gb.setups, gb.triangle, out).dispatch(gb.width, gb.height) << synchronize();
    return out;
}

} // namespace adjoint::app
