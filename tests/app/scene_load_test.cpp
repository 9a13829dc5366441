// Scene loading, good paths: the contract's example scene, views, meshes, materials, textures, matrices.
#include "app/scene_fixture.h"
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <numbers>
#include <sstream>

namespace adjoint::app::test {
namespace {

constexpr double pi = std::numbers::pi;

float srgb(int v) {
    const double c = v / 255.0;
    return static_cast<float>(c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4));
}

float4 apply(const float4x4& m, float4 p) {
    float4 r;
    for (size_t row = 0; row < 4; ++row) r[row] = m[0][row] * p.x + m[1][row] * p.y + m[2][row] * p.z + m[3][row] * p.w;
    return r;
}

void expect_near3(float3 actual, float3 expected, float tolerance = 1e-5f) {
    EXPECT_NEAR(actual.x, expected.x, tolerance);
    EXPECT_NEAR(actual.y, expected.y, tolerance);
    EXPECT_NEAR(actual.z, expected.z, tolerance);
}

// The scene of scene-format.md, with its files (a cube for the bunny, a one-quad floor with an MTL).
class ContractExample : public SceneFiles {
protected:
    void write_files() {
        write("meshes/bunny.obj", cube_obj);
        write("meshes/plane.obj", "mtllib plane.mtl\nv -1 0 -1\nv 1 0 -1\nv 1 0 1\nv -1 0 1\n"
                                  "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvn 0 1 0\n"
                                  "usemtl tiles\nf 1/1/1 4/4/1 3/3/1\nusemtl grass\nf 1/1/1 3/3/1 2/2/1\n");
        write("meshes/plane.mtl", "newmtl unused\nKd 1 0 0\n\nnewmtl tiles\nKd 0.2 0.3 0.4\nKs 0.1 0.1 0.1\nNs 10\n\n"
                                  "newmtl grass\nmap_Kd ../textures/grass.png\n");
        write_png("textures/fur.png", 2, 1, 3, {188, 188, 188, 0, 255, 128});
        write_solid_png("textures/grass.png", 4, 2, 0, 128, 0);
    }
    static constexpr const char* text = R"({
      "format": 1,
      "_comment": "the example of scene-format.md",
      "camera": { "eye": [0, 0.4, 3], "target": [0, 0, 0], "up": [0, 1, 0], "fov_y": 40,
                  "resolution": [256, 256], "near": 0.05, "far": 100 },
      "views": { "orbit": { "count": 8, "elevation": [-15, 45] } },
      "background": [0.05, 0.05, 0.08],
      "materials": {
        "fur":  { "albedo_texture": "textures/fur.png", "specular": [0.04, 0.04, 0.04], "shininess": 32 },
        "base": { "albedo": [0.6, 0.6, 0.65] }
      },
      "meshes": [
        { "name": "bunny", "file": "meshes/bunny.obj", "material": "fur",
          "translation": [0, -0.1, 0], "rotation": { "axis": [0, 1, 0], "angle": 20 }, "scale": 1.0 },
        { "name": "floor", "file": "meshes/plane.obj", "material": "mtl" }
      ],
      "lights": [
        { "name": "key",  "type": "point",       "position": [2, 3, 2], "color": [1, 1, 1], "intensity": 12 },
        { "name": "sun",  "type": "directional", "direction": [-1, -1, -0.5], "color": [1, 0.95, 0.9], "intensity": 1 },
        { "name": "fill", "type": "ambient",     "color": [1, 1, 1], "intensity": 0.1 }
      ],
      "render": { "visibility": "antialias", "soft": { "sigma": 1e-4, "gamma": 1e-4 } },
      "optimize": {
        "target": "scene",
        "parameters": {
          "materials.fur.albedo_texture": { "init": [0.5, 0.5, 0.5], "lr": 0.03 },
          "lights.key.position":          { "init": [0, 2, 3], "lr": 0.02 },
          "meshes.bunny.rotation":        { "perturb": 25, "lr": 0.01 }
        },
        "loss": "l2", "optimizer": "adam", "lr_decay": 0.999, "iterations": 300,
        "views_per_iteration": 1, "seed": 0,
        "regularizers": { "laplacian": 0.0 }
      }
    })";
};

