// Lights as plug-ins read from a light buffer: a scene with a thousand lights compiles and renders in seconds
// (a loop over the buffer, not a copy of the shading per light), renders what fewer lights of the same total
// power render, and its gradients through the loop (inside $autodiff) match central differences.
#include "finite_difference.h"
#include "support/device_fixture.h"

#include <adjoint/app/optimization.h>
#include <adjoint/app/renderer.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>

namespace adjoint::test {

namespace {

using Json = nlohmann::ordered_json;

// A lit sphere over a floor at 48x48; `point_lights` point lights at one place (each with intensity
// total / count), a sun and an ambient light.
Json many_lights_scene(int point_lights, float total) {
    Json j = Json::parse(R"({
      "format": 1,
      "camera": { "eye": [0, 0.9, 3.6], "target": [0, 0, 0], "fov_y": 40, "resolution": [48, 48] },
      "background": [0.1, 0.1, 0.1],
      "materials": { "m": { "albedo": [0.6, 0.5, 0.4], "specular": [0.2, 0.2, 0.2], "shininess": 16 } },
      "meshes": [
        { "name": "ball",  "file": "meshes/uv_sphere.obj", "material": "m", "scale": 0.8 },
        { "name": "floor", "file": "meshes/plane.obj", "material": "m", "translation": [0, -0.8, 0] }
      ],
      "lights": [
        { "name": "sun", "type": "directional", "direction": [-0.5, -1, -0.3], "intensity": 0.4 },
        { "name": "fill", "type": "ambient", "intensity": 0.1 }
      ]
    })");
    for (int i = 0; i < point_lights; ++i) {
        j["lights"].push_back({{"name", "p" + std::to_string(i)},
                               {"type", "point"},
                               {"position", {1.5f, 2.5f, 2.0f}},
                               {"intensity", total / float(point_lights)}});
    }
    return j;
}

app::Scene load(const Json& j) {
    return app::load_scene_from_string(j.dump(), std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets", "lights.json");
}

double max_difference(const app::LinearImage& a, const app::LinearImage& b) {
    double worst = 0;
    for (size_t i = 0; i < a.texels.size(); ++i)
        for (int c = 0; c < 3; ++c) worst = std::max(worst, double(std::fabs(a.texels[i][c] - b.texels[i][c])));
    return worst;
}

} // namespace

class ManyLights : public DeviceTest {};

TEST_F(ManyLights, AThousandLightsRenderInSecondsAsTheirSumDoes) {
    const auto start = std::chrono::steady_clock::now();
    app::SceneRenderer thousand(device, load(many_lights_scene(1000, 9.0f)));
    const app::LinearImage many = thousand.render(0);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // One copy of the shading loops over the light buffer (unrolled, a thousand copies would make a kernel of
    // a thousand times the code). Generous for a loaded 2-core machine and a cold shader cache.
    EXPECT_LT(seconds, 60.0);

    // A thousand lights at one place light as one with their total intensity (the loop), and so do four
    // (unrolled), up to float rounding.
    const app::LinearImage few = app::SceneRenderer(device, load(many_lights_scene(4, 9.0f))).render(0);
    const app::LinearImage one = app::SceneRenderer(device, load(many_lights_scene(1, 9.0f))).render(0);
    EXPECT_LT(max_difference(many, one), 1e-4);
    EXPECT_LT(max_difference(few, one), 1e-5);
    EXPECT_GT(max_difference(many, app::SceneRenderer(device, load(many_lights_scene(1000, 4.5f))).render(0)), 0.05)
        << "the lights' intensity must matter";
}

TEST_F(ManyLights, GradientsThroughTheLightLoopMatchCentralDifferences) {
    // Twelve point lights: a loop over the light buffer inside $autodiff (more than are unrolled).
    Json j = many_lights_scene(12, 9.0f);
    j["optimize"] = Json::parse(R"({ "target": "scene", "parameters": {
        "lights.p3.position":  { "init": [1.2, 2.2, 2.4] },
        "lights.p7.intensity": { "init": 1.5 },
        "lights.p11.color":    { "init": [0.6, 1.0, 0.8] },
        "materials.m.albedo":  { "init": [0.3, 0.6, 0.5] } } })");
    app::Optimizer opt(device, load(j));
    std::vector<float> g;
    ASSERT_GT(opt.evaluate(&g), 0.0);
    const std::vector<float> x0 = opt.free_values();
    ASSERT_EQ(g.size(), 3u + 1u + 3u + 3u);
    for (size_t i = 0; i < x0.size(); ++i) {
        const double fd = central_difference(opt, x0, i, 1e-3 * std::max(1.0, double(std::fabs(x0[i]))));
        EXPECT_NEAR(g[i], fd, 2e-2 * std::max(std::fabs(fd), std::fabs(double(g[i]))) + 2e-7) << "float " << i;
        EXPECT_GT(std::fabs(g[i]), 1e-7) << "float " << i << ": every free value changes the loss";
    }
}

} // namespace adjoint::test
