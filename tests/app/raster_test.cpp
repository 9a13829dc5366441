// The rasterizer: coverage of known triangles, the depth test and tie-breaking, perspective-correct
// barycentrics, tiles with many triangles, and interpolated attributes.
#include "render/raster.h"
#include "support/device_fixture.h"

#include <adjoint/app/scene.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <tuple>

namespace adjoint::test {

using app::DeviceGeometry;
using app::Rasterizer;
using app::ViewCamera;

class Raster : public DeviceTest {
protected:
    // An orthographic-like camera: clip = (x, y, z, 1) with x, y in [-1, 1] mapped over the image.
    ViewCamera identity_view(uint32_t w, uint32_t h) {
        ViewCamera v;
        v.view_proj = float4x4::identity();
        v.eye = float3(0, 0, -10);
        v.width = w;
        v.height = h;
        return v;
    }
    DeviceGeometry upload(const std::vector<float3>& pos, const std::vector<uint3>& tris) {
        DeviceGeometry g;
        g.vertex_count = uint32_t(pos.size());
        g.triangle_count = uint32_t(tris.size());
        g.positions = device.create_buffer<float3>(pos.size());
        g.normals = device.create_buffer<float3>(pos.size());
        g.colors = device.create_buffer<float3>(pos.size());
        g.uvs = device.create_buffer<float2>(pos.size());
        g.triangles = device.create_buffer<uint3>(tris.size());
        g.triangle_material = device.create_buffer<uint32_t>(tris.size());
        std::vector<float3> n(pos.size(), float3(0, 0, -1)), c(pos.size(), float3(1, 1, 1));
        std::vector<float2> uv(pos.size());
        for (size_t i = 0; i < pos.size(); ++i) uv[i] = float2(pos[i].x, pos[i].y);
        std::vector<uint32_t> mat(tris.size());
        for (size_t i = 0; i < tris.size(); ++i) mat[i] = uint32_t(i);
        stream << g.positions.copy_from(pos.data()) << g.normals.copy_from(n.data()) << g.colors.copy_from(c.data())
               << g.uvs.copy_from(uv.data()) << g.triangles.copy_from(tris.data())
               << g.triangle_material.copy_from(mat.data()) << synchronize();
        return g;
    }
    // The G-buffer's triangle ids; also checks its list of covered pixels holds each pixel that sees a triangle
    // once and no other (the shading runs over it; a quad of pixels a thread lists its own with one atomic).
    std::vector<uint32_t> ids(const app::GBuffer& gb) {
        std::vector<uint32_t> r(size_t(gb.width) * gb.height);
        uint32_t count = 0;
        stream << gb.triangle.copy_to(r.data()) << gb.covered_count.copy_to(&count) << synchronize();
        std::vector<uint32_t> listed(count), expected;
        if (count > 0) stream << gb.covered.copy_to(listed.data(), 0, count) << synchronize();
        std::sort(listed.begin(), listed.end());
        for (uint32_t i = 0; i < r.size(); ++i)
            if (r[i] != app::gpu::kNone) expected.push_back(i);
        EXPECT_EQ(listed, expected) << "the covered pixels' list at " << gb.width << "x" << gb.height;
        return r;
    }
    // A mesh given in pixels (x right, y down) on a side x side image, rasterized through the identity view (w = 1),
    // or tilted: w = z + 1 with x and y scaled by it (corner k's w from w_of(k)), so that the corners land on the
    // same pixels. The G-buffer's triangle ids; `pos`, the positions uploaded.
    template <typename W>
    std::vector<uint32_t> pixel_mesh_ids(const std::vector<float2>& px, const std::vector<uint3>& tris, uint32_t side,
                                         bool tilted, bool small, const W& w_of, std::vector<float3>& pos) {
        pos.clear();
        for (uint32_t k = 0; k < px.size(); ++k) {
            const float w = tilted ? w_of(k) : 1.0f;
            pos.push_back(float3((px[k].x / side * 2 - 1) * w, (1 - px[k].y / side * 2) * w, tilted ? w - 1 : 0.5f));
        }
        ViewCamera v = identity_view(side, side);
        if (tilted) {
            float4x4 m = float4x4::identity();
            m[2][3] = 1.0f;   // w = z + 1
            m[2][2] = 0.1f;
            v.view_proj = m;
        }
        auto g = upload(pos, tris);
        Rasterizer r(device, small);
        auto gb = r.rasterize(stream, g, v);
        std::vector<uint32_t> id(size_t(side) * side);
        stream << gb.triangle.copy_to(id.data()) << synchronize();
        return id;
    }
};

TEST_F(Raster, HalfScreenTriangleCoversExactlyThePixelsBelowTheDiagonal) {
    // NDC (-1,-1), (1,-1), (-1,1): in pixels (0,h), (w,h), (0,0): covers pixels whose centre has x + y <= w.
    auto g = upload({float3(-1, -1, 0.5f), float3(1, -1, 0.5f), float3(-1, 1, 0.5f)}, {uint3(0, 1, 2)});
    Rasterizer r(device);
    auto gb = r.rasterize(stream, g, identity_view(40, 40));
    auto id = ids(gb);
    int covered = 0;
    for (uint32_t y = 0; y < 40; ++y)
        for (uint32_t x = 0; x < 40; ++x) {
            // The triangle's hypotenuse runs from pixel (0, 0) to (40, 40) flipped: x_pix + (40 - y_pix) >= 40
            // in image coordinates with y down means x <= y.
            bool expect = (x + 0.5f) <= (y + 0.5f);
            EXPECT_EQ(id[y * 40 + x] == 0u, expect) << x << "," << y;
            covered += id[y * 40 + x] == 0u;
        }
    EXPECT_EQ(covered, 40 * 41 / 2);
}

TEST_F(Raster, NearerTriangleWinsAndTiesGoToTheLowerId) {
    // Two full-screen quads (4 triangles): ids 0,1 at depth 0.7, ids 2,3 at depth 0.3 -> 2,3 visible.
    std::vector<float3> p = {float3(-1, -1, 0.7f), float3(1, -1, 0.7f), float3(1, 1, 0.7f), float3(-1, 1, 0.7f),
                             float3(-1, -1, 0.3f), float3(1, -1, 0.3f), float3(1, 1, 0.3f), float3(-1, 1, 0.3f),
                             float3(-1, -1, 0.3f), float3(1, -1, 0.3f), float3(1, 1, 0.3f)};
    auto g = upload(p, {uint3(0, 1, 2), uint3(0, 2, 3), uint3(4, 5, 6), uint3(4, 6, 7), uint3(8, 9, 10)});
    Rasterizer r(device);
    auto id = ids(r.rasterize(stream, g, identity_view(37, 23)));
    for (uint32_t y = 0; y < 23; ++y)
        for (uint32_t x = 0; x < 37; ++x) {
            uint32_t v = id[y * 37 + x];
            // Triangle 4 duplicates triangle 2 exactly: the tie goes to 2.
            EXPECT_TRUE(v == 2u || v == 3u) << x << "," << y << " got " << v;
        }
}

TEST_F(Raster, ManyTrianglesPerTileAndEmptyPixels) {
    // 3000 thin slivers in one tile's column plus an empty region.
    std::vector<float3> p;
    std::vector<uint3> t;
    for (uint32_t i = 0; i < 3000; ++i) {
        float z = 0.1f + 0.8f * float(i) / 3000.0f;
        uint32_t b = uint32_t(p.size());
        p.push_back(float3(-1, -1, z));
        p.push_back(float3(-0.5f, -1, z));
        p.push_back(float3(-1, 0, z));
        t.push_back(uint3(b, b + 1, b + 2));
    }
    auto g = upload(p, t);
    Rasterizer r(device);
    auto id = ids(r.rasterize(stream, g, identity_view(64, 64)));
    EXPECT_EQ(id[63 * 64 + 0], 0u);                 // bottom-left pixel: the nearest (first) sliver
    EXPECT_EQ(id[0 * 64 + 63], app::gpu::kNone);    // top-right: background
}

// 70,000 screen-covering triangles over the single 16x16 tile: more than lavapipe's 65,535 loop iterations, so
// the depth test runs in several dispatches, each continuing from the nearest triangle the earlier ones found.
// The nearest is the last triangle (found by a late pass); then id 100 ties with it, and the lower id wins
// wherever the tile list put the two.
TEST_F(Raster, A70000TriangleTileIsTestedInPassesThatCarryTheNearest) {
    const uint32_t n = 70000;
    auto make = [&](bool tie) {
        std::vector<float3> p;
        std::vector<uint3> t;
        for (uint32_t i = 0; i < n; ++i) {
            float z = 0.5f + 5e-6f * float(i);
            if (i == n - 1 || (tie && i == 100)) z = 0.1f;
            uint32_t b = uint32_t(p.size());
            p.push_back(float3(-1, -1, z));
            p.push_back(float3(3, -1, z));
            p.push_back(float3(-1, 3, z));
            t.push_back(uint3(b, b + 1, b + 2));
        }
        return upload(p, t);
    };
    Rasterizer r(device);
    auto id = ids(r.rasterize(stream, make(false), identity_view(16, 16)));
    for (uint32_t i = 0; i < id.size(); ++i) ASSERT_EQ(id[i], n - 1) << "pixel " << i;
    id = ids(r.rasterize(stream, make(true), identity_view(16, 16)));
    for (uint32_t i = 0; i < id.size(); ++i) ASSERT_EQ(id[i], 100u) << "pixel " << i;
}

// Small triangles (pixel box under 8x8) are covered one thread each with a 64-bit atomic on lavapipe, the rest
// through the tile lists; every triangle through the tiles is the reference. A soup of small and large triangles
// at random depths, each fifth one duplicated (a tie the lower id wins), over an image whose size is no multiple
// of the tiles: the same triangle at every pixel, the same depth and barycentrics.
TEST_F(Raster, SmallTrianglesOnTheirOwnGiveTheTilesGBuffer) {
    ASSERT_TRUE(device.int64_atomics());   // lavapipe has them: the hybrid path is what runs
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-1.1f, 1.1f), d(0.05f, 0.95f);
    std::vector<float3> p;
    std::vector<uint3> t;
    for (uint32_t i = 0; i < 3000; ++i) {
        const bool is_small = i % 3 != 0;
        const float size = is_small ? 0.02f + 0.08f * float(rng() % 100) / 100.0f : 0.2f + 0.6f * float(rng() % 100) / 100.0f;
        const float cx = u(rng), cy = u(rng);
        const uint32_t b = uint32_t(p.size());
        if (i % 5 == 4) {   // a duplicate of the triangle before: same vertices, a higher id
            const uint3 prev = t.back();
            t.push_back(prev);
            continue;
        }
        for (int k = 0; k < 3; ++k) p.push_back(float3(cx + size * u(rng), cy + size * u(rng), d(rng)));
        t.push_back(uint3(b, b + 1, b + 2));
    }
    auto g = upload(p, t);
    auto read_all = [&](Rasterizer& r) {
        auto gb = r.rasterize(stream, g, identity_view(93, 77));
        std::vector<uint32_t> id = ids(gb);
        std::vector<float2> b(id.size());
        std::vector<float> z(id.size());
        stream << r.barycentrics(stream, gb).copy_to(b.data())
               << gb.depth.copy_to(z.data()) << synchronize();
        return std::tuple{id, b, z};
    };
    Rasterizer hybrid(device), tiles_only(device, false);
    auto [id, b, z] = read_all(hybrid);
    auto [id_ref, b_ref, z_ref] = read_all(tiles_only);
    size_t covered = 0;
    for (size_t i = 0; i < id.size(); ++i) {
        ASSERT_EQ(id[i], id_ref[i]) << "pixel " << i;
        if (id[i] == app::gpu::kNone) continue;
        ++covered;
        EXPECT_NEAR(z[i], z_ref[i], 1e-6f) << "pixel " << i;
        EXPECT_NEAR(b[i].x, b_ref[i].x, 1e-5f) << "pixel " << i;
        EXPECT_NEAR(b[i].y, b_ref[i].y, 1e-5f) << "pixel " << i;
    }
    EXPECT_GT(covered, id.size() / 2);
    // Both kinds are visible somewhere, and no duplicate (odd id of a pair) won where its twin covers.
    std::set<uint32_t> seen(id.begin(), id.end());
    size_t small_seen = 0, large_seen = 0;
    for (uint32_t v : seen)
        if (v != app::gpu::kNone) (v % 3 != 0 ? small_seen : large_seen)++;
    EXPECT_GT(small_seen, 100u);
    EXPECT_GT(large_seen, 50u);
    for (uint32_t v : seen) EXPECT_FALSE(v != app::gpu::kNone && v % 5 == 4) << "duplicate " << v << " beat its twin";
}

