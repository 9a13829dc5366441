// The rasterizer's kernels. Tiles bound the work per pixel: each pixel loops only over the triangles
// binned to its 8x8 tile. Binning is exact (count, scan, fill) so no tile list can overflow. Where the device
// has 64-bit atomics, a small triangle (pixel box within kSmallSpan x kSmallSpan) is not binned: one thread
// covers its few pixels and keeps the nearest (reversed depth, id) per pixel with an atomic max of the packed key,
// its id inverted (raster_small), and the tile pass starts from it. A pixel of a dense mesh used to test the 20-50
// triangles of its tile, reading each one's setup per lane; the small triangles' pass reads it once.
#include "raster.h"

#include "render/geometry_dsl.h"
#include "render/raster_depth_dsl.h"

#include <adjoint/core/error.h>

#include <optional>
#include <vector>

namespace adjoint::app {

using gpu::kNone;
using gpu::kTileSize;

namespace {

constexpr uint32_t kScanChunk = 256;   // tiles per thread in the scan (keeps loops short on lavapipe)
// The pixel box (in pixel rows and columns) within which a triangle is small (see the top).
constexpr uint32_t kSmallSpan = 8;

} // namespace

struct Rasterizer::Kernels {
    Shader<1> setup, setup_camera, fill, scan_chunks, scan_top, scan_fill;
    std::optional<Shader<1>> small;   // where the device has 64-bit atomics
    Shader<1> raster;
    Shader<2> interpolate;
    std::optional<Shader<2>> barycentrics;   // compiled on the first barycentrics()
};

namespace {

// A triangle's setup from its vertices' clip coordinates: the projected triangle, counted into every tile its
// pixel bounding box, grown by `margin` pixels, touches; or, with `small_span` (0: none), marked small and counted
// into none when that box spans fewer than small_span pixel columns and rows.
//
// A triangle with corners behind the camera and in front of the near plane (a floor that runs under the camera) is
// drawn without clipping it into smaller triangles: coverage, depth and barycentrics come from its edge functions in
// homogeneous pixel coordinates (homogeneous_edges, raster.h: Olano and Greer's 2D homogeneous rasterization), which
// divide by no w. Its pixel box is the box of its part in front of the near plane (its corners there, and the points
// where its edges cross the plane), grown by the margin as any: soft rasterization clips such a triangle at the near
// plane (clip_triangle in render/soft_dsl.h).
// `near`: the centre of its pixel box on the screen, where it is binned; else its first corner's pixel, or the
// screen's nearest (where edge_record takes its det). nearer[0] counts the binned triangles with
// a corner nearer than the near plane (TileBins::nearer).
Var<gpu::TriSetup> setup_triangle(const Float4& c0, const Float4& c1, const Float4& c2, BufferUInt& tile_count,
                                  BufferUInt& nearer, const UInt& width, const UInt& height, const UInt& tiles_x,
                                  const Float& margin, const UInt& small_span, Float2& near) {
    Float w = cast<float>(width), h = cast<float>(height);
    Var<gpu::TriSetup> s;
    s.tiles = make_uint2(gpu::kCulledTiles, 0u);
    // The projected corners (a corner behind the camera mirrored: projective_w).
    Float3 iw = make_float3(1.0f / projective_w(c0.w), 1.0f / projective_w(c1.w), 1.0f / projective_w(c2.w));
    Float2 p0 = projected_pixel(c0, iw.x, w, h), p1 = projected_pixel(c1, iw.y, w, h),
           p2 = projected_pixel(c2, iw.z, w, h);
    s.p0 = p0;
    s.p1 = p1;
    s.p2 = p2;
    s.inv_w = iw;
    near = clamp(p0, make_float2(0.0f), make_float2(w, h));
    Float3 z = make_float3(c0.z * iw.x, c1.z * iw.y, c2.z * iw.z) * 0.5f + 0.5f;   // GL NDC z to [0, 1]
    Float area = edge_function(p0, p1, p2);
    Bool in_front = (c0.w > kMinClipW) & (c1.w > kMinClipW) & (c2.w > kMinClipW);
    // Counts the triangle into the tiles of the pixel box [lo, hi] when the box meets the image and the triangle's
    // depths [zlo, zhi] meet [0, 1]; marks it small where `may_be_small` and its box is.
    auto bin = [&](const Float2& lo, const Float2& hi, const Float& zlo, const Float& zhi, const Bool& may_be_small) {
        Bool on_screen = (hi.x >= 0.0f) & (hi.y >= 0.0f) & (lo.x < w) & (lo.y < h);
        $if ((abs(area) > 1e-10f) & on_screen & (zhi >= 0.0f) & (zlo <= 1.0f)) {
            $if (zlo < 0.0f) { nearer.atomic(0u).fetch_add(1u); };
            Float2 clo = clamp(lo, make_float2(0.0f), make_float2(w - 1.0f, h - 1.0f));
            Float2 chi = clamp(hi, make_float2(0.0f), make_float2(w - 1.0f, h - 1.0f));
            near = (clo + chi) * 0.5f;
            UInt4 tiles = make_uint4(cast<uint32_t>(clo.x) / kTileSize, cast<uint32_t>(clo.y) / kTileSize,
                                     cast<uint32_t>(chi.x) / kTileSize, cast<uint32_t>(chi.y) / kTileSize);
            s.tiles = make_uint2(tiles.x | (tiles.y << 16u), tiles.z | (tiles.w << 16u));
            Float2 span = floor(hi) - floor(lo);
            $if (may_be_small & (span.x < cast<float>(small_span)) & (span.y < cast<float>(small_span))) {
                s.tiles = make_uint2(s.tiles.x, s.tiles.y | gpu::kSmallTriangle);
            }
            $else {
                $for (ty, tiles.y, tiles.w + 1u) {
                    $for (tx, tiles.x, tiles.z + 1u) { tile_count.atomic(ty * tiles_x + tx).fetch_add(1u); };
                };
            };
        };
    };
    $if (in_front) {
        bin(min(min(p0, p1), p2) - margin, max(max(p0, p1), p2) + margin, min(min(z.x, z.y), z.z),
            max(max(z.x, z.y), z.z), true);
    }
    $else {
        // The part in front of the near plane, where NDC z >= -1: d = z + w >= 0 (GL clip space).
        const Float4 c[3] = {c0, c1, c2};
        Float2 lo = make_float2(3e38f), hi = make_float2(-3e38f);
        Bool any = false;
        for (int k = 0; k < 3; ++k) {
            const Float4 &a = c[k], &b = c[(k + 1) % 3];
            Float da = a.z + a.w, db = b.z + b.w;
            auto take = [&](const Float4& q) {   // q.w >= near > 0 here
                Float2 pq = projected_pixel(q, 1.0f / q.w, w, h);
                lo = min(lo, pq);
                hi = max(hi, pq);
                any = true;
            };
            $if (da >= 0.0f) { take(a); };
            $if ((da >= 0.0f) != (db >= 0.0f)) { take(a + (b - a) * (da / (da - db))); };
        }
        // Depths: the crossings lie at 0 (the near plane), so the box's triangle meets [0, 1] when any part does;
        // and it reaches nearer (-1: counted in `nearer`).
        $if (any) { bin(lo - margin, hi + margin, -1.0f, 0.0f, false); };
    };
    return s;
}

// Clip w - z as a row of the matrix (its row 3 less its row 2, in doubles): w and z each grow with the distance from
// the camera and cancel in their difference, the row's terms do not (edge_record's reversed depth).
float4 reversed_row(const float4x4& m) {
    float4 r;
    for (int c = 0; c < 4; ++c) r[c] = float(double(m[c][3]) - double(m[c][2]));
    return r;
}

// Each triangle's setup and its edges (homogeneous_edges), the edges of a culled triangle too: the antialias walk
// crosses culled triangles and reads their edges here instead of computing them again under a branch that lavapipe
// runs for every step of every walk. With the camera as a host matrix (the static chain, whose camera is fixed).
auto setup_kernel() {
    return Kernel1D([](BufferFloat3 positions, BufferVar<uint3> triangles, BufferVar<gpu::TriSetup> out,
                       BufferVar<gpu::TriEdges> edges, BufferUInt tile_count, BufferUInt nearer, Float4x4 view_proj,
                       Float4 reversed_row, UInt width, UInt height, UInt tiles_x, Float margin,
                       UInt small_span) noexcept {
        UInt i = dispatch_id().x;
        UInt3 t = triangles.read(i);
        Float4 p0 = make_float4(positions.read(t.x), 1.0f), p1 = make_float4(positions.read(t.y), 1.0f),
               p2 = make_float4(positions.read(t.z), 1.0f);
        Float4 c0 = view_proj * p0, c1 = view_proj * p1, c2 = view_proj * p2;
        Float3 reversed = make_float3(dot(reversed_row, p0), dot(reversed_row, p1), dot(reversed_row, p2));
        Float2 near;
        out.write(i, setup_triangle(c0, c1, c2, tile_count, nearer, width, height, tiles_x, margin, small_span, near));
        edges.write(i, edge_record(c0, c1, c2, reversed, t, cast<float>(width), cast<float>(height), near));
    });
}

// With the camera read from the parameter buffer as the differentiable stages read it (camera_of): the
// dynamic chain, whose camera may be a parameter, projects without reading it back.
auto setup_camera_kernel() {
    return Kernel1D([](BufferFloat3 positions, BufferVar<uint3> triangles, BufferVar<gpu::TriSetup> out,
                       BufferVar<gpu::TriEdges> edges, BufferUInt tile_count, BufferUInt nearer, BufferFloat params,
                       BufferVar<gpu::ViewRec> views, UInt view, UInt width, UInt height, UInt tiles_x, Float margin,
                       UInt small_span) noexcept {
        UInt i = dispatch_id().x;
        UInt3 t = triangles.read(i);
        DslCamera cam = camera_of(params, views.read(view));
        Float4 c0 = cam.clip(positions.read(t.x)), c1 = cam.clip(positions.read(t.y)), c2 = cam.clip(positions.read(t.z));
        Float2 near;
        out.write(i, setup_triangle(c0, c1, c2, tile_count, nearer, width, height, tiles_x, margin, small_span, near));
        edges.write(i, edge_record(c0, c1, c2, make_float3(cam.reversed(c0), cam.reversed(c1), cam.reversed(c2)), t,
                                   cam.width, cam.height, near));
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
            // (Only soft rasterization reads the sides and the nearest 1 / w.) A triangle with a corner on or behind
            // the camera's plane (1 / projective_w <= 0) reaches the near plane: its nearest is infinite, and its
            // side, from its mirrored corners, is either.
            Bool first_side = edge_function(s.p0, s.p1, s.p2) > 0.0f;
            // The largest 1 / w is > 0 on a binned triangle (a vertex in front of the camera): its bits order as the
            // floats.
            Bool behind = min(min(s.inv_w.x, s.inv_w.y), s.inv_w.z) <= 0.0f;
            UInt near_bits = ite(behind, UInt(0x7F800000u),   // +infinity
                                 bit_cast<uint32_t>(max(max(s.inv_w.x, s.inv_w.y), s.inv_w.z)));
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
                         OwnLists own, uint32_t small_span) {
    uint32_t tiles_x = (view.width + kTileSize - 1) / kTileSize, tiles_y = (view.height + kTileSize - 1) / kTileSize;
    uint32_t tiles = tiles_x * tiles_y, chunks = (tiles + kScanChunk - 1) / kScanChunk;
    TileBins b{device_.create_buffer<gpu::TriSetup>(std::max(g.triangle_count, 1u)),
               device_.create_buffer<gpu::TriEdges>(std::max(g.triangle_count, 1u)),
               device_.create_buffer<uint32_t>(tiles),
               device_.create_buffer<uint32_t>(tiles), Buffer<uint32_t>{}, view.width, view.height, tiles_x, 0, 0,
               device_.create_buffer<uint32_t>(std::max(tiles, 1u)),        // the fill's cursor: each tile's first side
               device_.create_buffer<uint32_t>(std::max(2 * tiles, 1u))};
    auto back_cursor = device_.create_buffer<uint32_t>(std::max(tiles, 1u));
    auto chunk_sum = device_.create_buffer<uint32_t>(chunks);
    auto chunk_longest = device_.create_buffer<uint32_t>(chunks);
    auto chunk_offset = device_.create_buffer<uint32_t>(chunks + 1);
    auto nearer = device_.create_buffer<uint32_t>(1);
    std::vector<uint32_t> offsets(chunks + 1), longest(chunks);
    stream << b.count.fill_zero() << nearer.fill_zero();
    if (g.triangle_count > 0 && view.params)
        stream << k_->setup_camera(g.positions, g.triangles, b.setups, b.edges, b.count, nearer, *view.params,
                                   *view.views, view.view, view.width, view.height, tiles_x, margin, small_span)
                      .dispatch(g.triangle_count);
    else if (g.triangle_count > 0)
        stream << k_->setup(g.positions, g.triangles, b.setups, b.edges, b.count, nearer, view.view_proj,
                            reversed_row(view.view_proj), view.width, view.height, tiles_x, margin, small_span)
                      .dispatch(g.triangle_count);
    stream << k_->scan_chunks(b.count, chunk_sum, chunk_longest, tiles).dispatch(chunks)
           << k_->scan_top(chunk_sum, chunk_offset, chunks).dispatch(1u)
           << k_->scan_fill(b.count, chunk_offset, b.offset, b.sides, back_cursor, b.nearest, tiles).dispatch(chunks)
           << chunk_offset.copy_to(offsets.data()) << chunk_longest.copy_to(longest.data())
           << nearer.copy_to(&b.nearer) << synchronize();
    uint32_t total = offsets[chunks];
    b.longest = *std::max_element(longest.begin(), longest.end());
    b.reserved_at = total;
    b.own = own.per_pixel;
    if (own.fit && own.pixels > 0) {
        const uint64_t most = std::min<uint64_t>(device_.max_buffer_bytes() / sizeof(uint32_t), uint64_t(1) << 28);
        b.own = uint32_t(std::min<uint64_t>(own.per_pixel, most > total ? (most - total) / own.pixels : 0));
    }
    b.list = device_.create_buffer<uint32_t>(std::max(uint64_t(total) + uint64_t(b.own) * own.pixels, uint64_t(1)));
    if (g.triangle_count > 0)
        stream << k_->fill(b.setups, b.offset, b.count, b.sides, back_cursor, b.nearest, b.list, tiles_x)
                      .dispatch(g.triangle_count);
    return b;
}

GBuffer Rasterizer::rasterize(Stream& stream, const DeviceGeometry& g, const ViewCamera& view) {
    const bool small = k_->small.has_value();
    TileBins b = bin(stream, g, view, 0.0f, {}, small ? kSmallSpan : 0);
    const size_t pixels = size_t(view.width) * view.height;
    GBuffer gb{b.setups, b.edges, device_.create_buffer<uint32_t>(pixels), view.width, view.height,
               device_.create_buffer<float>(pixels), device_.create_buffer<uint32_t>(std::max<size_t>(pixels, 1)),
               device_.create_buffer<uint32_t>(1)};
    stream << gb.covered_count.fill_zero();
    auto passes = [&](const auto& nearest) {
        uint32_t first = 0;
        do {
            const uint32_t last = first + kRasterPass >= b.longest ? 1 : 0;   // lists the covered pixels
            stream << k_->raster(b.edges, b.offset, b.count, b.list, gb.triangle, gb.depth, b.tiles_x, first, last,
                                 nearest, gb.covered, gb.covered_count, view.width, view.height)
                          .dispatch(b.tiles() * kTileQuads);   // a quad a thread (tile_quad)
            first += kRasterPass;
        } while (first < b.longest);
    };
    if (small) {
        auto nearest = device_.create_buffer<uint64_t>(std::max<size_t>(pixels, 1));
        stream << nearest.fill_zero();
        if (g.triangle_count > 0)
            stream << (*k_->small)(b.setups, b.edges, nearest, view.width, view.height).dispatch(g.triangle_count);
        passes(nearest);
    } else {
        passes(device_.create_buffer<uint32_t>(1));
    }
    stream << synchronize();
    return gb;
}

void Rasterizer::interpolate(Stream& stream, const DeviceGeometry& g, const ViewCamera& view, const GBuffer& gb,
                             SurfaceBuffers& surfaces) {
    stream << k_->interpolate(gb.edges, gb.triangle, g.positions, g.normals, g.colors, g.uvs, g.triangles,
                              g.triangle_material, surfaces.records, surfaces.tangents, view.eye,
                              g.tangents ? 1u : 0u)
                  .dispatch(view.width, view.height);
}

Buffer<float2> Rasterizer::barycentrics(Stream& stream, const GBuffer& gb) {
    if (!k_->barycentrics) k_->barycentrics.emplace(device_.compile(barycentrics_kernel(), {.name = "raster_barycentrics"}));
    auto out = device_.create_buffer<float2>(std::max<size_t>(size_t(gb.width) * gb.height, 1));
    stream << (*k_->barycentrics)(gb.edges, gb.triangle, out).dispatch(gb.width, gb.height) << synchronize();
    return out;
}

} // namespace adjoint::app
