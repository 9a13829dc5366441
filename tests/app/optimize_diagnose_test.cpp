// adjoint-optimize --diagnose: each parameter's gradient image sums to its gradient (a material, a light, a
// texture, a pose; hard, antialias and soft visibility), a hard-visibility pose has no silhouette pixels, soft
// edges lie on the silhouette, the sensitivity images match central differences of the render, and the
// program's files and exit codes.
#include "ball_scene.h"
#include "io_test_util.h"
#include "support/device_fixture.h"

#include <adjoint/app/atomic_file.h>
#include <adjoint/app/optimization.h>
#include <adjoint/app/run.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sys/wait.h>

namespace adjoint::test {

namespace fs = std::filesystem;

namespace {

const fs::path kScenes = fs::path(ADJOINT_SOURCE_DIR) / "assets" / "scenes";
const std::string kOptimize = std::string(ADJOINT_BINARY_DIR) + "/app/adjoint-optimize";

app::Scene demo(const std::string& name, uint32_t size, app::Visibility visibility) {
    app::LoadOptions lo;
    lo.resolution = app::Resolution{size, size};
    app::Scene s = app::load_scene(kScenes / name, lo);
    s.render.visibility = visibility;
    return s;
}

double sum(const std::vector<float>& v) {
    double s = 0;
    for (float x : v) s += x;
    return s;
}

// Per free parameter: the sum of its image equals its gradient (components summed), and it is not zero.
void expect_sums(app::Optimizer& opt, const app::PixelAttribution& a) {
    std::vector<float> g;
    opt.evaluate(&g);
    const auto ps = opt.parameters();
    ASSERT_EQ(a.images.size(), ps.size());
    size_t offset = 0;
    for (size_t i = 0; i < ps.size(); ++i) {
        double gradient = 0;
        for (size_t c = 0; c < ps[i].value.size(); ++c) gradient += g[offset + c];
        offset += ps[i].value.size();
        EXPECT_GT(std::fabs(gradient), 1e-6) << ps[i].path;
        EXPECT_NEAR(sum(a.images[i]), gradient, 2e-3 * std::fabs(gradient) + 1e-7) << ps[i].path;
    }
}

std::vector<size_t> all(const app::Optimizer& opt, size_t n) {
    std::vector<size_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = i;
    return v;
}

int shell(const std::string& command) {
    const int st = std::system(command.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// The render's R + G + B per pixel, every view, with parameter `p`'s components all moved by `h`.
std::vector<double> channel_sums(app::Optimizer& opt, size_t p, double h) {
    const auto ps = opt.parameters();
    std::vector<float> x = opt.free_values(), moved = x;
    size_t offset = 0;
    for (size_t i = 0; i < p; ++i) offset += ps[i].value.size();
    for (size_t c = 0; c < ps[p].value.size(); ++c) moved[offset + c] = float(x[offset + c] + h);
    opt.set_free_values(moved);
    std::vector<double> out;
    for (uint32_t v = 0; v < opt.view_count(); ++v)
        for (const auto& t : opt.render_current(v).texels) out.push_back(double(t.x) + t.y + t.z);
    opt.set_free_values(x);
    return out;
}

} // namespace

class Diagnose : public DeviceTest {};

TEST_F(Diagnose, MaterialAndLightImagesSumToTheirGradients) {
    for (auto vis : {app::Visibility::hard, app::Visibility::antialias}) {
        auto scene = demo("material-light.json", 48, vis);
        app::Optimizer opt(device, scene, true);
        const auto a = opt.attribute_pixels(all(opt, 4), false);
        expect_sums(opt, a);
        // The floor's albedo is pushed by floor pixels only: most of the image's pixels hold 0 for the ball's.
        EXPECT_GT(std::count(a.images[2].begin(), a.images[2].end(), 0.0f), 48 * 48 / 2);
    }
}

TEST_F(Diagnose, TextureImageSumsToItsGradient) {
    auto scene = demo("texture.json", 32, app::Visibility::hard);
    app::Optimizer opt(device, scene, true);
    expect_sums(opt, opt.attribute_pixels({0}, false));
}

// The pose: with antialias its silhouette pixels carry gradients (edges marked), with hard none are marked and
// the images still sum to the gradient the shading alone gives.
TEST_F(Diagnose, PoseImagesSumToTheirGradientsAndHardHasNoEdgePixels) {
    auto scene = demo("pose.json", 40, app::Visibility::antialias);
    app::Optimizer opt(device, scene, true);
    const auto a = opt.attribute_pixels(all(opt, 3), false);
    expect_sums(opt, a);
    EXPECT_GT(sum(a.edges), 20.0);
    // Edge pixels hold a share of the rotation's image.
    double edge_share = 0;
    for (size_t i = 0; i < a.edges.size(); ++i) edge_share += a.edges[i] * std::fabs(a.images[0][i]);
    EXPECT_GT(edge_share, 0.0);

    auto hard = demo("pose.json", 40, app::Visibility::hard);
    app::Optimizer hopt(device, hard, true);
    const auto h = hopt.attribute_pixels(all(hopt, 3), false);
    expect_sums(hopt, h);
    EXPECT_EQ(sum(h.edges), 0.0);
}

// The ball of the soft gradient tests, its pose (through coverage, depth and shading), albedo and key light
// free. A pixel (x, y)'s ray from the eye passes the ball's centre at `miss` (world units): 0.7 (the radius)
// on the ball's outline, about 0.05 a pixel.
struct SoftBall {
    app::Scene scene;
    std::vector<double> miss;
    explicit SoftBall(uint32_t size) {
        const std::string render = R"({ "visibility": "soft", "soft": { "sigma": 1e-4, "gamma": 1e-3 } })";
        scene = app::load_scene_from_string(
            ball_scene(render, R"("meshes.ball.translation": { "init": [0.04, -0.03, 0.02] },
                "meshes.ball.rotation": { "init": { "axis": [0.2, 1, 0.1], "angle": 10 } },
                "materials.ball.albedo": { "init": [0.6, 0.6, 0.6] }, "lights.key.intensity": { "init": 7 })"),
            kScenes.parent_path(), "soft-ball.json");
        scene.views[0].width = scene.views[0].height = size;
        const double eye[3] = {0.3, 0.8, 3.2}, c[3] = {0.04, -0.03, 0.02}, t = std::tan(20.0 * M_PI / 180.0);
        const double fl = std::sqrt(0.09 + 0.64 + 3.2 * 3.2), f[3] = {-0.3 / fl, -0.8 / fl, -3.2 / fl};
        const double rl = std::hypot(f[2], f[0]), r[3] = {-f[2] / rl, 0, f[0] / rl};   // f x (0, 1, 0)
        const double u[3] = {r[1] * f[2] - r[2] * f[1], r[2] * f[0] - r[0] * f[2], r[0] * f[1] - r[1] * f[0]};
        for (uint32_t y = 0; y < size; ++y)
            for (uint32_t x = 0; x < size; ++x) {
                const double sx = ((x + 0.5) / size * 2 - 1) * t, sy = (1 - (y + 0.5) / size * 2) * t;
                double d[3], e[3], dd = 0, ed = 0, ee = 0;
                for (int k = 0; k < 3; ++k) {
                    d[k] = f[k] + r[k] * sx + u[k] * sy;
                    e[k] = c[k] - eye[k];
                    dd += d[k] * d[k];
                    ed += e[k] * d[k];
                    ee += e[k] * e[k];
                }
                miss.push_back(std::sqrt(std::max(ee - ed * ed / dd, 0.0)));
            }
    }
};

// Soft visibility: every image sums to its parameter's gradient. The edge mask (render/soft_diagnose.h) marks
// the ball's outline, where coverage ramps from 0 (its reach, 0.73 pixels out) to 1 (about 0.25 pixels in):
// nearly every pixel whose centre lies up to 0.4 pixels outside it, none more than 2 pixels inside (wholly
// covered: a small gamma keeps the floor's far edge behind the ball out of the blend) and, off the outline,
// only the floor's far edge (fewer pixels than a row). The marked pixels hold a share of the translation's image.
TEST_F(Diagnose, SoftImagesSumToTheirGradientsAndEdgesLieOnTheSilhouette) {
    const SoftBall ball(48);
    app::Optimizer opt(device, ball.scene, true);
    const auto a = opt.attribute_pixels(all(opt, 4), false);
    expect_sums(opt, a);
    size_t ring = 0, ring_marked = 0, inside_marked = 0, elsewhere_marked = 0;
    double edge_share = 0, total = 0;
    for (size_t i = 0; i < a.edges.size(); ++i) {
        const double m = ball.miss[i];
        const bool marked = a.edges[i] != 0.0f;
        if (m >= 0.7 && m < 0.72) {
            ++ring;
            ring_marked += marked;
        }
        inside_marked += marked && m < 0.6;
        elsewhere_marked += marked && m > 0.8;
        edge_share += a.edges[i] * std::fabs(a.images[0][i]);
        total += std::fabs(a.images[0][i]);
    }
    EXPECT_GT(ring, 20u);
    EXPECT_GE(double(ring_marked), 0.9 * double(ring)) << ring_marked << " of " << ring;
    EXPECT_EQ(inside_marked, 0u);
    EXPECT_LT(elsewhere_marked, 48u);
    EXPECT_GT(edge_share, 0.2 * total);
}

// A floor that runs under the camera, with a near plane that cuts the view (camera.near 1.5, its line at about
// row 49): soft visibility clips its triangles there (render/soft_dsl.h). The edge mask marks the floor's far edge
// (a mesh boundary, about row 7: a helper saw none of it marked while clipped fragments were left out whole), and
// nothing along the near plane's line, which no neighbour shares and which is no silhouette.
TEST_F(Diagnose, SoftEdgesOfAFloorClippedAtTheNearPlane) {
    app::test::TempDir tmp;
    std::ofstream(tmp / "floor.obj") << "v -6 -1 -6\nv 6 -1 -6\nv 6 -1 8\nv -6 -1 8\nf 1 4 3 2\n";
    const app::Scene scene = app::load_scene_from_string(R"({ "format": 1,
      "camera": { "eye": [0, 0.2, 3], "target": [0, -1, 1], "fov_y": 60, "resolution": [64, 64], "near": 1.5 },
      "background": [0.1, 0.1, 0.3],
      "materials": { "m": { "albedo": [0.8, 0.6, 0.2] } },
      "meshes": [ { "name": "floor", "file": ")" + (tmp / "floor.obj").string() + R"(", "material": "m" } ],
      "lights": [ { "name": "sky", "type": "ambient", "intensity": 1 } ],
      "render": { "visibility": "soft" },
      "optimize": { "parameters": { "meshes.floor.translation": { "init": [0.1, 0.05, 0.1] } } } })",
                                                         kScenes.parent_path(), "clipped-floor.json");
    ASSERT_EQ(app::triangles_across_the_eye(scene.meshes[0], scene.views[0]), 2u);
    app::Optimizer opt(device, scene, true);
    const auto a = opt.attribute_pixels({0}, false);
    size_t far_edge = 0, below = 0;
    for (size_t i = 0; i < a.edges.size(); ++i) {
        const size_t row = i / 64;
        far_edge += a.edges[i] != 0.0f && row >= 4 && row < 11;
        below += a.edges[i] != 0.0f && row >= 30;
    }
    EXPECT_GE(far_edge, 48u);   // the far edge spans the image's 64 columns
    EXPECT_EQ(below, 0u);
}

// Sensitivity: d (R + G + B) / d the parameter (components summed) against central differences of the render:
// every pixel for a light and a material (no geometry moves), and for the pose the covered pixels away from
// edges.
TEST_F(Diagnose, SensitivityMatchesCentralDifferences) {
    auto scene = demo("material-light.json", 32, app::Visibility::hard);
    app::Optimizer opt(device, scene, true);
    const auto a = opt.attribute_pixels({0, 1, 2}, true);
    const double steps[3] = {1e-3, 1e-3, 1e-3};
    for (size_t p = 0; p < 3; ++p) {
        const auto hi = channel_sums(opt, p, steps[p]), lo = channel_sums(opt, p, -steps[p]);
        double worst = 0, scale = 0;
        for (size_t i = 0; i < hi.size(); ++i) {
            const double fd = (hi[i] - lo[i]) / (2 * steps[p]);
            worst = std::max(worst, std::fabs(fd - a.images[p][i]));
            scale = std::max(scale, std::fabs(fd));
        }
        EXPECT_GT(scale, 1e-3) << p;
        EXPECT_LT(worst, 0.02 * scale + 1e-3) << p;
    }

    auto pose = demo("pose.json", 64, app::Visibility::antialias);
    pose.optimize->parameters.resize(2);   // rotation, translation (in file order)
    app::Optimizer popt(device, pose, true);
    const auto s = popt.attribute_pixels({1}, true);   // the translation
    const double h = 1e-3;
    const auto hi = channel_sums(popt, 1, h), lo = channel_sums(popt, 1, -h);
    const uint32_t w = s.width, n = s.width * s.height;
    // Away from marked edges (none within 1 pixel) and where the knot covers the pixel (sensitivity not 0): a
    // silhouette whose pair blend the antialias walk gave up on (kWalk, see the report) jumps once a centre
    // crosses it, so a few pixels differ by a jump / 2h; nearly all of them match.
    size_t compared = 0, matched = 0;
    for (size_t i = 0; i < hi.size(); ++i) {
        const double fd = (hi[i] - lo[i]) / (2 * h);
        const size_t v = i / n, k = i % n, x = k % w, y = k / w;
        bool near = false;
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                const long xx = long(x) + dx, yy = long(y) + dy;
                if (xx >= 0 && yy >= 0 && xx < long(w) && yy < long(s.height))
                    near = near || s.edges[v * n + size_t(yy) * w + size_t(xx)] != 0.0f;
            }
        if (near || s.images[0][i] == 0.0f) continue;
        ++compared;
        matched += std::fabs(fd - s.images[0][i]) <= 0.05 * std::fabs(s.images[0][i]) + 0.05;
    }
    EXPECT_GT(compared, 100u);
    EXPECT_GE(double(matched), 0.9 * double(compared)) << matched << " of " << compared;
}

