// adjoint-optimize --check-gradients: the check passes on the demos (reduced), fails on a deliberately broken
// gradient (the test hook), skips hard-visibility geometry; the program's table, file and exit codes; the
// warning for free geometry under hard visibility.
#include "io_test_util.h"
#include "support/device_fixture.h"

#include <adjoint/app/atomic_file.h>
#include <adjoint/app/gradient_check.h>
#include <adjoint/app/renderer.h>
#include <adjoint/app/run.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sys/wait.h>

namespace adjoint::test {

namespace fs = std::filesystem;

namespace {

const fs::path kScenes = fs::path(ADJOINT_SOURCE_DIR) / "assets" / "scenes";
const std::string kOptimize = std::string(ADJOINT_BINARY_DIR) + "/app/adjoint-optimize";
constexpr uint32_t kPoseSide = 64;   // the reduced pose demo

app::Scene demo(const std::string& name, uint32_t width, uint32_t height) {
    app::LoadOptions lo;
    lo.resolution = app::Resolution{width, height};
    return app::load_scene(kScenes / name, lo);
}

size_t count(const app::GradientCheck& c, app::CheckVerdict v) {
    return size_t(std::count_if(c.rows.begin(), c.rows.end(), [&](const auto& r) { return r.verdict == v; }));
}

// Every row passes, and the check is not passing on zeros: most finite differences are far from 0.
void expect_all_pass(const app::GradientCheck& c, size_t rows) {
    EXPECT_EQ(c.rows.size(), rows);
    size_t nonzero = 0;
    for (const auto& r : c.rows) {
        EXPECT_EQ(r.verdict, app::CheckVerdict::pass) << r.path << "[" << r.component << "]: gradient " << r.analytic
                                                      << ", finite difference " << r.numeric;
        nonzero += std::fabs(r.numeric) > 1e-6;
    }
    EXPECT_GE(nonzero, rows - rows / 4);
    EXPECT_TRUE(c.passed()) << app::format_gradient_check(c);
}

int shell(const std::string& command) {
    const int st = std::system(command.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

} // namespace

class GradientCheck : public DeviceTest {
protected:
    // The check of a scene whose albedo texture is free with that gradient negated, after the right one passes
    // its 8 rows.
    app::GradientCheck negated_texture(const app::Scene& scene) {
        app::Optimizer opt(device, scene);
        expect_all_pass(app::check_gradients(opt, scene, {}), 8);
        app::GradientCheckOptions broken;
        broken.break_parameter = "materials.skin.albedo_texture";
        return app::check_gradients(opt, scene, broken);
    }
};

TEST_F(GradientCheck, MaterialLightDemoPassesAndABrokenGradientFails) {
    auto scene = demo("material-light.json", 64, 64);
    app::Optimizer opt(device, scene);
    const std::vector<float> start = opt.free_values();
    const auto check = app::check_gradients(opt, scene, {});
    expect_all_pass(check, 3 + 1 + 3 + 3);   // position, intensity, two albedos: every component
    EXPECT_EQ(opt.free_values(), start);      // the values are left as they were

    app::GradientCheckOptions broken;
    broken.break_parameter = "materials.ball.albedo";
    const auto bad = app::check_gradients(opt, scene, broken);
    EXPECT_FALSE(bad.passed());
    for (const auto& r : bad.rows)
        EXPECT_EQ(r.verdict == app::CheckVerdict::fail, r.path == "materials.ball.albedo") << r.path;
    EXPECT_NE(app::format_gradient_check(bad).find("FAIL"), std::string::npos);
    EXPECT_EQ(app::format_gradient_check(bad).find("a geometry row can fail"), std::string::npos);

    broken.break_parameter = "materials.nothing.albedo";
    EXPECT_THROW(app::check_gradients(opt, scene, broken), Error);
}

// Ctrl-C during --check-gradients went unseen until the last row (minutes on a large scene). The check polls
// `stop` before each row and ends with the rows done, the table saying how many were not checked.
TEST_F(GradientCheck, AStopEndsTheCheckWithTheRowsDoneAndTheTableSaysSo) {
    auto scene = demo("material-light.json", 32, 32);
    app::Optimizer opt(device, scene);
    const std::vector<float> start = opt.free_values();
    app::GradientCheckOptions o;
    int polls = 0;
    o.stop = [&] { return ++polls > 4; };
    const auto check = app::check_gradients(opt, scene, o);
    EXPECT_EQ(check.rows.size(), 4u);
    EXPECT_EQ(check.planned, 10u);
    EXPECT_TRUE(check.interrupted());
    EXPECT_EQ(opt.free_values(), start);
    const std::string table = app::format_gradient_check(check);
    EXPECT_NE(table.find("4 checked: 4 pass, 0 FAIL, 0 UNSURE, 0 skipped\n"
                         "interrupted: 4 of 10 rows checked\n"),
              std::string::npos)
        << table;
    EXPECT_EQ(app::format_gradient_check(app::check_gradients(opt, scene, {})).find("interrupted"), std::string::npos);
}

TEST_F(GradientCheck, TextureDemoChecksEightSeededTexelsWithLargeGradients) {
    auto scene = demo("texture.json", 64, 64);
    app::Optimizer opt(device, scene);
    std::vector<float> g;
    opt.evaluate(&g);
    const auto check = app::check_gradients(opt, scene, {});
    expect_all_pass(check, 8);
    // Drawn from the 32 largest |gradient|s.
    std::vector<float> mags(g.size());
    std::transform(g.begin(), g.end(), mags.begin(), [](float v) { return std::fabs(v); });
    std::sort(mags.rbegin(), mags.rend());
    for (const auto& r : check.rows) EXPECT_GE(std::fabs(r.analytic), mags[31]) << r.component;
    // Another seed draws other texels; the same seed the same ones.
    app::GradientCheckOptions other;
    other.seed = 7;
    const auto again = app::check_gradients(opt, scene, {}), seeded = app::check_gradients(opt, scene, other);
    auto comps = [](const app::GradientCheck& c) {
        std::vector<size_t> v;
        for (const auto& r : c.rows) v.push_back(r.component);
        return v;
    };
    EXPECT_EQ(comps(again), comps(check));
    EXPECT_NE(comps(seeded), comps(check));
}

// Eight views of a textured ball: a texel's gradient is a view's share, small against the loss, and at the smaller
// step (after a bilinear bend within 1e-3) the allowance for the loss's rounding once exceeded twice the gradient:
// a negated texture passed every row (1.87e-5 against -1.87e-5, allowance 4.9e-5 at 2e-7 * loss / h). The
// differences there step by about 4e-7; at 2e-8 * loss / h the allowance is 4.9e-6.
TEST_F(GradientCheck, ANegatedTextureFailsOverEightViews) {
    const auto bad = negated_texture(demo("texture-8views.json", 64, 64));
    EXPECT_EQ(count(bad, app::CheckVerdict::fail), 8u) << app::format_gradient_check(bad);
}

// The same with the free texture at 512x512 texels (a tester's case): a texel's gradient, 1.3e-6, is below the
// loss's rounding at the smaller step (4.9e-6 at h = 1e-4), where a bilinear bend sends each row, so there a
// zero gradient and the negation match as well as the gradient: the negated texture passed every row. Now each
// such row is UNSURE; the right gradient passes at h = 1e-3.
TEST_F(GradientCheck, ANegatedFineTextureIsUnsureWhereTheLossCannotTell) {
    app::test::TempDir tmp;
    std::string text = app::read_file(kScenes / "texture-8views.json");
    const std::string lr = "\"init\": [0.5, 0.5, 0.5], \"lr\": 0.03";
    ASSERT_NE(text.find(lr), std::string::npos);
    text.replace(text.find(lr), lr.size(), lr + ", \"resolution\": [512, 512]");
    for (const std::string dir : {"../meshes/", "../textures/"})
        text.replace(text.find(dir), dir.size(), (kScenes.parent_path() / dir.substr(3)).string());
    app::write_file_atomic(tmp / "fine.json", text);
    app::LoadOptions lo;
    lo.resolution = app::Resolution{64, 64};
    const auto bad = negated_texture(app::load_scene(tmp / "fine.json", lo));
    EXPECT_EQ(count(bad, app::CheckVerdict::pass), 0u) << app::format_gradient_check(bad);
    EXPECT_GE(count(bad, app::CheckVerdict::unsure), 1u) << app::format_gradient_check(bad);
}

// Geometry with antialias visibility: a flat square over the background (geometry_gradient_test's), whose
// gradients come from its silhouette alone: translation, rotation, then the camera, every component passes.
TEST_F(GradientCheck, AntialiasedSquarePoseAndCameraPass) {
    std::string text = R"({
  "format": 1,
  "camera": { "eye": [0, 0, 3], "target": [0, 0, 0], "fov_y": 40, "resolution": [48, 48] },
  "materials": { "back": { "albedo": [0.2, 0.4, 0.7] } },
  "meshes": [ { "name": "back", "file": "meshes/plane.obj", "material": "back", "scale": 0.3,
                "rotation": { "axis": [1, 0, 0], "angle": 90 } } ],
  "lights": [ { "name": "fill", "type": "ambient", "intensity": 1 } ],
  "render": { "visibility": "antialias" },
  "optimize": { "target": "scene", "parameters": {
      "meshes.back.translation": { "init": [0.07, -0.04, 0.1] },
      "meshes.back.rotation": { "init": { "axis": [0.2, 0.3, 1], "angle": 12 } } } }
})";
    const fs::path assets = kScenes.parent_path();
    {
        auto scene = app::load_scene_from_string(text, assets, "square.json");
        app::Optimizer opt(device, scene);
        expect_all_pass(app::check_gradients(opt, scene, {}), 3 + 4);
    }
    const std::string from = text.substr(text.find("\"meshes.back.translation\""));
    text.replace(text.find(from), from.size(), R"("camera.eye": { "init": [0.05, 0.08, 3.1] },
      "camera.target": { "init": [0.03, -0.02, 0.05] }, "camera.fov_y": { "init": 42 } } }
})");
    auto scene = app::load_scene_from_string(text, assets, "square-camera.json");
    app::Optimizer opt(device, scene);
    expect_all_pass(app::check_gradients(opt, scene, {}), 3 + 3 + 1);
}

