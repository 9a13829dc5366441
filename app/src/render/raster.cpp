// The rasterizer's kernels. Tiles bound the work per pixel: each pixel loops only over the triangles
// binned to its 16x16 tile. Binning is exact (count, scan, fill) so no tile list can overflow.
#include "raster.h"

#include "render/geometry_dsl.h"

#include <adjoint/core/error.h>

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

} // namespace

struct Rasterizer::Kernels {
    Shader<1> setup, setup_camera, fill, scan_chunks, scan_top, scan_fill;
    Shader<2> raster, interpolate;
};

namespace {

// A triangle's setup from its vertices' clip coordinates: the projected triangle, counted into every tile its
// pixel bounding box, grown by `margin` pixels, touches.
Var<gpu::TriSetup> setup_triangle(const Float4& c0, const Float4& c1, const Float4& c2, BufferUInt& tile_count,
                                  const UInt& width, const UInt& height, const UInt& tiles_x, const Float& margin) {
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
            $for (ty, tiles.y, tiles.w + 1u) {
                $for (tx, tiles.x, tiles.z + 1u) { tile_count.atomic(ty * tiles_x + tx).fetch_add(1u); };
            };
        };
    };
    return s;
}

// With the camera as a host matrix (the static chain, whose camera is fixed).
auto setup_kernel() {
    return Kernel1D([](BufferFloat3 positions, BufferVar<uint3> triangles, BufferVar<gpu::TriSetup> out,
                       BufferUInt tile_count, Float4x4 view_proj, UInt width, UInt height, UInt tiles_x,
                       Float margin) noexcept {
        UInt i = dispatch_id().x;
        UInt3 t = triangles.read(i);
        Float4 c0 = view_proj * make_float4(positions.read(t.x), 1.0f);
        Float4 c1 = view_proj * make_float4(positions.read(t.y), 1.0f);
        Float4 c2 = view_proj * make_float4(positions.read(t.z), 1.0f);
        out.write(i, setup_triangle(c0, c1, c2, tile_count, width, height, tiles_x, margin));
    });
}

// With the camera read from the parameter buffer as the differentiable stages read it (camera_of): the
// dynamic chain, whose camera may be a parameter, projects without reading it back.
auto setup_camera_kernel() {
    return Kernel1D([](BufferFloat3 positions, BufferVar<uint3> triangles, BufferVar<gpu::TriSetup> out,
                       BufferUInt tile_count, BufferFloat params, BufferVar<gpu::ViewRec> views, UInt view,
                       UInt width, UInt height, UInt tiles_x, Float margin) noexcept {
        UInt i = dispatch_id().x;
        UInt3 t = triangles.read(i);
        DslCamera cam = camera_of(params, views.read(view));
        Float4 c0 = cam.clip(positions.read(t.x)), c1 = cam.clip(positions.read(t.y)), c2 = cam.clip(positions.read(t.z));
        out.write(i, setup_triangle(c0, c1, c2, tile_count, width, height, tiles_x, margin));
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
                       UInt tiles) noexcept {
        UInt c = dispatch_id().x;
        UInt run = chunk_offset.read(c);
        $for (t, c * kScanChunk, min(c * kScanChunk + kScanChunk, tiles)) {
            offset.write(t, run);
            cursor.write(t, 0u);
            run += count.read(t);
        };
    });
}

auto fill_kernel() {
    return Kernel1D([](BufferVar<gpu::TriSetup> setups, BufferUInt offset, BufferUInt cursor, BufferUInt list,
                       UInt tiles_x) noexcept {
        UInt i = dispatch_id().x;
        UInt2 packed = setups.read(i).tiles;
        UInt4 tiles = make_uint4(packed.x & 0xFFFFu, packed.x >> 16u, packed.y & 0xFFFFu, packed.y >> 16u);
        $if (tiles.x <= tiles.z) {
            $for (ty, tiles.y, tiles.w + 1u) {
                $for (tx, tiles.x, tiles.z + 1u) {
                    UInt tile = ty * tiles_x + tx;
                    UInt slot = cursor.atomic(tile).fetch_add(1u);
                    list.write(offset.read(tile) + slot, i);
                };
            };
        };
    });
}