TEST_F(Raster, BarycentricsArePerspectiveCorrect) {
    // A triangle with w = 1, 1, 3 at its vertices (positions given in clip space through a matrix whose
    // last row copies z into w): the barycentric of the far vertex at a pixel must be its perspective value.
    ViewCamera v = identity_view(32, 32);
    float4x4 m = float4x4::identity();
    m[2][3] = 1.0f;   // w = z + 1 (column 2, row 3)
    m[3][3] = 1.0f;
    m[2][2] = 0.1f;   // keep z/w inside [0, 1]
    v.view_proj = m;
    auto g = upload({float3(-1, -1, 0), float3(3, -3, 2), float3(-1, 1, 0)}, {uint3(0, 1, 2)});
    Rasterizer r(device);
    auto gb = r.rasterize(stream, g, v);
    std::vector<uint32_t> id(32 * 32);
    std::vector<float2> b(32 * 32);
    stream << gb.triangle.copy_to(id.data()) << r.barycentrics(stream, gb).copy_to(b.data()) << synchronize();
    // Vertex 1 projects to x_ndc = 3/3 = 1. At the pixel centre (px, py) the screen barycentrics are affine;
    // perspective-correct b1 = (l1 / 3) / (l0 + l1 / 3 + l2).
    int checked = 0;
    for (uint32_t y = 0; y < 32; ++y)
        for (uint32_t x = 0; x < 32; ++x) {
            if (id[y * 32 + x] != 0u) continue;
            float px = x + 0.5f, py = y + 0.5f;
            // Screen positions: v0 (0, 32), v1 (32, 32), v2 (0, 0).
            float l1 = px / 32.0f, l2 = (32.0f - py) / 32.0f, l0 = 1 - l1 - l2;
            float q1 = l1 / 3.0f, den = l0 + q1 + l2;
            EXPECT_NEAR(b[y * 32 + x].x, q1 / den, 1e-4f);
            EXPECT_NEAR(b[y * 32 + x].y, l2 / den, 1e-4f);
            ++checked;
        }
    EXPECT_GT(checked, 400);
}

