// Soft rasterization (render.visibility "soft"): coverage and colour at chosen pixels against the SoftRas
// formulas, the image approaching the hard one as sigma and gamma shrink, and its gradients (translation,
// rotation, camera, vertices) from $autodiff against central finite differences of the soft image's loss.
#include "ball_scene.h"
#include "finite_difference.h"
#include "render/dynamic.h"
#include "render/scene_data.h"
#include "support/device_fixture.h"

#include <adjoint/app/optimization.h>
#include <adjoint/app/renderer.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace adjoint::test {

namespace {

app::Scene load(const std::string& text, const std::filesystem::path& base =
                                             std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets") {
    return app::load_scene_from_string(text, base, "soft.json");
}

void replace(std::string& text, const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
}

// The soft image is smooth in the geometry: one step, a tolerance of a few percent. How smooth: a
// triangle's colour reaches out to where D' e^(z / gamma) falls below the background's weight, and D' goes
// to 0 at the reach (soft_dsl.h). With z near 1 and gamma 1 the colour fades with D' over the whole reach
// (2.3 pixels at 48x48 with sigma 1e-3), which steps of 1e-3 resolve; with gamma 0.1 (e^10 = 2e4) it fades
// over the last 3% of the reach, 0.07 pixels, and central differences need steps of 3e-5 to agree.
void expect_matches_fd(app::Optimizer& opt, const std::vector<float>& g, const std::vector<float>& x0, size_t i,
                       double h, double rel, double abs_tol, const std::string& what, int* nonzero = nullptr) {
    const double fd = central_difference(opt, x0, i, h);
    EXPECT_NEAR(g[i], fd, rel * std::fabs(fd) + abs_tol) << what << " float " << i << " value " << x0[i];
    if (nonzero) *nonzero += std::fabs(fd) > 1e-4;
}

// A flat-coloured square (ambient light only) over a dark background at 48x48.
const char* kSquare = R"({
  "format": 1,
  "camera": { "eye": [0, 0, 3], "target": [0, 0, 0], "fov_y": 40, "resolution": [48, 48] },
  "background": [0.05, 0.05, 0.1],
  "materials": { "back": { "albedo": [0.2, 0.4, 0.7] } },
  "meshes": [ { "name": "back", "file": "meshes/plane.obj", "material": "back", "scale": 0.3,
                "rotation": { "axis": [1, 0, 0], "angle": 90 } } ],
  "lights": [ { "name": "fill", "type": "ambient", "intensity": 1 } ],
  "render": { "visibility": "soft", "soft": { "sigma": 1e-3, "gamma": 1 } },
  "optimize": { "target": "scene", "parameters": {
      "meshes.back.translation": { "init": [0.07, -0.04, 0.1] },
      "meshes.back.rotation": { "init": { "axis": [0.2, 0.3, 1], "angle": 12 } } } }
})";

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

} // namespace

class SoftRasterization : public DeviceTest {};