// The program: the files it writes (every parameter's gradient image, the chosen sensitivity, the edges and
// diagnose.txt), exit 0; bad input exit 2.
TEST(DiagnoseProgram, WritesItsFilesAndExits) {
    app::test::TempDir tmp;
    const std::string base = kOptimize + " --scene " + (kScenes / "material-light.json").string() +
                             " --resolution 24x24 --diagnose --out " + (tmp / "out").string();
    ASSERT_EQ(shell(base + " --diagnose-parameter lights.key.intensity > " + (tmp / "stdout.txt").string() + " 2> " +
                    (tmp / "stderr.txt").string()),
              0)
        << app::read_file(tmp / "stderr.txt");
    std::set<std::string> files;
    for (const auto& e : fs::directory_iterator(tmp / "out")) files.insert(e.path().filename().string());
    // (.adjoint.lock: the folder's lock, which an optimization's run leaves too.)
    std::set<std::string> expected = {".adjoint.lock", "diagnose.txt", "edges_v0.png",
                                      "sensitivity_lights_key_intensity_v0.pfm",
                                      "sensitivity_lights_key_intensity_v0.png"};
    for (const char* p : {"lights_key_position", "lights_key_intensity", "materials_ball_albedo", "materials_floor_albedo"})
        for (const char* ext : {".pfm", ".png"}) expected.insert(std::string("gradient_") + p + "_v0" + ext);
    EXPECT_EQ(files, expected);
    const std::string text = app::read_file(tmp / "out" / "diagnose.txt");
    EXPECT_EQ(app::read_file(tmp / "stdout.txt"), text);
    EXPECT_NE(text.find("99th percentile"), std::string::npos) << text;
    EXPECT_NE(text.find("materials.floor.albedo"), std::string::npos) << text;
    EXPECT_EQ(text.find("sum to that share of the gradient"), std::string::npos) << text;
    EXPECT_EQ(app::read_file(tmp / "out" / "gradient_lights_key_intensity_v0.pfm").size(),
              std::string("Pf\n24 24\n-1.0\n").size() + 24 * 24 * 4);

    // A second --diagnose into the folder: refused without --force (another scene's or parameter's pictures stayed
    // beside a diagnose.txt that named only its own); with it, the pictures it does not write are removed.
    EXPECT_EQ(shell(base + " > /dev/null 2> " + (tmp / "stderr.txt").string()), 2);
    EXPECT_NE(app::read_file(tmp / "stderr.txt").find("holds an earlier --diagnose's pictures (diagnose.txt, "
                                                      "edges_v0.png, gradient_lights_key_intensity_v0.pfm, "
                                                      "gradient_lights_key_intensity_v0.png, ... (12 files)); give "
                                                      "--force to replace them"),
              std::string::npos)
        << app::read_file(tmp / "stderr.txt");
    EXPECT_EQ(app::read_file(tmp / "out" / "diagnose.txt"), text);
    ASSERT_EQ(shell(base + " --force --diagnose-parameter lights.key.position > /dev/null"), 0);
    EXPECT_FALSE(fs::exists(tmp / "out" / "sensitivity_lights_key_intensity_v0.pfm"));
    EXPECT_TRUE(fs::exists(tmp / "out" / "sensitivity_lights_key_position_v0.png"));
    EXPECT_TRUE(fs::exists(tmp / "out" / "gradient_materials_floor_albedo_v0.pfm"));
    EXPECT_EQ(shell(base + " --force --diagnose-parameter lights.key.nothing 2> /dev/null"), 2);
    EXPECT_EQ(shell(base + " --force --diagnose-parameter lights.key.intensity --diagnose-parameter "
                    "lights.key.intensity 2> " + (tmp / "stderr.txt").string()), 2);
    EXPECT_NE(app::read_file(tmp / "stderr.txt").find("--diagnose-parameter: lights.key.intensity is given twice"),
              std::string::npos) << app::read_file(tmp / "stderr.txt");
    EXPECT_EQ(shell(kOptimize + " --scene x.json --out " + (tmp / "o").string() +
                    " --diagnose-parameter lights.key.intensity 2> /dev/null"),
              2);
}