// A quad over the whole image split along its diagonal, which passes exactly through the centres of pixels (x + y =
// 31 at 32x32), flat and tilted in depth (w from 1 to 3 across it): every pixel sees one of its triangles.
TEST_F(Raster, AQuadsDiagonalThroughPixelCentresLeavesNoHole) {
    for (const bool tilted : {false, true}) {
        ViewCamera v = identity_view(32, 32);
        // Tilted: w = z + 1, the corners' x and y scaled by it so that they still project to the image's corners.
        auto g = tilted ? upload({float3(-1, -1, 0), float3(2, -2, 1), float3(3, 3, 2), float3(-2, 2, 1)},
                                 {uint3(0, 1, 2), uint3(0, 2, 3)})
                        : upload({float3(-1, -1, 0.5f), float3(1, -1, 0.5f), float3(1, 1, 0.5f), float3(-1, 1, 0.5f)},
                                 {uint3(0, 1, 2), uint3(0, 2, 3)});
        if (tilted) {
            float4x4 m = float4x4::identity();
            m[2][3] = 1.0f;   // w = z + 1 (column 2, row 3)
            m[2][2] = 0.1f;   // keep z / w inside [0, 1]
            v.view_proj = m;
        }
        Rasterizer r(device);
        auto gb = r.rasterize(stream, g, v);
        std::vector<uint32_t> id = ids(gb);
        int holes = 0;
        for (uint32_t i = 0; i < id.size(); ++i) holes += id[i] == app::gpu::kNone;
        EXPECT_EQ(holes, 0) << (tilted ? "tilted" : "flat");
    }
}