// A floor that runs under the camera (two triangles, corners behind the camera's plane: render/raster.cpp draws them
// where the rays meet them, soft visibility their part beyond the near plane) under a point light, a ball on it, in
// antialias and soft visibility: the camera's and the ball's rows pass, the camera's moving the floor's shading, its
// far edge and the ball's silhouette over it.
TEST_F(GradientCheck, AFloorRunningUnderTheCameraHasTheLossesGradients) {
    for (const char* visibility : {"antialias", "soft"}) {
        SCOPED_TRACE(visibility);
        app::test::TempDir tmp;
        std::ofstream(tmp / "floor.obj") << "v -6 -1 -6\nv 6 -1 -6\nv 6 -1 8\nv -6 -1 8\nf 1 4 3 2\n";
        const std::string text = R"({
  "format": 1,
  "camera": { "eye": [0, 0.2, 3], "target": [0, -0.5, 0], "fov_y": 50, "resolution": [48, 48] },
  "background": [0.3, 0.5, 0.8],
  "materials": { "floor": { "albedo": [0.8, 0.7, 0.5] }, "ball": { "albedo": [0.9, 0.3, 0.2] } },
  "meshes": [ { "name": "floor", "file": ")" + (tmp / "floor.obj").string() + R"(", "material": "floor" },
              { "name": "ball", "file": "meshes/uv_sphere.obj", "material": "ball", "translation": [0.2, -0.6, 0.3],
                "scale": 0.4 } ],
  "lights": [ { "name": "bulb", "type": "point", "position": [1, 1.5, 2], "intensity": 6 },
              { "name": "fill", "type": "ambient", "intensity": 0.2 } ],
  "render": { "visibility": ")" + std::string(visibility) + R"(" },
  "optimize": { "target": "scene", "parameters": {
      "camera.eye": { "init": [0.05, 0.25, 3.05] }, "camera.target": { "init": [0.03, -0.45, 0.02] },
      "meshes.ball.translation": { "init": [0.25, -0.58, 0.27] } } }
})";
        auto scene = app::load_scene_from_string(text, kScenes.parent_path(), "under-the-camera.json");
        ASSERT_EQ(app::triangles_across_the_eye(scene.meshes[0], scene.views[0]), 2u);
        // The floor is drawn: the bottom row's middle is the floor's colour (red above blue), not the sky's.
        const float4 below = app::SceneRenderer(device, scene).render(0).texels[47 * 48 + 24];
        EXPECT_GT(below.x, below.z * 1.3f) << below.x << " " << below.y << " " << below.z;
        app::Optimizer opt(device, scene);
        const auto check = app::check_gradients(opt, scene, {});
        expect_all_pass(check, 3 + 3 + 3);
    }
}

