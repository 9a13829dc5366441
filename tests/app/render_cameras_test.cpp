// Intrinsics on the device (both projection paths), the alpha mask in the loss, and a reduced recovery from a
// NeRF-style dataset with RGBA targets and masks; camera gradients through intrinsics.
#include "finite_difference.h"
#include "support/device_fixture.h"

#include <adjoint/app/image_io.h>
#include <adjoint/app/optimization.h>
#include <adjoint/app/renderer.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace adjoint::test {

namespace {

using Json = nlohmann::ordered_json;

const std::string plane = std::string(ADJOINT_SOURCE_DIR) + "/assets/meshes/plane.obj";

// A 1x1 white square at y = 0 under an ambient light, seen from above.
Json square_scene(uint32_t size, const char* visibility) {
    Json s = Json::parse(R"({
      "format": 1,
      "camera": { "eye": [0, 5, 0], "target": [0, 0, 0], "up": [0, 0, -1] },
      "materials": { "m": { "albedo": [1, 1, 1] } },
      "lights": [ { "name": "sky", "type": "ambient" } ]
    })");
    s["camera"]["resolution"] = {size, size};
    s["meshes"] = {{{"name", "square"}, {"file", plane}, {"material", "m"}, {"scale", 0.25}}};
    s["render"] = {{"visibility", visibility}};
    return s;
}

// The centroid of an image's brightness, in pixels.
std::pair<double, double> centroid(const app::LinearImage& image) {
    double sum = 0, sx = 0, sy = 0;
    for (uint32_t y = 0; y < image.height; ++y)
        for (uint32_t x = 0; x < image.width; ++x) {
            const double v = image.texels[y * image.width + x].x;
            sum += v;
            sx += v * (x + 0.5);
            sy += v * (y + 0.5);
        }
    return {sx / sum, sy / sum};
}

class TempFolder {
public:
    TempFolder() : path_(std::filesystem::temp_directory_path() / ("adjoint_cameras_" + std::to_string(::getpid()))) {
        std::filesystem::create_directories(path_);
    }
    ~TempFolder() { std::filesystem::remove_all(path_); }
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

} // namespace

class CameraRender : public DeviceTest {};

// The static chain projects with the host's matrix, the dynamic one with the device's look-at: both shift.
TEST_F(CameraRender, AnOffCentrePrincipalPointShiftsTheRenderedPicture) {
    for (const char* visibility : {"hard", "antialias"}) {
        Json s = square_scene(32, visibility);
        // Half a side of 4.68 px: at the scene's 0.25 (4.5 px) the square's edges ran through pixel centres, where
        // which side takes a pixel is a matter of rounding (NVIDIA's fused multiply-adds put it 0.03 px off).
        s["meshes"][0]["scale"] = 0.26;
        s["camera"]["intrinsics"] = {{"fx", 90}, {"fy", 90}, {"cx", 16}, {"cy", 16}};
        app::SceneRenderer centred(device, app::load_scene_from_string(s.dump(), ".", "square.json"));
        s["camera"]["intrinsics"] = {{"fx", 90}, {"fy", 80}, {"cx", 20}, {"cy", 14}};
        app::SceneRenderer shifted(device, app::load_scene_from_string(s.dump(), ".", "square.json"));
        const auto [x0, y0] = centroid(centred.render(0));
        const auto [x1, y1] = centroid(shifted.render(0));
        EXPECT_NEAR(x0, 16, 0.02) << visibility;
        EXPECT_NEAR(y0, 16, 0.02) << visibility;
        EXPECT_NEAR(x1, 20, 0.02) << visibility;   // the square's centre is on the axis: it lands on (cx, cy)
        EXPECT_NEAR(y1, 14, 0.02) << visibility;
    }
}

