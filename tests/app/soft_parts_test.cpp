// Soft rasterization over long tile lists: lavapipe ends a group of invocations' loops after 65,535 iterations,
// so a pixel's list is taken in parts of at most 16,384 entries, one dispatch each, the blend's sums and
// largest weight carried between them (render/soft_stage.cpp). Forced into many parts, a small scene gives the
// image and the gradients of one part; 70,000 triangles over an 8x8 image (one tile) give the SoftRas blend
// computed here, and $autodiff's gradient agrees with central differences. With render.soft.faces_per_pixel,
// the same tile gives the blend of the triangles that weigh most, and the ball that of every candidate that
// weighs when there is room for them all.
#include "ball_scene.h"
#include "finite_difference.h"
#include "render/diagnose_stage.h"
#include "render/dynamic.h"
#include "render/soft_select_dsl.h"
#include "render/scene_data.h"
#include "support/device_fixture.h"

#include <adjoint/app/optimization.h>
#include <adjoint/app/renderer.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <utility>

namespace adjoint::test {

namespace {

namespace fs = std::filesystem;

// The ico-sphere (vertex colours) over a floor, a point and an ambient light, every ball vertex free.
const std::string kBall = ball_scene(R"({ "visibility": "soft", "soft": { "sigma": 1e-3, "gamma": 0.1 } })",
                                     R"("meshes.ball.vertices": { "perturb": 0.02 })");

struct Rendered {
    std::vector<float4> image;
    std::vector<float> gradient;   // d (sum of the image weighted by a fixed pattern) / d every parameter float
    uint32_t parts = 0;
    // --diagnose (render/soft_diagnose.h) with the ball's vertices (the free floats) in slot 0: each pixel's share
    // of their gradient, components summed, then the edge mask (pixels floats each); and that gradient's sum.
    std::vector<float> share, edges;
    double vertices_gradient = 0;
    std::vector<uint32_t> candidates, weighed;   // each pixel's (DynamicRenderer::soft_candidates, soft_weighed)
};

// The diagnose pass after render() and backward(): the mesh vertex floats in slot 0.
void diagnose(Device& device, Stream& stream, app::DynamicRenderer& r, const app::ParamLayout& layout,
              const DiffBuffer<float>& params, size_t pixels, Rendered& result) {
    app::DiagnoseBuffers d;
    std::vector<uint32_t> slot(params.value.size(), app::kDiagnoseSlots);
    const std::vector<uint32_t> texture(1, app::kDiagnoseSlots);
    for (const auto& sl : layout.slots)
        if (sl.kind == app::ParameterKind::mesh_vertices)
            for (uint32_t i = 0; i < sl.size; ++i) {
                slot[sl.offset + i] = 0;
                result.vertices_gradient += result.gradient[sl.offset + i];
            }
    d.param_slot = device.create_buffer<uint32_t>(slot.size());
    d.texture_slot = device.create_buffer<uint32_t>(1);
    d.geometry = r.geometry().vertex_count() > 0;
    d.directions = device.create_buffer<float>(
        std::max<size_t>(size_t(r.geometry().vertex_count()) * app::kVertexDirections * app::kDiagnoseSlots, 1));
    d.out = device.create_buffer<float>((app::kDiagnoseSlots + 1) * pixels);
    stream << d.param_slot.copy_from(slot.data()) << d.texture_slot.copy_from(texture.data());
    if (d.geometry) r.geometry().directions(device, stream, params.value, d.param_slot, d.directions);
    r.diagnose(device, stream, 0, params, d);
    std::vector<float> out((app::kDiagnoseSlots + 1) * pixels);
    stream << d.out.copy_to(out.data()) << synchronize();
    result.share.assign(out.begin(), out.begin() + pixels);
    result.edges.assign(out.end() - pixels, out.end());
}

// One render and backward pass through the dynamic chain with room for `candidates` a pixel and `part` list
// entries a dispatch (0: the defaults), seeded with a fixed pattern as d loss / d image (`colour_only`: 0 for
// alpha, as a colour loss seeds it); `diagnosed`: the --diagnose pass too; `faces_in_memory`: faces_per_pixel's
// heaviest selected in memory where registers would hold them (DynamicOptions::soft_faces_in_memory).
Rendered render(Device& device, const app::Scene& scene, uint32_t candidates, uint32_t part, bool diagnosed = false,
                bool colour_only = false, bool faces_in_memory = false) {
    Stream stream = device.create_stream();
    app::SceneData data = app::upload_scene(device, stream, scene);
    app::DynamicRenderer r(device, stream, scene, data,
                           app::DynamicOptions{app::Visibility::soft, false, candidates, part, faces_in_memory});
    const size_t pixels = size_t(scene.views[0].width) * scene.views[0].height;
    const std::vector<float> values = app::gather_values(scene, data.layout);
    auto params = device.create_diff_buffer<float>(values.size());
    auto out = device.create_buffer<float4>(pixels);
    std::vector<float> seed(4 * pixels);
    for (size_t i = 0; i < seed.size(); ++i)
        seed[i] = std::sin(0.37f * float(i)) * (i % 4 == 3 ? (colour_only ? 0.0f : 0.5f) : 1.0f);
    stream << params.value.copy_from(values.data()) << params.grad.fill_zero();
    r.zero_grad(stream);
    r.update_geometry(stream, params.value);
    r.render(stream, 0, scene.views[0], params.value, out);
    stream << r.image_gradient().copy_from(seed.data());
    r.backward(stream, 0, params);
    r.geometry_backward(stream, params);
    Rendered result;
    result.image.resize(pixels);
    result.gradient.resize(values.size());
    result.parts = r.soft_parts();
    result.candidates.resize(pixels);
    result.weighed.resize(pixels);
    stream << out.copy_to(result.image.data()) << params.grad.copy_to(result.gradient.data())
           << r.soft_candidates()->copy_to(result.candidates.data()) << r.soft_weighed()->copy_to(result.weighed.data())
           << synchronize();
    if (diagnosed) diagnose(device, stream, r, data.layout, params, pixels, result);
    return result;
}

} // namespace

class SoftParts : public DeviceTest {};

// The ball's tiles list up to a few hundred triangles: one part by default. With 7 or 64 entries a part, and
// with room for one candidate a pixel (most pixels then loop over their tile's list), the image is the same
// to rounding (the sums are added in the same order) and so are the gradients (scattered in another order), and
// --diagnose's per-pixel shares and edge mask.
TEST_F(SoftParts, ManyPartsGiveTheImageAndGradientsOfOne) {
    const app::Scene scene = app::load_scene_from_string(kBall, fs::path(ADJOINT_SOURCE_DIR) / "assets", "soft.json");
    for (uint32_t candidates : {0u, 1u}) {
        const Rendered one = render(device, scene, candidates, 0, true);
        ASSERT_EQ(one.parts, 1u);
        size_t partial = 0;
        for (const float4& t : one.image) partial += t.w > 0.01f && t.w < 0.99f;
        EXPECT_GT(partial, 50u);   // soft edges: not two blank images
        float largest = 0;
        for (float g : one.gradient) largest = std::max(largest, std::fabs(g));
        ASSERT_GT(largest, 1e-3f);
        for (uint32_t part : {7u, 64u}) {
            const Rendered many = render(device, scene, candidates, part, true);
            EXPECT_GT(many.parts, part == 7 ? 20u : 3u) << "candidates " << candidates;
            for (size_t i = 0; i < one.image.size(); ++i) {
                const float4 a = one.image[i], b = many.image[i];
                ASSERT_NEAR(a.x, b.x, 1e-6f) << "pixel " << i << " part " << part << " candidates " << candidates;
                ASSERT_NEAR(a.y, b.y, 1e-6f) << "pixel " << i;
                ASSERT_NEAR(a.z, b.z, 1e-6f) << "pixel " << i;
                ASSERT_NEAR(a.w, b.w, 1e-6f) << "pixel " << i;
            }
            for (size_t i = 0; i < one.gradient.size(); ++i)
                ASSERT_NEAR(one.gradient[i], many.gradient[i], 1e-5f * largest + 1e-4f * std::fabs(one.gradient[i]))
                    << "float " << i << " part " << part << " candidates " << candidates;
            // --diagnose, part by part: the same pixel shares (they sum to the gradient's floats) and edges.
            double share = 0, largest_share = 0;
            for (size_t i = 0; i < one.share.size(); ++i) {
                share += many.share[i];
                largest_share = std::max(largest_share, double(std::fabs(one.share[i])));
                ASSERT_EQ(one.edges[i], many.edges[i]) << "pixel " << i << " part " << part;
            }
            for (size_t i = 0; i < one.share.size(); ++i)
                ASSERT_NEAR(one.share[i], many.share[i], 1e-5 * largest_share + 1e-4 * std::fabs(one.share[i]))
                    << "pixel " << i << " part " << part << " candidates " << candidates;
            EXPECT_GT(std::fabs(many.vertices_gradient), 1e-3);
            EXPECT_NEAR(share, many.vertices_gradient, 1e-3 * std::fabs(many.vertices_gradient)) << "part " << part;
            EXPECT_GT(std::count(many.edges.begin(), many.edges.end(), 1.0f), 20);
        }
    }
}

// With a small gamma only the front layer of the closed ball enters a pixel's weights; the others add to its
// alpha only. Seeded as a colour loss seeds it (nothing for alpha), the backward pass loops over the weighed
// entries alone, which the forward pass moved to the front of each pixel's own list (or copied there from its
// tile's list, where its candidates did not fit but its weighed entries do), and its gradient is that of the
// whole list: the same as where most pixels loop over their tile's list (room for one candidate), in one part
// or many (the moves and copies carry over parts). With alpha seeded too, every entry has a gradient again
// (ManyPartsGiveTheImageAndGradientsOfOne).
TEST_F(SoftParts, WithoutAlphaGradientsTheBackwardPassSkipsUnweighedEntriesExactly) {
    const app::Scene scene = app::load_scene_from_string(
        ball_scene(R"({ "visibility": "soft", "soft": { "sigma": 1e-3, "gamma": 1e-4 } })",
                   R"("meshes.ball.vertices": { "perturb": 0.02 })"),
        fs::path(ADJOINT_SOURCE_DIR) / "assets", "soft.json");
    const Rendered whole = render(device, scene, 1, 0, false, true);
    float largest = 0;
    for (float g : whole.gradient) largest = std::max(largest, std::fabs(g));
    ASSERT_GT(largest, 1e-3f);
    // Room for one: a pixel whose candidates overflowed keeps its one weighed entry, or loops over its tile's list.
    size_t tile_lists = 0;
    for (size_t i = 0; i < whole.candidates.size(); ++i)
        if (whole.candidates[i] > 1) {
            EXPECT_TRUE(whole.weighed[i] <= 1 || whole.weighed[i] == app::kSoftAllWeighed) << "pixel " << i;
            tile_lists += whole.weighed[i] == app::kSoftAllWeighed;
        }
    EXPECT_GT(tile_lists, 100u);
    for (uint32_t part : {0u, 7u}) {
        // Room for 20: about 800 of the 2,304 pixels have more candidates, and most of those fewer weighed
        // entries (up to 25).
        const Rendered copied = render(device, scene, 20, part, false, true);
        size_t copies = 0, tiles = 0;
        for (size_t i = 0; i < copied.candidates.size(); ++i)
            if (copied.candidates[i] > 20 && copied.weighed[i] != app::kSoftAllWeighed) {
                ASSERT_LE(copied.weighed[i], 20u) << "pixel " << i;
                ++copies;
            } else {
                tiles += copied.weighed[i] == app::kSoftAllWeighed;
            }
        EXPECT_GT(copies, 500u) << "part " << part;
        EXPECT_GT(tiles, 10u) << "part " << part;
        for (size_t i = 0; i < whole.image.size(); ++i)
            ASSERT_NEAR(whole.image[i].x, copied.image[i].x, 1e-6f) << "pixel " << i << " part " << part;
        for (size_t i = 0; i < whole.gradient.size(); ++i)
            ASSERT_NEAR(whole.gradient[i], copied.gradient[i], 1e-5f * largest + 1e-4f * std::fabs(whole.gradient[i]))
                << "float " << i << " part " << part << " (room for 20)";
        const Rendered front = render(device, scene, 0, part, false, true);
        // Pixels on their own lists, some of whose entries are not weighed: the skip is exercised.
        size_t own = 0, skipped = 0, entries = 0, weighed = 0;
        for (size_t i = 0; i < front.candidates.size(); ++i) {
            if (front.weighed[i] == app::kSoftAllWeighed) continue;
            ++own;
            ASSERT_LE(front.weighed[i], front.candidates[i]) << "pixel " << i;
            skipped += front.weighed[i] < front.candidates[i];
            entries += front.candidates[i];
            weighed += front.weighed[i];
        }
        EXPECT_EQ(own, front.candidates.size()) << "part " << part;
        EXPECT_GT(skipped, 100u) << "part " << part;
        EXPECT_LT(weighed, entries * 3 / 4) << "part " << part;
        for (size_t i = 0; i < whole.image.size(); ++i) {
            ASSERT_NEAR(whole.image[i].x, front.image[i].x, 1e-6f) << "pixel " << i << " part " << part;
            ASSERT_NEAR(whole.image[i].w, front.image[i].w, 1e-6f) << "pixel " << i << " part " << part;
        }
        for (size_t i = 0; i < whole.gradient.size(); ++i)
            ASSERT_NEAR(whole.gradient[i], front.gradient[i], 1e-5f * largest + 1e-4f * std::fabs(whole.gradient[i]))
                << "float " << i << " part " << part;
    }
}

// 70,000 triangles over the single tile of an 8x8 image, all covering every pixel far inside their outlines
// (D' = 1): 69,999 behind at view depths 3.04 .. 3.14 in colour B, one in front in colour A (at depth
// 3 - front_z). `faces`: render.soft.faces_per_pixel (0: none). Written once to a temporary folder.
class DenseTile {
public:
    static constexpr uint32_t kBack = 69999;
    static constexpr double kNear = 0.5, kFar = 10, kGamma = 0.01;
    DenseTile() : dir_(fs::temp_directory_path() / ("adjoint-soft-parts-" + std::to_string(getpid()))) {
        fs::create_directories(dir_);
        std::ofstream f(dir_ / "back.obj");
        char line[96];
        for (uint32_t i = 0; i < kBack; ++i) {
            const float z = -0.04f - 0.1f * float(i) / float(kBack);   // world z; the camera looks down -z from 3
            depths_.push_back(3.0 - double(z));
            std::snprintf(line, sizeof(line), "v -20 -20 %.9g\nv 40 -20 %.9g\nv -20 40 %.9g\n", z, z, z);
            f << line;
        }
        for (uint32_t i = 0; i < kBack; ++i) f << "f " << 3 * i + 1 << " " << 3 * i + 2 << " " << 3 * i + 3 << "\n";
    }
    ~DenseTile() { fs::remove_all(dir_); }
    // The back triangles' view depths, nearest first.
    const std::vector<double>& depths() const { return depths_; }