TEST_F(ContractExample, LoadsEveryPart) {
    write_files();
    write("scene.json", text);
    const Scene scene = load_scene(dir() / "scene.json");
    EXPECT_EQ(scene.source_file, dir() / "scene.json");
    EXPECT_EQ(scene.display_name, (dir() / "scene.json").string());

    expect_near3(scene.camera.eye, {0, 0.4f, 3});
    EXPECT_EQ(scene.camera.fov_y, 40);
    EXPECT_EQ(scene.camera.width, 256u);
    EXPECT_EQ(scene.camera.height, 256u);
    EXPECT_FLOAT_EQ(scene.camera.near, 0.05f);
    EXPECT_EQ(scene.camera.far, 100);
    EXPECT_EQ(scene.views.size(), 8u);
    expect_near3(scene.background, {0.05f, 0.05f, 0.08f});

    // fur, base, then the floor's MTL materials its faces use, in MTL order (not "unused").
    ASSERT_EQ(scene.materials.size(), 4u);
    EXPECT_EQ(scene.materials[0].name, "fur");
    EXPECT_EQ(scene.materials[0].texture("albedo_texture"), 0);
    expect_near3(scene.materials[0].color("specular"), {0.04f, 0.04f, 0.04f});
    EXPECT_EQ(scene.materials[0].value("shininess")[0], 32);
    EXPECT_EQ(scene.materials[1].name, "base");
    EXPECT_EQ(scene.materials[1].texture("albedo_texture"), -1);
    expect_near3(scene.materials[1].color("albedo"), {0.6f, 0.6f, 0.65f});
    expect_near3(scene.materials[1].color("specular"), {0, 0, 0});
    EXPECT_EQ(scene.materials[2].name, "floor/tiles");
    expect_near3(scene.materials[2].color("albedo"), {0.2f, 0.3f, 0.4f});
    expect_near3(scene.materials[2].color("specular"), {0.1f, 0.1f, 0.1f});
    EXPECT_EQ(scene.materials[2].value("shininess")[0], 10);
    EXPECT_EQ(scene.materials[3].name, "floor/grass");
    EXPECT_EQ(scene.materials[3].texture("albedo_texture"), 1);
    expect_near3(scene.materials[3].color("specular"), {0, 0, 0}); // no Ks: the scene default, not tinyobj's
    EXPECT_EQ(scene.materials[3].value("shininess")[0], 32);           // no Ns: 32, not tinyobj's 1
    ASSERT_EQ(scene.textures.size(), 2u);
    EXPECT_EQ(scene.textures[0].source, "textures/fur.png");
    EXPECT_EQ(scene.textures[1].source, "textures/grass.png");
    EXPECT_EQ(scene.textures[1].width, 4u);
    EXPECT_NEAR(scene.textures[1].texels[5].y, srgb(128), 1e-6);

    ASSERT_EQ(scene.meshes.size(), 2u);
    const Mesh& bunny = scene.meshes[0];
    EXPECT_EQ(bunny.name, "bunny");
    EXPECT_EQ(bunny.file, "meshes/bunny.obj");
    expect_near3(bunny.transform.translation, {0, -0.1f, 0});
    EXPECT_NEAR(bunny.transform.rotation.w, std::cos(10 * pi / 180), 1e-6);
    EXPECT_NEAR(bunny.transform.rotation.y, std::sin(10 * pi / 180), 1e-6);
    EXPECT_EQ(bunny.transform.rotation.x, 0);
    expect_near3(bunny.transform.scale, {1, 1, 1});
    EXPECT_EQ(bunny.triangles.size(), 12u);
    EXPECT_EQ(std::vector<uint32_t>(12, 0u), bunny.triangle_materials);
    const Mesh& floor = scene.meshes[1];
    EXPECT_EQ((std::vector<uint32_t>{2, 3}), floor.triangle_materials);
    EXPECT_TRUE(floor.has_texcoords);

    ASSERT_EQ(scene.lights.size(), 3u);
    EXPECT_EQ(scene.lights[0].type, "point");
    EXPECT_EQ(scene.lights[0].intensity, 12);
    expect_near3(scene.lights[0].position, {2, 3, 2});
    EXPECT_EQ(scene.lights[1].type, "directional");
    expect_near3(scene.lights[1].direction, {-1 / 1.5f, -1 / 1.5f, -0.5f / 1.5f}); // normalised
    expect_near3(scene.lights[1].color, {1, 0.95f, 0.9f});
    EXPECT_EQ(scene.lights[2].type, "ambient");
    EXPECT_FLOAT_EQ(scene.lights[2].intensity, 0.1f);

    EXPECT_EQ(scene.render.visibility, Visibility::antialias);
    EXPECT_FLOAT_EQ(scene.render.soft_sigma, 1e-4f);

    ASSERT_TRUE(scene.optimize);
    const Optimization& o = *scene.optimize;
    EXPECT_TRUE(o.target_is_scene);
    ASSERT_EQ(o.parameters.size(), 3u);
    // File order, not alphabetical.
    EXPECT_EQ(o.parameters[0].path, "materials.fur.albedo_texture");
    EXPECT_EQ(o.parameters[0].kind, ParameterKind::material_texture);
    EXPECT_EQ(o.parameters[0].target, 0u);
    EXPECT_EQ(o.parameters[0].size, 2u * 1u * 3u);
    EXPECT_EQ(o.parameters[0].texture_width, 2u);
    EXPECT_EQ(o.parameters[0].init, std::vector<float>(6, 0.5f));
    EXPECT_FLOAT_EQ(o.parameters[0].lr, 0.03f);
    EXPECT_FALSE(o.parameters[0].perturb);
    EXPECT_EQ(o.parameters[1].kind, ParameterKind::light_position);
    EXPECT_EQ(o.parameters[1].init, (std::vector<float>{0, 2, 3}));
    EXPECT_EQ(o.parameters[2].kind, ParameterKind::mesh_rotation);
    EXPECT_EQ(o.parameters[2].size, 4u);
    EXPECT_TRUE(o.parameters[2].init.empty());
    EXPECT_EQ(o.parameters[2].perturb, 25.0f);
    EXPECT_TRUE(is_geometry_parameter(o.parameters[2].kind));
    EXPECT_FALSE(is_geometry_parameter(o.parameters[0].kind));
    EXPECT_EQ(o.loss, "l2");
    EXPECT_EQ(o.optimizer, "adam");
    EXPECT_FLOAT_EQ(o.setting("betas", 0), 0.9f);
    EXPECT_FLOAT_EQ(o.setting("betas", 1), 0.999f);
    EXPECT_FLOAT_EQ(o.lr_decay, 0.999f);
    EXPECT_EQ(o.iterations, 300u);
    EXPECT_EQ(o.views_per_iteration, 1u);
    EXPECT_EQ(o.seed, 0u);
    EXPECT_EQ(o.laplacian, 0);
}

