// The sh light: its basis is Sloan's real orthonormal basis (checked on the host), a Lambertian sphere under it
// shows the brute-force cosine integral of the same radiance at every pixel, a smooth pbr metal reflects it,
// gradients of its coefficients, colour and intensity match central differences, and the loader refuses
// coefficient counts other than 4, 9 and 16.
#include "finite_difference.h"
#include "support/device_fixture.h"

#include <adjoint/app/optimization.h>
#include <adjoint/app/renderer.h>

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <numbers>

namespace adjoint::test {

namespace {

using Json = nlohmann::ordered_json;
constexpr double kPi = std::numbers::pi;

// Sloan's "Stupid Spherical Harmonics Tricks", appendix A2, written out on the host.
std::array<double, 16> sh_basis(double x, double y, double z) {
    return {0.282094791773878,
            -0.488602511902920 * y, 0.488602511902920 * z, -0.488602511902920 * x,
            1.092548430592079 * x * y, -1.092548430592079 * y * z, 0.315391565252520 * (3 * z * z - 1),
            -1.092548430592079 * x * z, 0.546274215296040 * (x * x - y * y),
            -0.590043589926644 * y * (3 * x * x - y * y), 2.890611442640554 * x * y * z,
            -0.457045799464466 * y * (5 * z * z - 1), 0.373176332590115 * z * (5 * z * z - 3),
            -0.457045799464466 * x * (5 * z * z - 1), 1.445305721320277 * z * (x * x - y * y),
            -0.590043589926644 * x * (x * x - 3 * y * y)};
}

// The sphere by (θ, φ) cells: f(direction, solid angle).
template <typename F>
void over_sphere(int n, F f) {
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < 2 * n; ++j) {
            const double th = kPi * (i + 0.5) / n, ph = kPi * (j + 0.5) / n;
            const double d[3] = {std::sin(th) * std::cos(ph), std::cos(th), std::sin(th) * std::sin(ph)};
            f(d, std::sin(th) * (kPi / n) * (kPi / n));
        }
}

// Nine coefficients of a sky that is brighter above and warm on one side (radiance > 0 everywhere).
const std::vector<std::array<double, 3>> kCoefficients = {
    {1.6, 1.5, 1.4}, {-0.5, -0.45, -0.3}, {0.2, 0.1, 0.0}, {-0.3, -0.1, 0.1},
    {0.1, 0.05, 0.0}, {-0.08, -0.05, 0.0}, {0.1, 0.1, 0.12}, {0.05, 0.0, -0.05}, {0.06, 0.04, 0.02}};

std::array<double, 3> radiance(const double d[3]) {
    const auto y = sh_basis(d[0], d[1], d[2]);
    std::array<double, 3> L{};
    for (size_t i = 0; i < kCoefficients.size(); ++i)
        for (int c = 0; c < 3; ++c) L[c] += kCoefficients[i][c] * y[i];
    return L;
}

Json sh_scene(const Json& material) {
    Json j = Json::parse(R"({
      "format": 1,
      "camera": { "eye": [0, 0.5, 3.2], "target": [0, 0, 0], "fov_y": 40, "resolution": [40, 40] },
      "meshes": [ { "name": "ball", "file": "meshes/uv_sphere.obj", "material": "ball" } ]
    })");
    j["materials"]["ball"] = material;
    Json c = Json::array();
    for (const auto& rgb : kCoefficients) c.push_back({rgb[0], rgb[1], rgb[2]});
    j["lights"] = {{{"name", "sky"}, {"type", "sh"}, {"coefficients", c}, {"intensity", 1.0}}};
    return j;
}

app::Scene load(const Json& j) {
    return app::load_scene_from_string(j.dump(), std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets", "sh.json");
}

} // namespace

TEST(ShBasis, IsOrthonormal) {
    std::array<std::array<double, 16>, 16> gram{};
    over_sphere(400, [&](const double d[3], double dw) {
        const auto y = sh_basis(d[0], d[1], d[2]);
        for (int a = 0; a < 16; ++a)
            for (int b = 0; b < 16; ++b) gram[a][b] += y[a] * y[b] * dw;
    });
    for (int a = 0; a < 16; ++a)
        for (int b = 0; b < 16; ++b) EXPECT_NEAR(gram[a][b], a == b ? 1.0 : 0.0, 2e-3) << a << ", " << b;
}

class ShLight : public DeviceTest {};

// A white Lambertian (phong, albedo 1) sphere: each pixel is (1/π)∫ L(ω) max(n·ω, 0) dω, integrated on the host.
TEST_F(ShLight, LambertIsTheCosineIntegralOfTheRadiance) {
    const app::Scene scene = load(sh_scene({{"albedo", {1, 1, 1}}}));
    const app::LinearImage image = app::SceneRenderer(device, scene).render(0);
    const std::vector<app::SurfaceSample> samples = app::rasterize_view(device, scene, 0);
    double worst = 0;
    int covered = 0;
    for (size_t i = 0; i < samples.size(); i += 7) {   // every 7th pixel: the integral is the slow part
        if (!samples[i].covered) continue;
        ++covered;
        const double n[3] = {samples[i].normal.x, samples[i].normal.y, samples[i].normal.z};
        std::array<double, 3> e{};
        over_sphere(120, [&](const double d[3], double dw) {
            const double cosine = n[0] * d[0] + n[1] * d[1] + n[2] * d[2];
            if (cosine <= 0) return;
            const auto L = radiance(d);
            for (int c = 0; c < 3; ++c) e[c] += L[c] * cosine * dw / kPi;
        });
        for (int c = 0; c < 3; ++c) worst = std::max(worst, std::fabs(image.texels[i][c] - e[c]) / e[c]);
    }
    EXPECT_GT(covered, 80);
    EXPECT_LT(worst, 5e-3);   // the band-2 truncation of the clamped cosine is exact; the rest is quadrature
}