    // flipped: the front triangle wound the other way from the back ones, so that the tile list has it on its
    // other side (TileBins::sides).
    app::Scene scene(float front_z, uint32_t faces, bool flipped = false) const {
        std::ofstream(dir_ / "front.obj") << "v -20 -20 " << front_z << "\nv 40 -20 " << front_z << "\nv -20 40 "
                                          << front_z << (flipped ? "\nf 1 3 2\n" : "\nf 1 2 3\n");
        const std::string soft = R"({ "sigma": 1e-3, "gamma": 0.01)" +
                                 (faces ? ", \"faces_per_pixel\": " + std::to_string(faces) : std::string()) + " }";
        const std::string text = R"({
  "format": 1,
  "camera": { "eye": [0, 0, 3], "target": [0, 0, 0], "fov_y": 40, "resolution": [8, 8], "near": 0.5, "far": 10 },
  "background": [0.1, 0.2, 0.3],
  "materials": { "a": { "albedo": [0.9, 0.6, 0.3] }, "b": { "albedo": [0.2, 0.3, 0.8] } },
  "meshes": [ { "name": "back", "file": "back.obj", "material": "b" },
              { "name": "front", "file": "front.obj", "material": "a" } ],
  "lights": [ { "name": "fill", "type": "ambient", "intensity": 1 } ],
  "render": { "visibility": "soft", "soft": )" + soft + R"( },
  "optimize": { "target": "scene", "parameters": { "meshes.front.translation": { "init": [0, 0, 0.004] } } }
})";
        return app::load_scene_from_string(text, dir_, "dense.json");
    }

    // The blend on the host, in double, of the front triangle (at view depth `front_depth`) and the back ones
    // at `back`: weights e^((z - z_front) / gamma), z = (far - depth) / (far - near); channel c.
    static double blend(double front_depth, const std::vector<double>& back, int c) {
        const double a[3] = {0.9, 0.6, 0.3}, b[3] = {0.2, 0.3, 0.8}, bg[3] = {0.1, 0.2, 0.3};
        auto z = [&](double d) { return (kFar - d) / (kFar - kNear); };
        double wb = 0;
        for (double d : back) wb += std::exp((z(d) - z(front_depth)) / kGamma);
        const double wbg = std::exp((1e-3 - z(front_depth)) / kGamma);
        return (a[c] + wb * b[c] + wbg * bg[c]) / (1 + wb + wbg);
    }

