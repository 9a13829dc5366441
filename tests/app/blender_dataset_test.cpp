// The camera conventions against pictures made elsewhere: assets/datasets/blender_knot6 was rendered by Blender's
// Cycles (tools/datasets/make_blender_dataset.py), so its alpha is an independent silhouette of the torus knot
// for each view of its NeRF (field of view; intrinsics with an off-centre principal point) and COLMAP files.
#include "support/device_fixture.h"

#include <adjoint/app/image_io.h>
#include <adjoint/app/optimization.h>
#include <adjoint/app/renderer.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace adjoint::test {

namespace {

using Json = nlohmann::ordered_json;

const std::filesystem::path dataset = std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets/datasets/blender_knot6";
const std::string knot = std::string(ADJOINT_SOURCE_DIR) + "/assets/meshes/torus_knot.obj";
constexpr int width = 96, height = 72;

// The knot in white under a unit ambient light on black: a rendered pixel's red is its coverage.
Json silhouette_scene(const Json& views) {
    Json s = Json::parse(R"({
      "format": 1,
      "background": [0, 0, 0],
      "materials": { "white": { "albedo": [1, 1, 1] } },
      "lights": [ { "name": "sky", "type": "ambient", "intensity": 1 } ],
      "render": { "visibility": "hard" }
    })");
    s["camera"] = {{"resolution", {width, height}}};
    s["views"] = views;
    s["meshes"] = {{{"name", "knot"}, {"file", knot}, {"material", "white"}}};
    return s;
}

using Mask = std::vector<bool>;

Mask blender_alpha(const std::string& name, bool flip_y = false) {
    const app::Image picture = app::read_png_linear(dataset / name);
    EXPECT_EQ(picture.width, width);
    EXPECT_EQ(picture.height, height);
    EXPECT_EQ(picture.channels, 4);
    Mask mask(size_t(width) * height);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
            mask[size_t(y) * width + x] = picture.at(x, flip_y ? height - 1 - y : y, 3) > 0.5f;
    return mask;
}

// Blender's silhouette against ours: intersection over union, and the mismatching pixels that are more than
// one pixel from Blender's boundary (none expected: both sample the pixel centres).
struct Agreement {
    double iou = 0;
    int far_mismatches = 0;
    int covered = 0;
};

Agreement compare(const Mask& blender, const app::LinearImage& ours) {
    Agreement a;
    int both = 0, either = 0;
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
            const bool b = blender[size_t(y) * width + x], o = ours.texels[size_t(y) * width + x].x > 0.5f;
            both += b && o;
            either += b || o;
            a.covered += b;
            if (b == o) continue;
            bool near_boundary = false;
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    const int nx = x + dx, ny = y + dy;
                    if (nx >= 0 && ny >= 0 && nx < width && ny < height && blender[size_t(ny) * width + nx] != b)
                        near_boundary = true;
                }
            a.far_mismatches += !near_boundary;
        }
    a.iou = either ? double(both) / either : 0;
    return a;
}

// Every view of `views` against the Blender pictures `names` (in the views' order).
void expect_silhouettes_match(Device& device, const Json& views, const std::vector<std::string>& names) {
    const app::Scene scene = app::load_scene_from_string(silhouette_scene(views).dump(), dataset, "blender.json");
    ASSERT_EQ(scene.views.size(), names.size());
    app::SceneRenderer renderer(device, scene);
    for (uint32_t v = 0; v < names.size(); ++v) {
        EXPECT_EQ(std::filesystem::path(scene.view_images.at(v).file).filename(), names[v]);
        const app::LinearImage ours = renderer.render(v);
        ASSERT_EQ(ours.width, uint32_t(width));
        ASSERT_EQ(ours.height, uint32_t(height));
        const Agreement a = compare(blender_alpha(names[v]), ours);
        std::printf("%s: IoU %.4f over %d covered pixels, %d mismatches away from the boundary\n", names[v].c_str(),
                    a.iou, a.covered, a.far_mismatches);
        EXPECT_GT(a.covered, 1000) << names[v];
        EXPECT_GE(a.iou, 0.98) << views.dump() << " view " << v << " (" << names[v] << ")";
        EXPECT_EQ(a.far_mismatches, 0) << views.dump() << " view " << v << " (" << names[v] << ")";
        // The check can fail: the same silhouette upside down (a y-up / y-down mistake) is far off.
        EXPECT_LT(compare(blender_alpha(names[v], true), ours).iou, 0.8) << names[v];
    }
}