// "mask": "alpha": the loss is the mean over all pixels of the colour loss where the target's alpha is not 0.
TEST_F(CameraRender, TheAlphaMaskLeavesPixelsOutOfTheLoss) {
    TempFolder dir;
    app::Image target(16, 16, 4);
    for (int y = 0; y < 16; ++y)
        for (int x = 0; x < 16; ++x) {
            const bool kept = x < 8;
            const float rgba[4] = {0.8f, 0.5f, kept ? 0.3f : 0.9f, kept ? 1.0f : 0.0f};
            for (int c = 0; c < 4; ++c) target.at(x, y, c) = rgba[c];
        }
    app::write_png(dir.path() / "target.png", target);
    for (const char* visibility : {"hard", "antialias"}) {
        for (bool mask : {false, true}) {
            Json s = square_scene(16, visibility);
            s["background"] = {0.1, 0.2, 0.3};
            s["optimize"] = {{"target", {{"images", {"target.png"}}}},
                             {"parameters", {{"materials.m.albedo", {{"init", {0.2, 0.4, 0.6}}}}}}};
            if (mask) s["optimize"]["mask"] = "alpha";
            app::Optimizer opt(device, app::load_scene_from_string(s.dump(), dir.path(), "mask.json"));
            const app::LinearImage rendered = opt.render_current(0), t = opt.target(0);
            double expected = 0;
            for (size_t i = 0; i < t.texels.size(); ++i) {
                if (mask && t.texels[i].w == 0) continue;
                for (size_t c = 0; c < 3; ++c) expected += std::pow(double(rendered.texels[i][c] - t.texels[i][c]), 2);
            }
            expected /= 16.0 * 16.0 * 3.0;
            EXPECT_NEAR(opt.evaluate(), expected, 1e-5 * expected) << visibility << (mask ? ", masked" : "");
        }
    }
}

// Two views of a dataset whose targets are RGBA with a band cut out (alpha 0, so composited to the
// background): with the mask the albedo is recovered; without it the band pulls it towards the background.
TEST_F(CameraRender, ARecoveryFromANerfDatasetWithMasks) {
    TempFolder dir;
    Json transforms = {{"camera_angle_x", 0.3}, {"frames", Json::array()}};
    const double poses[2][4][4] = {{{1, 0, 0, 0}, {0, 0, 1, 5}, {0, -1, 0, 0}, {0, 0, 0, 1}},
                                   {{1, 0, 0, 0}, {0, 0.6, 0.8, 4}, {0, -0.8, 0.6, 3}, {0, 0, 0, 1}}};
    for (int v = 0; v < 2; ++v) {
        Json rows = Json::array();
        for (const auto& row : poses[v]) rows.push_back({row[0], row[1], row[2], row[3]});
        transforms["frames"].push_back({{"file_path", "train/r_" + std::to_string(v)}, {"transform_matrix", rows}});
    }
    std::ofstream(dir.path() / "transforms.json") << transforms.dump();
    Json truth = square_scene(24, "hard");
    truth["materials"]["m"]["albedo"] = {0.7, 0.3, 0.2};
    truth["views"] = {{"nerf", "transforms.json"}};
    app::SceneRenderer renderer(device, app::load_scene_from_string(truth.dump(), dir.path(), "truth.json"));
    std::filesystem::create_directories(dir.path() / "train");
    for (uint32_t v = 0; v < 2; ++v) {
        const app::LinearImage picture = renderer.render(v);
        app::Image rgba(24, 24, 4);
        uint32_t covered = 0;
        for (int y = 0; y < 24; ++y)
            for (int x = 0; x < 24; ++x) {
                const auto& p = picture.texels[size_t(y) * 24 + size_t(x)];
                const bool inside = p.x > 1e-6f;
                // Every other covered row is cut out of the target (alpha 0, a colour that does not matter).
                const bool cut = inside && (covered++ / 12) % 2 == 1;
                const float out[4] = {cut ? 0.0f : p.x, cut ? 1.0f : p.y, cut ? 0.0f : p.z, inside && !cut ? 1.0f : 0.0f};
                for (int c = 0; c < 4; ++c) rgba.at(x, y, c) = out[c];
            }
        ASSERT_GT(covered, 100u);
        app::write_png(dir.path() / "train" / ("r_" + std::to_string(v) + ".png"), rgba);
    }
    for (bool mask : {true, false}) {
        Json s = square_scene(24, "hard");
        s["camera"] = {{"resolution", {24, 24}}};
        s["views"] = {{"nerf", "transforms.json"}};
        s["optimize"] = {{"target", "views"}, {"iterations", 150}, {"views_per_iteration", 2}, {"lr_decay", 0.98},
                         {"parameters", {{"materials.m.albedo", {{"init", {0.5, 0.5, 0.5}}, {"lr", 0.02}}}}}};
        if (mask) s["optimize"]["mask"] = "alpha";
        app::Optimizer opt(device, app::load_scene_from_string(s.dump(), dir.path(), "recover.json"));
        while (opt.iteration() < opt.total_iterations()) opt.step();
        const std::vector<float> albedo = opt.parameters().at(0).value;
        const float truth_albedo[3] = {0.7f, 0.3f, 0.2f};
        double error = 0;
        for (size_t c = 0; c < 3; ++c) error = std::max(error, std::abs(double(albedo[c]) - truth_albedo[c]));
        if (mask) EXPECT_LT(error, 0.01) << albedo[0] << " " << albedo[1] << " " << albedo[2];
        else EXPECT_GT(error, 0.1) << "without the mask the cut-out band should bias the albedo";
    }
}