// A smooth white metal (roughness at the floor): the mirror direction's radiance times the split sum's
// (A + B) at F0 = 1 (Karis's fit), and nearly the radiance itself.
TEST_F(ShLight, ASmoothMetalMirrorsTheSky) {
    const app::Scene scene = load(sh_scene({{"model", "pbr"}, {"base_color", {1, 1, 1}}, {"metallic", 1}, {"roughness", 0}}));
    const app::LinearImage image = app::SceneRenderer(device, scene).render(0);
    const std::vector<app::SurfaceSample> samples = app::rasterize_view(device, scene, 0);
    double worst = 0;
    int covered = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
        if (!samples[i].covered) continue;
        const double n[3] = {samples[i].normal.x, samples[i].normal.y, samples[i].normal.z};
        double v[3] = {0 - samples[i].position.x, 0.5 - samples[i].position.y, 3.2 - samples[i].position.z};
        const double len = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        for (double& x : v) x /= len;
        const double nv = n[0] * v[0] + n[1] * v[1] + n[2] * v[2];
        if (nv < 0.3) continue;   // grazing pixels: the split sum's fit is coarsest there
        ++covered;
        const double r[3] = {2 * nv * n[0] - v[0], 2 * nv * n[1] - v[1], 2 * nv * n[2] - v[2]};
        const auto L = radiance(r);
        for (int c = 0; c < 3; ++c) worst = std::max(worst, std::fabs(image.texels[i][c] - L[c]) / L[c]);
    }
    EXPECT_GT(covered, 300);
    EXPECT_LT(worst, 0.03);
}

TEST_F(ShLight, GradientsMatchCentralDifferences) {
    Json j = sh_scene({{"model", "pbr"}, {"base_color", {0.7, 0.5, 0.3}}, {"metallic", 0.4}, {"roughness", 0.35}});
    Json start = Json::array();
    for (const auto& rgb : kCoefficients) start.push_back({rgb[0] * 0.8 + 0.05, rgb[1] * 1.1, rgb[2] * 0.9 - 0.02});
    j["optimize"] = {{"target", "scene"},
                     {"parameters",
                      {{"lights.sky.coefficients", {{"init", start}}},
                       {"lights.sky.intensity", {{"init", 1.2}}},
                       {"materials.ball.roughness", {{"init", 0.5}}}}}};
    app::Scene scene = load(j);
    app::Optimizer opt(device, scene);
    std::vector<float> g;
    ASSERT_GT(opt.evaluate(&g), 0.0);
    const std::vector<float> x0 = opt.free_values();
    ASSERT_EQ(x0.size(), 27u + 1 + 1);
    for (size_t i = 0; i < x0.size(); ++i) {
        const double fd = central_difference(opt, x0, i, 1e-3 * std::max(1.0, double(std::fabs(x0[i]))));
        EXPECT_NEAR(g[i], fd, 3e-2 * std::max(std::fabs(fd), std::fabs(double(g[i]))) + 3e-7) << "float " << i;
        EXPECT_GT(std::fabs(fd), 1e-6) << "float " << i;
    }
}

TEST(ShLightFile, CoefficientCountsAreFourNineOrSixteen) {
    for (size_t n : {0, 1, 5, 10, 25}) {
        Json j = sh_scene({{"albedo", {1, 1, 1}}});
        j["lights"][0]["coefficients"] = Json::array();
        for (size_t i = 0; i < n; ++i) j["lights"][0]["coefficients"].push_back({0.1, 0.1, 0.1});
        try {
            load(j);
            ADD_FAILURE() << n << " coefficients accepted";
        } catch (const app::SceneError& e) {
            EXPECT_EQ(std::string(e.what()), "sh.json: lights[0].coefficients: expected 4, 9 or 16 coefficients [r, g, b] "
                                             "(bands 0-1, 0-2 or 0-3), got " + std::to_string(n));
        }
    }
    Json j = sh_scene({{"albedo", {1, 1, 1}}});
    j["lights"][0].erase("coefficients");
    EXPECT_THROW(load(j), app::SceneError);
    j = sh_scene({{"albedo", {1, 1, 1}}});
    j["optimize"] = {{"parameters", {{"lights.sky.position", {{"perturb", 0.1}}}}}};
    try {
        load(j);
        ADD_FAILURE() << "no error";
    } catch (const app::SceneError& e) {
        EXPECT_EQ(std::string(e.what()), "sh.json: optimize.parameters[\"lights.sky.position\"]: light sky is an sh light; "
                                         "only point lights have a position");
    }
}

} // namespace adjoint::test