// Nearest triangle per pixel; ties in depth go to the lower triangle id, so the result does not depend
// on the order the atomics filled the tile lists. One pass tests the tile list's entries [first, first +
// kRasterPass); a later pass (first > 0) starts from the nearest triangle and depth the earlier ones wrote.
auto raster_kernel() {
    return Kernel2D([](BufferVar<gpu::TriSetup> setups, BufferUInt offset, BufferUInt count, BufferUInt list,
                       BufferUInt tri_out, BufferFloat2 bary_out, BufferFloat depth, UInt tiles_x,
                       UInt first) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt width = dispatch_size().x;
        UInt at = pix.y * width + pix.x;
        UInt tile = tile_of(pix, tiles_x);
        Float2 p = make_float2(cast<float>(pix.x) + 0.5f, cast<float>(pix.y) + 0.5f);
        Float best_z = 2.0f;
        UInt best = kNone;
        Float2 best_b = make_float2(0.0f);
        $if (first > 0u) {
            best = tri_out.read(at);
            best_b = bary_out.read(at);
            best_z = depth.read(at);
        };
        UInt n = count.read(tile);
        UInt begin = offset.read(tile);
        $for (k, begin + min(first, n), begin + min(first + kRasterPass, n)) {
            UInt ti = list.read(k);
            auto s = setups.read(ti);
            Float area = edge_function(s.p0, s.p1, s.p2);
            Float l0 = edge_function(s.p1, s.p2, p) / area;
            Float l1 = edge_function(s.p2, s.p0, p) / area;
            Float l2 = 1.0f - l0 - l1;
            Float z = l0 * s.z.x + l1 * s.z.y + l2 * s.z.z;
            Bool inside = (l0 >= 0.0f) & (l1 >= 0.0f) & (l2 >= 0.0f) & (z >= 0.0f) & (z <= 1.0f);
            Bool closer = (z < best_z) | ((z == best_z) & (ti < best));
            $if (inside & closer) {
                Float q0 = l0 * s.inv_w.x, q1 = l1 * s.inv_w.y, q2 = l2 * s.inv_w.z;
                Float inv = 1.0f / (q0 + q1 + q2);
                best_z = z;
                best = ti;
                best_b = make_float2(q1 * inv, q2 * inv);
            };
        };
        tri_out.write(at, best);
        bary_out.write(at, best_b);
        depth.write(at, best_z);
    });
}

