// Scene loading, bad input: each problem is a SceneError `<file>: <json path>: <what>` before any work.
#include "app/scene_fixture.h"

namespace adjoint::app::test {
namespace {

using SceneErrors = SceneFiles;

TEST_F(SceneErrors, MalformedJsonNamesLineAndColumn) {
    EXPECT_EQ(error_of_text("{\n  \"format\": 1,\n  \"camera\": }\n"),
              "scene.json: line 3, column 13: syntax error while parsing value - unexpected '}'; "
              "expected '[', '{', or a literal");
    EXPECT_EQ(error_of_text(""), "scene.json: line 1, column 1: syntax error while parsing value - "
                                 "unexpected end of input; expected '[', '{', or a literal");
}

TEST_F(SceneErrors, DuplicateKeysNameThePath) {
    write("meshes/cube.obj", cube_obj);
    const std::string head = R"({"format": 1, "camera": {"eye": [0, 0, 5], "target": [0, 0, 0], "resolution": [8, 8]},
        "materials": {"base": {"albedo": [1, 1, 1]}}, "_c": 1, "_c": 2,
        "meshes": [{"name": "a", "file": "meshes/cube.obj", "material": "base"},
                   {"name": "b", "file": "meshes/cube.obj", "material": "base", "translation": [0, 0, 0],)";
    EXPECT_NO_THROW(load_text(head + R"("scale": 1}]})"));
    EXPECT_EQ(error_of_text(head + R"("translation": [1, 0, 0]}]})"), "scene.json: meshes[1].translation: duplicate key");
    EXPECT_EQ(error_of_text(R"({"format": 1, "views": [[], {"a": {"b": 1, "b": 2}}]})"),
              "scene.json: views[1].a.b: duplicate key");
}

TEST_F(SceneErrors, UnknownKeysAreErrorsButUnderscoreKeysAreComments) {
    Json j = minimal_scene();
    j["_comment"] = "ignored";
    j["camera"]["_note"] = {1, 2};
    j["materials"]["_draft"] = {{"anything", true}};
    EXPECT_NO_THROW(load(j));
    j["camera"]["fov"] = 40;
    EXPECT_EQ(error_of(j), "scene.json: camera.fov: unknown key (expected one of: eye, target, up, matrix, fov_y, "
                           "intrinsics, resolution, near, far)");
    j = minimal_scene();
    j["meshs"] = Json::array();
    EXPECT_EQ(error_of(j), "scene.json: meshs: unknown key (expected one of: format, camera, views, background, "
                           "materials, meshes, lights, render, optimize)");
    j = minimal_scene();
    j["lights"][0]["direction"] = {0, -1, 0};
    EXPECT_EQ(error_of(j), "scene.json: lights[0].direction: unknown key (expected one of: name, type, position, "
                           "color, intensity, shadows)");
}

TEST_F(SceneErrors, WrongTypesAndShapesNameThePath) {
    const auto expect = [&](const char* pointer, Json value, const std::string& message) {
        Json j = minimal_scene();
        j[Json::json_pointer(pointer)] = std::move(value);
        EXPECT_EQ(error_of(j), message) << pointer;
    };
    expect("/format", 2, "scene.json: format: expected 1 (the scene format this program reads)");
    expect("/camera/eye", {0, 0}, "scene.json: camera.eye: expected [x, y, z] of numbers");
    expect("/camera/eye", "far", "scene.json: camera.eye: expected [x, y, z] of numbers");
    expect("/camera/fov_y", 180, "scene.json: camera.fov_y: expected a number of degrees in [0.001, 180)");
    expect("/camera/fov_y", 1e-30, "scene.json: camera.fov_y: expected a number of degrees in [0.001, 180)");
    expect("/camera/target", {0, 0, 5}, "scene.json: camera.eye: eye and target are the same point");
    expect("/camera/up", {0, 0, 2}, "scene.json: camera.up: up is zero or parallel to the viewing direction");
    expect("/camera/far", 0.01, "scene.json: camera.far: expected far > near (near is 0.05, far 0.01)");
    expect("/camera/resolution", {256.5, 256}, "scene.json: camera.resolution: expected [width, height] of positive integers");
    expect("/background", "red", "scene.json: background: expected [r, g, b] or \"environment\" (the scene's "
                                 "environment or sh light behind it)");
    expect("/background", {0, -1, 0}, "scene.json: background: expected [r, g, b] of numbers >= 0");
    expect("/materials/base/shininess", "high", "scene.json: materials.base.shininess: expected a number >= 0");
    expect("/meshes/0/scale", 0, "scene.json: meshes[0].scale: expected a non-zero number or [x, y, z] of non-zero numbers");
    expect("/meshes/0/rotation", {{"axis", {0, 0, 0}}, {"angle", 3}}, "scene.json: meshes[0].rotation.axis: expected a non-zero axis");
    expect("/meshes/0/rotation", {{"quaternion", {1, 0, 0}}},
           "scene.json: meshes[0].rotation.quaternion: expected [w, x, y, z] of numbers, not all zero");
    expect("/meshes/0/vertex_colors", 1, "scene.json: meshes[0].vertex_colors: expected true or false");
    expect("/meshes/0/material", "fur",
           "scene.json: meshes[0].material: no material named fur (materials: base; or \"mtl\" for the OBJ's MTL file, "
           "\"gltf\" for the glTF file's materials)");
    expect("/meshes/0/name", "", "scene.json: meshes[0].name: expected a non-empty string");
    expect("/meshes", Json::array(), "scene.json: meshes: expected a list of at least one mesh");
    expect("/lights/0/type", "spot", "scene.json: lights[0].type: expected one of \"point\", \"directional\", \"ambient\", \"sh\", "
                                         "\"environment\"");
    expect("/lights/0/intensity", -1, "scene.json: lights[0].intensity: expected a number >= 0");
    expect("/lights/1", {{"name", "key"}, {"type", "ambient"}}, "scene.json: lights[1].name: another light is already named key");
    expect("/lights/1", {{"name", "sun"}, {"type", "directional"}, {"direction", {0, 0, 0}}},
           "scene.json: lights[1].direction: expected a non-zero direction");
    expect("/render/visibility", "fuzzy", "scene.json: render.visibility: expected one of \"hard\", \"antialias\", \"soft\"");
    for (double sigma : {0.0, 1.5})
        expect("/render/soft/sigma", sigma, "scene.json: render.soft.sigma: expected a number in (0, 1] (past 1 every "
                                            "triangle reaches every pixel of the image)");
    // A gamma of 1e-40 rendered NaN (the blend's exponents overflow); below 1e-6 they lose their precision.
    expect("/render/soft/gamma", 9e-7, "scene.json: render.soft.gamma: expected a number >= 1e-6 (float's exponents "
                                       "z / gamma lose their precision below)");
    expect("/render/soft/faces_per_pixel", 0, "scene.json: render.soft.faces_per_pixel: expected an integer in [1, 256]");
    expect("/render/soft/faces_per_pixel", 2.5, "scene.json: render.soft.faces_per_pixel: expected an integer in [1, 256]");
    expect("/render/soft/faces_per_pixel", 257, "scene.json: render.soft.faces_per_pixel: expected an integer in [1, 256]");
    expect("/views", Json::array(), "scene.json: views: expected at least one view");
    expect("/views", {{{"eye", {0, 0, 3}}, {"resolution", {8, 8}}}},
           "scene.json: views[0].resolution: views take their resolution from camera.resolution");
    expect("/views", {{"orbit", {{"count", 0}}}}, "scene.json: views.orbit.count: expected an integer in [1, 4096]");
    expect("/views", {{"orbit", {{"count", 4}, {"elevation", {-90, 10}}}}},
           "scene.json: views.orbit.elevation: expected [lo, hi] of degrees in (-90, 90)");
    expect("/materials/base", {{"albedo", {1, 1, 1}}, {"albedo_texture", "t.png"}},
           "scene.json: materials.base: give albedo or albedo_texture, not both");
    expect("/materials/mtl", {{"albedo", {1, 1, 1}}},
           "scene.json: materials.mtl: the name \"mtl\" is reserved (a mesh's \"material\": \"mtl\" reads its OBJ's MTL "
           "file, \"gltf\" its glTF file's materials)");
    expect("/materials/gltf", {{"albedo", {1, 1, 1}}},
           "scene.json: materials.gltf: the name \"gltf\" is reserved (a mesh's \"material\": \"mtl\" reads its OBJ's "
           "MTL file, \"gltf\" its glTF file's materials)");

    // faces_per_pixel lists fill 2^24 entries at most: at 1024x1024, 16 a pixel.
    {
        Json big = minimal_scene();
        big["camera"]["resolution"] = {1024, 1024};
        big["render"] = {{"visibility", "soft"}, {"soft", {{"faces_per_pixel", 16}}}};
        EXPECT_EQ(load(big).render.soft_faces_per_pixel, 16u);
        big["render"]["soft"]["faces_per_pixel"] = 17;
        EXPECT_EQ(error_of(big), "scene.json: render.soft.faces_per_pixel: expected an integer in [1, 16] (2^24 list "
                                 "entries over the view's 1048576 pixels)");
    }

    Json j = minimal_scene();
    j.erase("camera");
    EXPECT_EQ(error_of(j), "scene.json: camera: required key is missing");
    j = minimal_scene();
    j["camera"].erase("resolution");
    EXPECT_EQ(error_of(j), "scene.json: camera.resolution: required key is missing");
    EXPECT_EQ(error_of_text("[1, 2]"), "scene.json: (top level): expected an object");
}

TEST_F(SceneErrors, MissingFilesNameTheFileAndTheSystemsReason) {
    Json j = minimal_scene();
    j["meshes"].push_back({{"name", "floor"}, {"file", "meshes/plane.obj"}, {"material", "mtl"}});
    EXPECT_EQ(error_of(j), "scene.json: meshes[1].file: cannot read meshes/plane.obj: No such file or directory");

    write("meshes/plane.obj", "mtllib plane.mtl\nv 0 0 0\nv 1 0 0\nv 0 0 1\nusemtl a\nf 1 3 2\n");
    EXPECT_EQ(error_of(j), "scene.json: meshes[1].material: cannot read meshes/plane.mtl: No such file or directory");
    write("meshes/plane.obj", "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 3 2\n");
    EXPECT_EQ(error_of(j), "scene.json: meshes[1].material: meshes/plane.obj names no MTL file (mtllib)");
    write("meshes/plane.obj", "mtllib plane.mtl\nv 0 0 0\nv 1 0 0\nv 0 0 1\nusemtl a\nf 1 3 2\n");
    write("meshes/plane.mtl", "newmtl a\nmap_Kd tex/a.png\n");
    EXPECT_EQ(error_of(j), "scene.json: meshes[1].material: cannot read meshes/tex/a.png: No such file or directory");
    write("meshes/plane.mtl", "newmtl a\nNs 3\n");
    EXPECT_EQ(error_of(j), "scene.json: meshes[1].material: the MTL material a has neither Kd nor map_Kd");
    write("meshes/plane.mtl", "newmtl b\nKd 1 1 1\n");
    EXPECT_EQ(error_of(j), "scene.json: meshes[1].material: meshes/plane.obj line 5: usemtl a names no material of its "
                           "MTL files (b)");
    write("meshes/plane.obj", "mtllib plane.mtl\nv 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 3 2\nusemtl b\nf 1 3 2\n");
    EXPECT_EQ(error_of(j), "scene.json: meshes[1].material: meshes/plane.obj has faces before any usemtl: they have "
                           "no material of its MTL file");

    j = minimal_scene();
    j["materials"]["base"] = {{"albedo_texture", "textures/fur.png"}};
    EXPECT_EQ(error_of(j), "scene.json: materials.base.albedo_texture: cannot read textures/fur.png: No such file or directory");
    write("textures/fur.png", "not a png");
    EXPECT_EQ(error_of(j), "scene.json: materials.base.albedo_texture: textures/fur.png: cannot decode the image: it is not a PNG or JPEG file");
    std::filesystem::create_directories(dir() / "textures/folder.png");
    j["materials"]["base"] = {{"albedo_texture", "textures/folder.png"}};
    EXPECT_EQ(error_of(j), "scene.json: materials.base.albedo_texture: cannot read textures/folder.png: Is a directory");

    try {
        load_scene(dir() / "nothing.json");
        ADD_FAILURE();
    } catch (const SceneError& e) {
        EXPECT_EQ(std::string(e.what()), "cannot read " + (dir() / "nothing.json").string() + ": No such file or directory");
    }
}

TEST_F(SceneErrors, BadObjFiles) {
    Json j = minimal_scene();
    write("meshes/cube.obj", "# only points\nv 0 0 0\nv 1 0 0\n");
    EXPECT_EQ(error_of(j), "scene.json: meshes[0].file: meshes/cube.obj has no faces");
    write("meshes/cube.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n");
    EXPECT_EQ(error_of(j), "scene.json: meshes[0].file: meshes/cube.obj line 4: a face refers to position 7 of 3");
    // UTF-16 text (here without a byte-order mark) read as nothing but empty lines: "has no faces".
    std::string utf16;
    for (char c : std::string("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")) utf16 += std::string{c, '\0'};
    write("meshes/cube.obj", utf16);
    EXPECT_EQ(error_of(j), "scene.json: meshes[0].file: meshes/cube.obj is UTF-16 or binary, not text: OBJ is read "
                           "as ASCII or UTF-8");
    write("meshes/cube.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 0\n");
    EXPECT_EQ(error_of(j).rfind("scene.json: meshes[0].file: cannot parse meshes/cube.obj: Failed parse `f' line", 0), 0u)
        << error_of(j);
    // Too large for float's normals (its edges' cross product squared): a triangle 6e9 across rendered with ambient
    // light only, one 2e20 across not at all. 2e9 across loads; 6e9, or 2e9 scaled by 3, is refused.
    write("meshes/cube.obj", "v -1e9 -1e9 0\nv 1e9 -1e9 0\nv 0 1e9 0\nf 1 2 3\n");
    EXPECT_NO_THROW(load(j));
    j["meshes"][0]["scale"] = 3;
    EXPECT_EQ(error_of(j), "scene.json: meshes[0]: its vertices lie 8.49e+09 scene units apart (its scale applied), "
                           "beyond what a triangle's normal holds in float (4e9): scale it down");
    j["meshes"][0].erase("scale");
    write("meshes/cube.obj", "v -1e20 -1e20 0\nv 1e20 -1e20 0\nv 0 1e20 0\nf 1 2 3\n");
    EXPECT_EQ(error_of(j), "scene.json: meshes[0]: its vertices lie more than 3e38 scene units apart (its scale "
                           "applied), beyond what a triangle's normal holds in float (4e9): scale it down");
}

TEST_F(SceneErrors, TexturedMaterialNeedsTexcoords) {
    Json j = minimal_scene();
    write_solid_png("textures/fur.png", 2, 2, 1, 2, 3);
    write("meshes/cube.obj", bare_cube_obj);
    j["materials"]["base"] = {{"albedo_texture", "textures/fur.png"}};
    EXPECT_EQ(error_of(j), "scene.json: meshes[0].material: meshes/cube.obj has no texture coordinates (vt) on every "
                           "face, which the textured material base needs");
}

TEST_F(SceneErrors, DuplicateNames) {
    Json j = minimal_scene();
    j["meshes"].push_back(j["meshes"][0]);
    EXPECT_EQ(error_of(j), "scene.json: meshes[1].name: another mesh is already named cube");
    // An MTL material's name "<mesh>/<MTL name>" must not clash with a scene material.
    j = minimal_scene();
    write("meshes/plane.obj", "mtllib plane.mtl\nv 0 0 0\nv 1 0 0\nv 0 0 1\nusemtl a\nf 1 3 2\n");
    write("meshes/plane.mtl", "newmtl a\nKd 1 1 1\n");
    j["materials"]["floor/a"] = {{"albedo", {1, 1, 1}}};
    j["meshes"].push_back({{"name", "floor"}, {"file", "meshes/plane.obj"}, {"material", "mtl"}});
    EXPECT_EQ(error_of(j), "scene.json: meshes[1].material: the MTL material a is named floor/a, which another "
                           "material already has");
}

TEST_F(SceneErrors, ResolutionZeroOrTooLarge) {
    Json j = minimal_scene();
    j["camera"]["resolution"] = {0, 256};
    EXPECT_EQ(error_of(j), "scene.json: camera.resolution: expected [width, height] of positive integers");
    j["camera"]["resolution"] = {256, -3};
    EXPECT_EQ(error_of(j), "scene.json: camera.resolution: expected [width, height] of positive integers");
    j["camera"]["resolution"] = {8193, 16};
    EXPECT_EQ(error_of(j), "scene.json: camera.resolution: 8193x16 is larger than 8192 per side");
    j["camera"]["resolution"] = {8192, 8192};
    EXPECT_NO_THROW(load(j));

    for (const char* bad : {"0x10", "10x", "x10", "10", "10x10x", "9000x10", "-5x10", "10X10"}) {
        try {
            parse_resolution(bad);
            ADD_FAILURE() << bad;
        } catch (const SceneError& e) {
            EXPECT_EQ(std::string(e.what()), std::string("--resolution: expected WxH with each side in 1..8192, got \"") + bad + "\"");
        }
    }
}

// A count written as a float with no fraction (Python's json writes 300.0 for a count computed with `/`) is that
// integer; a fraction, or a float past 2^53 (not exactly an integer any more), is not.
TEST_F(SceneErrors, WholeFloatsAreIntegers) {
    Json j = minimal_scene();
    j["format"] = 1.0;
    j["camera"]["resolution"] = {64.0, 48.0};
    j["views"] = {{"orbit", {{"count", 4.0}}}};
    j["optimize"] = {{"parameters", {{"lights.key.intensity", {{"init", 2}}}}}, {"iterations", 300.0},
                     {"views_per_iteration", 2.0}, {"seed", 7.0}};
    const Scene scene = load(j);
    EXPECT_EQ(scene.camera.width, 64u);
    EXPECT_EQ(scene.camera.height, 48u);
    EXPECT_EQ(scene.views.size(), 4u);
    EXPECT_EQ(scene.optimize->iterations, 300u);
    EXPECT_EQ(scene.optimize->views_per_iteration, 2u);
    EXPECT_EQ(scene.optimize->seed, 7u);
    j["format"] = 1.5;
    EXPECT_EQ(error_of(j), "scene.json: format: expected 1 (the scene format this program reads)");
    j["format"] = 1;
    j["camera"]["resolution"] = {64.5, 48};
    EXPECT_EQ(error_of(j), "scene.json: camera.resolution: expected [width, height] of positive integers");
    j["camera"]["resolution"] = {64, 48};
    j["optimize"]["seed"] = 1e17;
    EXPECT_EQ(error_of(j), "scene.json: optimize.seed: expected an integer >= 0");
}

TEST_F(SceneErrors, OptimizeSettingsOutOfRange) {
    const auto expect = [&](const char* key, Json value, const std::string& message) {
        Json j = minimal_scene();
        j["views"] = {{"orbit", {{"count", 8}}}};
        j["optimize"] = {{"parameters", {{"lights.key.intensity", {{"init", 2}}}}}};
        j["optimize"][key] = std::move(value);
        EXPECT_EQ(error_of(j), message) << key;
    };
    expect("iterations", -1, "scene.json: optimize.iterations: expected an integer in [0, 1000000000]");
    expect("iterations", 2.5, "scene.json: optimize.iterations: expected an integer in [0, 1000000000]");
    expect("iterations", 2e9, "scene.json: optimize.iterations: expected an integer in [0, 1000000000]");
    expect("views_per_iteration", 0, "scene.json: optimize.views_per_iteration: expected an integer in [1, 8] (the number of views)");
    expect("views_per_iteration", 9, "scene.json: optimize.views_per_iteration: expected an integer in [1, 8] (the number of views)");
    expect("loss", "l3", "scene.json: optimize.loss: expected one of \"l2\", \"l1\", \"silhouette\"");
    expect("optimizer", "lbfgs", "scene.json: optimize.optimizer: expected one of \"adam\", \"sgd\"");
    expect("momentum", 0.5, "scene.json: optimize.momentum: momentum applies to the sgd optimizer only");
    expect("betas", {0.9, 1.0}, "scene.json: optimize.betas: expected [beta1, beta2] of numbers in [0, 1)");
    expect("lr_decay", 0, "scene.json: optimize.lr_decay: expected a number > 0");
    expect("seed", -4, "scene.json: optimize.seed: expected an integer >= 0");
    expect("regularizers", {{"laplace", 1}}, "scene.json: optimize.regularizers.laplace: unknown key (expected one of: laplacian, edge_length)");
    expect("target", "truth", "scene.json: optimize.target: expected \"scene\", \"views\" or {\"images\": [...]}");
    expect("parameters", Json::object(), "scene.json: optimize.parameters: expected at least one parameter");
}

TEST_F(SceneErrors, TargetImages) {
    Json j = minimal_scene();
    j["views"] = {{"orbit", {{"count", 2}}}};
    j["optimize"] = {{"target", {{"images", {"targets/view_{view}.png"}}}},
                     {"parameters", {{"lights.key.intensity", {{"init", 2}}}}}};
    EXPECT_EQ(error_of(j), "scene.json: optimize.target.images[0]: cannot read targets/view_0.png: No such file or directory");
    write_solid_png("targets/view_0.png", 8, 8, 0, 0, 0);
    write_solid_png("targets/view_1.png", 4, 4, 0, 0, 0);
    EXPECT_EQ(load(j).optimize->target_images.at(1).width, 8u);   // another size is resampled to the views'
    // Another aspect was stretched to the views' without a word.
    write_solid_png("targets/view_1.png", 12, 8, 0, 0, 0);
    EXPECT_EQ(error_of(j), "scene.json: optimize.target.images[0]: targets/view_1.png is 12x8, another aspect than "
                           "the views' 8x8: it would be stretched to them; crop it to their aspect, or give the "
                           "views its aspect");
    write_solid_png("targets/view_1.png", 4, 4, 0, 0, 0);
    j["optimize"]["target"]["images"] = {"targets/view_0.png"};
    EXPECT_EQ(error_of(j), "scene.json: optimize.target.images: 1 image for 2 views (give one per view, or a path with {view})");
    j["optimize"]["target"]["images"] = {"targets/view_0.png", "targets/view_0.png", "targets/view_0.png"};
    EXPECT_EQ(error_of(j), "scene.json: optimize.target.images: 3 images for 2 views (give one per view, or a path with {view})");
    j["optimize"]["target"]["images"] = {"targets/view_0.png", "targets/view_0.png"};
    Scene scene = load(j);
    try {
        override_resolution(scene, {16, 16});
        ADD_FAILURE();
    } catch (const SceneError& e) {
        EXPECT_EQ(std::string(e.what()), "scene.json: --resolution: 16x16 differs from the target image targets/view_0.png (8x8)");
    }
    LoadOptions options;
    options.resolution = Resolution{4, 4};
    EXPECT_EQ(load_scene_from_string(j.dump(), dir(), "scene.json", options).optimize->target_images.at(0).width, 4u);
    // A side of 0 (the Python package's Scene(resolution=...) passes it on) left the renderer no pixel.
    options.resolution = Resolution{0, 4};
    try {
        load_scene_from_string(j.dump(), dir(), "scene.json", options);
        ADD_FAILURE();
    } catch (const SceneError& e) {
        EXPECT_EQ(std::string(e.what()), "resolution: expected each side in 1..8192, got 0x4");
    }
}

} // namespace
} // namespace adjoint::app::test