private:
    fs::path dir_;
    std::vector<double> depths_;
};

// The front translation's gradient in z against central differences (from 0.004: the target is at 0); x and
// y do not move a pixel far inside every outline.
void expect_front_gradient(Device& device, const app::Scene& scene) {
    app::Optimizer opt(device, scene);
    std::vector<float> g;
    ASSERT_GT(opt.evaluate(&g), 0.0);
    const std::vector<float> x0 = opt.free_values();
    ASSERT_EQ(x0.size(), 3u);
    const double fd = central_difference(opt, x0, 2, 1e-3);
    EXPECT_GT(std::fabs(fd), 1e-4);
    EXPECT_NEAR(g[2], fd, 0.02 * std::fabs(fd));
    EXPECT_LT(std::fabs(g[0]), 1e-3 * std::fabs(fd));
    EXPECT_LT(std::fabs(g[1]), 1e-3 * std::fabs(fd));
}

// The front triangle at depth 2, whose weight e^(z / gamma) roughly matches the back ones' together. The pixel
// is the softmax blend over all 70,000 (in 5 parts: a part lost, or the front one's, would move it by a tenth
// or more), and the front triangle's depth has the gradient that central differences give.
TEST_F(SoftParts, A70000TriangleTileBlendsEveryPart) {
    const DenseTile tile;
    const app::Scene scene = tile.scene(1.0f, 0);
    const Rendered r = render(device, scene, 0, 0);
    EXPECT_EQ(r.parts, 5u);
    for (size_t i = 0; i < r.image.size(); ++i) {
        EXPECT_NEAR(r.image[i].x, DenseTile::blend(2.0, tile.depths(), 0), 2e-3) << "pixel " << i;
        EXPECT_NEAR(r.image[i].y, DenseTile::blend(2.0, tile.depths(), 1), 2e-3) << "pixel " << i;
        EXPECT_NEAR(r.image[i].z, DenseTile::blend(2.0, tile.depths(), 2), 2e-3) << "pixel " << i;
        EXPECT_EQ(r.image[i].w, 1.0f) << "pixel " << i;
    }
    // The blend is not near either colour alone: each part's triangles count.
    EXPECT_GT(DenseTile::blend(2.0, tile.depths(), 0), 0.4);
    EXPECT_LT(DenseTile::blend(2.0, tile.depths(), 0), 0.7);
    expect_front_gradient(device, scene);
}