// Interpolates the visible triangle's attributes; texture-coordinate derivatives come from the
// barycentrics one pixel right and one pixel down on the same triangle's plane.
auto interpolate_kernel() {
    return Kernel2D([](BufferVar<gpu::TriSetup> setups, BufferUInt tri_in, BufferFloat2 bary_in,
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
            Float2 b = bary_in.read(at);
            Float b0 = 1.0f - b.x - b.y;
            s.position = positions.read(t.x) * b0 + positions.read(t.y) * b.x + positions.read(t.z) * b.y;
            Float3 n = normalize(normals.read(t.x) * b0 + normals.read(t.y) * b.x + normals.read(t.z) * b.y);
            s.normal = ite(dot(n, eye - s.position) < 0.0f, -n, n);
            s.color = colors.read(t.x) * b0 + colors.read(t.y) * b.x + colors.read(t.z) * b.y;
            Float2 uv0 = uvs.read(t.x), uv1 = uvs.read(t.y), uv2 = uvs.read(t.z);
            s.uv = uv0 * b0 + uv1 * b.x + uv2 * b.y;
            auto st = setups.read(ti);
            Float area = edge_function(st.p0, st.p1, st.p2);
            auto uv_at = [&](const Float2& p) {
                Float l0 = edge_function(st.p1, st.p2, p) / area * st.inv_w.x;
                Float l1 = edge_function(st.p2, st.p0, p) / area * st.inv_w.y;
                Float l2 = edge_function(st.p0, st.p1, p) / area * st.inv_w.z;
                Float inv = 1.0f / (l0 + l1 + l2);
                return (uv0 * l0 + uv1 * l1 + uv2 * l2) * inv;
            };
            Float2 p = make_float2(cast<float>(pix.x) + 0.5f, cast<float>(pix.y) + 0.5f);
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

} // namespace

Rasterizer::Rasterizer(Device& device) : device_(device) {
    k_ = std::make_unique<Kernels>(Kernels{
        device.compile(setup_kernel(), {.name = "raster_setup"}),
        device.compile(setup_camera_kernel(), {.name = "raster_setup_camera"}),
        device.compile(fill_kernel(), {.name = "raster_fill"}),
        device.compile(scan_chunks_kernel(), {.name = "raster_scan_chunks"}),
        device.compile(scan_top_kernel(), {.name = "raster_scan_top"}),
        device.compile(scan_fill_kernel(), {.name = "raster_scan_fill"}),
        device.compile(raster_kernel(), {.name = "raster_depth"}),
        device.compile(interpolate_kernel(), {.name = "raster_interpolate"})});
}

Rasterizer::~Rasterizer() = default;

TileBins Rasterizer::bin(Stream& stream, const DeviceGeometry& g, const ViewCamera& view, float margin,
                         uint32_t reserve) {
    uint32_t tiles_x = (view.width + kTileSize - 1) / kTileSize, tiles_y = (view.height + kTileSize - 1) / kTileSize;
    uint32_t tiles = tiles_x * tiles_y, chunks = (tiles + kScanChunk - 1) / kScanChunk;
    TileBins b{device_.create_buffer<gpu::TriSetup>(std::max(g.triangle_count, 1u)), device_.create_buffer<uint32_t>(tiles),
               device_.create_buffer<uint32_t>(tiles), Buffer<uint32_t>{}, view.width, view.height, tiles_x};
    auto cursor = device_.create_buffer<uint32_t>(tiles);
    auto chunk_sum = device_.create_buffer<uint32_t>(chunks);
    auto chunk_longest = device_.create_buffer<uint32_t>(chunks);
    auto chunk_offset = device_.create_buffer<uint32_t>(chunks + 1);
    std::vector<uint32_t> offsets(chunks + 1), longest(chunks);
    stream << b.count.fill_zero();
    if (g.triangle_count > 0 && view.params)
        stream << k_->setup_camera(g.positions, g.triangles, b.setups, b.count, *view.params, *view.views, view.view,
                                   view.width, view.height, tiles_x, margin)
                      .dispatch(g.triangle_count);
    else if (g.triangle_count > 0)
        stream << k_->setup(g.positions, g.triangles, b.setups, b.count, view.view_proj, view.width, view.height, tiles_x,
                            margin)
                      .dispatch(g.triangle_count);
    stream << k_->scan_chunks(b.count, chunk_sum, chunk_longest, tiles).dispatch(chunks)
           << k_->scan_top(chunk_sum, chunk_offset, chunks).dispatch(1u)
           << k_->scan_fill(b.count, chunk_offset, b.offset, cursor, tiles).dispatch(chunks)
           << chunk_offset.copy_to(offsets.data()) << chunk_longest.copy_to(longest.data()) << synchronize();
    uint32_t total = offsets[chunks];
    b.longest = *std::max_element(longest.begin(), longest.end());
    b.reserved_at = total;
    b.list = device_.create_buffer<uint32_t>(std::max(uint64_t(total) + reserve, uint64_t(1)));
    if (g.triangle_count > 0) stream << k_->fill(b.setups, b.offset, cursor, b.list, tiles_x).dispatch(g.triangle_count);
    return b;
}

GBuffer Rasterizer::rasterize(Stream& stream, const DeviceGeometry& g, const ViewCamera& view) {
    TileBins b = bin(stream, g, view, 0.0f);
    const size_t pixels = size_t(view.width) * view.height;
    GBuffer gb{b.setups, device_.create_buffer<uint32_t>(pixels), device_.create_buffer<float2>(pixels), view.width,
               view.height, device_.create_buffer<float>(pixels)};
    uint32_t first = 0;
    do {
        stream << k_->raster(b.setups, b.offset, b.count, b.list, gb.triangle, gb.bary, gb.depth, b.tiles_x, first)
                      .dispatch(view.width, view.height);
        first += kRasterPass;
    } while (first < b.longest);
    stream << synchronize();
    return gb;
}

void Rasterizer::interpolate(Stream& stream, const DeviceGeometry& g, const ViewCamera& view, const GBuffer& gb,
                             SurfaceBuffers& surfaces) {
    stream << k_->interpolate(gb.setups, gb.triangle, gb.bary, g.positions, g.normals, g.colors, g.uvs, g.triangles,
                              g.triangle_material, surfaces.records, surfaces.tangents, view.eye,
                              g.tangents ? 1u : 0u)
                  .dispatch(view.width, view.height);
}

} // namespace adjoint::app