// Small triangles far from the image's centre: a jittered grid of 2-pixel triangles in the corner of a 4096x4096
// image, 2,800 pixels from its centre, flat and tilted in depth. Every pixel centre that lies 1e-3 pixels or more
// inside a triangle (in doubles, from the same float corners) sees that triangle. Edge functions taken about the
// image's centre put 2% of such pixels on the wrong side (a reviewer's simulation); each triangle's are taken about
// its own pixel box (render/raster.h's edge_record).
TEST_F(Raster, SmallTrianglesFarFromTheCentreCoverTheirOwnPixels) {
    constexpr uint32_t side = 4096, n = 40;   // n x n grid points, about 2.3 pixels apart
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> jitter(-0.4f, 0.4f);
    std::vector<float2> px;   // the grid in pixels (x right, y down)
    for (uint32_t j = 0; j < n; ++j)
        for (uint32_t i = 0; i < n; ++i) {
            const float dx = jitter(rng), dy = jitter(rng);
            px.push_back(float2(3980.0f + 2.3f * (float(i) + dx), 3980.0f + 2.3f * (float(j) + dy)));
        }
    std::vector<uint3> tris;
    for (uint32_t j = 0; j + 1 < n; ++j)
        for (uint32_t i = 0; i + 1 < n; ++i) {
            const uint32_t a = j * n + i;
            tris.push_back(uint3(a, a + 1, a + n + 1));
            tris.push_back(uint3(a, a + n + 1, a + n));
        }
    for (const auto& [tilted, small] : {std::pair{false, true}, std::pair{true, true}, std::pair{true, false}}) {
        SCOPED_TRACE(std::string(tilted ? "tilted" : "flat") + (small ? ", small triangles on their own" : ", binned"));
        std::vector<float3> pos;
        const std::vector<uint32_t> id =
            pixel_mesh_ids(px, tris, side, tilted, small, [&](uint32_t k) { return 1.0f + float(k % n) / n; }, pos);
        // The corners as the rasterizer projects them, in doubles.
        const auto corner = [&](uint32_t k) {
            const double w = tilted ? double(pos[k].z) + 1 : 1.0;
            return std::pair<double, double>{(double(pos[k].x) / w * 0.5 + 0.5) * side,
                                             (0.5 - double(pos[k].y) / w * 0.5) * side};
        };
        // Per pixel, the triangle it lies 1e-3 or more inside of; kNone - 1 where two overlap (jitter folds a few).
        std::vector<uint32_t> want(id.size(), app::gpu::kNone);
        for (uint32_t t = 0; t < tris.size(); ++t) {
            const auto [ax, ay] = corner(tris[t][0]);
            const auto [bx, by] = corner(tris[t][1]);
            const auto [cx, cy] = corner(tris[t][2]);
            const auto edge = [](double x0, double y0, double x1, double y1, double x, double y) {
                return ((x1 - x0) * (y - y0) - (y1 - y0) * (x - x0)) / std::hypot(x1 - x0, y1 - y0);
            };
            const double sgn = edge(ax, ay, bx, by, cx, cy) > 0 ? 1 : -1;
            for (int y = int(std::min({ay, by, cy})); y <= int(std::max({ay, by, cy})); ++y)
                for (int x = int(std::min({ax, bx, cx})); x <= int(std::max({ax, bx, cx})); ++x) {
                    const double qx = x + 0.5, qy = y + 0.5;
                    const double d = std::min({edge(ax, ay, bx, by, qx, qy) * sgn, edge(bx, by, cx, cy, qx, qy) * sgn,
                                               edge(cx, cy, ax, ay, qx, qy) * sgn});
                    if (d < 1e-3) continue;
                    uint32_t& w = want[size_t(y) * side + x];
                    w = w == app::gpu::kNone ? t : app::gpu::kNone - 1;
                }
        }
        int checked = 0, wrong = 0;
        for (size_t i = 0; i < id.size(); ++i)
            if (want[i] < app::gpu::kNone - 1) {
                ++checked;
                wrong += id[i] != want[i];
            }
        EXPECT_GT(checked, 6000);   // about 2.3^2 * 39^2 = 8,000 pixels
        EXPECT_EQ(wrong, 0) << "of " << checked;
    }
}