class SoftFacesPerPixel : public SoftParts {};

// With faces_per_pixel = K each pixel blends the K triangles that weigh most: here the front one (at depth 2.9)
// and the K - 1 nearest behind it, in whatever order the binning listed the 70,000 (selected in many
// dispatches: 4K + 1 iterations an entry at most). With K = 16 that blend is (0.36, 0.37, 0.69); the 15 farthest
// instead would give (0.52, 0.44, 0.57), the whole list (0.20, 0.30, 0.80): more than 0.05 off in each channel.
//
// Wound the other way, the front triangle is alone on its side of the tile list: it is taken first, and with
// K = 1 the 69,999 behind, whose nearest vertex cannot outweigh it, are skipped (soft_select_held); with K = 16
// they are not, since the K are not full. A skip that dropped a triangle it should keep, or a bound on the wrong
// side, changes the blend. Both selections (held in registers, and in memory) take the list side by side.
TEST_F(SoftFacesPerPixel, EachPixelBlendsTheHeaviestOfA70000TriangleTile) {
    const DenseTile tile;
    for (auto [faces, flipped] : {std::pair{1u, false}, {16u, false}, {1u, true}, {16u, true}})
    for (bool in_memory : {false, true}) {
        SCOPED_TRACE(std::string(flipped ? "front wound the other way" : "one winding") +
                     (in_memory ? ", kept in memory" : ", held"));
        const app::Scene scene = tile.scene(0.1f, faces, flipped);
        const Rendered r = render(device, scene, 0, 0, false, false, in_memory);
        EXPECT_EQ(r.parts, 1u);
        const std::vector<double> nearest(tile.depths().begin(), tile.depths().begin() + (faces - 1));
        const std::vector<double> farthest(tile.depths().end() - (faces - 1), tile.depths().end());
        for (int c = 0; c < 3; ++c) {
            const double want = DenseTile::blend(2.9, nearest, c);
            if (faces > 1) {
                EXPECT_GT(std::fabs(want - DenseTile::blend(2.9, farthest, c)), 0.05) << "channel " << c;
                EXPECT_GT(std::fabs(want - DenseTile::blend(2.9, tile.depths(), c)), 0.05) << "channel " << c;
            }
            for (size_t i = 0; i < r.image.size(); ++i) {
                const float got = c == 0 ? r.image[i].x : c == 1 ? r.image[i].y : r.image[i].z;
                ASSERT_NEAR(got, want, 2e-3) << "pixel " << i << " channel " << c << " faces " << faces;
            }
        }
        for (size_t i = 0; i < r.image.size(); ++i) {
            EXPECT_EQ(r.candidates[i], faces) << "pixel " << i;
            EXPECT_EQ(r.image[i].w, 1.0f) << "pixel " << i;
        }
        // Alone, the front one's depth changes nothing. (The optimizer's renderer holds the K in registers.)
        if (faces > 1 && !in_memory) expect_front_gradient(device, scene);
    }
}