// One triangle facing the camera with a vertical edge on the image's centre line (x = 24 in pixels), so
// that the centres of pixels 23 and 24 are half a pixel outside and inside it: d = 0.5 px = 1/48 in NDC
// units. Coverage D' from D = sigmoid(+-d^2 / sigma); colour (D' e^(z/gamma) C + e^(eps/gamma) B) /
// (D' e^(z/gamma) + e^(eps/gamma)) with z = (far - 3) / (far - near), the view depth being 3 everywhere on the
// triangle.
TEST_F(SoftRasterization, CoverageAndColourFollowTheSoftRasFormulas) {
    const auto dir = std::filesystem::temp_directory_path() / ("adjoint-soft-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "tri.obj") << "v 0 -0.8 0\nv 0.8 0 0\nv 0 0.8 0\nf 1 2 3\n";
    auto scene_with = [&](double gamma) {
        return load(R"({
  "format": 1,
  "camera": { "eye": [0, 0, 3], "target": [0, 0, 0], "fov_y": 40, "resolution": [48, 48], "near": 0.5, "far": 10 },
  "background": [0.1, 0.2, 0.3],
  "materials": { "m": { "albedo": [0.9, 0.6, 0.3] } },
  "meshes": [ { "name": "tri", "file": "tri.obj", "material": "m" } ],
  "lights": [ { "name": "fill", "type": "ambient", "intensity": 1 } ],
  "render": { "visibility": "soft", "soft": { "sigma": 1e-3, "gamma": )" + std::to_string(gamma) + R"( } }
})",
                    dir);
    };
    const double sigma = 1e-3, z = (10.0 - 3.0) / (10.0 - 0.5), eps = 1e-3;
    const double d2 = std::pow(0.5 * 2.0 / 48.0, 2);
    const float3 albedo{0.9f, 0.6f, 0.3f}, background{0.1f, 0.2f, 0.3f};
    for (double gamma : {1.0, 1e-2}) {
        app::SceneRenderer renderer(device, scene_with(gamma));
        const app::LinearImage img = renderer.render(0);
        auto px = [&](int x, int y) { return img.texels[size_t(y) * 48 + x]; };
        // Row 23: half a pixel above the centre, far from the other two edges (more than 8 pixels).
        // D' = (D - eps) / (1 - eps), eps = 1e-4: 0 at the reach, sqrt(sigma ln(1 / eps - 1)) = 2.3 pixels.
        auto covered = [&](double logit) { return (sigmoid(logit) - 1e-4) / (1 - 1e-4); };
        const double d_in = covered(d2 / sigma), d_out = covered(-d2 / sigma);
        EXPECT_NEAR(px(24, 23).w, d_in, 1e-5) << "gamma " << gamma;
        EXPECT_NEAR(px(23, 23).w, d_out, 1e-5) << "gamma " << gamma;
        EXPECT_NEAR(px(22, 23).w, covered(-9 * d2 / sigma), 1e-5) << "1.5 pixels outside";
        EXPECT_NEAR(px(27, 23).w, 1.0, 1e-4) << "3.5 pixels inside";
        EXPECT_EQ(px(21, 23).w, 0.0f) << "2.5 pixels outside: out of reach";
        EXPECT_EQ(px(21, 23).x, background.x);
        EXPECT_EQ(px(5, 23).w, 0.0f) << "19 pixels outside: out of reach";
        EXPECT_EQ(px(5, 23).x, background.x);
        EXPECT_EQ(px(5, 23).z, background.z);
        for (int x : {23, 24}) {
            const double d = x == 24 ? d_in : d_out;
            const double wt = d * std::exp(z / gamma), wb = std::exp(eps / gamma);
            for (int c = 0; c < 3; ++c) {
                const float a = c == 0 ? albedo.x : c == 1 ? albedo.y : albedo.z;
                const float b = c == 0 ? background.x : c == 1 ? background.y : background.z;
                const double want = (wt * a + wb * b) / (wt + wb);
                const float got = c == 0 ? px(x, 23).x : c == 1 ? px(x, 23).y : px(x, 23).z;
                EXPECT_NEAR(got, want, 2e-4) << "pixel " << x << " channel " << c << " gamma " << gamma;
            }
        }
    }
    std::filesystem::remove_all(dir);
}

// Each pixel loops over its own list of the triangles within reach, or over its whole tile when the list
// did not fit: the image is the same either way, to rounding (the same triangles, in an order that varies from
// render to render: the binning appends to the tiles' lists with atomics). With
// room for 1 or 6 candidates most pixels near the ball overflow and some do not; with the automatic room
// (256) none does, so a list that missed a triangle within reach would show too. At 48x48 and at 45x37, whose
// edge tiles are partly outside the image (the own lists are laid out by tile, render/soft_dsl.h).
TEST_F(SoftRasterization, PixelsWhoseListsOverflowLoopOverTheirTiles) {
    for (const char* size : {"[48, 48]", "[45, 37]"}) {
        SCOPED_TRACE(size);
        std::string text = ball_scene(R"({ "visibility": "soft", "soft": { "sigma": 1e-3, "gamma": 0.1 } })", "");
        const size_t at = text.find("[48, 48]");
        ASSERT_NE(at, std::string::npos);
        text.replace(at, 8, size);
        const app::Scene scene = load(text);
        const size_t pixels = size_t(scene.views[0].width) * scene.views[0].height;
        auto render = [&](uint32_t candidates) {
            Stream stream = device.create_stream();
            app::SceneData data = app::upload_scene(device, stream, scene);
            app::DynamicRenderer r(device, stream, scene, data,
                                   app::DynamicOptions{app::Visibility::soft, false, candidates});
            const std::vector<float> values = app::gather_values(scene, data.layout);
            auto params = device.create_buffer<float>(values.size());
            auto out = device.create_buffer<float4>(pixels);
            stream << params.copy_from(values.data());
            r.update_geometry(stream, params);
            r.render(stream, 0, scene.views[0], params, out);
            std::vector<float4> image(pixels);
            stream << out.copy_to(image.data()) << synchronize();
            return image;
        };
        const std::vector<float4> automatic = render(0);
        size_t partial = 0;
        for (const float4& t : automatic) partial += t.w > 0.01f && t.w < 0.99f;
        EXPECT_GT(partial, 50u);   // soft edges: the comparison is not between two blank images
        for (uint32_t candidates : {1u, 6u}) {
            const std::vector<float4> small = render(candidates);
            size_t differ = 0;
            for (size_t i = 0; i < pixels; ++i)
                differ += std::fabs(automatic[i].x - small[i].x) > 1e-6f ||
                          std::fabs(automatic[i].y - small[i].y) > 1e-6f ||
                          std::fabs(automatic[i].z - small[i].z) > 1e-6f ||
                          std::fabs(automatic[i].w - small[i].w) > 1e-6f;
            EXPECT_EQ(differ, 0u) << "room for " << candidates;
        }
    }
}

