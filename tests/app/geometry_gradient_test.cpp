// Geometry gradients (vertices, translation, rotation, camera) from $autodiff against central finite
// differences of the antialiased forward renderer, at silhouettes against the background and at occlusion
// edges over a floor; and hard mode, which has no silhouette gradient.
#include "ball_scene.h"
#include "finite_difference.h"
#include "support/device_fixture.h"

#include <adjoint/app/optimization.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace adjoint::test {

namespace {

// 48x48 pixels: the ico-sphere over a floor (ball_scene.h). The free parameters start away from the truth, so
// every gradient is non-zero.
std::string scene_text(const std::string& visibility, const std::string& parameters) {
    return ball_scene(R"({ "visibility": ")" + visibility + R"(" })", parameters);
}

// The antialiased image is continuous in the geometry except where a pixel centre meets a polygon's corner
// (no pair blends it there, as in nvdiffrast); such an event inside one step spoils that difference. So
// each float is compared with two steps, and the closer difference must agree: a wrong gradient fails
// both.
void expect_matches_fd(app::Optimizer& opt, const std::vector<float>& g, const std::vector<float>& x0, size_t i,
                       double h, double tol, const std::string& what, int* nonzero = nullptr) {
    const double fd1 = central_difference(opt, x0, i, h), fd2 = central_difference(opt, x0, i, 3 * h);
    const double fd = std::fabs(fd1 - g[i]) <= std::fabs(fd2 - g[i]) ? fd1 : fd2;
    EXPECT_NEAR(g[i], fd, tol) << what << " float " << i << " value " << x0[i] << " (differences " << fd1 << ", "
                               << fd2 << ")";
    if (nonzero) *nonzero += std::fabs(fd) > 1e-5;
}

app::Scene load(const std::string& text) {
    return app::load_scene_from_string(text, std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets", "geo.json");
}

} // namespace

class GeometryGradients : public DeviceTest {};

TEST_F(GeometryGradients, VerticesMatchCentralDifferences) {
    // Every vertex of the ico-sphere free, each moved a little: the 16 floats with the largest gradients
    // (silhouette and occlusion-edge vertices) against differences of the antialiased image.
    app::Optimizer opt(device, load(scene_text("antialias", R"("meshes.ball.vertices": {"perturb": 0.02})")));
    std::vector<float> g;
    ASSERT_GT(opt.evaluate(&g), 0.0);
    const std::vector<float> x0 = opt.free_values();
    std::vector<size_t> order(x0.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::partial_sort(order.begin(), order.begin() + 16, order.end(),
                      [&](size_t a, size_t b) { return std::fabs(g[a]) > std::fabs(g[b]); });
    for (size_t k = 0; k < 16; ++k)
        expect_matches_fd(opt, g, x0, order[k], 1e-4, 0.03 * std::fabs(g[order[k]]) + 1e-6, "vertex");
}

// A flat-coloured square (ambient light only) over a dark background: the gradients come from its
// silhouette alone and must match differences closely: translation and rotation, then the camera.
namespace {
const char* kSquare = R"({
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
} // namespace

TEST_F(GeometryGradients, SquareMatchesCentralDifferencesClosely) {
    const std::string text = kSquare;
    int nonzero = 0;
    {
        app::Optimizer opt(device, load(text));
        std::vector<float> g;
        ASSERT_GT(opt.evaluate(&g), 0.0);
        const std::vector<float> x0 = opt.free_values();
        ASSERT_EQ(x0.size(), 3u + 4);
        for (size_t i = 0; i < x0.size(); ++i)
            expect_matches_fd(opt, g, x0, i, 1e-4, 0.01 * std::fabs(g[i]) + 2e-5, "squares", &nonzero);
    }
    std::string camera = text;
    const std::string from = camera.substr(camera.find("\"meshes.back.translation\""));
    camera.replace(camera.find(from), from.size(), R"("camera.eye": { "init": [0.05, 0.08, 3.1] },
      "camera.target": { "init": [0.03, -0.02, 0.05] }, "camera.fov_y": { "init": 42 } } }
})");
    app::Optimizer opt(device, load(camera));
    std::vector<float> g;
    ASSERT_GT(opt.evaluate(&g), 0.0);
    const std::vector<float> x0 = opt.free_values();
    ASSERT_EQ(x0.size(), 7u);
    for (size_t i = 0; i < x0.size(); ++i)
        expect_matches_fd(opt, g, x0, i, 1e-4, 0.01 * std::fabs(g[i]) + 2e-5, "camera", &nonzero);
    EXPECT_GE(nonzero, 12);   // the checks are not passing on zeros
}

// Hard visibility differentiates the shading only: for the flat square the translation's gradient is then
// zero, while the antialiased one is what the silhouette contributes.
TEST_F(GeometryGradients, HardVisibilityHasNoSilhouetteGradient) {
    auto gradient_norm = [&](const std::string& visibility) {
        std::string t = kSquare;
        const std::string aa = R"("visibility": "antialias")";
        t.replace(t.find(aa), aa.size(), "\"visibility\": \"" + visibility + "\"");
        app::Optimizer opt(device, load(t));
        std::vector<float> g;
        opt.evaluate(&g);
        return std::sqrt(double(g[0]) * g[0] + double(g[1]) * g[1] + double(g[2]) * g[2]);
    };
    EXPECT_LT(gradient_norm("hard"), 1e-6);
    EXPECT_GT(gradient_norm("antialias"), 1e-3);
}

} // namespace adjoint::test