// Watertight: a grid of quads whose edges (rows, columns and diagonals) run through pixel centres, far from the
// image's centre and tilted in depth, so that the corners' rounding puts those centres a hair to either side. Each
// pixel inside the grid must fall to some triangle: neighbours evaluate their shared edge with the same operations
// on the same values, the other way round (render/raster.h's edge_values). Taken about each triangle's own origin,
// a render of a dense mesh at 1280x1280 had 2-8 pixels that no triangle covered.
TEST_F(Raster, SharedEdgesThroughPixelCentresLeaveNoHole) {
    constexpr uint32_t side = 1024, n = 100;   // n x n corners, 3 pixels apart, from pixel centre (700.5, 700.5)
    std::vector<float2> px;
    for (uint32_t j = 0; j < n; ++j)
        for (uint32_t i = 0; i < n; ++i) px.push_back(float2(700.5f + 3.0f * float(i), 700.5f + 3.0f * float(j)));
    std::vector<uint3> tris;
    for (uint32_t j = 0; j + 1 < n; ++j)
        for (uint32_t i = 0; i + 1 < n; ++i) {
            const uint32_t a = j * n + i;
            // The quad's diagonal alternates, so that both diagonals' directions are seen.
            if ((i + j) % 2 == 0) {
                tris.push_back(uint3(a, a + 1, a + n + 1));
                tris.push_back(uint3(a, a + n + 1, a + n));
            } else {
                tris.push_back(uint3(a, a + 1, a + n));
                tris.push_back(uint3(a + 1, a + n + 1, a + n));
            }
        }
    for (const auto& [tilted, small] : {std::pair{false, true}, std::pair{true, true}, std::pair{true, false}}) {
        SCOPED_TRACE(std::string(tilted ? "tilted" : "flat") + (small ? ", small triangles on their own" : ", binned"));
        std::vector<float3> pos;
        const auto w_of = [](uint32_t k) { return 1.0f + 0.37f * float(k % 7) + 0.011f * float(k % 13); };
        const std::vector<uint32_t> id = pixel_mesh_ids(px, tris, side, tilted, small, w_of, pos);
        // The pixels whose centres lie inside the grid's outline, off its outer edges.
        int inside = 0, holes = 0;   // 296 x 296 pixels
        for (uint32_t y = 701; y < 700 + 3 * (n - 1); ++y)
            for (uint32_t x = 701; x < 700 + 3 * (n - 1); ++x) {
                ++inside;
                holes += id[size_t(y) * side + x] == app::gpu::kNone;
            }
        EXPECT_EQ(holes, 0) << "of " << inside << " pixels inside the grid";
    }
}