// An environment map's texels reach the loss through its prefiltered maps, which no pixel computes alone: their
// pictures were blank and the table said nothing. Now a line under it names the row and the share drawn.
TEST(DiagnoseProgram, AnEnvironmentMapsUndrawnGradientIsNamed) {
    app::test::TempDir tmp;
    ASSERT_EQ(shell(kOptimize + " --scene " + (kScenes / "relight.json").string() +
                    " --resolution 24x24 --diagnose --out " + (tmp / "out").string() + " > /dev/null 2> " +
                    (tmp / "err.txt").string()),
              0)
        << app::read_file(tmp / "err.txt");
    const std::string text = app::read_file(tmp / "out" / "diagnose.txt");
    const size_t at = text.find("\nthe pictures of lights.");
    ASSERT_NE(at, std::string::npos) << text;
    EXPECT_NE(text.find(".texture (0%)", at), std::string::npos) << text;
    EXPECT_NE(text.find("an environment map's prefiltered levels", at), std::string::npos) << text;
}

// Two parameters whose paths slug alike (materials "a,b" and "a_b") wrote one set of pictures for both.
TEST(DiagnoseProgram, ParametersWhosePicturesWouldShareANameAreRefused) {
    app::test::TempDir tmp;
    std::ofstream(tmp / "two.json") << R"({"format": 1,
      "camera": { "eye": [0, 0.8, 4.2], "target": [0, 0, 0], "resolution": [16, 16] },
      "materials": { "a,b": { "albedo": [0.5, 0.5, 0.5] }, "a_b": { "albedo": [0.2, 0.5, 0.5] } },
      "meshes": [ { "name": "ball", "file": ")" + (kScenes.parent_path() / "meshes" / "uv_sphere.obj").string() +
                                           R"(", "material": "a,b", "translation": [-0.6, 0, 0] },
                  { "name": "ball2", "file": ")" + (kScenes.parent_path() / "meshes" / "uv_sphere.obj").string() +
                                           R"(", "material": "a_b", "translation": [0.6, 0, 0] } ],
      "lights": [ { "name": "key", "type": "point", "position": [2, 3, 3], "intensity": 14 } ],
      "optimize": { "parameters": { "materials.a,b.albedo": { "init": [0.3, 0.3, 0.3] },
                                    "materials.a_b.albedo": { "init": [0.3, 0.3, 0.3] } } } })";
    EXPECT_EQ(shell(kOptimize + " --scene " + (tmp / "two.json").string() + " --diagnose --out " +
                    (tmp / "out").string() + " > /dev/null 2> " + (tmp / "err.txt").string()),
              2);
    EXPECT_NE(app::read_file(tmp / "err.txt").find("\"materials.a,b.albedo\" and \"materials.a_b.albedo\" would share "
                                                   "--diagnose's pictures gradient_materials_a_b_albedo_v*"),
              std::string::npos)
        << app::read_file(tmp / "err.txt");
}