class TempFolder {
public:
    TempFolder() : path_(std::filesystem::temp_directory_path() / ("adjoint_blender_" + std::to_string(::getpid()))) {
        std::filesystem::create_directories(path_);
    }
    ~TempFolder() { std::filesystem::remove_all(path_); }
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

} // namespace

class BlenderDataset : public DeviceTest {};

// NeRF with camera_angle_x (Blender's matrix_world as it is, non-square pictures, one view rolled).
TEST_F(BlenderDataset, NerfFieldOfViewViewsMatchBlendersSilhouettes) {
    expect_silhouettes_match(device, {{"nerf", "transforms.json"}}, {"r_0.png", "r_1.png", "r_2.png"});
}

// NeRF with fl_x, fl_y, cx, cy, w, h: the principal point off centre by Blender's lens shift.
TEST_F(BlenderDataset, NerfIntrinsicsViewsWithAShiftedLensMatchBlendersSilhouettes) {
    expect_silhouettes_match(device, {{"nerf", "transforms_intrinsics.json"}}, {"r_3.png", "r_4.png", "r_5.png"});
}

// The same six views through COLMAP's world-to-camera OpenCV poses and two PINHOLE cameras.
TEST_F(BlenderDataset, ColmapViewsMatchBlendersSilhouettes) {
    expect_silhouettes_match(device, {{"colmap", "colmap"}, {"images", "."}},
                             {"r_0.png", "r_1.png", "r_2.png", "r_3.png", "r_4.png", "r_5.png"});
}

// The shifted views with the principal point left at the centre are far off: the test sees the shift.
TEST_F(BlenderDataset, ACentredPrincipalPointMissesTheShiftedPictures) {
    TempFolder dir;
    std::ifstream in(dataset / "transforms_intrinsics.json");
    Json transforms = Json::parse(in);
    transforms.erase("cx");
    transforms.erase("cy");
    for (auto& frame : transforms["frames"])
        frame["file_path"] = (dataset / frame["file_path"].get<std::string>()).lexically_normal().string();
    std::ofstream(dir.path() / "centred.json") << transforms.dump();
    const Json views = {{"nerf", (dir.path() / "centred.json").string()}};
    const app::Scene scene = app::load_scene_from_string(silhouette_scene(views).dump(), dataset, "centred.json");
    app::SceneRenderer renderer(device, scene);
    for (uint32_t v = 0; v < 3; ++v)
        EXPECT_LT(compare(blender_alpha("r_" + std::to_string(v + 3) + ".png"), renderer.render(v)).iou, 0.9) << v;
}

// A translation of the knot recovered from Blender's silhouettes alone (the silhouette loss against the
// pictures' alpha, antialiased edges for the gradient), from all six COLMAP views.
TEST_F(BlenderDataset, ATranslationIsRecoveredFromBlendersSilhouettes) {
    Json s = silhouette_scene({{"colmap", "colmap"}, {"images", "."}});
    s["render"]["visibility"] = "antialias";
    s["optimize"] = {{"target", "views"}, {"loss", "silhouette"}, {"iterations", 60}, {"views_per_iteration", 2},
                     {"lr_decay", 0.97},
                     {"parameters", {{"meshes.knot.translation", {{"init", {0.12, -0.1, 0.08}}, {"lr", 0.02}}}}}};
    app::Optimizer opt(device, app::load_scene_from_string(s.dump(), dataset, "translation.json"));
    while (opt.iteration() < opt.total_iterations()) opt.step();
    const std::vector<float> t = opt.parameters().at(0).value;
    ASSERT_EQ(t.size(), 3u);
    const double error = std::sqrt(double(t[0]) * t[0] + double(t[1]) * t[1] + double(t[2]) * t[2]);
    std::printf("translation [%.5f, %.5f, %.5f] (truth 0), error %.5f\n", t[0], t[1], t[2], error);
    // From 0.18 away (3.2e-4 seen); the knot is 1.4 across.
    EXPECT_LT(error, 0.005) << t[0] << " " << t[1] << " " << t[2];
}

} // namespace adjoint::test
