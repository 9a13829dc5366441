// The pbr material model: its shading against an independent host implementation of glTF 2.0's BRDF (every
// covered pixel, from the rasterizer's own positions and normals), a scene mixing pbr and phong, gradients of
// every pbr parameter (values and textures) against central differences, and the loader's refusals.
#include "finite_difference.h"
#include "support/device_fixture.h"

#include <adjoint/app/optimization.h>
#include <adjoint/app/renderer.h>

#include <nlohmann/json.hpp>
#include <stb/stb_image_write.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace adjoint::test {

namespace {

using Json = nlohmann::ordered_json;

struct V3 {
    double x, y, z;
};
V3 operator+(V3 a, V3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
V3 operator-(V3 a, V3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
V3 operator*(V3 a, double s) { return {a.x * s, a.y * s, a.z * s}; }
V3 operator*(V3 a, V3 b) { return {a.x * b.x, a.y * b.y, a.z * b.z}; }
double dot(V3 a, V3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
V3 unit(V3 a) { return a * (1.0 / std::sqrt(dot(a, a))); }
V3 v3(float3 a) { return {a.x, a.y, a.z}; }

struct Pbr {
    V3 base;
    double metallic, roughness;
    V3 emissive;
};

// glTF 2.0, appendix B, written from the specification: f = (1 − F)·c_diff/π + F·D·V_smith, times n·l, with
// the renderer's stated floor on the roughness.
V3 gltf_brdf_cos(const Pbr& m, V3 n, V3 v, V3 l) {
    const double nl = dot(n, l);
    if (nl <= 0) return {0, 0, 0};
    const double pi = std::numbers::pi, r = std::max(m.roughness, 0.03), a = r * r, a2 = a * a;
    const V3 h = unit(l + v);
    const double nv = std::max(dot(n, v), 1e-4), nh = std::max(dot(n, h), 0.0), vh = std::max(dot(v, h), 0.0);
    const V3 f0 = V3{0.04, 0.04, 0.04} * (1 - m.metallic) + m.base * m.metallic;
    const V3 fresnel = f0 + (V3{1, 1, 1} - f0) * std::pow(1 - vh, 5);
    const double d = a2 / (pi * std::pow(nh * nh * (a2 - 1) + 1, 2));
    const double vis = 0.5 / (nl * std::sqrt(nv * nv * (1 - a2) + a2) + nv * std::sqrt(nl * nl * (1 - a2) + a2));
    const V3 diffuse = (V3{1, 1, 1} - fresnel) * m.base * ((1 - m.metallic) / pi);
    return (diffuse + fresnel * (d * vis)) * nl;
}

// A sphere over a floor at 40x40 under a point light (radiant intensity 6) and a sun (irradiance 1.5).
Json scene_json(const Json& sphere_material, const Json& floor_material) {
    Json j = Json::parse(R"({
      "format": 1,
      "camera": { "eye": [0, 0.9, 3.6], "target": [0, 0, 0], "fov_y": 40, "resolution": [40, 40] },
      "background": [0.1, 0.1, 0.1],
      "meshes": [
        { "name": "ball",  "file": "meshes/uv_sphere.obj", "material": "ball", "scale": 0.8 },
        { "name": "floor", "file": "meshes/plane.obj", "material": "floor", "translation": [0, -0.8, 0] }
      ],
      "lights": [
        { "name": "key", "type": "point", "position": [1.5, 2.5, 2], "color": [1, 0.9, 0.8], "intensity": 6 },
        { "name": "sun", "type": "directional", "direction": [-0.5, -1, -0.3], "intensity": 1.5 }
      ]
    })");
    j["materials"]["ball"] = sphere_material;
    j["materials"]["floor"] = floor_material;
    return j;
}

app::Scene load(const Json& j) {
    return app::load_scene_from_string(j.dump(), std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets", "pbr.json");
}

// The radiance the host expects at a pixel: pbr on the ball, phong (or pbr) on the floor (below y = −0.79).
V3 expected(const app::SurfaceSample& s, const Pbr& ball, const std::optional<Pbr>& floor_pbr, V3 floor_albedo) {
    const V3 p = v3(s.position), n = v3(s.normal), v = unit(V3{0, 0.9, 3.6} - p);
    const V3 to_key = V3{1.5, 2.5, 2} - p;
    const V3 key = V3{1, 0.9, 0.8} * (6.0 / dot(to_key, to_key));
    const V3 l_key = unit(to_key), l_sun = unit(V3{0.5, 1, 0.3});
    const V3 sun{1.5, 1.5, 1.5};
    const bool on_floor = p.y < -0.79;
    if (on_floor && !floor_pbr)   // phong with no specular: albedo·radiance·cos
        return floor_albedo * key * std::max(dot(n, l_key), 0.0) + floor_albedo * sun * std::max(dot(n, l_sun), 0.0);
    const Pbr& m = on_floor ? *floor_pbr : ball;
    return m.emissive + gltf_brdf_cos(m, n, v, l_key) * key + gltf_brdf_cos(m, n, v, l_sun) * sun;
}

// The largest difference between the render and the host's expectation, relative to max(1, expected).
double worst_difference(Device& device, const app::Scene& scene, const Pbr& ball, const std::optional<Pbr>& floor,
                        V3 floor_albedo, int* covered) {
    const app::LinearImage image = app::SceneRenderer(device, scene).render(0);
    const std::vector<app::SurfaceSample> samples = app::rasterize_view(device, scene, 0);
    double worst = 0;
    *covered = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
        if (!samples[i].covered) continue;
        ++*covered;
        const V3 e = expected(samples[i], ball, floor, floor_albedo);
        const double want[3] = {e.x, e.y, e.z};
        for (int c = 0; c < 3; ++c)
            worst = std::max(worst, std::fabs(image.texels[i][c] - want[c]) / std::max(1.0, std::fabs(want[c])));
    }
    return worst;
}

Json pbr_json(const Pbr& m) {
    return {{"model", "pbr"},
            {"base_color", {m.base.x, m.base.y, m.base.z}},
            {"metallic", m.metallic},
            {"roughness", m.roughness},
            {"emissive", {m.emissive.x, m.emissive.y, m.emissive.z}}};
}

} // namespace

// The floor alone, of material `floor` with a 1x1 normal texture of texel (200, 90, 230) written into `dir`.
Json bent_floor_scene(const std::filesystem::path& dir, const Pbr& floor) {
    std::filesystem::create_directories(dir);
    const unsigned char texel[3] = {200, 90, 230};
    EXPECT_TRUE(stbi_write_png((dir / "n.png").c_str(), 1, 1, 3, texel, 3));
    Json j = scene_json(pbr_json({{0.5, 0.5, 0.5}, 0, 0.5, {0, 0, 0}}), pbr_json(floor));
    j["materials"]["floor"]["normal_texture"] = (dir / "n.png").string();
    j["meshes"].erase(0);   // the floor alone
    return j;
}

class PbrMaterial : public DeviceTest {};

TEST_F(PbrMaterial, ShadingIsTheGltfBrdfAtEveryPixel) {
    // A dielectric, a rough gold metal and a half-metal that glows, over a pbr floor.
    const Pbr cases[] = {{{0.8, 0.3, 0.2}, 0.0, 0.5, {0, 0, 0}},
                         {{1.0, 0.78, 0.34}, 1.0, 0.25, {0, 0, 0}},
                         {{0.2, 0.5, 0.9}, 0.4, 0.8, {0.1, 0.05, 0.0}}};
    const Pbr floor{{0.5, 0.5, 0.5}, 0.0, 0.9, {0, 0, 0}};
    for (const Pbr& ball : cases) {
        SCOPED_TRACE(ball.roughness);
        int covered = 0;
        const double worst =
            worst_difference(device, load(scene_json(pbr_json(ball), pbr_json(floor))), ball, floor, {}, &covered);
        EXPECT_GT(covered, 900);   // of 1600
        EXPECT_LT(worst, 2e-4);
    }
}

TEST_F(PbrMaterial, PbrAndPhongShareAScene) {
    const Pbr ball{{0.9, 0.9, 0.9}, 1.0, 0.3, {0, 0, 0}};
    int covered = 0;
    const double worst = worst_difference(
        device, load(scene_json(pbr_json(ball), {{"albedo", {0.3, 0.6, 0.4}}})), ball, std::nullopt, {0.3, 0.6, 0.4},
        &covered);
    EXPECT_GT(covered, 900);   // of 1600
    EXPECT_LT(worst, 2e-4);
}

// Every pbr parameter, on an untextured ball and a textured floor (base colour and metallic-roughness
// textures), against central differences of the loss.
TEST_F(PbrMaterial, EveryParameterMatchesCentralDifferences) {
    Json j = scene_json(pbr_json({{0.8, 0.3, 0.2}, 0.3, 0.45, {0.05, 0.02, 0.0}}),
                        {{"model", "pbr"},
                         {"base_color_texture", "textures/colourful_128.png"},
                         {"metallic_roughness_texture", "textures/colourful_128.png"},
                         {"normal_texture", "textures/bumps_normal_64.png"}});
    j["lights"].push_back({{"name", "fill"}, {"type", "ambient"}, {"intensity", 0.2}});
    j["optimize"] = Json::parse(R"({
      "target": "scene",
      "parameters": {
        "materials.ball.base_color": { "init": [0.5, 0.5, 0.6] },
        "materials.ball.metallic":   { "init": 0.6 },
        "materials.ball.roughness":  { "init": 0.3 },
        "materials.ball.emissive":   { "init": [0.1, 0.0, 0.05] },
        "materials.floor.base_color_texture":         { "init": [0.4, 0.5, 0.3], "resolution": [4, 4] },
        "materials.floor.metallic_roughness_texture": { "init": [0.0, 0.6, 0.3], "resolution": [4, 4] },
        "materials.floor.normal_texture":             { "init": [0.6, 0.45, 0.9], "resolution": [4, 4] }
      }
    })");
    app::Scene scene = load(j);
    app::Optimizer opt(device, scene);
    std::vector<float> g;
    ASSERT_GT(opt.evaluate(&g), 0.0);
    const std::vector<float> x0 = opt.free_values();
    ASSERT_EQ(x0.size(), 3u + 1 + 1 + 3 + 48 + 48 + 48);
    int nonzero = 0;
    for (size_t i = 0; i < x0.size(); ++i) {
        if (i >= 56 && i < 104 && (i - 56) % 3 == 0) {   // the red channel of metallic-roughness is not read
            EXPECT_EQ(g[i], 0.0f) << "float " << i;
            continue;
        }
        // A step of 1e-2: the loss's rounding, divided by a 2e-3 step, came to 1.7e-6 on NVIDIA's looser arithmetic
        // (approximate exp and pow, fused multiply-adds), over the 3e-7 allowed.
        const double fd = central_difference(opt, x0, i, 1e-2 * std::max(1.0, double(std::fabs(x0[i]))));
        EXPECT_NEAR(g[i], fd, 3e-2 * std::max(std::fabs(fd), std::fabs(double(g[i]))) + 3e-7)
            << "float " << i << " (value " << x0[i] << ")";
        nonzero += std::fabs(fd) > 1e-5;
    }
    EXPECT_GT(nonzero, 100);
}

// A normal texture of one texel on the floor (u along +x, v down the texture along +z, so up the texture
// is −z): red tilts the normal towards +x, green towards −z, glTF's convention; every floor pixel is the
// host's BRDF at the bent normal.
TEST_F(PbrMaterial, ANormalTextureBendsTheNormalAsGltfSays) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("adjoint_normal_" + std::to_string(::getpid()));
    const Pbr floor{{0.6, 0.6, 0.6}, 0.2, 0.4, {0, 0, 0}};
    const app::Scene scene = load(bent_floor_scene(dir, floor));
    const app::LinearImage image = app::SceneRenderer(device, scene).render(0);
    const std::vector<app::SurfaceSample> samples = app::rasterize_view(device, scene, 0);
    std::filesystem::remove_all(dir);
    const V3 bent = unit(V3{1, 0, 0} * (2 * 200 / 255.0 - 1) + V3{0, 0, -1} * (2 * 90 / 255.0 - 1) +
                         V3{0, 1, 0} * (2 * 230 / 255.0 - 1));
    double worst = 0;
    int covered = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
        if (!samples[i].covered) continue;
        ++covered;
        app::SurfaceSample s = samples[i];
        s.normal = {float(bent.x), float(bent.y), float(bent.z)};
        const V3 e = expected(s, floor, floor, {});
        const double want[3] = {e.x, e.y, e.z};
        for (int c = 0; c < 3; ++c)
            worst = std::max(worst, std::fabs(image.texels[i][c] - want[c]) / std::max(1.0, std::fabs(want[c])));
    }
    EXPECT_GT(covered, 500);
    EXPECT_LT(worst, 5e-4);
}