// Depth precision far from the camera: 20 pairs of parallel squares 0.05 units apart, 800 to 1,180 units away, with
// near 0.05 and far 5,000 (a model in millimetres). NDC z there lies within a float's rounding of 1 (a unit of depth
// was about one ulp): each pair's order was a coin's toss, and the farther square, given the lower ids, won ties.
// The reversed depth (render/raster.h's edge_record) keeps a float's relative precision. Every covered pixel must
// see the nearer square of its pair.
TEST_F(Raster, NearerOfTwoSurfacesATwentiethApartAThousandAwayWins) {
    const float n = 0.05f, f = 5000.0f, t = std::tan(30.0f * 3.14159265f / 180.0f);
    float4x4 proj = float4x4::identity();   // OpenGL's perspective, the camera at the origin looking down -z
    proj[0][0] = 1.0f / t;
    proj[1][1] = 1.0f / t;
    proj[2][2] = (f + n) / (n - f);
    proj[2][3] = -1.0f;
    proj[3][2] = 2.0f * f * n / (n - f);
    proj[3][3] = 0.0f;
    std::vector<float3> pos;
    std::vector<uint3> tris;
    constexpr int pairs = 20;
    for (int j = 0; j < pairs; ++j) {
        // Pair j on a 5 x 4 grid of the image, each square 0.3 NDC units wide; the farther one first.
        const float u = -0.8f + 0.4f * float(j % 5), v = -0.75f + 0.5f * float(j / 5), d = 800.0f + 20.0f * float(j);
        for (const float depth : {d + 0.05f, d}) {
            const uint32_t base = uint32_t(pos.size());
            for (const float2 c : {float2(-1, -1), float2(1, -1), float2(1, 1), float2(-1, 1)})
                pos.push_back(float3((u + 0.15f * c.x) * t * depth, (v + 0.15f * c.y) * t * depth, -depth));
            tris.push_back(uint3(base, base + 1, base + 2));
            tris.push_back(uint3(base, base + 2, base + 3));
        }
    }
    auto g = upload(pos, tris);
    ViewCamera view = identity_view(128, 128);
    view.view_proj = proj;
    view.eye = float3(0, 0, 0);
    Rasterizer r(device);
    std::vector<uint32_t> id = ids(r.rasterize(stream, g, view));
    int covered = 0, far = 0;
    for (uint32_t i : id)
        if (i != app::gpu::kNone) {
            ++covered;
            far += (i / 2) % 2 == 0;   // triangles 4j and 4j + 1: pair j's farther square
        }
    EXPECT_GT(covered, 5000);   // 20 squares of about 19 x 19 pixels
    EXPECT_EQ(far, 0) << "of " << covered;
}

// A floor that runs under the camera: its two triangles have corners behind the camera's plane (one, and two), and
// are drawn where the rays meet them: every pixel's triangle and perspective-correct barycentrics are the ray's hit
// on the floor's plane, and nothing nearer than camera.near is drawn (at near 2.5 the bottom rows are empty). Also
// with the floor's near edge on the camera's plane (w = 0 at two corners), 1e-5 to either side and 1e-3 behind it,
// where corners divided by their w landed 1e5 pixels and more away and the pixels' edge functions through them lost
// their precision (holes, and barycentrics off by 0.5). Before, such triangles were not drawn at all.
TEST_F(Raster, TrianglesReachingBehindTheCameraAreDrawnWhereTheRaysMeetThem) {
    const struct {
        float edge, near;   // the floor's near edge (z; the camera stands at z = 3) and camera.near
    } cases[] = {{10, 0.05f}, {10, 2.5f}, {3, 0.05f}, {3 + 1e-5f, 0.05f}, {3 - 1e-5f, 0.05f}, {3.001f, 0.05f}};
    for (const auto [edge, near] : cases) {
        SCOPED_TRACE("near edge at z = " + std::to_string(edge) + ", near " + std::to_string(near));
        auto g = upload({float3(-10, -1, -10), float3(10, -1, -10), float3(10, -1, edge), float3(-10, -1, edge)},
                        {uint3(0, 1, 2), uint3(0, 2, 3)});
        app::Camera cam;
        cam.eye = float3(0, 0, 3);
        cam.target = float3(0, 0, 0);
        cam.fov_y = 60;
        cam.width = 64;
        cam.height = 48;
        cam.near = near;
        cam.far = 50;
        ViewCamera v;
        v.view_proj = app::view_projection_matrix(cam);
        v.eye = cam.eye;
        v.width = cam.width;
        v.height = cam.height;
        Rasterizer r(device);
        auto gb = r.rasterize(stream, g, v);
        std::vector<uint32_t> id = ids(gb);
        std::vector<float2> b(id.size());
        stream << r.barycentrics(stream, gb).copy_to(b.data()) << synchronize();
        const float ty = std::tan(30.0f * 3.14159265f / 180.0f), tx = ty * 64.0f / 48.0f, depth = edge + 10;
        int drawn = 0, clipped = 0, checked = 0;
        for (uint32_t y = 0; y < 48; ++y)
            for (uint32_t x = 0; x < 64; ++x) {
                const uint32_t at = y * 64 + x;
                // The ray through the pixel's centre (the camera looks down -z), its hit on y = -1 t along the view.
                const float dx = ((x + 0.5f) / 64.0f * 2 - 1) * tx, dy = (1 - (y + 0.5f) / 48.0f * 2) * ty;
                if (dy > -1e-3f) {
                    EXPECT_EQ(id[at], app::gpu::kNone) << "above the horizon: pixel " << x << ", " << y;
                    continue;
                }
                const float t = -1.0f / dy, hx = dx * t, hz = 3.0f - t;
                // The diagonal from (-10, -10) to (10, edge): triangle 0 (with (10, -10)) lies below it in z.
                const float diagonal = -10 + (hx + 10) * depth / 20;
                if (std::fabs(t - near) < 0.05f || std::fabs(hz - diagonal) < 0.02f * t) continue;   // at an edge
                const float beyond = std::fmax(-10.0f - hz, std::fabs(hx) - 10.0f);   // > 0: off the floor
                if (std::fabs(beyond) < 0.02f * t) continue;
                if (beyond > 0) {
                    EXPECT_EQ(id[at], app::gpu::kNone) << "beyond the floor: pixel " << x << ", " << y;
                    continue;
                }
                if (t < near) {
                    EXPECT_EQ(id[at], app::gpu::kNone) << "nearer than near: pixel " << x << ", " << y;
                    ++clipped;
                    continue;
                }
                const uint32_t want = hz <= diagonal ? 0u : 1u;
                ASSERT_EQ(id[at], want) << "pixel " << x << ", " << y;
                ++drawn;
                // Triangle 0 (v0 v1 v2): (x, z) = v0 + b1 (20, 0) + b2 (20, depth); triangle 1 (v0 v2 v3): (x, z) = v0
                // + b1 (20, depth) + b2 (0, depth).
                const float b2 = (hz + 10) / depth, b1 = (hx + 10) / 20;
                const float2 e = want == 0 ? float2(b1 - b2, b2) : float2(b1, b2 - b1);
                EXPECT_NEAR(b[at].x, e.x, 1e-4f) << "pixel " << x << ", " << y;
                EXPECT_NEAR(b[at].y, e.y, 1e-4f) << "pixel " << x << ", " << y;
                ++checked;
            }
        EXPECT_GT(drawn, 700);   // 1,302 of the 3072 pixels, and 806 at near 2.5
        EXPECT_GT(checked, 700);
        if (near > 1) {
            EXPECT_GT(clipped, 200);
        }
    }
}