TEST_F(SceneFiles, DefaultsWhereTheFileIsSilent) {
    const Scene scene = load(minimal_scene());
    EXPECT_EQ(scene.camera.up, float3(0, 1, 0));
    EXPECT_EQ(scene.camera.fov_y, 40);
    EXPECT_FLOAT_EQ(scene.camera.near, 0.05f);
    EXPECT_EQ(scene.camera.far, 100);
    ASSERT_EQ(scene.views.size(), 1u);
    EXPECT_EQ(scene.views[0].eye, scene.camera.eye);
    EXPECT_EQ(scene.background, float3(0, 0, 0));
    EXPECT_EQ(scene.materials[0].color("specular"), float3(0, 0, 0));
    EXPECT_EQ(scene.materials[0].value("shininess")[0], 32);
    EXPECT_EQ(scene.lights[0].color, float3(1, 1, 1));
    EXPECT_EQ(scene.lights[0].intensity, 1);
    EXPECT_EQ(scene.render.visibility, Visibility::hard);
    EXPECT_FLOAT_EQ(scene.render.soft_gamma, 0.1f);   // a colour loss moves silhouettes (geometry_demo_test)
    EXPECT_FLOAT_EQ(scene.render.soft_sigma, 1e-4f);
    EXPECT_FALSE(scene.optimize);
    EXPECT_FALSE(scene.meshes[0].vertex_colors);

    Json j = minimal_scene();
    j["optimize"] = Json::parse(R"({"parameters": {"materials.base.albedo": {"perturb": 0.2}}})");
    const Optimization o = *load(j).optimize;
    EXPECT_TRUE(o.target_is_scene);
    EXPECT_FLOAT_EQ(o.parameters[0].lr, 0.01f);
    EXPECT_EQ(o.loss, "l2");
    EXPECT_EQ(o.optimizer, "adam");
    EXPECT_FLOAT_EQ(o.setting("eps"), 1e-8f);
    EXPECT_FLOAT_EQ(o.lr_decay, 1);
    EXPECT_EQ(o.iterations, 100u);
    EXPECT_EQ(o.views_per_iteration, 1u);
    EXPECT_EQ(o.edge_length, 0);

    j["optimize"]["optimizer"] = "sgd";
    EXPECT_FLOAT_EQ(load(j).optimize->setting("momentum"), 0.9f);
    j["optimize"]["momentum"] = 0.5;
    EXPECT_FLOAT_EQ(load(j).optimize->setting("momentum"), 0.5f);
    EXPECT_THROW(load(j).optimize->setting("eps"), Error);   // sgd has no eps
}

TEST_F(SceneFiles, OrbitViewsCircleTheTargetAtTheCamerasDistance) {
    Json j = minimal_scene();
    j["camera"]["eye"] = {1, 2, 4};
    j["camera"]["target"] = {1, 0, 0};
    j["views"] = Json::parse(R"({"orbit": {"count": 8, "elevation": [-15, 45]}})");
    const Scene scene = load(j);
    ASSERT_EQ(scene.views.size(), 8u);
    const double distance = std::sqrt(4.0 + 16.0);
    for (size_t i = 0; i < 8; ++i) {
        const Camera& view = scene.views[i];
        const double dx = view.eye.x - 1, dy = view.eye.y, dz = view.eye.z;
        EXPECT_NEAR(std::sqrt(dx * dx + dy * dy + dz * dz), distance, 1e-5) << i;
        EXPECT_NEAR(std::asin(dy / distance) * 180 / pi, -15 + 60.0 * i / 7, 1e-4) << i;
        // Azimuth around +y, starting from the camera's own (it looks from +z: azimuth 0).
        double azimuth = std::atan2(dx, dz) * 180 / pi;
        if (azimuth < -1e-3) azimuth += 360;
        EXPECT_NEAR(azimuth, 45.0 * i, 1e-3) << i;
        EXPECT_EQ(view.target, scene.camera.target);
        EXPECT_EQ(view.width, 8u);
        EXPECT_EQ(view.fov_y, 40);
    }
    // Without an elevation range every view keeps the camera's elevation; one view sits mid-range.
    j["views"] = Json::parse(R"({"orbit": {"count": 3}})");
    for (const Camera& view : load(j).views) EXPECT_NEAR(view.eye.y, 2, 1e-5);
    j["views"] = Json::parse(R"({"orbit": {"count": 1, "elevation": [0, 30]}})");
    EXPECT_NEAR(load(j).views[0].eye.y, distance * std::sin(15 * pi / 180), 1e-5);
}

TEST_F(SceneFiles, ViewListTakesDefaultsFromTheCamera) {
    Json j = minimal_scene();
    j["camera"]["fov_y"] = 30;
    j["views"] = Json::parse(R"([{"eye": [0, 0, 3]}, {"eye": [3, 0, 0], "target": [0, 1, 0], "fov_y": 60}])");
    const Scene scene = load(j);
    ASSERT_EQ(scene.views.size(), 2u);
    EXPECT_EQ(scene.views[0].eye, float3(0, 0, 3));
    EXPECT_EQ(scene.views[0].target, float3(0, 0, 0));
    EXPECT_EQ(scene.views[0].fov_y, 30);
    EXPECT_EQ(scene.views[1].target, float3(0, 1, 0));
    EXPECT_EQ(scene.views[1].fov_y, 60);
    EXPECT_EQ(scene.views[1].width, 8u);
}