// The pose demo with its antialias visibility, reduced: a 5k-triangle knot whose silhouettes are slivers
// thinner than a pixel, seen edge-on. Every row passes, some of the geometry's on the slope fitted over about
// half a pixel of silhouette motion (at 1e-4 the image's jumps swamp the difference). Most of them did while
// the shading normal was turned by its own lean rather than by the side of the triangle seen (facing_viewer):
// its flips at the silhouette were jumps of their own; one row still needs the fit. While the
// antialias walk gave up after 4 triangles, 5 of the 7 pose rows failed at 128x128 (translation [1]:
// gradient 0.014 against a slope of 0.024, noise 3e-4). A negated translation fails its rows: the noise
// admitted stays below the gradient.
TEST_F(GradientCheck, PoseDemoWithAntialiasPasses) {
    auto scene = demo("pose.json", kPoseSide, kPoseSide);
    ASSERT_EQ(scene.render.visibility, app::Visibility::antialias);
    app::Optimizer opt(device, scene);
    const auto check = app::check_gradients(opt, scene, {});
    std::printf("%s", app::format_gradient_check(check).c_str());
    expect_all_pass(check, 4 + 3 + 3);
    // Rows the loss's own slopes missed are decided by their views' medians (translation[0]: the loss's median
    // slope -0.0216 against a gradient of -0.0148, the views' medians 6% off their parts; before the parts it
    // took the fitted cubic, -0.0155).
    size_t by_median = 0;
    for (const auto& r : check.rows) {
        by_median += r.method == "median";
        EXPECT_LT(app::kCheckNoiseFactor * r.noise, std::fabs(r.analytic)) << r.path << "[" << r.component << "]";
    }
    EXPECT_GE(by_median, 1u);

    app::GradientCheckOptions broken;
    broken.break_parameter = "meshes.knot.translation";
    const auto bad = app::check_gradients(opt, scene, broken);
    for (const auto& r : bad.rows) {   // a failing row went through the three scales, the fitted cubic last
        if (r.path == "meshes.knot.translation") {
            EXPECT_EQ(r.method, "cubic") << r.component;
        }
    }
    for (const auto& r : bad.rows)
        EXPECT_EQ(r.verdict == app::CheckVerdict::fail, r.path == "meshes.knot.translation") << r.path << r.component;
    // A failing geometry row brings the table's hint about shading jumps inside the surface (a shading row does
    // not: MaterialLightDemoPassesAndABrokenGradientFails).
    EXPECT_NE(app::format_gradient_check(bad).find("a geometry row can fail with a right gradient"), std::string::npos);
    // ... and the image's border, where a silhouette along it has no pixel pair (a road's near edge: stop 61's note).
    EXPECT_NE(app::format_gradient_check(bad).find("runs along the image's border"), std::string::npos);
    EXPECT_EQ(app::format_gradient_check(check).find("a geometry row can fail"), std::string::npos);
}