// As sigma / gamma and gamma shrink, the soft image tends to the hard one: the mean absolute difference
// over the pixels and channels is small, and much smaller than with the smooth settings of the gradient
// tests.
TEST_F(SoftRasterization, TinySigmaAndGammaApproachTheHardImage) {
    auto render = [&](const std::string& r) {
        app::SceneRenderer renderer(device, load(ball_scene(r, "")));
        return renderer.render(0);
    };
    const app::LinearImage hard = render(R"({ "visibility": "hard" })");
    auto mean_difference = [&](const app::LinearImage& img) {
        double sum = 0;
        for (size_t i = 0; i < hard.texels.size(); ++i)
            sum += std::fabs(img.texels[i].x - hard.texels[i].x) + std::fabs(img.texels[i].y - hard.texels[i].y) +
                   std::fabs(img.texels[i].z - hard.texels[i].z);
        return sum / (3.0 * hard.texels.size());
    };
    const double sharp = mean_difference(render(R"({ "visibility": "soft", "soft": { "sigma": 1e-9, "gamma": 1e-4 } })"));
    const double smooth = mean_difference(render(R"({ "visibility": "soft", "soft": { "sigma": 1e-3, "gamma": 1e-2 } })"));
    EXPECT_LT(sharp, 1.5e-3);   // 4e-4 measured
    EXPECT_LT(sharp * 20, smooth);   // 0.05 measured
}

TEST_F(SoftRasterization, SquareMatchesCentralDifferences) {
    int nonzero = 0;
    {
        app::Optimizer opt(device, load(kSquare));
        std::vector<float> g;
        ASSERT_GT(opt.evaluate(&g), 0.0);
        const std::vector<float> x0 = opt.free_values();
        ASSERT_EQ(x0.size(), 3u + 4);
        for (size_t i = 0; i < x0.size(); ++i)
            expect_matches_fd(opt, g, x0, i, 1e-3, 0.02, 1e-5, "pose", &nonzero);
    }
    std::string camera = kSquare;
    const std::string from = camera.substr(camera.find("\"meshes.back.translation\""));
    replace(camera, from, R"("camera.eye": { "init": [0.05, 0.08, 3.1] },
      "camera.target": { "init": [0.03, -0.02, 0.05] }, "camera.fov_y": { "init": 42 } } }
})");
    app::Optimizer opt(device, load(camera));
    std::vector<float> g;
    ASSERT_GT(opt.evaluate(&g), 0.0);
    const std::vector<float> x0 = opt.free_values();
    ASSERT_EQ(x0.size(), 7u);
    for (size_t i = 0; i < x0.size(); ++i) expect_matches_fd(opt, g, x0, i, 1e-3, 0.02, 1e-5, "camera", &nonzero);
    EXPECT_GE(nonzero, 12);   // the checks are not passing on zeros
}

// Every vertex of the ico-sphere free and moved a little; the floats with the largest gradients checked.
// These are silhouette vertices, where a triangle turns edge-on as a vertex moves: the point a pixel
// beside it is shaded at (the triangle's point nearest to it in the image) then moves from one of its
// edges to another, a small jump in the image (soft_dsl.h). So each float is compared with two steps,
// and the closer difference must agree: a wrong gradient fails both.
TEST_F(SoftRasterization, VerticesMatchCentralDifferences) {
    app::Optimizer opt(device, load(ball_scene(R"({ "visibility": "soft", "soft": { "sigma": 1e-3, "gamma": 0.1 } })",
                                               R"("meshes.ball.vertices": {"perturb": 0.02})")));
    std::vector<float> g;
    ASSERT_GT(opt.evaluate(&g), 0.0);
    const std::vector<float> x0 = opt.free_values();
    std::vector<size_t> order(x0.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::partial_sort(order.begin(), order.begin() + 10, order.end(),
                      [&](size_t a, size_t b) { return std::fabs(g[a]) > std::fabs(g[b]); });
    ASSERT_GT(std::fabs(g[order[0]]), 1e-4);
    for (size_t k = 0; k < 10; ++k) {
        const size_t i = order[k];
        const double fd1 = central_difference(opt, x0, i, 1e-4), fd2 = central_difference(opt, x0, i, 3e-4);
        const double fd = std::fabs(fd1 - g[i]) <= std::fabs(fd2 - g[i]) ? fd1 : fd2;
        EXPECT_NEAR(g[i], fd, 0.02 * std::fabs(fd) + 0.005 * std::fabs(g[order[0]]))
            << "vertex float " << i << " value " << x0[i] << " (differences " << fd1 << ", " << fd2 << ")";
    }
}

} // namespace adjoint::test