// A normal texel of (0.5, 0.5, 0.5) is no direction (2 texel - 1 = 0): the surface keeps its own normal, where
// normalizing it rendered black (NaN). An init fill of no direction is refused: its gradient is 0 and the run
// would never move.
TEST_F(PbrMaterial, ANormalTexelOfNoDirectionKeepsTheSurfacesNormal) {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("adjoint_flat_" + std::to_string(::getpid()));
    const Pbr floor{{0.6, 0.6, 0.6}, 0.2, 0.4, {0, 0, 0}};
    Json j = bent_floor_scene(dir, floor);
    app::Scene scene = load(j);
    const app::Parameter p = app::find_parameter(scene, "materials.floor.normal_texture").value();
    app::set_parameter_value(scene, p, std::vector<float>(p.size, 0.5f));
    const app::LinearImage image = app::SceneRenderer(device, scene).render(0);
    const std::vector<app::SurfaceSample> samples = app::rasterize_view(device, scene, 0);
    double worst = 0;
    int covered = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
        if (!samples[i].covered) continue;
        ++covered;
        const V3 e = expected(samples[i], floor, floor, {});
        const double want[3] = {e.x, e.y, e.z};
        for (int c = 0; c < 3; ++c) {
            ASSERT_TRUE(std::isfinite(image.texels[i][c])) << "pixel " << i;
            worst = std::max(worst, std::fabs(image.texels[i][c] - want[c]) / std::max(1.0, std::fabs(want[c])));
        }
    }
    EXPECT_GT(covered, 500);
    EXPECT_LT(worst, 5e-4);
    j["optimize"] = {{"parameters", {{"materials.floor.normal_texture", {{"init", {0.5, 0.5, 0.5}}}}}}};
    try {
        load(j);
        ADD_FAILURE() << "a normal texture's init of no direction was taken";
    } catch (const std::exception& e) {
        EXPECT_EQ(std::string(e.what()), "pbr.json: optimize.parameters[\"materials.floor.normal_texture\"].init: "
                                         "expected a direction (2 texel - 1, tangent space): this fill is none; a flat "
                                         "normal texture is [0.5, 0.5, 1]");
    }
    j["optimize"]["parameters"]["materials.floor.normal_texture"]["init"] = {0.5, 0.5, 1};
    EXPECT_NO_THROW(load(j));
    std::filesystem::remove_all(dir);
}