// The pose demo at its own 128x128, where rotation[2]'s four views pull against each other: through
// adjoint.torch, their gradients -0.00255, +0.00303, -0.00459 and +0.00087 sum to -0.00323, and the slopes of
// cubics fitted over +-1e-2 (-0.00271, +0.00324, -0.00508, +0.00021) to -0.00433, 27% off, while the views' errors
// add up to 0.00153 against their parts' 0.0119. Judged by the loss's slope alone it failed; it passes on its
// parts. A gradient off by a factor, zero or negated fails every row of the parameter.
TEST_F(GradientCheck, PoseDemoAtItsOwnResolutionPassesOnItsViewsParts) {
    auto scene = demo("pose.json", 128, 128);
    app::Optimizer opt(device, scene);
    const auto check = app::check_gradients(opt, scene, {});
    std::printf("%s", app::format_gradient_check(check).c_str());
    expect_all_pass(check, 4 + 3 + 3);
    // The parts: each view's gradient, which sum to the loss's.
    std::vector<float> g;
    opt.evaluate(&g);
    std::vector<double> sum(g.size(), 0.0), magnitude(g.size(), 0.0);
    for (uint32_t v = 0; v < opt.view_count(); ++v) {
        const std::vector<float> gv = opt.view_gradient(v);
        ASSERT_EQ(gv.size(), g.size());
        for (size_t k = 0; k < g.size(); ++k) sum[k] += gv[k], magnitude[k] += std::fabs(gv[k]);
    }
    // (float atomics add the pixels' terms in any order)
    for (size_t k = 0; k < g.size(); ++k) EXPECT_NEAR(sum[k], g[k], 1e-4 * magnitude[k] + 1e-9) << k;
    EXPECT_GT(magnitude[2], 3.0 * std::fabs(g[2]));   // rotation[2]'s views pull against each other
    const auto& r = check.rows[2];
    ASSERT_EQ(r.path, "meshes.knot.rotation");
    EXPECT_GT(r.relative_error, 0.15);   // off by more than the geometry tolerance of its own slope
    EXPECT_LT(r.parts_error, 0.1);
    for (double factor : {-1.0, 0.0, 0.5}) {
        app::GradientCheckOptions broken;
        broken.break_parameter = "meshes.knot.rotation";
        broken.break_factor = factor;
        const auto bad = app::check_gradients(opt, scene, broken);
        for (const auto& row : bad.rows) {
            EXPECT_EQ(row.verdict == app::CheckVerdict::fail, row.path == "meshes.knot.rotation")
                << factor << " " << row.path << row.component;
        }
    }
}