TEST_F(SceneFiles, CubeCornersAreUnifiedPerIndexTriple) {
    const Json j = minimal_scene();
    const Scene scene = load(j);
    const Mesh& cube = scene.meshes[0];
    EXPECT_EQ(cube.obj_positions.size(), 8u);
    EXPECT_EQ(cube.positions.size(), 24u); // each face's corners differ in normal
    EXPECT_EQ(cube.triangles.size(), 12u);
    EXPECT_TRUE(cube.has_texcoords);
    EXPECT_FALSE(cube.normals_computed);
    EXPECT_FALSE(cube.has_colors);
    for (size_t v = 0; v < cube.positions.size(); ++v) {
        EXPECT_EQ(cube.positions[v], cube.obj_positions[cube.position_ids[v]]);
        EXPECT_EQ(cube.colors[v], float3(1, 1, 1));
    }
    // The first face, f 1/1/1 4/2/1 3/3/1 2/4/1: tinyobjloader splits it into (1, 4, 2) and (4, 3, 2),
    // keeping the winding; vertices are numbered in first use.
    EXPECT_EQ(cube.triangles[0], uint3(0, 1, 2));
    EXPECT_EQ(cube.triangles[1], uint3(1, 3, 2));
    EXPECT_EQ(cube.position_ids[1], 3u);
    EXPECT_EQ(cube.position_ids[2], 1u);
    EXPECT_EQ(cube.normals[1], float3(0, 0, -1));
    // vt 1 0 → (1, 1 − 0): the flip puts v = 0 on the image's last row.
    EXPECT_EQ(cube.texcoords[1], float2(1, 1));
    EXPECT_EQ(cube.texcoords[2], float2(0, 0));
    EXPECT_EQ(cube.texcoords[3], float2(1, 0));

    // Without normals or texcoords the triples collapse to the 8 positions, with computed normals
    // pointing outwards. Positions 1 and 7 are in both triangles of each of their quads, so the area
    // weights are equal and their normals are exact diagonals; the others lean to the face where they
    // are in both triangles.
    write("meshes/cube.obj", bare_cube_obj);
    const Mesh bare = load(j).meshes[0];
    EXPECT_EQ(bare.positions.size(), 8u);
    EXPECT_TRUE(bare.normals_computed);
    EXPECT_FALSE(bare.has_texcoords);
    for (size_t v = 0; v < 8; ++v) {
        const float3 p = bare.positions[v], n = bare.normals[v];
        EXPECT_NEAR(length3(n), 1, 1e-6);
        for (size_t c = 0; c < 3; ++c) EXPECT_GT(n[c] * p[c], 0.3f) << v;
        EXPECT_EQ(bare.texcoords[v], float2(0, 0));
        if (bare.position_ids[v] == 0 || bare.position_ids[v] == 6) {
            const float k = 1 / std::sqrt(3.0f);
            expect_near3(n, float3(p.x * k, p.y * k, p.z * k));
        }
    }
}

TEST_F(SceneFiles, ComputedNormalsAreAreaWeightedAndSharedAcrossSeams) {
    // Two faces share position 1 but with different texcoords (a seam): area 0.5 facing +z, area 2
    // facing +y. The shared position's normal is (0, 4, 1)/√17 on both sides of the seam.
    Json j = minimal_scene();
    write("meshes/tent.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 2\nv 2 0 0\n"
                             "vt 0 0\nvt 1 0\nvt 0 1\nvt 0.5 0.5\nf 1/1 2/2 3/3\nf 1/4 4/2 5/3\n");
    j["meshes"][0]["file"] = "meshes/tent.obj";
    const Mesh tent = load(j).meshes[0];
    EXPECT_TRUE(tent.normals_computed);
    EXPECT_EQ(tent.positions.size(), 6u); // position 1 appears as two vertices
    const float s = 1 / std::sqrt(17.0f);
    int shared = 0;
    for (size_t v = 0; v < tent.positions.size(); ++v) {
        if (tent.position_ids[v] == 0) {
            ++shared;
            expect_near3(tent.normals[v], {0, 4 * s, s});
        }
        if (tent.position_ids[v] == 1 || tent.position_ids[v] == 2) expect_near3(tent.normals[v], {0, 0, 1});
        if (tent.position_ids[v] == 3 || tent.position_ids[v] == 4) expect_near3(tent.normals[v], {0, 1, 0});
    }
    EXPECT_EQ(shared, 2);
}

TEST_F(SceneFiles, AMeshWithASceneMaterialIgnoresItsMtl) {
    Json j = minimal_scene();
    write("meshes/cube.obj", std::string("mtllib missing.mtl\nusemtl red\n") + cube_obj);
    const Scene scene = load(j);
    EXPECT_EQ(scene.materials.size(), 1u);
    EXPECT_EQ(scene.meshes[0].triangle_materials, std::vector<uint32_t>(12, 0u));
}

