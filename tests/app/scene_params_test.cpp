// Parameter paths: resolution against the scene, `init`/`perturb` checks, values in and out, params.json.
#include "app/scene_fixture.h"

#include <adjoint/app/image_io.h>

namespace adjoint::app::test {
namespace {

class SceneParameters : public SceneFiles {
protected:
    // minimal_scene plus a textured material, a directional light and a second view option.
    Json scene_with(Json parameters) {
        Json j = minimal_scene();
        write_png("textures/t.png", 2, 2, 3, {255, 0, 0, 0, 255, 0, 0, 0, 255, 188, 188, 188});
        j["materials"]["skin"] = {{"albedo_texture", "textures/t.png"}};
        j["meshes"].push_back({{"name", "ball"}, {"file", "meshes/cube.obj"}, {"material", "skin"},
                               {"vertex_colors", true}});
        j["lights"].push_back({{"name", "sun"}, {"type", "directional"}, {"direction", {0, -1, 0}}});
        j["optimize"] = {{"parameters", std::move(parameters)}};
        return j;
    }
    std::string error_for(const std::string& path, Json entry) { return error_of(scene_with({{path, std::move(entry)}})); }
};

TEST_F(SceneParameters, UnknownPathsAreNamedAtParameters) {
    const Json perturb = {{"perturb", 0.1}};
    // A name the collection does not have lists the names it does (a glTF's second material of one name is
    // <mesh>/<material>#2); a path with a space or a hidden character is quoted.
    EXPECT_EQ(error_for("lights.kye.position", perturb), "scene.json: optimize.parameters: unknown parameter "
                                                         "lights.kye.position (no light is named \"kye\"; the scene's: "
                                                         "key, sun)");
    EXPECT_EQ(error_for("materials.fur.albedo", perturb), "scene.json: optimize.parameters: unknown parameter "
                                                          "materials.fur.albedo (no material is named \"fur\"; the "
                                                          "scene's: base, skin)");
    EXPECT_EQ(error_for("lights.key.color ", perturb),
              "scene.json: optimize.parameters: unknown parameter \"lights.key.color \"");
    for (const char* path : {"lights.key.colour", "camera.up", "materials.base", "planets.x.mass", "camera", "",
                             "meshes.cube.name", "camera.x.eye"})
        EXPECT_EQ(error_for(path, perturb), std::string("scene.json: optimize.parameters: unknown parameter ") + path);
}

TEST_F(SceneParameters, PathsThatDoNotFitTheirTarget) {
    const Json perturb = {{"perturb", 0.1}};
    EXPECT_EQ(error_for("materials.skin.albedo", perturb),
              "scene.json: optimize.parameters[\"materials.skin.albedo\"]: material skin has an albedo texture: "
              "optimize materials.skin.albedo_texture");
    EXPECT_EQ(error_for("materials.base.albedo_texture", perturb),
              "scene.json: optimize.parameters[\"materials.base.albedo_texture\"]: material base has no albedo texture: "
              "optimize materials.base.albedo");
    EXPECT_EQ(error_for("lights.sun.position", perturb),
              "scene.json: optimize.parameters[\"lights.sun.position\"]: light sun is a directional light; only point "
              "lights have a position");
    EXPECT_EQ(error_for("lights.key.direction", perturb),
              "scene.json: optimize.parameters[\"lights.key.direction\"]: light key is a point light; only directional "
              "lights have a direction");
    EXPECT_EQ(error_for("meshes.cube.vertex_colors", perturb),
              "scene.json: optimize.parameters[\"meshes.cube.vertex_colors\"]: mesh cube does not set \"vertex_colors\": true");
    Json j = scene_with({{"camera.eye", perturb}});
    j["views"] = {{"orbit", {{"count", 3}}}};
    EXPECT_EQ(error_of(j), "scene.json: optimize.parameters[\"camera.eye\"]: the camera can be optimized only when it "
                           "is the only view (this scene has 3)");
}

TEST_F(SceneParameters, EntryShapes) {
    const std::string at = "scene.json: optimize.parameters[\"materials.base.albedo\"]";
    EXPECT_EQ(error_for("materials.base.albedo", {{"init", {1, 1, 1}}, {"perturb", 1}}), at + ": give init or perturb, not both");
    EXPECT_EQ(error_for("materials.base.albedo", {{"lr", 0.1}}),
              at + ": needs init (a start value) or perturb (a random offset from the scene's value)");
    EXPECT_EQ(error_for("materials.base.albedo", {{"init", {1, 1}}}), at + ".init: expected [r, g, b] of numbers >= 0");
    EXPECT_EQ(error_for("materials.base.albedo", {{"perturb", -1}}), at + ".perturb: expected a number >= 0");
    // Out of the parameter's range: the first iteration rendered it, the step then clamped it.
    EXPECT_EQ(error_for("materials.base.albedo", {{"init", {2, 0.5, 0.5}}}), at + ".init: expected numbers in [0, 1]");
    // A truth (the scene's value, the target being the scene) out of that range: no step could reach it.
    Json j = scene_with({{"materials.base.shininess", {{"init", 32}}}});
    j["materials"]["base"]["shininess"] = 5000;
    EXPECT_EQ(error_of(j), "scene.json: optimize.parameters[\"materials.base.shininess\"]: the scene's value, the "
                           "run's truth, lies outside the range the optimizer keeps it in (expected numbers in "
                           "[1, 4096]): no step could reach it");
    j["materials"]["base"]["shininess"] = 4096;
    EXPECT_NO_THROW(load(j));
    EXPECT_EQ(error_for("materials.base.shininess", {{"init", 0.5}}),
              "scene.json: optimize.parameters[\"materials.base.shininess\"].init: expected numbers in [1, 4096]");
    // The shading reads roughness as at least 0.03: below it a free roughness has no gradient and stayed where it
    // started (0 for a truth of 0.4): such an init is refused; a truth below it is not (it renders as 0.03).
    Json pbr = scene_with({{"materials.base.roughness", {{"init", 0.01}}}});
    pbr["materials"]["base"] = {{"model", "pbr"}, {"base_color", {0.5, 0.5, 0.5}}, {"roughness", 0.0}};
    EXPECT_EQ(error_of(pbr), "scene.json: optimize.parameters[\"materials.base.roughness\"].init: a roughness below "
                             "0.03 renders as 0.03, where its gradient is 0: a run started there would never move "
                             "it; start at 0.03 or above");
    pbr["optimize"]["parameters"]["materials.base.roughness"] = {{"init", 0.03}};
    EXPECT_NO_THROW(load(pbr));
    // A rotation by over half a turn is a smaller one the other way (720 started at the truth).
    EXPECT_EQ(error_for("meshes.cube.rotation", {{"perturb", 720}}),
              "scene.json: optimize.parameters[\"meshes.cube.rotation\"].perturb: a rotation's perturb is an angle in "
              "degrees up to 180 (a larger one is a smaller one the other way round)");
    EXPECT_NO_THROW(load(scene_with({{"meshes.cube.rotation", {{"perturb", 180}}}})));
    EXPECT_EQ(error_for("materials.base.albedo", {{"perturb", 1}, {"lr", 0}}), at + ".lr: expected a number > 0");
    EXPECT_EQ(error_for("materials.base.albedo", {{"perturb", 1}, {"resolution", {4, 4}}}),
              at + ".resolution: only texture parameters take a resolution");
    EXPECT_EQ(error_for("materials.base.albedo", {{"perturb", 1}, {"step", 4}}),
              at + ".step: unknown key (expected one of: init, perturb, lr, resolution)");
    EXPECT_EQ(error_for("meshes.cube.vertices", {{"init", {{0, 0, 0}}}}),
              "scene.json: optimize.parameters[\"meshes.cube.vertices\"].init: expected a list of 8 [x, y, z] (one per OBJ position)");
    EXPECT_EQ(error_for("camera.fov_y", {{"init", 0}}),
              "scene.json: optimize.parameters[\"camera.fov_y\"].init: expected a number of degrees in (0, 180)");
    EXPECT_EQ(error_for("meshes.cube.rotation", {{"init", {1, 0, 0, 0}}}),
              "scene.json: optimize.parameters[\"meshes.cube.rotation\"].init: expected {\"axis\": [x, y, z], \"angle\": "
              "degrees} or {\"quaternion\": [w, x, y, z]}");
    EXPECT_EQ(error_for("materials.skin.albedo_texture", {{"perturb", 0.1}, {"resolution", {4, 4}}}),
              "scene.json: optimize.parameters[\"materials.skin.albedo_texture\"].resolution: perturb starts from the "
              "scene's texture (2x2); use init for another resolution");
    write_solid_png("textures/start.png", 3, 3, 0, 0, 0);
    EXPECT_EQ(error_for("materials.skin.albedo_texture", {{"init", "textures/start.png"}, {"resolution", {4, 4}}}),
              "scene.json: optimize.parameters[\"materials.skin.albedo_texture\"].init: textures/start.png is 3x3, but "
              "resolution is [4, 4]");
    EXPECT_EQ(error_for("materials.skin.albedo_texture", {{"init", 0.5}}),
              "scene.json: optimize.parameters[\"materials.skin.albedo_texture\"].init: expected an RGB fill [r, g, b] or a PNG file");
}

// A texture optimized at another size than the scene's is measured against the scene's texture at its size, as the
// renderer would show it there (its error was unknown): shrunk, box-filtered (at 1x1 the mean of the 2x2 texels);
// enlarged, bilinear samples at the new texels' centres, repeating across the edges (at 4x2 each row's texels
// 3/4 and 1/4 of its two, the first reaching round to the last). 4x1 holds the 2x2's 12 floats: its size, not its
// count, tells (it was the 2x2 reread as 4x1).
TEST_F(SceneParameters, ATextureAtAnotherSizeIsMeasuredAgainstTheSceneTextureResampled) {
    auto at_size = [&](int w, int h) {
        const Scene scene = load(scene_with(
            {{"materials.skin.albedo_texture", {{"init", {0.5, 0.5, 0.5}}, {"resolution", {w, h}}}}}));
        const Parameter& p = scene.optimize->parameters[0];
        EXPECT_EQ(parameter_value(scene, p).size(), 12u);   // the scene's own 2x2
        return parameter_value_at_its_size(scene, p);
    };
    const float grey = srgb_to_linear(188.0f / 255.0f);
    const float3 texel[2][2] = {{float3(1, 0, 0), float3(0, 1, 0)}, {float3(0, 0, 1), float3(grey)}};
    EXPECT_EQ(at_size(2, 2), (std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1, grey, grey, grey}));
    const std::vector<float> mean = at_size(1, 1);
    ASSERT_EQ(mean.size(), 3u);
    for (float c : mean) EXPECT_NEAR(c, (1 + grey) / 4, 1e-6f);
    // Texel x of a row enlarged from 2 to 4: the weight of the row's first texel.
    const float first[4] = {0.75f, 0.75f, 0.25f, 0.25f};
    auto enlarged = [&](int row, int x) {
        const float3 &a = texel[row][0], &b = texel[row][1];
        const float w = first[x];
        return float3(w * a.x + (1 - w) * b.x, w * a.y + (1 - w) * b.y, w * a.z + (1 - w) * b.z);
    };
    const std::vector<float> wide = at_size(4, 2), flat = at_size(4, 1);
    ASSERT_EQ(wide.size(), 24u);
    ASSERT_EQ(flat.size(), 12u);
    for (int x = 0; x < 4; ++x)
        for (int c = 0; c < 3; ++c) {
            EXPECT_NEAR(wide[3 * x + c], enlarged(0, x)[c], 1e-6f) << "texel " << x;
            EXPECT_NEAR(wide[3 * (4 + x) + c], enlarged(1, x)[c], 1e-6f) << "texel " << 4 + x;
            EXPECT_NEAR(flat[3 * x + c], 0.5f * (enlarged(0, x)[c] + enlarged(1, x)[c]), 1e-6f) << "texel " << x;
        }
}

// An environment map's rows shrunk weigh by the solid angle they cover: a map white in its top row of four (the
// band from the pole to 45 degrees, 1 - cos 45 = 0.29 of a hemisphere's 1) is 0.146 white at height 1, not 0.25,
// and at height 2 its top row (the northern hemisphere) is 0.29 white.
TEST_F(SceneParameters, AnEnvironmentMapShrunkWeighsItsRowsBySolidAngle) {
    std::vector<uint8_t> rows(8 * 4 * 3, 0);
    std::fill(rows.begin(), rows.begin() + 8 * 3, 255);
    write_png("textures/sky.png", 8, 4, 3, rows);
    auto at_size = [&](int w, int h) {
        Json j = scene_with({{"lights.sky.texture", {{"init", {0.5, 0.5, 0.5}}, {"resolution", {w, h}}}}});
        j["lights"].push_back({{"name", "sky"}, {"type", "environment"}, {"file", "textures/sky.png"}});
        const Scene scene = load(j);
        return parameter_value_at_its_size(scene, scene.optimize->parameters[0]);
    };
    const float band = 1.0f - std::sqrt(0.5f);   // 1 - cos 45 degrees
    const std::vector<float> one = at_size(2, 1), two = at_size(4, 2);
    ASSERT_EQ(one.size(), 6u);
    ASSERT_EQ(two.size(), 24u);
    for (float c : one) EXPECT_NEAR(c, band / 2, 1e-6f);
    for (size_t i = 0; i < two.size(); ++i) EXPECT_NEAR(two[i], i < 12 ? band : 0.0f, 1e-6f) << "float " << i;
}

TEST_F(SceneParameters, KindsTargetsSizesAndInits) {
    write_solid_png("textures/start.png", 3, 1, 188, 0, 255);
    const Scene scene = load(scene_with(Json::parse(R"({
        "materials.skin.albedo_texture": {"init": [0.25, 0.5, 1], "resolution": [4, 2]},
        "materials.base.shininess": {"init": 16},
        "lights.sun.direction": {"init": [0, 0, -2], "lr": 0.5},
        "lights.key.color": {"perturb": 0.1},
        "meshes.ball.vertex_colors": {"perturb": 0.1},
        "meshes.ball.vertices": {"perturb": 0.01},
        "meshes.cube.rotation": {"init": {"axis": [0, 1, 0], "angle": 180}},
        "meshes.cube.scale": {"init": 2},
        "camera.fov_y": {"init": 30}
    })")));
    const std::vector<Parameter>& p = scene.optimize->parameters;
    ASSERT_EQ(p.size(), 9u);
    EXPECT_EQ(p[0].kind, ParameterKind::material_texture);
    EXPECT_EQ(p[0].target, 1u);
    EXPECT_EQ(p[0].texture_width, 4u);
    EXPECT_EQ(p[0].texture_height, 2u);
    EXPECT_EQ(p[0].size, 24u);
    ASSERT_EQ(p[0].init.size(), 24u);
    EXPECT_EQ(p[0].init[21], 0.25f);
    EXPECT_EQ(p[0].init[23], 1.0f);
    EXPECT_EQ(p[1].init, std::vector<float>{16});
    EXPECT_EQ(p[2].target, 1u);
    EXPECT_EQ(p[2].init, (std::vector<float>{0, 0, -1})); // normalised
    EXPECT_EQ(p[2].lr, 0.5f);
    EXPECT_EQ(p[3].size, 3u);
    EXPECT_EQ(p[4].kind, ParameterKind::mesh_vertex_colors);
    EXPECT_EQ(p[4].target, 1u);
    EXPECT_EQ(p[4].size, 24u); // per OBJ position
    EXPECT_EQ(p[5].size, 24u);
    EXPECT_TRUE(is_geometry_parameter(p[5].kind));
    EXPECT_FALSE(is_geometry_parameter(p[4].kind));
    ASSERT_EQ(p[6].init.size(), 4u);
    EXPECT_NEAR(p[6].init[0], 0, 1e-6);
    EXPECT_NEAR(p[6].init[2], 1, 1e-6);
    EXPECT_EQ(p[7].init, (std::vector<float>{2, 2, 2}));
    EXPECT_EQ(p[8].kind, ParameterKind::camera_fov_y);
    EXPECT_TRUE(is_geometry_parameter(p[8].kind));
    EXPECT_STREQ(parameter_property(p[8].kind), "fov_y");

    // A texture's init from a PNG: its own resolution, decoded to linear.
    const Scene png = load(scene_with({{"materials.skin.albedo_texture", {{"init", "textures/start.png"}}}}));
    const Parameter& t = png.optimize->parameters[0];
    EXPECT_EQ(t.texture_width, 3u);
    EXPECT_EQ(t.texture_height, 1u);
    ASSERT_EQ(t.init.size(), 9u);
    EXPECT_NEAR(t.init[0], 0.5029f, 1e-4);
    EXPECT_EQ(t.init[1], 0);
    EXPECT_NEAR(t.init[8], 1, 1e-6);
}

// A length's default learning rate is 0.01 times the radius of the box it is measured in (where over 1): every
// mesh's in the world for a translation, a position or the camera's; the mesh's own for its vertices.
TEST_F(SceneParameters, DefaultLearningRatesOfLengthsFollowTheSceneSize) {
    const Json parameters = Json::parse(R"({
        "meshes.cube.translation": {"perturb": 0.1},
        "lights.key.position": {"perturb": 0.1},
        "camera.eye": {"perturb": 0.1},
        "meshes.cube.vertices": {"perturb": 0.01},
        "meshes.cube.rotation": {"perturb": 5},
        "materials.base.albedo": {"perturb": 0.1},
        "meshes.ball.translation": {"perturb": 0.1, "lr": 0.5}
    })");
    const float cube = std::sqrt(3.0f);   // the [-1, 1]^3 cube's
    auto rates = [&](float scale) {
        Json j = scene_with(parameters);
        j["meshes"][0]["scale"] = scale;
        const Scene scene = load(j);
        std::vector<float> out;
        for (const Parameter& p : scene.optimize->parameters) out.push_back(p.lr);
        return out;
    };
    // A centimetre-sized world: the cube (100 wide and high) is the box.
    const std::vector<float> big = rates(50);
    ASSERT_EQ(big.size(), 7u);
    for (size_t i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(big[i], 0.01f * 50 * cube) << i;
    EXPECT_FLOAT_EQ(big[3], 0.01f * cube);   // vertices: in the cube's own coordinates
    EXPECT_EQ(big[4], 0.01f);
    EXPECT_EQ(big[5], 0.01f);
    EXPECT_EQ(big[6], 0.5f);                 // given
    // At unit size (the unscaled ball is the box) and below, 0.01 of a unit.
    const std::vector<float> unit = rates(0.25f);
    for (size_t i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(unit[i], 0.01f * cube) << i;
    Json small = scene_with(Json::parse(R"({"meshes.cube.translation": {"perturb": 0.1}})"));
    small["meshes"][0]["scale"] = 0.25;
    small["meshes"][1]["scale"] = 0.5;
    EXPECT_EQ(load(small).optimize->parameters[0].lr, 0.01f);
}

TEST_F(SceneParameters, ValuesRoundTripAndVerticesMoveSharedCorners) {
    Scene scene = load(scene_with({{"lights.key.intensity", {{"init", 3}}}}));
    const auto p = [&](const char* path) {
        std::string why;
        const std::optional<Parameter> found = find_parameter(scene, path, &why);
        EXPECT_TRUE(found) << why;
        return *found;
    };
    EXPECT_EQ(parameter_value(scene, p("lights.key.position")), (std::vector<float>{2, 3, 2}));
    set_parameter_value(scene, p("lights.key.position"), std::vector<float>{1, 2, 3});
    EXPECT_EQ(scene.lights[0].position, float3(1, 2, 3));

    const Parameter texture = p("materials.skin.albedo_texture");
    const std::vector<float> texels = parameter_value(scene, texture);
    ASSERT_EQ(texels.size(), 12u);
    EXPECT_EQ(texels[0], 1);
    EXPECT_EQ(texels[4], 1);

    // Moving OBJ position 0 of the cube moves all three unified vertices made from it.
    const Parameter vertices = p("meshes.cube.vertices");
    std::vector<float> v = parameter_value(scene, vertices);
    ASSERT_EQ(v.size(), 24u);
    EXPECT_EQ(v[0], -1);
    v[0] = -3;
    set_parameter_value(scene, vertices, v);
    int moved = 0;
    for (size_t i = 0; i < scene.meshes[0].positions.size(); ++i)
        if (scene.meshes[0].position_ids[i] == 0) {
            EXPECT_EQ(scene.meshes[0].positions[i], float3(-3, -1, -1));
            ++moved;
        }
    EXPECT_EQ(moved, 3);

    const Parameter rotation = p("meshes.cube.rotation");
    set_parameter_value(scene, rotation, std::vector<float>{0, 0, 0, 2});
    EXPECT_EQ(scene.meshes[0].transform.rotation, (Quaternion{0, 0, 0, 1}));
    EXPECT_THROW(set_parameter_value(scene, rotation, std::vector<float>{1, 0, 0}), adjoint::Error);

    std::string why;
    EXPECT_FALSE(find_parameter(scene, "lights.nope.color", &why));
    EXPECT_EQ(why, "unknown parameter lights.nope.color (no light is named \"nope\"; the scene's: key, sun)");
}

TEST_F(SceneParameters, ComputedNormalsFollowMovedVertices) {
    Json j = scene_with({{"lights.key.intensity", {{"init", 3}}}});
    write("meshes/tri.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
    j["meshes"][0]["file"] = "meshes/tri.obj";
    Scene scene = load(j);
    EXPECT_EQ(scene.meshes[0].normals[0], float3(0, 0, 1));
    const Parameter vertices = *find_parameter(scene, "meshes.cube.vertices");
    set_parameter_value(scene, vertices, std::vector<float>{0, 0, 0, 0, 1, 0, 1, 0, 0}); // swap: faces −z
    EXPECT_EQ(scene.meshes[0].normals[0], float3(0, 0, -1));
}

TEST_F(SceneParameters, ParamsFileOntoTheScene) {
    Scene scene = load(scene_with({{"lights.key.intensity", {{"init", 3}}}}));
    write_png("run/skin.png", 1, 1, 3, {188, 0, 255});
    write("run/params.json", R"({
      "parameters": {
        "lights.key.intensity": { "value": [7.5], "true_value": [12], "error": 0.375 },
        "meshes.cube.translation": { "value": [1, 2, 3] },
        "materials.base.shininess": { "value": 8 },
        "materials.skin.albedo_texture": { "texture": "skin.png" }
      },
      "iteration": 300
    })");
    apply_params_file(scene, dir() / "run/params.json");
    EXPECT_EQ(scene.lights[0].intensity, 7.5f);
    EXPECT_EQ(scene.meshes[0].transform.translation, float3(1, 2, 3));
    EXPECT_EQ(scene.materials[0].value("shininess")[0], 8);
    const LinearImage& t = scene.textures[static_cast<size_t>(scene.materials[1].texture("albedo_texture"))];
    EXPECT_EQ(t.width, 1u);
    EXPECT_NEAR(t.texels[0].x, 0.5029f, 1e-4);
    EXPECT_EQ(t.texels[0].w, 1);

    const std::string file = (dir() / "run/params.json").string();
    const auto error_applying = [&](const std::string& text) {
        write("run/params.json", text);
        try {
            apply_params_file(scene, dir() / "run/params.json");
        } catch (const SceneError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(error_applying(R"({"parameters": {"lights.kye.color": {"value": [1, 1, 1]}}})"),
              file + ": parameters: unknown parameter lights.kye.color (no light is named \"kye\"; the scene's: key, "
                     "sun)");
    EXPECT_EQ(error_applying(R"({"parameters": {"lights.key.color": {"value": [1, 1]}}})"),
              file + ": parameters[\"lights.key.color\"].value: expected 3 numbers");
    EXPECT_EQ(error_applying(R"({"parameters": {"lights.key.color": {"value": 1}}})"),
              file + ": parameters[\"lights.key.color\"].value: expected 3 numbers");
    EXPECT_EQ(error_applying(R"({"parameters": {"materials.skin.albedo_texture": {"texture": "gone.png"}}})"),
              file + ": parameters[\"materials.skin.albedo_texture\"].texture: cannot read gone.png: No such file or directory");
    EXPECT_EQ(error_applying(R"({"parameters": {"lights.key.color": {"true_value": [1, 1, 1]}}})"),
              file + ": parameters[\"lights.key.color\"]: needs either \"value\" or \"texture\"");
    // Values the scene's own loader would refuse are refused here too (they were rendered: a negative light, a
    // mesh flattened to nothing, a camera with no field of view or at its target), as is a key given twice.
    EXPECT_EQ(error_applying(R"({"parameters": {"lights.key.intensity": {"value": -5}}})"),
              file + ": parameters[\"lights.key.intensity\"].value: expected numbers >= 0");
    EXPECT_EQ(error_applying(R"({"parameters": {"meshes.cube.scale": {"value": [1, 0, 1]}}})"),
              file + ": parameters[\"meshes.cube.scale\"].value: expected no scale component 0");
    EXPECT_EQ(error_applying(R"({"parameters": {"camera.fov_y": {"value": 0}}})"),
              file + ": parameters[\"camera.fov_y\"].value: expected numbers in [1, 179]");
    EXPECT_EQ(error_applying(R"({"parameters": {"camera.eye": {"value": [0, 0, 0]}}})"),
              file + ": parameters[\"camera.eye\"].value: eye and target are the same point");
    EXPECT_EQ(error_applying(R"({"parameters": {"lights.key.intensity": {"value": 2},
                                               "lights.key.intensity": {"value": 3}}})"),
              file + ": the key \"lights.key.intensity\" is given twice in one object");
    EXPECT_EQ(error_applying("{\"parameters\": [}"), file + ": not valid JSON: line 1, column 17: syntax error while parsing value - unexpected '}'; expected '[', '{', or a literal");
}

} // namespace
} // namespace adjoint::app::test