// The pose demo under soft visibility at 128x128 (a tester's case): negated, rotation[2] fails its central
// difference and its medians, and its fitted slope, 2.5e-5, has a noise of 4.5e-4 (the selection's jumps): a
// gradient of either sign, +-0.00137, or 0 lies within 3 noises of it, and the negated rotation passed that row.
// Now it is UNSURE, which fails nothing and says so, and so is a zeroed one (a reviewer: the zero passed where
// the negation was UNSURE); the right gradient passes every row at a smaller scale.
TEST_F(GradientCheck, ARowAGradientAndZeroWouldBothPassIsUnsure) {
    auto scene = demo("pose.json", 128, 128);
    scene.render.visibility = app::Visibility::soft;
    app::Optimizer opt(device, scene);
    expect_all_pass(app::check_gradients(opt, scene, {}), 4 + 3 + 3);
    for (double factor : {-1.0, 0.0}) {
        app::GradientCheckOptions broken;
        broken.break_parameter = "meshes.knot.rotation";
        broken.break_factor = factor;
        const auto bad = app::check_gradients(opt, scene, broken);
        const std::string table = app::format_gradient_check(bad);
        std::printf("%s", table.c_str());
        EXPECT_GE(count(bad, app::CheckVerdict::unsure), 1u) << table;
        for (const auto& r : bad.rows) {
            if (r.path == "meshes.knot.rotation") {   // no broken rotation row passes
                EXPECT_NE(r.verdict, app::CheckVerdict::pass) << factor << " " << r.component;
            }
            if (r.verdict != app::CheckVerdict::unsure) continue;
            EXPECT_EQ(r.method, "cubic") << r.path << r.component;
            EXPECT_LE(std::fabs(r.numeric), 1.01 * app::kCheckNoiseFactor * r.noise) << r.path << r.component;
        }
        EXPECT_NE(table.find("an UNSURE row"), std::string::npos);
    }
}

// The showcase demo at 64x64: with the ball's translation halved or zero, each row fails (a tolerance scaled by
// the views' parts alone, their errors not summed, passed translation[0] at zero: its central difference crossed
// a jump to -0.0002, its parts' scale 0.0029; the reviewer's case).
TEST_F(GradientCheck, AGradientOffByAFactorFailsWhereViewsCancel) {
    auto scene = demo("showcase.json", 64, 64);
    app::Optimizer opt(device, scene);
    for (double factor : {0.0, 0.5}) {
        app::GradientCheckOptions broken;
        broken.break_parameter = "meshes.ball.translation";
        broken.break_factor = factor;
        const auto bad = app::check_gradients(opt, scene, broken);
        size_t rows = 0;
        for (const auto& row : bad.rows) {
            if (row.path != "meshes.ball.translation") continue;
            ++rows;
            EXPECT_EQ(row.verdict, app::CheckVerdict::fail) << factor << " " << row.component << ": " << row.analytic
                                                            << " vs " << row.numeric;
        }
        EXPECT_EQ(rows, 3u);
    }
}

// The camera demo, reduced: a textured floor, a textured ball and the knot, the eye, target and field of
// view free. Before the level of detail was differentiated and the median slope was a scale of the check,
// eye[1] failed (gradient -0.0188 against -0.0231 over half a pixel: the floor texture's jumps as silhouettes
// pass pixel centres, between which the slope is the gradient's). At 96x96, eye[2] (5% of the largest
// component) fails: -0.0009 against +0.001 over half a pixel, while the slopes between jumps within 5e-4 of
// the start read -0.0008 to -0.001 (an open finding: the check has no scale that sees this).
// At 128x128, eye[0]'s and eye[2]'s fitted slopes are within their noise of 0 (-0.00027, noise 0.00059; 0.0011,
// noise 0.00037), so they cannot tell their gradients (-0.00165; 0.00038) from 0: UNSURE. At the demo's own
// 192x192 eye[0] passes on its central difference (-0.00107 against -0.00107).
TEST_F(GradientCheck, CameraDemoPasses) {
    auto scene = demo("camera.json", 128, 128);
    app::Optimizer opt(device, scene);
    const auto check = app::check_gradients(opt, scene, {});
    std::printf("%s", app::format_gradient_check(check).c_str());
    EXPECT_EQ(check.rows.size(), 3u + 3u + 1u);
    EXPECT_TRUE(check.passed());
    for (const auto& r : check.rows) {
        const bool eye02 = r.path == "camera.eye" && r.component != 1;
        EXPECT_TRUE(r.verdict == app::CheckVerdict::pass || (eye02 && r.verdict == app::CheckVerdict::unsure))
            << r.path << r.component;
    }
}