// With room for every pixel's candidates (the most any pixel of the exact blend has), faces_per_pixel keeps all
// that weigh (not those within the selection's slack but out of reach) and the blend is the exact one: the same
// image and gradients. With fewer, each pixel keeps min(those, K), the image moves away from the exact one as K
// shrinks, and taking the list in parts
// (the kept ones and the least of them carried across dispatches) changes nothing, nor does keeping them in memory
// instead of registers.
TEST_F(SoftFacesPerPixel, RoomForEveryCandidateIsTheExactBlendAndFewerKeepTheirCount) {
    auto scene_with = [](uint32_t faces) {
        const std::string soft = R"({ "visibility": "soft", "soft": { "sigma": 1e-3, "gamma": 0.01)" +
                                 (faces ? ", \"faces_per_pixel\": " + std::to_string(faces) : std::string()) + " } }";
        return app::load_scene_from_string(ball_scene(soft, R"("meshes.ball.vertices": { "perturb": 0.02 })"),
                                           fs::path(ADJOINT_SOURCE_DIR) / "assets", "soft.json");
    };
    const Rendered exact = render(device, scene_with(0), 0, 0);
    const uint32_t most = *std::max_element(exact.candidates.begin(), exact.candidates.end());
    ASSERT_GT(most, 8u);
    ASSERT_LE(most, 256u);
    float largest = 0;
    for (float g : exact.gradient) largest = std::max(largest, std::fabs(g));
    ASSERT_GT(largest, 1e-3f);
    auto difference = [&](const Rendered& r) {
        double sum = 0;
        for (size_t i = 0; i < r.image.size(); ++i)
            sum += std::fabs(r.image[i].x - exact.image[i].x) + std::fabs(r.image[i].w - exact.image[i].w);
        return sum / double(r.image.size());
    };
    const Rendered all = render(device, scene_with(most), 0, 0);
    size_t out_of_reach = 0;
    for (size_t i = 0; i < exact.image.size(); ++i) {
        ASSERT_LE(all.candidates[i], exact.candidates[i]) << "pixel " << i;
        out_of_reach += exact.candidates[i] - all.candidates[i];
        ASSERT_NEAR(all.image[i].x, exact.image[i].x, 1e-6f) << "pixel " << i;
        ASSERT_NEAR(all.image[i].w, exact.image[i].w, 1e-6f) << "pixel " << i;
    }
    // The exact blend's lists take in a tenth of a pixel more than the reach (SoftStage::forward): here about one
    // a pixel.
    std::printf("candidates out of reach: %zu\n", out_of_reach);
    EXPECT_GT(out_of_reach, 0u);
    for (size_t i = 0; i < exact.gradient.size(); ++i)
        ASSERT_NEAR(all.gradient[i], exact.gradient[i], 1e-5f * largest + 1e-4f * std::fabs(exact.gradient[i]))
            << "float " << i;
    // b keeps the candidates of a, and gives its image (colour.x, alpha) to `image` and its gradients to
    // `relative` of each float plus a tenth of that of the largest.
    auto expect_same = [&](const Rendered& a, const Rendered& b, uint32_t faces, float image, float relative) {
        for (size_t i = 0; i < exact.image.size(); ++i) {
            ASSERT_EQ(b.candidates[i], a.candidates[i]) << "pixel " << i << " faces " << faces;
            ASSERT_NEAR(b.image[i].x, a.image[i].x, image) << "pixel " << i << " faces " << faces;
            ASSERT_NEAR(b.image[i].w, a.image[i].w, image) << "pixel " << i << " faces " << faces;
        }
        for (size_t i = 0; i < exact.gradient.size(); ++i)
            ASSERT_NEAR(b.gradient[i], a.gradient[i], 0.1f * relative * largest + relative * std::fabs(a.gradient[i]))
                << "float " << i << " faces " << faces;
    };
    double previous = 0;
    for (uint32_t faces : {8u, 2u}) {
        const Rendered one = render(device, scene_with(faces), 0, 0), many = render(device, scene_with(faces), 0, 7);
        // The selection takes many dispatches either way; the blend too where K is above a part.
        EXPECT_EQ(many.parts, (faces + 6) / 7) << "faces " << faces;
        for (size_t i = 0; i < exact.image.size(); ++i)
            ASSERT_EQ(one.candidates[i], std::min(all.candidates[i], faces)) << "pixel " << i << " faces " << faces;
        ASSERT_NO_FATAL_FAILURE(expect_same(one, many, faces, 1e-6f, 1e-4f));
        // Held in registers (K <= kSoftHeldFaces, as here) or in memory, the same K are kept; only the order
        // they are blended in differs (heaviest first against the order they were found).
        ASSERT_LE(faces, app::kSoftHeldFaces);
        const Rendered memory = render(device, scene_with(faces), 0, 0, false, false, true);
        ASSERT_NO_FATAL_FAILURE(expect_same(one, memory, faces, 1e-5f, 1e-3f));
        const double d = difference(one);
        std::printf("faces_per_pixel %u: mean |colour.x| + |alpha| difference from the exact blend %.3g\n", faces, d);
        EXPECT_GT(d, previous) << "faces " << faces;
        previous = d;
    }
}