// Every triangle's setup holds its corners in pixels, and its edge functions, a culled one's too: the antialias walk
// crosses triangles the rasterizer culls (off screen, degenerate, outside the depth range) and reads their edges
// (antialias_dsl.h): positive inside the projected triangle, negative beyond an edge.
TEST_F(Raster, SetupsHoldTheCornersOfCulledTrianglesToo) {
    const std::vector<float3> p = {float3(-0.5f, -0.5f, 0.5f), float3(0.5f, -0.5f, 0.5f), float3(0, 0.5f, 0.5f),
                                   float3(1.5f, -0.5f, 0.5f), float3(2.5f, -0.5f, 0.5f), float3(2, 0.5f, 0.5f),
                                   float3(-0.25f, 0, 0.5f), float3(0.25f, 0, 0.5f), float3(0.75f, 0, 0.5f),
                                   float3(-0.5f, -0.5f, 2), float3(0.5f, -0.5f, 2), float3(0, 0.5f, 2)};
    auto g = upload(p, {uint3(0, 1, 2), uint3(3, 4, 5), uint3(6, 7, 8), uint3(9, 10, 11)});
    Rasterizer r(device);
    const uint32_t w = 40, h = 30;
    auto gb = r.rasterize(stream, g, identity_view(w, h));
    std::vector<app::gpu::TriSetup> s(4);
    std::vector<app::gpu::TriEdges> e(4);
    stream << gb.setups.copy_to(s.data(), 0, 4) << gb.edges.copy_to(e.data(), 0, 4) << synchronize();
    const bool culled[4] = {false, true, true, true};   // on screen, off screen, degenerate, beyond the far plane
    for (uint32_t t = 0; t < 4; ++t) {
        EXPECT_EQ(s[t].tiles.x == app::gpu::kCulledTiles && s[t].tiles.y == 0, culled[t]) << "triangle " << t;
        const float2 got[3] = {s[t].p0, s[t].p1, s[t].p2};
        for (uint32_t k = 0; k < 3; ++k) {
            const float3& v = p[3 * t + k];
            EXPECT_NEAR(got[k].x, (v.x * 0.5f + 0.5f) * w, 1e-4f) << "triangle " << t << " corner " << k;
            EXPECT_NEAR(got[k].y, (0.5f - v.y * 0.5f) * h, 1e-4f) << "triangle " << t << " corner " << k;
        }
        if (t == 2) continue;   // degenerate: no inside
        const float cx = (got[0].x + got[1].x + got[2].x) / 3, cy = (got[0].y + got[1].y + got[2].y) / 3;
        const float4 edge[3] = {e[t].e0, e[t].e1, e[t].e2};
        const uint32_t origin[3] = {e[t].origins.x, e[t].origins.y, e[t].origins.z};
        for (uint32_t k = 0; k < 3; ++k) {
            // Edge k at (x, y): about its own origin, a whole pixel packed as x + 32768 | (y + 32768) << 16.
            const float ox = float(origin[k] & 0xffffu) - 32768.0f, oy = float(origin[k] >> 16) - 32768.0f;
            const auto at = [&](float x, float y) { return edge[k].x * (x - ox) + edge[k].y * (y - oy) + edge[k].z; };
            EXPECT_GT(at(cx, cy), 0.0f) << "triangle " << t << " edge " << k;
            // Beyond edge k's midpoint m, away from corner k: the centre + 3 (m - centre).
            const float2 &a = got[(k + 1) % 3], &c = got[(k + 2) % 3];
            const float mx = (a.x + c.x) / 2, my = (a.y + c.y) / 2;
            EXPECT_LT(at(cx + 3 * (mx - cx), cy + 3 * (my - cy)), 0.0f) << "triangle " << t << " edge " << k;
        }
    }
}