TEST_F(GradientCheck, PoseWithHardVisibilitySkipsGeometry) {
    auto scene = demo("pose.json", 32, 32);
    scene.render.visibility = app::Visibility::hard;
    app::Optimizer opt(device, scene);
    const auto check = app::check_gradients(opt, scene, {});
    EXPECT_EQ(count(check, app::CheckVerdict::skipped), 4u + 3u);
    for (const auto& r : check.rows)
        if (r.verdict == app::CheckVerdict::skipped) {
            EXPECT_EQ(r.note, "skipped: hard visibility");
        }
    EXPECT_EQ(count(check, app::CheckVerdict::pass), 3u);   // the albedo
    EXPECT_NE(app::format_gradient_check(check).find("skipped: hard visibility"), std::string::npos);
    EXPECT_NE(app::hard_geometry_warning(scene).find("meshes.knot.rotation, meshes.knot.translation"),
              std::string::npos);
}

TEST_F(GradientCheck, PbrMaterialDemoPasses) {
    auto scene = demo("pbr-material.json", 48, 48);
    app::Optimizer opt(device, scene);
    const auto check = app::check_gradients(opt, scene, {});
    EXPECT_TRUE(check.passed()) << app::format_gradient_check(check);
    EXPECT_GE(check.rows.size(), 3u);
    EXPECT_EQ(count(check, app::CheckVerdict::fail), 0u);
}

// A glTF box (assimp-testmodels' BoxTextured.glb) under Blender's courtyard.exr at 64x64, its roughness, the
// sky's rotation and its pose free: roughness leans the environment lookups across texel centres of the
// prefiltered levels, bends of the loss that the 1e-3 central difference straddles (-0.0956 against a gradient
// of -0.0981: 2.5%, over the tolerance). Its row passes on the local difference at 1e-4, and a negated
// roughness gradient still fails.
TEST_F(GradientCheck, AShadingValueAcrossBilinearBendsPassesOnTheLocalSlope) {
    const fs::path box = "/usr/share/assimp/models/glTF2/BoxTextured-glTF-Binary/BoxTextured.glb";
    const fs::path sky = "/usr/share/blender/datafiles/studiolights/world/courtyard.exr";
    ASSERT_TRUE(fs::exists(box) && fs::exists(sky)) << "tools/setup.sh installs assimp-testmodels and blender-data";
    const std::string text = R"({ "format": 1,
  "camera": { "eye": [0, 1.5, 3], "target": [0, 0, 0], "fov_y": 38, "resolution": [64, 64] },
  "background": [0.05, 0.05, 0.06],
  "meshes": [ { "name": "m", "file": ")" + box.string() + R"(", "material": "gltf" } ],
  "lights": [ { "name": "sky", "type": "environment", "file": ")" + sky.string() + R"(" } ],
  "render": { "visibility": "antialias" },
  "optimize": { "target": "scene", "seed": 0, "parameters": {
    "materials.m/Texture.roughness": { "init": 0.3, "lr": 0.02 },
    "lights.sky.rotation": { "init": 20, "lr": 1 },
    "meshes.m.rotation": { "perturb": 10, "lr": 0.01 } } } })";
    const app::Scene scene = app::load_scene_from_string(text, kScenes, "box.json");
    app::Optimizer opt(device, scene);
    const auto check = app::check_gradients(opt, scene, {});
    expect_all_pass(check, 1 + 1 + 4);
    const auto roughness = std::find_if(check.rows.begin(), check.rows.end(),
                                        [](const auto& r) { return r.path == "materials.m/Texture.roughness"; });
    ASSERT_NE(roughness, check.rows.end());
    EXPECT_FLOAT_EQ(roughness->step, 1e-4f) << app::format_gradient_check(check);

    app::GradientCheckOptions broken;
    broken.break_parameter = "materials.m/Texture.roughness";
    const auto bad = app::check_gradients(opt, scene, broken);
    for (const auto& r : bad.rows)
        EXPECT_EQ(r.verdict == app::CheckVerdict::fail, r.path == broken.break_parameter) << r.path << r.component;
}

