// Renderer gradients from $autodiff against central finite differences of the forward renderer, for every
// parameter kind the hard renderer optimizes: texture texels (through the mip chain), albedo, specular,
// shininess, light position, direction, colour and intensity; several triangles and lights.
#include "finite_difference.h"
#include "render/scene_data.h"
#include "support/device_fixture.h"

#include <adjoint/app/optimization.h>

#include <algorithm>
#include <cmath>

namespace adjoint::test {

namespace {

// 40x40 pixels, a textured sphere over an untextured floor, a point, a directional and an ambient light.
// The free parameters start away from the truth so that every gradient is non-zero.
const char* kScene = R"({
  "format": 1,
  "camera": { "eye": [0, 0.9, 3.6], "target": [0, 0, 0], "fov_y": 40, "resolution": [40, 40] },
  "background": [0.1, 0.1, 0.1],
  "materials": {
    "skin":  { "albedo_texture": "textures/colourful_128.png", "specular": [0.2, 0.2, 0.2], "shininess": 20 },
    "floor": { "albedo": [0.4, 0.5, 0.45], "specular": [0.1, 0.1, 0.1], "shininess": 12 }
  },
  "meshes": [
    { "name": "ball",  "file": "meshes/uv_sphere.obj", "material": "skin", "scale": 0.8 },
    { "name": "floor", "file": "meshes/plane.obj", "material": "floor", "translation": [0, -0.8, 0] }
  ],
  "lights": [
    { "name": "key",  "type": "point", "position": [1.5, 2.5, 2], "color": [1, 0.9, 0.8], "intensity": 9 },
    { "name": "sun",  "type": "directional", "direction": [-0.5, -1, -0.3], "color": [0.8, 0.9, 1], "intensity": 0.6 },
    { "name": "fill", "type": "ambient", "color": [1, 1, 1], "intensity": 0.15 }
  ],
  "optimize": {
    "target": "scene",
    "parameters": {
      "materials.skin.albedo_texture": { "init": [0.3, 0.6, 0.4], "resolution": [16, 16] },
      "materials.floor.albedo":    { "init": [0.7, 0.2, 0.3] },
      "materials.floor.specular":  { "init": [0.3, 0.2, 0.25] },
      "materials.skin.shininess":  { "init": 8 },
      "lights.key.position":       { "init": [1.0, 2.0, 2.6] },
      "lights.key.color":          { "init": [0.7, 1.0, 0.9] },
      "lights.key.intensity":      { "init": 6 },
      "lights.sun.direction":      { "init": [-0.2, -1, -0.6] },
      "lights.sun.intensity":      { "init": 0.9 }
    }
  }
})";

// Two steps of SGD with momentum 0.5 (the scene's optimizer) against the host: v = 0.5 v + g, x -= lr v, kept in
// range, every free float of every parameter; most floats must move. Gives the free floats' count (0 after a failed
// assertion on their count).
size_t expect_two_sgd_steps(Device& device, const app::Scene& scene) {
    app::Optimizer opt(device, scene);
    std::vector<float> g0, g1;
    opt.evaluate(&g0);
    const std::vector<float> x0 = opt.free_values();
    opt.step();
    const std::vector<float> x1 = opt.free_values();
    opt.evaluate(&g1);
    opt.step();
    const std::vector<float> x2 = opt.free_values();
    EXPECT_EQ(x2.size(), x0.size());
    if (x2.size() != x0.size()) return 0;
    size_t at_float = 0, moved = 0;
    for (const app::Parameter& p : scene.optimize->parameters) {
        for (size_t i = at_float; i < at_float + p.size; ++i) {
            const double want1 = std::clamp(double(x0[i]) - p.lr * double(g0[i]), double(p.lo), double(p.hi));
            const double v = 0.5 * g0[i] + double(g1[i]);
            const double want2 = std::clamp(double(x1[i]) - p.lr * v, double(p.lo), double(p.hi));
            EXPECT_NEAR(x1[i], want1, 1e-6 * std::max(1.0, std::fabs(want1))) << p.path << " float " << i - at_float;
            EXPECT_NEAR(x2[i], want2, 1e-6 * std::max(1.0, std::fabs(want2))) << p.path << " float " << i - at_float;
            moved += x2[i] != x1[i];
        }
        at_float += p.size;
    }
    EXPECT_GT(moved, x0.size() / 4) << "most floats move (the check is not passing on zeros)";
    return x0.size();
}

} // namespace

