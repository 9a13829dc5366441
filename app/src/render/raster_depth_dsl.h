// The rasterizer's depth test and what reads its G-buffer, as DSL kernels (render/raster.cpp dispatches them):
// coverage at a pixel centre, the small triangles' pass, the tile lists' pass, interpolation and barycentrics.
#pragma once
#include "render/geometry_dsl.h"
#include "render/raster.h"
#include "render/work_list.h"

#include <type_traits>

namespace adjoint::app {

// Tile-list entries a pixel tests in one dispatch of raster_depth: lavapipe ends a group of neighbouring
// invocations' loops after 65,535 iterations in all, so a longer list (200,000 triangles over one tile) is
// tested in several dispatches, each continuing from the nearest triangle the earlier ones found.
constexpr uint32_t kRasterPass = 16384;

// Triangle edges `e` (gpu::TriEdges) at pixel centre p: whether the rasterizer counts p inside it (every edge
// function >= 0 and the reversed depth within [0, 1]: nothing nearer than the near plane nor beyond the far one), the
// reversed depth there (1 at near: the nearer the larger) and the edge
// values, which are the perspective-correct barycentrics over their sum (perspective_bary). One function for every
// pass (raster_small, raster_depth, interpolation), so that they agree on every pixel; the differentiable stages
// compute the same edges from the same clip coordinates (surface_at).
struct Coverage {
    Bool inside;
    Float z;   // reversed depth (edge_record): 1 at near, 0 at far
    Float3 l;
};
template <typename E>
Coverage cover(const E& e, const Float2& p) {
    Float3 l = edge_values(e, p);
    Float z = edge_depth(e, p);
    return {(l.x >= 0.0f) & (l.y >= 0.0f) & (l.z >= 0.0f) & (z >= 0.0f) & (z <= 1.0f), z, l};
}
// The perspective-correct barycentrics of vertices 1 and 2 (what the G-buffer stores) from a pixel's edge values.
inline Float2 perspective_bary(const Float3& l) {
    Float3 b = edge_barycentrics(l);
    return make_float2(b.y, b.z);
}

// The small triangles, one thread each over its pixel box: per pixel the nearest (reversed depth, id), ties to the
// lower id, as an atomic max of the key, its id inverted (the buffer starts at 0, below every key). Non-negative
// floats order like their bits (the sign bit is cleared: -0 is 0).
inline auto small_kernel() {
    return Kernel1D([](BufferVar<gpu::TriSetup> setups, BufferVar<gpu::TriEdges> edges, BufferUInt64 nearest,
                       UInt width, UInt height) noexcept {
        UInt i = dispatch_id().x;
        auto s = setups.read(i);
        $if ((s.tiles.y & gpu::kSmallTriangle) != 0u) {
            auto e = edges.read(i);
            Float2 lo = max(floor(min(min(s.p0, s.p1), s.p2)), make_float2(0.0f));
            Float2 hi = min(floor(max(max(s.p0, s.p1), s.p2)),
                            make_float2(cast<float>(width) - 1.0f, cast<float>(height) - 1.0f));
            $for (y, cast<uint32_t>(lo.y), cast<uint32_t>(hi.y) + 1u) {
                $for (x, cast<uint32_t>(lo.x), cast<uint32_t>(hi.x) + 1u) {
                    Coverage c = cover(e, make_float2(cast<float>(x) + 0.5f, cast<float>(y) + 0.5f));
                    $if (c.inside) {
                        UInt64 key = (cast<uint64_t>(bit_cast<uint>(c.z) & 0x7fffffffu) << 32u) | cast<uint64_t>(~i);
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
// A thread takes a 2x2 quad of pixels (of one tile: gpu::kTileSize is even): each entry's setup is read once for
// four pixels, and the quad's covered pixels join the list with one atomic (on lavapipe a read and an atomic cost
// per thread, the tests per pixel little: 2.8 -> 1.5-1.7 ms at 5k/256x256, 4.3 -> 2.9 at 50k/512x512,
// app/GUIDE.md).
// Small: the device has 64-bit atomics (a uint64 buffer needs shaderInt64: without Small `nearest` is a uint
// buffer, never read).
static_assert(gpu::kTileSize % 2 == 0, "a 2x2 quad at even coordinates lies in one tile");
template <bool Small>
auto raster_kernel() {
    using Nearest = std::conditional_t<Small, BufferUInt64, BufferUInt>;
    return Kernel1D([](BufferVar<gpu::TriEdges> edges, BufferUInt offset, BufferUInt count, BufferUInt list,
                       BufferUInt tri_out, BufferFloat depth, UInt tiles_x, UInt first, UInt last, Nearest nearest,
                       BufferUInt covered, BufferUInt covered_count, UInt width, UInt height) noexcept {
        TileQuad tq = tile_quad(dispatch_id().x, tiles_x);
        UInt2 quad = tq.corner;
        UInt tile = tq.tile;
        Bool inside[4];
        UInt at[4], best[4];
        Float2 p[4];
        Float best_z[4];
        for (uint32_t q = 0; q < 4; ++q) {
            UInt2 pix = quad + make_uint2(q & 1u, q >> 1u);
            inside[q] = (pix.x < width) & (pix.y < height);
            at[q] = ite(inside[q], pix.y * width + pix.x, 0u);
            p[q] = make_float2(cast<float>(pix.x) + 0.5f, cast<float>(pix.y) + 0.5f);
            best_z[q] = -1.0f;   // below any covered pixel's reversed depth
            best[q] = gpu::kNone;
            $if (first > 0u) {
                best[q] = tri_out.read(at[q]);
                best_z[q] = depth.read(at[q]);
            }
            $else {
                if constexpr (Small) {
                    UInt64 key = nearest.read(at[q]);
                    $if (key != 0ull) {   // the id inverted (small_kernel)
                        best[q] = ~cast<uint32_t>(key & 0xffffffffull);
                        best_z[q] = bit_cast<float>(cast<uint32_t>(key >> 32u));
                    };
                }
            };
        }
        UInt n = count.read(tile);
        UInt begin = offset.read(tile);
        $for (k, begin + min(first, n), begin + min(first + kRasterPass, n)) {
            UInt ti = list.read(k);
            auto e = edges.read(ti);
            for (uint32_t q = 0; q < 4; ++q) {
                Coverage c = cover(e, p[q]);
                Bool closer = (c.z > best_z[q]) | ((c.z == best_z[q]) & (ti < best[q]));
                $if (c.inside & closer) {
                    best_z[q] = c.z;
                    best[q] = ti;
                };
            }
        };
        UInt flags = 0u, listed = 0u;   // bit q: the quad's pixel q joins the covered list
        for (uint32_t q = 0; q < 4; ++q) {
            $if (inside[q]) {
                tri_out.write(at[q], best[q]);
                depth.write(at[q], best_z[q]);
            };
            UInt take = ite(inside[q] & (last != 0u) & (best[q] != gpu::kNone), 1u, 0u);
            flags = flags | (take << q);
            listed = listed + take;
        }
        append_flagged(covered, covered_count, 0u, flags, listed, [&](const UInt& q) {
            return (quad.y + (q >> 1u)) * width + quad.x + (q & 1u);
        });
    });
}

// Interpolates the visible triangle's attributes; texture-coordinate derivatives come from the
// barycentrics one pixel right and one pixel down on the same triangle's plane.
inline auto interpolate_kernel() {
    return Kernel2D([](BufferVar<gpu::TriEdges> edges, BufferUInt tri_in,
                       BufferFloat3 positions, BufferFloat3 normals, BufferFloat3 colors, BufferFloat2 uvs,
                       BufferVar<uint3> triangles, BufferUInt triangle_material,
                       BufferVar<gpu::SurfaceRecord> out, BufferFloat4 tangents_out, Float3 eye,
                       UInt tangents) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x;
        UInt ti = tri_in.read(at);
        Var<gpu::SurfaceRecord> s;
        s.material = gpu::kNone;
        $if (ti != gpu::kNone) {
            UInt3 t = triangles.read(ti);
            auto e = edges.read(ti);
            Float2 p = make_float2(cast<float>(pix.x) + 0.5f, cast<float>(pix.y) + 0.5f);
            Float2 b = perspective_bary(edge_values(e, p));
            Float b0 = 1.0f - b.x - b.y;
            Float3 w0 = positions.read(t.x), w1 = positions.read(t.y), w2 = positions.read(t.z);
            s.position = w0 * b0 + w1 * b.x + w2 * b.y;
            Float3 n = normalize(normals.read(t.x) * b0 + normals.read(t.y) * b.x + normals.read(t.z) * b.y);
            s.normal = facing_viewer(n, s.position, cross(w1 - w0, w2 - w0), eye);
            s.color = colors.read(t.x) * b0 + colors.read(t.y) * b.x + colors.read(t.z) * b.y;
            Float2 uv0 = uvs.read(t.x), uv1 = uvs.read(t.y), uv2 = uvs.read(t.z);
            s.uv = uv0 * b0 + uv1 * b.x + uv2 * b.y;
            auto uv_at = [&](const Float2& p) {
                Float3 l = edge_barycentrics(edge_values(e, p));
                return uv0 * l.x + uv1 * l.y + uv2 * l.z;
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

inline auto barycentrics_kernel() {
    return Kernel2D([](BufferVar<gpu::TriEdges> edges, BufferUInt tri_in, BufferFloat2 out) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x;
        UInt ti = tri_in.read(at);
        Float2 b = make_float2(0.0f);
        $if (ti != gpu::kNone) {
            b = perspective_bary(edge_values(edges.read(ti), pixel_centre(pix)));
        };
        out.write(at, b);
    });
}

} // namespace adjoint::app