// A tester's scene: a textured PBR sphere on a floor under Blender's forest.exr, a sun and a lamp casting shadows,
// the sun's direction free with the textures. Its shadows' outlines jump across the 1e-3 central difference as a
// silhouette does (8% and 9% off, FAIL, exit 1 with a right gradient: the local difference at 1e-4 was within 2%).
// A light that casts shadows is checked as geometry now: every row passes, and the negated direction fails.
TEST_F(GradientCheck, AShadowCastingLightIsCheckedAsGeometry) {
    const fs::path sky = "/usr/share/blender/datafiles/studiolights/world/forest.exr";
    ASSERT_TRUE(fs::exists(sky)) << "tools/setup.sh installs blender-data";
    const fs::path assets = kScenes.parent_path();
    const std::string text = R"({ "format": 1,
  "camera": { "eye": [0, 1.0, 3.2], "target": [0, 0, 0], "fov_y": 36, "resolution": [64, 64] },
  "background": [0.1, 0.1, 0.1],
  "materials": {
    "metal": { "model": "pbr", "base_color_texture": ")" + (assets / "textures/colourful_128.png").string() + R"(",
               "metallic_roughness_texture": ")" + (assets / "textures/metal_rough_64.png").string() + R"(" },
    "floor": { "model": "pbr", "base_color": [0.6, 0.6, 0.6], "roughness": 0.8 } },
  "meshes": [
    { "name": "ball", "file": ")" + (assets / "meshes/uv_sphere.obj").string() + R"(", "material": "metal",
      "scale": 0.6 },
    { "name": "floor", "file": ")" + (assets / "meshes/plane.obj").string() + R"(", "material": "floor",
      "translation": [0, -0.6, 0] } ],
  "lights": [
    { "name": "sky", "type": "environment", "file": ")" + sky.string() + R"(", "rotation": 30 },
    { "name": "sun", "type": "directional", "direction": [-1, -2, -0.5], "intensity": 2, "shadows": true },
    { "name": "bulb", "type": "point", "position": [1, 1.5, 1.5], "intensity": 3, "shadows": true } ],
  "render": { "visibility": "antialias" },
  "optimize": { "parameters": {
    "materials.metal.base_color_texture": { "init": [0.5, 0.5, 0.5], "resolution": [32, 32], "lr": 0.05 },
    "materials.metal.metallic_roughness_texture": { "init": [0.0, 0.5, 0.5], "resolution": [16, 16], "lr": 0.05 },
    "lights.sun.direction": { "init": [-1, -2, 0.3], "lr": 0.05 },
    "lights.sky.rotation": { "init": 23, "lr": 1 } } } })";
    const app::Scene scene = app::load_scene_from_string(text, kScenes, "sun.json");
    app::Optimizer opt(device, scene);
    const auto check = app::check_gradients(opt, scene, {});
    EXPECT_TRUE(check.passed()) << app::format_gradient_check(check);
    size_t sun = 0;
    for (const auto& r : check.rows)
        if (r.path == "lights.sun.direction") {
            EXPECT_FLOAT_EQ(r.step, 1e-4f) << r.component;   // geometry's first scale (shading's is 1e-3)
            ++sun;
        }
    EXPECT_EQ(sun, 3u);
    app::GradientCheckOptions broken;
    broken.break_parameter = "lights.sun.direction";
    EXPECT_EQ(count(app::check_gradients(opt, scene, broken), app::CheckVerdict::fail), 3u);
}

// The program: the table on stdout and in gradient_check.txt, exit 0; the hook makes it exit 1 with a FAIL.
TEST(GradientCheckProgram, PrintsWritesAndExits) {
    app::test::TempDir tmp;
    const std::string base = kOptimize + " --scene " + (kScenes / "material-light.json").string() +
                             " --resolution 32x32 --check-gradients --out " + (tmp / "out").string();
    ASSERT_EQ(shell(base + " > " + (tmp / "stdout.txt").string() + " 2> " + (tmp / "stderr.txt").string()), 0)
        << app::read_file(tmp / "stderr.txt");
    const std::string table = app::read_file(tmp / "out" / "gradient_check.txt");
    EXPECT_EQ(app::read_file(tmp / "stdout.txt"), table);
    EXPECT_NE(table.find("10 checked: 10 pass, 0 FAIL, 0 UNSURE, 0 skipped"), std::string::npos) << table;
    EXPECT_NE(table.find("lights.key.position"), std::string::npos);
    EXPECT_FALSE(fs::exists(tmp / "out" / "loss.csv"));   // no optimization ran

    EXPECT_EQ(shell(base + " --test-break-gradient lights.key.intensity > " + (tmp / "stdout.txt").string()), 1);
    const std::string broken = app::read_file(tmp / "out" / "gradient_check.txt");
    EXPECT_NE(broken.find("FAIL"), std::string::npos) << broken;
    EXPECT_NE(broken.find("1 FAIL"), std::string::npos) << broken;
    // A hook that names no free parameter is bad input; the hook alone is a usage error.
    EXPECT_EQ(shell(base + " --test-break-gradient lights.key.nothing 2> /dev/null"), 2);
    EXPECT_EQ(shell(kOptimize + " --scene x.json --out " + (tmp / "o").string() +
                    " --test-break-gradient lights.key.intensity 2> /dev/null"),
              2);
}