class RendererGradients : public DeviceTest {};

TEST_F(RendererGradients, EveryParameterKindMatchesCentralDifferences) {
    auto scene = app::load_scene_from_string(kScene, std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets", "grad.json");
    app::Optimizer opt(device, scene);
    std::vector<float> g;
    const double loss = opt.evaluate(&g);
    ASSERT_GT(loss, 0.0);
    const std::vector<float> x0 = opt.free_values();
    ASSERT_EQ(g.size(), x0.size());
    ASSERT_EQ(x0.size(), 16u * 16u * 3u + 3 + 3 + 1 + 3 + 3 + 1 + 3 + 1);

    // Which floats to check: every float of the small parameters, and the 24 texels with the largest
    // gradients (most texels are seen by few pixels; those are where an error would show).
    std::vector<size_t> check;
    const size_t tex = 16 * 16 * 3;
    std::vector<size_t> order(tex);
    for (size_t i = 0; i < tex; ++i) order[i] = i;
    std::partial_sort(order.begin(), order.begin() + 24, order.end(),
                      [&](size_t a, size_t b) { return std::fabs(g[a]) > std::fabs(g[b]); });
    check.assign(order.begin(), order.begin() + 24);
    for (size_t i = tex; i < x0.size(); ++i) check.push_back(i);

    int checked_nonzero = 0;
    for (size_t i : check) {
        const double fd = central_difference(opt, x0, i, 1e-3 * std::max(1.0, double(std::fabs(x0[i]))));
        EXPECT_NEAR(g[i], fd, 2e-2 * std::max(std::fabs(fd), std::fabs(double(g[i]))) + 2e-7)
            << "float " << i << " (value " << x0[i] << ")";
        checked_nonzero += std::fabs(fd) > 1e-6;
    }
    opt.set_free_values(x0);
    EXPECT_GE(checked_nonzero, int(check.size()) - 2);   // the check is not passing on zeros
}

// One step against the host: every free float moved by Adam's first step from the gradient evaluate() gives
// (m / (1 - b1) = g, v / (1 - b2) = g^2: lr * g / (|g| + eps)) and kept in its parameter's range, each
// parameter with its own rate; the step's loss is evaluate()'s and each parameter's gradient norm (from the
// step's per-chunk sums) the host's. Then a second step from both moments, as the host computes them. Every
// parameter kind free (parameters as a differentiable buffer), and the texture alone (the textures-only
// kernel); the texture has several chunks and starts on a whole float4 (float 16 of the parameter buffer,
// ParamLayout), and several small parameters share float4s, so the step (optim/kernels.cpp) takes both its
// float4s and the floats before and after them one by one.
TEST_F(RendererGradients, OneStepIsAdamsFirstStepAndItsSumsAreTheHosts) {
    for (bool texture_only : {false, true}) {
        std::string text = kScene;
        if (texture_only) {
            const size_t from = text.find(",\n      \"materials.floor.albedo\"");
            text.erase(from, text.find("\n    }\n  }\n}") - from);
        }
        auto scene = app::load_scene_from_string(text, std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets", "step.json");
        for (size_t i = 0; i < scene.optimize->parameters.size(); ++i) scene.optimize->parameters[i].lr = 0.01f * (i + 1);
        app::Optimizer opt(device, scene);
        std::vector<float> g;
        const double loss = opt.evaluate(&g);
        const std::vector<float> x0 = opt.free_values();
        const app::IterationReport r = opt.step();
        EXPECT_NEAR(r.loss, loss, 1e-5 * loss);
        const std::vector<float> x1 = opt.free_values();
        const std::vector<app::ParameterState> states = opt.parameters();
        ASSERT_EQ(states.size(), scene.optimize->parameters.size());
        ASSERT_EQ(x1.size(), texture_only ? 16u * 16u * 3u : 16u * 16u * 3u + 18u);
        EXPECT_EQ(app::make_layout(scene).at(app::ParameterKind::material_texture, 0), 16u);
        size_t at = 0, moved = 0;
        for (size_t k = 0; k < states.size(); ++k) {
            const app::Parameter& p = scene.optimize->parameters[k];
            double g2 = 0.0;
            for (size_t i = at; i < at + p.size; ++i) {
                const double step = p.lr * double(g[i]) / (std::fabs(double(g[i])) + 1e-8);
                const double want = std::clamp(double(x0[i]) - step, double(p.lo), double(p.hi));
                EXPECT_NEAR(x1[i], want, 1e-5 * std::max(1.0, std::fabs(want))) << p.path << " float " << i - at;
                g2 += double(g[i]) * g[i];
                moved += x1[i] != x0[i];
            }
            EXPECT_NEAR(states[k].grad_norm, std::sqrt(g2), 1e-4 * std::sqrt(g2) + 1e-12) << p.path;
            at += p.size;
        }
        EXPECT_GT(moved, x1.size() / 4) << "most floats move (the check is not passing on zeros)";

        std::vector<float> g1;
        opt.evaluate(&g1);
        opt.step();
        const std::vector<float> x2 = opt.free_values();
        const double b1 = 0.9, b2 = 0.999;
        at = 0;
        for (const app::Parameter& p : scene.optimize->parameters) {
            for (size_t i = at; i < at + p.size; ++i) {
                const double m = b1 * (1 - b1) * g[i] + (1 - b1) * g1[i];
                const double v = b2 * (1 - b2) * double(g[i]) * g[i] + (1 - b2) * double(g1[i]) * g1[i];
                const double step = p.lr * (m / (1 - b1 * b1)) / (std::sqrt(v / (1 - b2 * b2)) + 1e-8);
                const double want = std::clamp(double(x1[i]) - step, double(p.lo), double(p.hi));
                EXPECT_NEAR(x2[i], want, 1e-4 * p.lr + 1e-5 * std::fabs(want)) << p.path << " float " << i - at;
            }
            at += p.size;
        }
    }
}

// SGD with momentum (one state array: the step binds a stand-in for the second) over the same floats, two steps
// against the host: v = momentum v + g, x -= lr v, kept in range.
TEST_F(RendererGradients, TwoSgdStepsAreTheHosts) {
    std::string text = kScene;
    const std::string at = "\"target\": \"scene\",";
    text.replace(text.find(at), at.size(), at + " \"optimizer\": \"sgd\", \"momentum\": 0.5,");
    auto scene = app::load_scene_from_string(text, std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets", "sgd.json");
    expect_two_sgd_steps(device, scene);
}

// The step over a parameter of many chunks that starts off a whole float4 (a mesh's vertices after the small
// parameters' slots): each chunk of 256 floats then has floats before its first whole float4 and after its last,
// which the step takes one by one (optim/kernels.cpp). Two SGD-with-momentum steps against the host, as above.
TEST_F(RendererGradients, StepsOverAParameterOffAFloat4AreTheHosts) {
    const char* text = R"({
      "format": 1,
      "camera": { "eye": [0, 0.9, 3.6], "target": [0, 0, 0], "fov_y": 40, "resolution": [40, 40] },
      "materials": { "clay": { "albedo": [0.8, 0.5, 0.3], "specular": [0.2, 0.2, 0.2], "shininess": 20 } },
      "meshes": [ { "name": "ball", "file": "meshes/ico_sphere.obj", "material": "clay", "scale": 0.8 } ],
      "lights": [ { "name": "key", "type": "point", "position": [1.5, 2.5, 2], "intensity": 9 },
                  { "name": "sun", "type": "directional", "direction": [-0.5, -1, -0.3], "intensity": 0.5 },
                  { "name": "fill", "type": "ambient", "intensity": 0.2 } ],
      "render": { "visibility": "antialias" },
      "optimize": { "target": "scene", "optimizer": "sgd", "momentum": 0.5, "seed": 3,
                    "parameters": { "meshes.ball.vertices": { "perturb": 0.02, "lr": 0.5 } } }
    })";
    auto scene = app::load_scene_from_string(text, std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets", "off.json");
    const app::ParamLayout layout = app::make_layout(scene);
    const uint32_t first = layout.at(app::ParameterKind::mesh_vertices, 0);
    ASSERT_NE(first % 4, 0u) << "the vertices' slot starts off a whole float4: " << first;
    ASSERT_GT(scene.meshes[0].obj_positions.size() * 3, 4u * 256u) << "several chunks";
    EXPECT_EQ(expect_two_sgd_steps(device, scene), scene.meshes[0].obj_positions.size() * 3);
}

// The static chain gathers its texture gradients (optim/texel_gather.h: the taps listed by texel once, summed per
// texel each iteration); the dynamic chain, which rasterizes every iteration, scatters each texel read's adjoint by
// atomics. The two give the same gradient for every texel of three free textures: a phong ball's albedo and a pbr
// floor's base colour and metallic-roughness (two material models, three samples a pixel, one branch taken), at
// 64x64 texels minified and 8x8 magnified.
TEST_F(RendererGradients, GatheredTextureGradientsAreTheScatteredOnes) {
    const char* text = R"({
      "format": 1,
      "camera": { "eye": [0, 0.9, 3.6], "target": [0, 0, 0], "fov_y": 40, "resolution": [48, 40] },
      "materials": {
        "skin":  { "albedo_texture": "textures/colourful_128.png", "specular": [0.2, 0.2, 0.2], "shininess": 20 },
        "floor": { "model": "pbr", "base_color_texture": "textures/colourful_256.png",
                   "metallic_roughness_texture": "textures/metal_rough_16.png" }
      },
      "meshes": [
        { "name": "ball",  "file": "meshes/uv_sphere.obj", "material": "skin", "scale": 0.8 },
        { "name": "floor", "file": "meshes/plane.obj", "material": "floor", "translation": [0, -0.8, 0] }
      ],
      "lights": [ { "name": "key", "type": "point", "position": [1.5, 2.5, 2], "intensity": 9 },
                  { "name": "fill", "type": "ambient", "intensity": 0.15 } ],
      "optimize": { "target": "scene", "parameters": {
        "materials.skin.albedo_texture": { "init": [0.3, 0.6, 0.4], "resolution": [64, 64] },
        "materials.floor.base_color_texture": { "init": [0.5, 0.5, 0.5], "resolution": [8, 8] },
        "materials.floor.metallic_roughness_texture": { "init": [0, 0.5, 0.2], "resolution": [8, 8] } } }
    })";
    auto scene = app::load_scene_from_string(text, std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets", "gather.json");
    std::vector<float> gathered, scattered;
    app::Optimizer(device, scene).evaluate(&gathered);
    app::Optimizer(device, scene, /*diagnosable: the dynamic chain*/ true).evaluate(&scattered);
    ASSERT_EQ(gathered.size(), (64u * 64u + 8u * 8u * 2u) * 3u);
    ASSERT_EQ(scattered.size(), gathered.size());
    double largest = 0;
    for (float x : scattered) largest = std::max(largest, double(std::fabs(x)));
    size_t nonzero[3] = {0, 0, 0};
    for (size_t i = 0; i < gathered.size(); ++i) {
        EXPECT_NEAR(gathered[i], scattered[i], 1e-4 * largest) << "float " << i;
        nonzero[i < 64 * 64 * 3 ? 0 : i < (64 * 64 + 64) * 3 ? 1 : 2] += std::fabs(scattered[i]) > 1e-3 * largest;
    }
    for (size_t n : nonzero) EXPECT_GT(n, 40u);   // each texture is seen: the check is not passing on zeros
}

} // namespace adjoint::test