TEST(PbrMaterialFile, RefusalsNameTheKey) {
    const auto error_of = [](const Json& material) {
        try {
            load(scene_json(material, {{"albedo", {0.5, 0.5, 0.5}}}));
        } catch (const app::SceneError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(error_of({{"model", "pbr"}, {"base_color", {1, 1, 1}}, {"metallic", 1.5}}),
              "pbr.json: materials.ball.metallic: expected a number in [0, 1]");
    EXPECT_EQ(error_of({{"model", "pbr"}, {"base_color", {1, 1, 1}}, {"roughness", -0.1}}),
              "pbr.json: materials.ball.roughness: expected a number in [0, 1]");
    EXPECT_EQ(error_of({{"model", "pbr"}, {"metallic", 0.5}}),
              "pbr.json: materials.ball: needs base_color or base_color_texture");
    EXPECT_EQ(error_of({{"model", "pbr"}, {"base_color", {1, 1, 1}}, {"albedo", {1, 1, 1}}}).rfind(
                  "pbr.json: materials.ball.albedo: unknown key (expected one of: model, base_color, metallic, roughness, "
                  "emissive, base_color_texture, metallic_roughness_texture, normal_texture)", 0),
              0u);
    EXPECT_EQ(error_of({{"model", "pbr"}, {"base_color", {1, 1, 1}}, {"normal_texture", "n.png"}}),
              "pbr.json: materials.ball.normal_texture: cannot read n.png: No such file or directory");
    EXPECT_EQ(error_of({{"model", "lambert"}, {"albedo", {1, 1, 1}}}),
              "pbr.json: materials.ball.model: unknown material model \"lambert\" (there are: phong, pbr)");
    EXPECT_EQ(error_of({{"model", "pbr"}, {"base_color", {1, 1, 1}}, {"base_color_texture", "textures/colourful_128.png"}}),
              "pbr.json: materials.ball: give base_color or base_color_texture, not both");

    // Parameters name the model's properties; another model's are refused with what this one has.
    Json j = scene_json(pbr_json({{1, 1, 1}, 0, 0.5, {0, 0, 0}}), {{"albedo", {0.5, 0.5, 0.5}}});
    j["optimize"] = {{"parameters", {{"materials.ball.albedo", {{"perturb", 0.1}}}}}};
    try {
        load(j);
        ADD_FAILURE() << "no error";
    } catch (const app::SceneError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "pbr.json: optimize.parameters[\"materials.ball.albedo\"]: material ball is a pbr material; albedo "
                  "belongs to phong materials (pbr has base_color, metallic, roughness, emissive, base_color_texture, "
                  "metallic_roughness_texture, normal_texture)");
    }
    j["optimize"] = {{"parameters", {{"materials.ball.metallic", {{"init", 2}}}}}};
    EXPECT_THROW(load(j), app::SceneError);
    j["optimize"] = {{"parameters", {{"materials.ball.roughness", {{"init", 0.2}}}}}};
    const app::Scene ok = load(j);
    EXPECT_EQ(ok.optimize->parameters[0].init, std::vector<float>{0.2f});
    EXPECT_EQ(ok.optimize->parameters[0].size, 1u);
}

} // namespace adjoint::test

namespace adjoint::test {

// The demo assets/scenes/pbr-lights.json, reduced (64x64, 200 iterations): the material comes back.
TEST_F(PbrMaterial, TheDemoRecoversBaseColourMetallicAndRoughness) {
    const auto file = std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets/scenes/pbr-lights.json";
    app::Scene scene = app::load_scene(file, {.resolution = app::Resolution{64, 64}});
    scene.optimize->iterations = 200;
    app::Optimizer opt(device, scene);
    while (opt.iteration() < opt.total_iterations()) opt.step();
    const auto params = opt.parameters();
    ASSERT_EQ(params.size(), 3u);
    const std::vector<float> base = params[0].value, truth{0.8f, 0.35f, 0.2f};
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(base[c], truth[c], 0.03) << "base colour " << c;
    EXPECT_NEAR(params[1].value[0], 0.7f, 0.05) << "metallic";
    EXPECT_NEAR(params[2].value[0], 0.35f, 0.05) << "roughness";
}

} // namespace adjoint::test