// A candidate within the selection's slack but out of reach (D' = 0) weighs nothing and is not kept. Kept, it
// weighed the clamp's log(1e-30) + z / gamma, and with gamma 1e-4 the box's triangles just beyond their reach
// outranked the floor that covers the pixel: with K = 2 three pixels beside the box's outline showed the
// background, where the exact blend shows the floor.
TEST_F(SoftFacesPerPixel, ACandidateOutOfReachTakesNoPlaceFromOneThatCovers) {
    auto scene_with = [](const std::string& faces) {
        return app::load_scene_from_string(R"({ "format": 1,
  "camera": { "eye": [0, 1.5, 3.3], "target": [0, 0, 0], "fov_y": 40, "resolution": [64, 64] },
  "background": [0.05, 0.05, 0.08],
  "materials": { "box": { "albedo": [0.85, 0.45, 0.2] }, "floor": { "albedo": [0.6, 0.6, 0.6] } },
  "meshes": [
    { "name": "box", "file": "meshes/box.obj", "material": "box", "scale": 0.5,
      "rotation": { "axis": [0, 1, 0], "angle": 30 } },
    { "name": "floor", "file": "meshes/quad.obj", "material": "floor", "translation": [0, -0.8, 0] } ],
  "lights": [ { "name": "fill", "type": "ambient", "intensity": 1 } ],
  "render": { "visibility": "soft", "soft": { "sigma": 1e-4, "gamma": 1e-4)" + faces + R"( } },
  "optimize": { "target": "scene", "parameters": { "materials.box.albedo": { "init": [0.85, 0.45, 0.2] } } } })",
                                           fs::path(ADJOINT_SOURCE_DIR) / "assets", "box.json");
    };
    const Rendered exact = render(device, scene_with(""), 0, 0);
    for (uint32_t faces : {1u, 2u, 4u}) {
        const Rendered kept = render(device, scene_with(", \"faces_per_pixel\": " + std::to_string(faces)), 0, 0);
        size_t floor_or_box = 0;
        for (size_t i = 0; i < exact.image.size(); ++i) {
            if (exact.image[i].w < 0.999f) continue;   // not covered through and through
            ++floor_or_box;
            // The background is 0.05 in red; the floor and the box are above 0.3.
            EXPECT_GT(kept.image[i].x, 0.2f) << "pixel " << i << " (exact " << exact.image[i].x << ") faces " << faces;
        }
        EXPECT_GT(floor_or_box, 1500u);
    }
}