// adjoint-optimize warns when free geometry meets hard visibility, and not otherwise.
TEST(GradientCheckProgram, HardVisibilityGeometryWarns) {
    app::test::TempDir tmp;
    std::string pose = app::read_file(kScenes / "pose.json");
    pose.replace(pose.find("\"antialias\""), 11, "\"hard\"");
    pose.replace(pose.find("../meshes/"), 10, (kScenes.parent_path() / "meshes").string() + "/");
    app::write_file_atomic(tmp / "hard.json", pose);
    const std::string run = kOptimize + " --iters 0 --resolution 16x16 --out " + (tmp / "o").string() + " --scene ";
    ASSERT_EQ(shell(run + (tmp / "hard.json").string() + " 2> " + (tmp / "err.txt").string()), 0);
    const std::string err = app::read_file(tmp / "err.txt");
    EXPECT_NE(err.find("adjoint: warning: "), std::string::npos) << err;
    EXPECT_NE(err.find("silhouettes and shadows' outlines will not move the free parameters that move them "
                       "(meshes.knot.rotation, meshes.knot.translation); set render.visibility to antialias or soft"),
              std::string::npos)
        << err;
    ASSERT_EQ(shell(run + (kScenes / "pose.json").string() + " --force 2> " + (tmp / "err.txt").string()), 0);
    EXPECT_EQ(app::read_file(tmp / "err.txt").find("warning"), std::string::npos);
    // A free light that casts shadows moves their outlines: named under hard visibility too (material-light.json is
    // hard); without shadows it moves no edge, and nothing is said.
    std::string lit = app::read_file(kScenes / "material-light.json");
    lit.replace(lit.find("../meshes/"), 10, (kScenes.parent_path() / "meshes").string() + "/");
    lit.replace(lit.find("../meshes/"), 10, (kScenes.parent_path() / "meshes").string() + "/");
    app::write_file_atomic(tmp / "lit.json", lit);
    ASSERT_EQ(shell(run + (tmp / "lit.json").string() + " --force 2> " + (tmp / "err.txt").string()), 0);
    EXPECT_EQ(app::read_file(tmp / "err.txt").find("warning"), std::string::npos) << app::read_file(tmp / "err.txt");
    lit.replace(lit.find("\"intensity\": 8"), 14, "\"intensity\": 8, \"shadows\": true");
    app::write_file_atomic(tmp / "lit.json", lit);
    ASSERT_EQ(shell(run + (tmp / "lit.json").string() + " --force 2> " + (tmp / "err.txt").string()), 0);
    EXPECT_NE(app::read_file(tmp / "err.txt").find("will not move the free parameters that move them "
                                                   "(lights.key.position)"),
              std::string::npos)
        << app::read_file(tmp / "err.txt");
    // Soft with a sigma that reaches no pixel centre behaves as hard (a tester's 1e-30): said; 1e-4 is not.
    std::string soft = app::read_file(tmp / "hard.json");
    soft.replace(soft.find("\"hard\""), 6, "\"soft\"");
    for (const char* sigma : {"1e-30", "1e-4"}) {
        std::string text = soft;
        text.replace(text.find("\"sigma\": 1e-4"), 13, std::string("\"sigma\": ") + sigma);
        app::write_file_atomic(tmp / "soft.json", text);
        ASSERT_EQ(shell(run + (tmp / "soft.json").string() + " --force 2> " + (tmp / "err.txt").string()), 0);
        const std::string said = app::read_file(tmp / "err.txt");
        if (std::string(sigma) == "1e-4") {
            EXPECT_EQ(said.find("warning"), std::string::npos) << said;
            continue;
        }
        EXPECT_NE(said.find("render.soft.sigma: 1e-30 reaches 2.43e-14 pixels from an edge at 16x16, so almost no "
                            "pixel lies within it: silhouettes and shadows' outlines will hardly move the free "
                            "parameters that move them "
                            "(meshes.knot.rotation, meshes.knot.translation), as with hard visibility; about 0.0017 "
                            "reaches a pixel"),
                  std::string::npos)
            << said;
    }
}

} // namespace adjoint::test