// The camera's eye and target through an off-centre, non-square pinhole: the antialiased silhouette's
// gradients against central differences (the device look-at reads the principal point's offsets too).
TEST_F(CameraRender, CameraGradientsThroughIntrinsicsMatchCentralDifferences) {
    Json s = square_scene(48, "antialias");
    s["camera"] = {{"eye", {0, 0, 3}}, {"target", {0, 0, 0}}, {"resolution", {48, 40}},
                   {"intrinsics", {{"fx", 70}, {"fy", 60}, {"cx", 27.5}, {"cy", 17}}}};
    s["meshes"][0]["rotation"] = {{"axis", {1, 0, 0}}, {"angle", 90}};
    s["meshes"][0]["scale"] = 0.3;
    s["materials"]["m"]["albedo"] = {0.2, 0.4, 0.7};
    s["optimize"] = {{"target", "scene"},
                     {"parameters", {{"camera.eye", {{"init", {0.05, 0.08, 3.1}}}},
                                     {"camera.target", {{"init", {0.03, -0.02, 0.05}}}}}}};
    app::Optimizer opt(device, app::load_scene_from_string(s.dump(), ".", "camera.json"));
    std::vector<float> g;
    ASSERT_GT(opt.evaluate(&g), 0.0);
    const std::vector<float> x0 = opt.free_values();
    ASSERT_EQ(x0.size(), 6u);
    int nonzero = 0;
    for (size_t i = 0; i < x0.size(); ++i) {
        // Two steps, the closer difference compared (a pixel centre meeting a corner spoils one; see
        // geometry_gradient_test.cpp).
        const double fd1 = central_difference(opt, x0, i, 1e-4), fd2 = central_difference(opt, x0, i, 3e-4);
        const double fd = std::fabs(fd1 - g[i]) <= std::fabs(fd2 - g[i]) ? fd1 : fd2;
        EXPECT_NEAR(g[i], fd, 0.01 * std::fabs(g[i]) + 2e-5) << "float " << i << " (" << fd1 << ", " << fd2 << ")";
        nonzero += std::fabs(fd) > 1e-5;
    }
    EXPECT_GE(nonzero, 4);
}