// A folder in the place of one of the pictures: refused before any work (exit 2, nothing written). It failed with
// exit 1 once 49 files were written.
TEST(DiagnoseProgram, APictureNameTakenByAFolderIsRefusedBeforeAnyWork) {
    for (const char* taken : {"edges_v0.png", "gradient_lights_key_intensity_v0.pfm"}) {
        app::test::TempDir tmp;
        fs::create_directories(tmp / "out" / taken);
        EXPECT_EQ(shell(kOptimize + " --scene " + (kScenes / "material-light.json").string() +
                        " --resolution 16x16 --diagnose --out " + (tmp / "out").string() + " > /dev/null 2> " +
                        (tmp / "err.txt").string()),
                  2) << taken;
        EXPECT_NE(app::read_file(tmp / "err.txt").find(std::string(taken) + ": it is a folder"), std::string::npos)
            << app::read_file(tmp / "err.txt");
        size_t files = 0;
        for (const auto& e : fs::directory_iterator(tmp / "out"))
            files += e.is_regular_file() && e.path().filename() != ".adjoint.lock";
        EXPECT_EQ(files, 0u) << taken;
    }
}

// Soft visibility: the program writes the pose's images and marks edge pixels.
TEST(DiagnoseProgram, SoftWritesItsImages) {
    app::test::TempDir tmp;
    std::string soft = app::read_file(kScenes / "pose.json");
    soft.replace(soft.find("\"antialias\""), 11, "\"soft\"");
    soft.replace(soft.find("../meshes/"), 10, (kScenes.parent_path() / "meshes").string() + "/");
    app::write_file_atomic(tmp / "soft.json", soft);
    ASSERT_EQ(shell(kOptimize + " --scene " + (tmp / "soft.json").string() + " --resolution 24x24 --diagnose --out " +
                    (tmp / "s").string() + " > " + (tmp / "out.txt").string() + " 2> " + (tmp / "err.txt").string()),
              0)
        << app::read_file(tmp / "err.txt");
    for (const char* f : {"diagnose.txt", "edges_v0.png", "edges_v3.png", "gradient_meshes_knot_rotation_v0.pfm",
                          "gradient_meshes_knot_translation_v3.png", "gradient_materials_knot_albedo_v2.pfm"})
        EXPECT_TRUE(fs::exists(tmp / "s" / f)) << f;
    const std::string text = app::read_file(tmp / "s" / "diagnose.txt");
    const size_t at = text.find("edge pixels (silhouette gradients): ");
    ASSERT_NE(at, std::string::npos) << text;
    EXPECT_GT(std::stoi(text.substr(at + 36)), 10) << text;
}

} // namespace adjoint::test