// What the phong material does not take from an MTL file is named on stderr, once a material; what it takes
// (Kd, Ks, Ns, and Ka, which exporters write everywhere) is not.
TEST_F(SceneFiles, MtlPartsThatAreIgnoredAreNoted) {
    Json j = minimal_scene();
    j["meshes"][0]["material"] = "mtl";
    write("meshes/cube.obj", std::string("mtllib cube.mtl\nusemtl glass\n") + cube_obj);
    write("meshes/cube.mtl", "newmtl glass\nKa 0.2 0.2 0.2\nKd 0.5 0.5 0.5\nKs 1 1 1\nNs 50\nd 0.4\nKe 0.1 0 0\n"
                             "map_Bump bumps.png\nmap_Ka ambient.png\n\nnewmtl plain\nKa 1 1 1\nKd 1 1 1\n");
    testing::internal::CaptureStderr();
    load(j);
    const std::string notes = testing::internal::GetCapturedStderr();
    const std::string prefix = "adjoint: note: scene.json: meshes[0].file: meshes/cube.obj: "
                               "MTL material glass: ";
    EXPECT_EQ(notes, prefix + "bump map (map_Bump, bump) ignored\n" +
                     prefix + "emission (Ke, map_Ke) ignored: phong materials do not emit\n" +
                     prefix + "map_Ka ignored\n" +
                     prefix + "transparency (d, Tr, map_d) ignored: materials are opaque\n");

    write("meshes/cube.obj", std::string("mtllib cube.mtl\nusemtl plain\n") + cube_obj);
    testing::internal::CaptureStderr();
    load(j);
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST_F(SceneFiles, VertexColoursComeFromTheObj) {
    Json j = minimal_scene();
    write("meshes/tri.obj", "v 0 0 0 1 0 0\nv 1 0 0 0 1 0\nv 0 1 0 0 0 0.5\nf 1 2 3\n");
    j["meshes"][0]["file"] = "meshes/tri.obj";
    j["meshes"][0]["vertex_colors"] = true;
    const Mesh tri = load(j).meshes[0];
    EXPECT_TRUE(tri.vertex_colors);
    EXPECT_TRUE(tri.has_colors);
    EXPECT_EQ(tri.colors[0], float3(1, 0, 0));
    EXPECT_EQ(tri.colors[2], float3(0, 0, 0.5f));
    // Colours on some `v` lines only do not count: all white.
    write("meshes/tri.obj", "v 0 0 0 1 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
    const Mesh partial = load(j).meshes[0];
    EXPECT_FALSE(partial.has_colors);
    EXPECT_EQ(partial.colors[0], float3(1, 1, 1));
}

TEST_F(SceneFiles, TexturesAreDecodedFromSrgbToLinear) {
    Json j = minimal_scene();
    // RGB: 188 → 0.5029 (sRGB mid-grey), 255 → 1, 128 → 0.2158, 0 → 0.
    write_png("textures/t.png", 2, 1, 3, {188, 188, 188, 0, 255, 128});
    j["materials"]["base"] = Json::parse(R"({"albedo_texture": "textures/t.png"})");
    Scene scene = load(j);
    const LinearImage& t = scene.textures[0];
    ASSERT_EQ(t.width, 2u);
    ASSERT_EQ(t.height, 1u);
    EXPECT_NEAR(t.texels[0].x, 0.5029f, 1e-4);
    EXPECT_NEAR(t.texels[0].x, srgb(188), 1e-6);
    EXPECT_EQ(t.texels[1].x, 0);
    EXPECT_NEAR(t.texels[1].y, 1, 1e-6);
    EXPECT_NEAR(t.texels[1].z, 0.2158f, 1e-4);
    EXPECT_EQ(t.texels[1].w, 1);
    // Grey + alpha: grey spreads to RGB, alpha stays linear. Rows are top first.
    write_png("textures/t.png", 1, 2, 2, {188, 51, 10, 255});
    scene = load(j);
    const LinearImage& g = scene.textures[0];
    EXPECT_NEAR(g.texels[0].z, srgb(188), 1e-6);
    EXPECT_NEAR(g.texels[0].w, 0.2f, 1e-6);
    EXPECT_NEAR(g.texels[1].x, srgb(10), 1e-6);
}

TEST(SceneMath, ModelMatrixFromAxisAngleAndQuaternion) {
    Transform t;
    t.translation = float3(1, 2, 3);
    t.rotation = quaternion_from_axis_angle(float3(0, 0, 5), 90);
    t.scale = float3(2, 2, 2);
    const float4 p = apply(model_matrix(t), float4(1, 0, 0, 1));
    EXPECT_NEAR(p.x, 1, 1e-6); // (1,0,0) → scaled (2,0,0) → rotated (0,2,0) → moved (1,4,3)
    EXPECT_NEAR(p.y, 4, 1e-6);
    EXPECT_NEAR(p.z, 3, 1e-6);
    EXPECT_NEAR(p.w, 1, 1e-6);

    // The same rotation as a quaternion in a scene file (normalised on load): 120° about (1,1,1)
    // permutes the axes, x → y.
    t.rotation = Quaternion{0.5f, 0.5f, 0.5f, 0.5f};
    t.scale = float3(1, 1, 1);
    t.translation = float3(0, 0, 0);
    const float4 q = apply(model_matrix(t), float4(1, 0, 0, 1));
    EXPECT_NEAR(q.x, 0, 1e-6);
    EXPECT_NEAR(q.y, 1, 1e-6);
    EXPECT_NEAR(q.z, 0, 1e-6);
    const Quaternion r = quaternion_from_axis_angle(float3(1, 1, 1), 120);
    EXPECT_NEAR(r.w, 0.5f, 1e-6);
    EXPECT_NEAR(r.z, 0.5f, 1e-6);

    // Normals under a non-uniform scale: the inverse transpose.
    Transform s;
    s.scale = float3(2, 1, 1);
    const float3x3 n = normal_matrix(s);
    EXPECT_FLOAT_EQ(n[0][0], 0.5f);
    EXPECT_FLOAT_EQ(n[1][1], 1);
}

TEST_F(SceneFiles, RotationAndScaleForms) {
    Json j = minimal_scene();
    j["meshes"][0]["rotation"] = Json::parse(R"({"quaternion": [2, 0, 0, 2]})");
    j["meshes"][0]["scale"] = {1, 2, 3};
    Scene scene = load(j);
    const Transform& t = scene.meshes[0].transform;
    EXPECT_NEAR(t.rotation.w, std::sqrt(0.5f), 1e-6);
    EXPECT_NEAR(t.rotation.z, std::sqrt(0.5f), 1e-6);
    EXPECT_EQ(t.scale, float3(1, 2, 3));
    const float4 p = apply(model_matrix(t), float4(1, 0, 0, 1));
    EXPECT_NEAR(p.y, 1, 1e-6); // 90° about z
    j["meshes"][0]["scale"] = 0.5;
    EXPECT_EQ(load(j).meshes[0].transform.scale, float3(0.5f, 0.5f, 0.5f));
}

TEST(SceneMath, ViewAndProjectionMatrices) {
    Camera c;
    c.eye = float3(0, 0, 5);
    c.target = float3(0, 0, 0);
    c.fov_y = 90;
    c.width = 200;
    c.height = 100;
    c.near = 1;
    c.far = 10;
    const float4 target = apply(view_matrix(c), float4(0, 0, 0, 1));
    EXPECT_NEAR(target.z, -5, 1e-6); // looks down −z
    const float4 right = apply(view_matrix(c), float4(1, 2, 5, 1));
    EXPECT_NEAR(right.x, 1, 1e-6);
    EXPECT_NEAR(right.y, 2, 1e-6);
    EXPECT_NEAR(right.z, 0, 1e-6);

    const float4x4 vp = view_projection_matrix(c);
    const auto ndc = [&](float4 p) {
        const float4 clip = apply(vp, p);
        return float3(clip.x / clip.w, clip.y / clip.w, clip.z / clip.w);
    };
    EXPECT_NEAR(ndc(float4(0, 0, 4, 1)).z, -1, 1e-5);  // near plane
    EXPECT_NEAR(ndc(float4(0, 0, -5, 1)).z, 1, 1e-5);  // far plane
    EXPECT_NEAR(ndc(float4(0, 1, 4, 1)).y, 1, 1e-5);   // tan(45°) · near: the top edge
    EXPECT_NEAR(ndc(float4(2, 0, 4, 1)).x, 1, 1e-5);   // aspect 2: the right edge
}

TEST_F(SceneFiles, ResolutionOverride) {
    EXPECT_EQ(parse_resolution("640x480"), (Resolution{640, 480}));
    Json j = minimal_scene();
    j["views"] = Json::parse(R"({"orbit": {"count": 2}})");
    Scene scene = load(j);
    override_resolution(scene, {32, 16});
    EXPECT_EQ(scene.camera.width, 32u);
    for (const Camera& v : scene.views) {
        EXPECT_EQ(v.width, 32u);
        EXPECT_EQ(v.height, 16u);
    }
    LoadOptions options;
    options.resolution = Resolution{4, 4};
    const Scene small = load_scene_from_string(j.dump(), dir(), "scene.json", options);
    EXPECT_EQ(small.views[1].width, 4u);
}

TEST_F(SceneFiles, TargetImagesExpandPerView) {
    Json j = minimal_scene();
    j["views"] = Json::parse(R"({"orbit": {"count": 3}})");
    for (int v = 0; v < 3; ++v) write_solid_png("targets/view_" + std::to_string(v) + ".png", 8, 8, 188, 0, 0);
    j["optimize"] = Json::parse(R"({"target": {"images": ["targets/view_{view}.png"]},
                                    "parameters": {"lights.key.intensity": {"init": 2}}})");
    const Scene scene = load(j);
    const Optimization& o = *scene.optimize;
    EXPECT_FALSE(o.target_is_scene);
    EXPECT_EQ(o.target_files, (std::vector<std::string>{"targets/view_0.png", "targets/view_1.png", "targets/view_2.png"}));
    ASSERT_EQ(o.target_images.size(), 3u);
    EXPECT_NEAR(o.target_images[2].texels[63].x, 0.5029f, 1e-4);
    EXPECT_EQ(o.parameters[0].init, std::vector<float>{2});
}

// OBJ polygons of more than 3 corners, triangulated by the loader (tinyobjloader clipped concave ones wrongly).
using ObjPolygons = SceneFiles;

using Point3 = std::array<double, 3>;

Point3 cross3(const Point3& a, const Point3& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double dot3(const Point3& a, const Point3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Point3 minus3(const Point3& a, const Point3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Point3 point3(float3 p) { return {p.x, p.y, p.z}; }

// The mesh's triangles against the one polygon they come from (its corners in order): n - 2 of them, each facing
// the way the polygon winds (Newell's normal) with its centroid inside the polygon, their areas summing to the
// polygon's: together they cover it exactly.
void expect_triangles_cover(const Mesh& mesh, const std::vector<Point3>& polygon) {
    Point3 normal{0, 0, 0};
    for (size_t i = 0; i < polygon.size(); ++i) {
        const Point3 c = cross3(polygon[i], polygon[(i + 1) % polygon.size()]);
        for (size_t k = 0; k < 3; ++k) normal[k] += c[k];
    }
    const double area = std::sqrt(dot3(normal, normal)) / 2;
    // Inside, in the plane of the two axes the normal is least along (even-odd rule).
    const double nx = std::abs(normal[0]), ny = std::abs(normal[1]), nz = std::abs(normal[2]);
    const size_t drop = nx >= ny && nx >= nz ? 0 : ny >= nz ? 1 : 2;
    const size_t x = drop == 0 ? 1 : 0, y = drop == 2 ? 1 : 2;
    const auto inside = [&](const Point3& p) {
        bool in = false;
        for (size_t i = 0, j = polygon.size() - 1; i < polygon.size(); j = i++) {
            const Point3 &a = polygon[i], &b = polygon[j];
            if ((a[y] > p[y]) != (b[y] > p[y]) && p[x] < (b[x] - a[x]) * (p[y] - a[y]) / (b[y] - a[y]) + a[x])
                in = !in;
        }
        return in;
    };
    ASSERT_EQ(mesh.triangles.size(), polygon.size() - 2);
    double sum = 0;
    for (size_t t = 0; t < mesh.triangles.size(); ++t) {
        const uint3 tri = mesh.triangles[t];
        const Point3 a = point3(mesh.positions[tri.x]), b = point3(mesh.positions[tri.y]);
        const Point3 c = point3(mesh.positions[tri.z]);
        const Point3 n = cross3(minus3(b, a), minus3(c, a));
        EXPECT_GT(dot3(n, normal), 0) << "triangle " << t << " faces away from the polygon";
        sum += std::sqrt(dot3(n, n)) / 2;
        EXPECT_TRUE(inside({(a[0] + b[0] + c[0]) / 3, (a[1] + b[1] + c[1]) / 3, (a[2] + b[2] + c[2]) / 3}))
            << "triangle " << t << "'s centroid is outside the polygon";
    }
    EXPECT_NEAR(sum, area, 1e-4 * area);
}

// An OBJ of one face: the 2-D corners placed in a tilted plane (so that the loader finds the plane itself), each
// with its own texture coordinate (its 2-D point / 4); `reversed` lists them the other way round.
std::string polygon_obj(const std::vector<std::array<double, 2>>& corners, bool reversed, std::vector<Point3>& placed) {
    const Point3 u{0.6, 0.0, 0.8}, v{0.48, 0.6, -0.36}, origin{0.25, -0.5, 1};
    std::ostringstream text;
    text << std::setprecision(9);
    placed.clear();
    for (const auto& c : corners) {
        // As the float the loader reads.
        placed.push_back({float(origin[0] + c[0] * u[0] + c[1] * v[0]), float(origin[1] + c[0] * u[1] + c[1] * v[1]),
                          float(origin[2] + c[0] * u[2] + c[1] * v[2])});
        text << "v " << placed.back()[0] << " " << placed.back()[1] << " " << placed.back()[2] << "\n";
    }
    for (const auto& c : corners) text << "vt " << c[0] / 4 << " " << c[1] / 4 << "\n";
    text << "f";
    for (size_t k = 0; k < corners.size(); ++k) {
        const size_t i = reversed ? corners.size() - k : k + 1;
        text << " " << i << "/" << i;
    }
    text << "\n";
    if (reversed) std::reverse(placed.begin(), placed.end());
    return text.str();
}

TEST_F(ObjPolygons, AConcavePolygonIsCoveredExactlyFacingItsWay) {
    Json j = minimal_scene();
    j["meshes"][0]["file"] = "meshes/polygon.obj";
    const std::vector<std::vector<std::array<double, 2>>> shapes = {
        {{0, 0}, {3, 0}, {3, 3}, {2, 3}, {2, 1}, {1, 1}, {1, 3}, {0, 3}},   // a U: two reflex corners, area 7
        {{0, 0}, {3, 0}, {3, 1}, {1, 1}, {1, 3}, {0, 3}},                   // an L
        {{0, 0}, {0.5, 0.1}, {1, 0}, {0.5, 10}},    // a dart: the shorter diagonal (tinyobjloader's) is outside it
        {{0, 0}, {1, 0}, {2, 0}, {2, 2}, {1, 1}, {0, 2}},   // a straight corner beside a reflex one
    };
    std::vector<Point3> placed;
    for (size_t s = 0; s < shapes.size(); ++s) {
        for (bool reversed : {false, true}) {
            SCOPED_TRACE("shape " + std::to_string(s) + (reversed ? " reversed" : ""));
            write("meshes/polygon.obj", polygon_obj(shapes[s], reversed, placed));
            const Mesh mesh = load(j).meshes[0];
            expect_triangles_cover(mesh, placed);
            // Each corner keeps its own texture coordinate: a vertex's is its position's.
            ASSERT_TRUE(mesh.has_texcoords);
            for (size_t v = 0; v < mesh.positions.size(); ++v) {
                const auto& c = shapes[s][mesh.position_ids[v]];
                EXPECT_NEAR(mesh.texcoords[v].x, c[0] / 4, 1e-6);
                EXPECT_NEAR(mesh.texcoords[v].y, 1 - c[1] / 4, 1e-6);
            }
        }
    }
    // A spiky star of 1000 corners is covered too, in well under a second.
    std::vector<std::array<double, 2>> star;
    for (int i = 0; i < 1000; ++i) {
        const double a = 2 * pi * i / 1000, r = i % 2 ? 0.2 + 0.0005 * i : 1;
        star.push_back({r * std::cos(a), r * std::sin(a)});
    }
    write("meshes/polygon.obj", polygon_obj(star, false, placed));
    const auto start = std::chrono::steady_clock::now();
    const Mesh mesh = load(j).meshes[0];
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
    expect_triangles_cover(mesh, placed);
}

TEST_F(ObjPolygons, ConvexQuadsKeepTinyobjloadersSplitAndDegenerateFacesStillLoad) {
    Json j = minimal_scene();
    j["meshes"][0]["file"] = "meshes/polygon.obj";
    // Split along the shorter diagonal as tinyobjloader split them: 2-4, (1, 2, 4) and (2, 3, 4), then 1-3,
    // (1, 2, 3) and (1, 3, 4) (the cube's tie goes to 2-4: CubeCornersAreUnifiedPerIndexTriple).
    write("meshes/polygon.obj", "v 0 0 0\nv 2 0 0\nv 2.5 1 0\nv 0 1 0\nf 1 2 3 4\n");
    const Mesh quad = load(j).meshes[0];
    ASSERT_EQ(quad.triangles.size(), 2u);
    EXPECT_EQ(quad.triangles[0], uint3(0, 1, 2));
    EXPECT_EQ(quad.triangles[1], uint3(1, 3, 2));   // vertices are numbered in first use: vertex 2 is position 4
    EXPECT_EQ(quad.position_ids[2], 3u);
    write("meshes/polygon.obj", "v 0 0 0\nv 2.5 0 0\nv 2 1 0\nv 0 1 0\nf 1 2 3 4\n");
    const Mesh other = load(j).meshes[0];
    ASSERT_EQ(other.triangles.size(), 2u);
    EXPECT_EQ(other.triangles[0], uint3(0, 1, 2));
    EXPECT_EQ(other.triangles[1], uint3(0, 2, 3));
    EXPECT_EQ(other.position_ids[3], 3u);
    // A convex polygon: a fan from its first corner.
    write("meshes/polygon.obj", "v 0 0 0\nv 1 0 0\nv 2 1 0\nv 1 2 0\nv 0 2 0\nv -1 1 0\nf 1 2 3 4 5 6\n");
    const Mesh hexagon = load(j).meshes[0];
    ASSERT_EQ(hexagon.triangles.size(), 4u);
    for (uint32_t t = 0; t < 4; ++t) EXPECT_EQ(hexagon.triangles[t], uint3(0, t + 1, t + 2));
    // No area (corners in a line) or crossing itself (a pentagram): no triangles cover it exactly, and the
    // face loads as n - 2 triangles rather than refusing the file.
    write("meshes/polygon.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nv 3 0 0\nv 4 0 0\nf 1 2 3 4 5\nf 1 3 5 2 4\n");
    EXPECT_EQ(load(j).meshes[0].triangles.size(), 6u);
    std::ostringstream pentagram;
    for (int i = 0; i < 5; ++i) pentagram << "v " << std::cos(0.4 * pi * i) << " " << std::sin(0.4 * pi * i) << " 0\n";
    pentagram << "f 1 3 5 2 4\nf 1 2 1 2 1 2 1\n";
    write("meshes/polygon.obj", pentagram.str());
    EXPECT_EQ(load(j).meshes[0].triangles.size(), 8u);
    // A face over 255 corners (tinyobjloader counts corners in a byte): all its triangles, none of the next.
    std::ostringstream big;
    for (int i = 0; i < 300; ++i)
        big << "v " << std::cos(2 * pi * i / 300) << " " << std::sin(2 * pi * i / 300) << " 0\n";
    big << "f";
    for (int i = 1; i <= 300; ++i) big << " " << i;
    big << "\nf 1 2 3 4\n";
    write("meshes/polygon.obj", big.str());
    EXPECT_EQ(load(j).meshes[0].triangles.size(), 298u + 2u);
}

// assimp's test model: a ring as one polygon of 66 corners, cut by a keyhole (its bridge's two corners repeat).
TEST_F(ObjPolygons, AssimpsKeyholeRingIsCoveredExactly) {
    const std::filesystem::path file = "/usr/share/assimp/models/OBJ/concave_polygon.obj";
    if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " is not installed (assimp-testmodels)";
    Json j = minimal_scene();
    j["meshes"][0]["file"] = file.string();
    const Mesh mesh = load(j).meshes[0];
    std::ifstream in(file);
    std::string line;
    std::vector<Point3> polygon;
    while (std::getline(in, line)) {
        if (line.rfind("f ", 0) != 0) continue;
        std::istringstream words(line.substr(2));
        for (std::string word; words >> word;) polygon.push_back(point3(mesh.obj_positions[std::stoul(word) - 1]));
    }
    ASSERT_EQ(polygon.size(), 66u);
    expect_triangles_cover(mesh, polygon);
}
} // namespace
} // namespace adjoint::app::test