// camera.intrinsics as the free parameter: fx, fy, cx, cy against central differences (steps in pixels),
// through the antialiased silhouette of an off-centre, non-square pinhole.
TEST_F(CameraRender, IntrinsicsGradientsMatchCentralDifferences) {
    Json s = square_scene(48, "antialias");
    s["camera"] = {{"eye", {0.1, 0.2, 3}}, {"target", {0, 0, 0}}, {"resolution", {48, 40}},
                   {"intrinsics", {{"fx", 70}, {"fy", 60}, {"cx", 27.5}, {"cy", 17}}}};
    s["meshes"][0]["rotation"] = {{"axis", {1, 0, 0}}, {"angle", 90}};
    s["meshes"][0]["scale"] = 0.3;
    s["materials"]["m"]["albedo"] = {0.2, 0.4, 0.7};
    s["optimize"] = {{"target", "scene"}, {"parameters", {{"camera.intrinsics", {{"init", {74, 57, 26, 18.5}}}}}}};
    app::Optimizer opt(device, app::load_scene_from_string(s.dump(), ".", "intrinsics.json"));
    std::vector<float> g;
    ASSERT_GT(opt.evaluate(&g), 0.0);
    const std::vector<float> x0 = opt.free_values();
    ASSERT_EQ(x0.size(), 4u);
    for (size_t i = 0; i < x0.size(); ++i) {
        const double fd1 = central_difference(opt, x0, i, 0.01), fd2 = central_difference(opt, x0, i, 0.03);
        const double fd = std::fabs(fd1 - g[i]) <= std::fabs(fd2 - g[i]) ? fd1 : fd2;
        // The eye/target test's tolerance: the antialiased edge gradient is exact only up to where edges cross
        // pixel centres, which moves a few percent between nearby configurations (every float has been seen
        // exact to 1e-4 in one and 3% off in another, so this is not the intrinsics' reading).
        EXPECT_NEAR(g[i], fd, 0.01 * std::fabs(g[i]) + 2e-5) << "float " << i << " (" << fd1 << ", " << fd2 << ")";
        EXPECT_GT(std::fabs(fd), 1e-5) << "float " << i;   // each of the four moves the silhouette
    }
}

// A textured floor seen obliquely fills the picture (no silhouette): its texels are minified, so each pixel
// blends two mip levels by its footprint, which the camera changes. The eye's and target's gradients must
// carry the level of detail's derivative too (with the footprint detached, eye.y read 26% high and eye.z 9%).
TEST_F(CameraRender, AMinifiedTexturesLevelOfDetailIsDifferentiated) {
    // A one-texel checker: level 0 alternates, level 1 and up are flat, so the blend's weight matters most.
    TempFolder folder;
    app::Image checker(64, 64, 3);
    for (int y = 0; y < 64; ++y)
        for (int x = 0; x < 64; ++x)
            for (int c = 0; c < 3; ++c) checker.at(x, y, c) = ((x + y) % 2 == 0) == (c == 0) ? 0.9f : 0.1f;
    app::write_png(folder.path() / "checker.png", checker);
    Json s = square_scene(48, "hard");
    s["camera"] = {{"eye", {0.1, 2, 1}}, {"target", {0, 0, -1}}, {"resolution", {48, 40}}, {"fov_y", 40}};
    s["meshes"][0]["scale"] = 2.5;   // 10 x 10: 6 texels a unit, 1.5 to 8 texels a pixel
    s["materials"]["m"] = {{"albedo_texture", (folder.path() / "checker.png").string()}};
    s["optimize"] = {{"target", "scene"},
                     {"parameters", {{"camera.eye", {{"init", {0.12, 2.05, 1.03}}}},
                                     {"camera.target", {{"init", {0.02, 0.01, -1.04}}}}}}};
    app::Optimizer opt(device, app::load_scene_from_string(s.dump(), ".", "floor.json"));
    std::vector<float> g;
    ASSERT_GT(opt.evaluate(&g), 0.0);
    const std::vector<float> x0 = opt.free_values();
    ASSERT_EQ(x0.size(), 6u);
    // The absolute part: 0.5% of the largest component (a central difference across a texel's kink).
    double largest = 0;
    for (float v : g) largest = std::max(largest, double(std::fabs(v)));
    for (size_t i = 0; i < x0.size(); ++i) {
        const double fd = central_difference(opt, x0, i, 1e-4);
        EXPECT_NEAR(g[i], fd, 0.02 * std::fabs(g[i]) + 0.005 * largest) << "float " << i;
        EXPECT_GT(std::fabs(fd), 1e-4) << "float " << i;
    }
}