// Soft settings changed after loading (the studio's fields take any number) are refused where the renderer is
// built, as the loader refuses them: a gamma of 0 or 1e-40 rendered NaN.
TEST_F(SoftFacesPerPixel, SettingsOutOfTheLoadersRangesAreRefusedByTheRenderer) {
    app::Scene scene = app::load_scene_from_string(
        ball_scene(R"({ "visibility": "soft", "soft": { "faces_per_pixel": 4 } })",
                   R"("meshes.ball.translation": { "perturb": 0.05 })"),
        fs::path(ADJOINT_SOURCE_DIR) / "assets", "soft.json");
    const auto error = [&](const app::Scene& s) -> std::string {
        try {
            app::Optimizer opt(device, s);
        } catch (const app::SceneError& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_EQ(error(scene), "");
    app::Scene changed = scene;
    changed.render.soft_gamma = 1e-40f;
    EXPECT_EQ(error(changed), "render.soft.gamma: expected a number >= 1e-6 (float's exponents z / gamma lose their "
                              "precision below)");
    changed = scene;
    for (float sigma : {0.0f, 2.0f}) {
        changed.render.soft_sigma = sigma;
        EXPECT_EQ(error(changed), "render.soft.sigma: expected a number in (0, 1] (past 1 every triangle reaches every "
                                  "pixel of the image)");
    }
}

} // namespace adjoint::test