// Binning with a margin (soft rasterization's reach): a triangle inside tile (1, 1) of a 48x48 image
// (pixels 20..27) is binned there alone without a margin, and into the tiles its box grown by the margin
// touches with one: 6 pixels reach tiles 0..2 in x and y (14 and 33), 3 pixels do not leave tile 1.
TEST_F(Raster, BinMarginGrowsTheTilesATriangleIsBinnedTo) {
    // A 3x3-tile image; NDC x = p / (1.5 T) - 1 for pixel p: the triangle spans pixels T + 2 .. 2T - 3 in x and y
    // (y flipped: T + 3 .. 2T - 2), inside the middle tile with 2 pixels to spare.
    constexpr uint32_t T = app::gpu::kTileSize;
    const float lo = float(T + 2) / (1.5f * T) - 1, hi = float(2 * T - 3) / (1.5f * T) - 1;
    auto g = upload({float3(lo, lo, 0.5f), float3(hi, lo, 0.5f), float3(lo, hi, 0.5f)}, {uint3(0, 1, 2)});
    Rasterizer r(device);
    auto tiles_of = [&](float margin) {
        auto b = r.bin(stream, g, identity_view(3 * T, 3 * T), margin);
        std::vector<uint32_t> count(9);
        stream << b.count.copy_to(count.data()) << synchronize();
        EXPECT_EQ(b.tiles_x, 3u);
        return count;
    };
    EXPECT_EQ(tiles_of(0), (std::vector<uint32_t>{0, 0, 0, 0, 1, 0, 0, 0, 0}));
    EXPECT_EQ(tiles_of(1), (std::vector<uint32_t>{0, 0, 0, 0, 1, 0, 0, 0, 0}));
    EXPECT_EQ(tiles_of(4), (std::vector<uint32_t>{1, 1, 1, 1, 1, 1, 1, 1, 1}));
}

// The room a caller keeps after the tile lists (OwnLists): exactly what it asks for; with `fit`, what it asks for
// up to what the device's largest storage buffer (at most 2^28 entries) leaves a pixel beside the lists. On
// lavapipe (128 MiB) 256 a pixel fit at 64x64, 31 at 1024x1024.
TEST_F(Raster, BinKeepsOwnListsAfterTheTileListsUpToTheBufferLimit) {
    auto g = upload({float3(-0.5f, -0.5f, 0.5f), float3(0.5f, -0.5f, 0.5f), float3(-0.5f, 0.5f, 0.5f)}, {uint3(0, 1, 2)});
    Rasterizer r(device);
    const uint64_t most = std::min<uint64_t>(device.max_buffer_bytes() / 4, uint64_t(1) << 28);
    for (uint32_t side : {64u, 1024u}) {
        const uint32_t pixels = side * side;
        auto fixed = r.bin(stream, g, identity_view(side, side), 0, app::OwnLists{pixels, 7, false});
        EXPECT_GT(fixed.reserved_at, 0u) << side;   // the triangle's tile entries come first
        EXPECT_EQ(fixed.own, 7u) << side;
        EXPECT_EQ(fixed.list.size(), size_t(fixed.reserved_at) + 7 * size_t(pixels)) << side;
        auto fit = r.bin(stream, g, identity_view(side, side), 0, app::OwnLists{pixels, 256, true});
        EXPECT_EQ(fit.own, std::min<uint64_t>(256, (most - fit.reserved_at) / pixels)) << side;
        EXPECT_EQ(fit.list.size(), size_t(fit.reserved_at) + size_t(fit.own) * pixels) << side;
        EXPECT_LE(fit.list.size(), most) << side;
        if (most == uint64_t(1) << 25) {   // lavapipe's limit
            EXPECT_EQ(fit.own, side == 64 ? 256u : 31u) << side;
        }
    }
}

} // namespace adjoint::test