// fx, fy and the principal point recovered from one picture of the square (the scene's own rendering).
TEST_F(CameraRender, IntrinsicsAreRecoveredFromOnePicture) {
    Json s = square_scene(48, "antialias");
    s["camera"] = {{"eye", {0.1, 0.2, 3}}, {"target", {0, 0, 0}}, {"resolution", {48, 40}},
                   {"intrinsics", {{"fx", 70}, {"fy", 60}, {"cx", 27.5}, {"cy", 17}}}};
    s["meshes"][0]["rotation"] = {{"axis", {1, 0, 0}}, {"angle", 90}};
    s["meshes"][0]["scale"] = 0.3;
    s["optimize"] = {{"target", "scene"}, {"iterations", 150}, {"lr_decay", 0.99},
                     {"parameters", {{"camera.intrinsics", {{"init", {80, 62, 23, 19}}, {"lr", 0.5}}}}}};
    app::Optimizer opt(device, app::load_scene_from_string(s.dump(), ".", "recover_intrinsics.json"));
    while (opt.iteration() < opt.total_iterations()) opt.step();
    const std::vector<float> k = opt.parameters().at(0).value;
    const float truth[4] = {70, 60, 27.5f, 17};
    for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(k[i], truth[i], 0.3) << "float " << i;
}

// The optimizer keeps each of the intrinsics in its own range: a principal point off the image (a crop) starts
// where the scene has it and moves freely; fx and fy stay focal lengths (Adam at lr 100 took them to 0 and froze
// the picture to a point, and clamped a cx of -10 to 0 before the first step).
TEST_F(CameraRender, TheOptimizerKeepsFocalLengthsPositiveAndThePrincipalPointFree) {
    Json s = square_scene(48, "antialias");
    s["camera"] = {{"eye", {0.1, 0.2, 3}}, {"target", {0, 0, 0}}, {"resolution", {48, 40}},
                   {"intrinsics", {{"fx", 70}, {"fy", 60}, {"cx", -10}, {"cy", 17}}}};
    s["meshes"][0]["rotation"] = {{"axis", {1, 0, 0}}, {"angle", 90}};
    s["optimize"] = {{"target", "scene"}, {"iterations", 1},
                     {"parameters", {{"camera.intrinsics", {{"perturb", 0}}}}}};
    {
        app::Optimizer opt(device, app::load_scene_from_string(s.dump(), ".", "crop.json"));
        EXPECT_EQ(opt.parameters().at(0).value, (std::vector<float>{70, 60, -10, 17}));
    }
    s["camera"]["intrinsics"] = {{"fx", 70}, {"fy", 60}, {"cx", 32}, {"cy", 24}};
    // A parameter after them steps by its own row of rates (one per run of ranges before it).
    s["optimize"] = {{"target", "scene"}, {"iterations", 10},
                     {"parameters", {{"camera.intrinsics", {{"init", {80, 80, 32, 24}}, {"lr", 100}}},
                                     {"materials.m.albedo", {{"init", {0.5, 0.5, 0.5}}, {"lr", 0.05}}}}}};
    app::Optimizer opt(device, app::load_scene_from_string(s.dump(), ".", "steep.json"));
    float lowest = INFINITY, leftmost = INFINITY;
    while (opt.iteration() < opt.total_iterations()) {
        opt.step();
        const std::vector<float> k = opt.parameters().at(0).value;
        lowest = std::min({lowest, k[0], k[1]});
        leftmost = std::min(leftmost, k[2]);
    }
    EXPECT_EQ(lowest, 0.001f);   // reached the bound and kept to it
    EXPECT_LT(leftmost, 0.0f);
    const std::vector<float> albedo = opt.parameters().at(1).value;
    for (float a : albedo) {   // moved at its own rate, within its own [0, 1]
        EXPECT_NE(a, 0.5f);
        EXPECT_GE(a, 0.0f);
        EXPECT_LE(a, 1.0f);
    }
}

} // namespace adjoint::test
