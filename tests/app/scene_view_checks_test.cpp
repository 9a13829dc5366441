// Meshes that no view shows: out_of_view names where a mesh's box lies against a view's frustum; adjoint-render
// warns, and an optimization that would see nothing move (at the scene's values or its start values) is refused
// as bad input, naming the field and why.
#include "io_test_util.h"

#include <adjoint/app/cli.h>
#include <adjoint/app/image_io.h>
#include <adjoint/app/run.h>

#include <fstream>
#include <sstream>

namespace adjoint::app::test {
namespace {

namespace fs = std::filesystem;

// A cube of side 1 at `at` (its transform), seen by a camera at the origin looking down -z (near 0.05, far 100).
std::string why(float3 at, float scale = 1.0f, float3 eye = {0, 0, 0}) {
    Mesh m;
    for (int c = 0; c < 8; ++c) m.positions.push_back(float3(c & 1 ? 0.5f : -0.5f, c & 2 ? 0.5f : -0.5f, c & 4 ? 0.5f : -0.5f));
    m.transform.translation = at;
    m.transform.scale = {scale, scale, scale};
    Camera cam;
    cam.eye = eye;
    cam.target = float3(eye.x, eye.y, eye.z - 1);
    cam.width = cam.height = 64;
    return out_of_view(m, cam);
}

TEST(OutOfView, NamesTheSideOfTheFrustumThatHoldsTheWholeBox) {
    EXPECT_EQ(why({0, 0, -5}), "");
    EXPECT_EQ(why({0, 0, -100}), "") << "across the far plane: part of it is inside";
    EXPECT_EQ(why({2, 0, -5}), "") << "across the side of the field of view";
    EXPECT_EQ(why({0, 0, -200}), "beyond camera.far (100): its nearest corner is 199.5 along the view (raise camera.far)");
    EXPECT_EQ(why({0, 0, 5}), "behind the camera");
    EXPECT_EQ(why({0, 0, -0.02f}, 0.01f), "nearer than camera.near (0.05; lower it)");
    EXPECT_EQ(why({50, 0, -5}), "outside the field of view");
    EXPECT_EQ(why({0, -50, -5}), "outside the field of view");
    // Level with the eye and off to one side: beside the view as well as nearer than near, where a lower near
    // would not show it (the message said to lower it).
    EXPECT_EQ(why({5, 0, 0}, 0.05f), "outside the field of view");
    // The box moves with the camera: the same offset from another eye.
    EXPECT_EQ(why({10, 20, -170}, 1.0f, {10, 20, 30}), "beyond camera.far (100): its nearest corner is 199.5 along the view (raise camera.far)");
}

const fs::path kSphere = fs::path(ADJOINT_SOURCE_DIR) / "assets" / "meshes" / "uv_sphere.obj";

// Two balls, "near" in front of the camera and "far" `far_z` down its view; `free` the optimize block's
// parameters.
std::string two_balls(float far_z, const std::string& free) {
    std::ostringstream s;
    s << R"({"format": 1,
      "camera": { "eye": [0, 0, 4], "target": [0, 0, 0], "resolution": [16, 16] },
      "materials": { "skin": { "albedo": [0.5, 0.5, 0.5] } },
      "meshes": [ { "name": "near", "file": ")" << kSphere.string() << R"(", "material": "skin" },
                  { "name": "far", "file": ")" << kSphere.string() << R"(", "material": "skin",
                    "translation": [0, 0, )" << far_z << R"(] } ],
      "lights": [ { "name": "key", "type": "point", "position": [2, 3, 3], "intensity": 14 } ],
      "render": { "visibility": "antialias" },
      "optimize": { "parameters": { )" << free << R"( }, "iterations": 2 } })";
    return s.str();
}

Scene load(const std::string& json) { return load_scene_from_string(json, fs::path(ADJOINT_SOURCE_DIR), "balls.json"); }

std::string refusal(const Scene& scene) {
    try {
        check_meshes_in_view(scene);
    } catch (const SceneError& e) {
        return e.what();
    }
    return "";
}

TEST(MeshesInView, AnOptimizationMovingAMeshNoViewShowsIsRefused) {
    const std::string free_far = R"("meshes.far.translation": { "perturb": 0.1 })";
    EXPECT_EQ(refusal(load(two_balls(-3, free_far))), "") << "both in view";
    const std::string e = refusal(load(two_balls(-300, free_far)));
    EXPECT_NE(e.find("balls.json"), std::string::npos) << e;
    EXPECT_NE(e.find("optimize.parameters.meshes.far.translation"), std::string::npos) << e;
    EXPECT_NE(e.find("meshes[1] 'far' lies beyond camera.far (100)"), std::string::npos) << e;
    EXPECT_NE(e.find("no gradient"), std::string::npos) << e;
    // A hidden mesh whose parameters are not free is no reason to refuse: the other one moves.
    EXPECT_EQ(refusal(load(two_balls(-300, R"("meshes.near.translation": { "perturb": 0.1 })"))), "");
}

TEST(MeshesInView, NoMeshInAnyViewIsRefusedWithWhyTheFirstIsHidden) {
    std::string json = two_balls(-300, R"("lights.key.intensity": { "init": 10 })");
    const std::string toward = R"("target": [0, 0, 0])";
    json.replace(json.find(toward), toward.size(), R"("target": [0, 0, 8])");   // facing away from both
    const Scene scene = load(json);
    const std::string e = refusal(scene);
    EXPECT_NE(e.find("camera: no view shows any mesh (meshes[0] 'near' lies "), std::string::npos) << e;
    EXPECT_NE(empty_view_warning(scene, 0).find("view 0 shows no mesh: meshes[0] 'near' lies"), std::string::npos);
    EXPECT_EQ(empty_view_warning(load(two_balls(-3, R"("lights.key.intensity": { "init": 10 })")), 0), "");
}

// The start values (init, or a seeded perturbation) make the first pictures: a mesh moved out of every view,
// a camera started at its target or looking along its up, is refused as the scene's own values would be.
TEST(MeshesInView, StartValuesThatShowNothingOrCannotLookAreRefused) {
    const std::string e = refusal(load(two_balls(-3, R"("meshes.near.translation": { "init": [0, 0, -500] })")));
    EXPECT_NE(e.find("optimize.parameters.meshes.near.translation: no view shows the mesh it moves at the start "
                     "values (meshes[0] 'near' lies beyond camera.far (100)"), std::string::npos) << e;
    EXPECT_EQ(refusal(load(two_balls(-3, R"("meshes.near.translation": { "init": [0, 0.2, 0] })"))), "");
    const std::string same = refusal(load(two_balls(-3, R"("camera.eye": { "init": [0, 0, 0] })")));
    EXPECT_NE(same.find("balls.json: optimize.parameters: at the start values, view 0's camera cannot look: eye and "
                        "target are the same point"), std::string::npos) << same;
    const std::string up = refusal(load(two_balls(-3, R"("camera.eye": { "init": [0, 5, 0] })")));
    EXPECT_NE(up.find("view 0's camera cannot look: up is zero or parallel to the viewing direction"),
              std::string::npos) << up;
    // An eye init at the file's target, with a target init elsewhere: a camera that looks, judged with both.
    const std::string both = R"("camera.eye": { "init": [0, 0, 0] }, "camera.target": { "init": [0, 0, -1] })";
    EXPECT_EQ(refusal(load(two_balls(-3, both))), "");
    const std::string away = refusal(load(two_balls(-3, R"("camera.target": { "init": [0, 0, 9] })")));
    EXPECT_NE(away.find("camera: no view shows any mesh at the start values"), std::string::npos) << away;
}

struct Result {
    int code = -1;
    std::string err;
};

Result run(const std::string& command) {
    TempDir tmp;
    const int st = std::system((command + " 2> " + (tmp / "err.txt").string()).c_str());
    std::ifstream in(tmp / "err.txt");
    std::stringstream ss;
    ss << in.rdbuf();
    return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, ss.str()};
}

// The programs: adjoint-optimize exits 2 before any work, adjoint-render warns and renders.
TEST(MeshesInView, TheProgramsSayWhyNothingShows) {
    TempDir tmp;
    std::string json = two_balls(-300, R"("meshes.far.rotation": { "perturb": 5 })");
    std::ofstream(tmp / "balls.json") << json;
    const std::string bin = std::string(ADJOINT_BINARY_DIR) + "/app/";
    const Result o = run(bin + "adjoint-optimize --quiet --scene " + (tmp / "balls.json").string() + " --out " +
                         (tmp / "out").string());
    EXPECT_EQ(o.code, exit_bad_input) << o.err;
    EXPECT_NE(o.err.find("optimize.parameters.meshes.far.rotation: no view shows the mesh it moves"), std::string::npos)
        << o.err;
    EXPECT_FALSE(fs::exists(tmp / "out" / "loss.csv"));
    json.replace(json.find("[0, 0, 4]"), 9, "[0, 0, 400]");   // both balls beyond far
    std::ofstream(tmp / "balls.json") << json;
    const Result r = run(bin + "adjoint-render --scene " + (tmp / "balls.json").string() + " --out " +
                         (tmp / "r.png").string());
    EXPECT_EQ(r.code, exit_ok) << r.err;
    EXPECT_NE(r.err.find("balls.json: view 0 shows no mesh: meshes[0] 'near' lies beyond camera.far (100)"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(fs::exists(tmp / "r.png"));
}

// A floor that runs under the camera and behind it: its triangles reach from behind the camera's plane into
// view, and the rasterizers, which did not clip there, drew none of them, with nothing said (a helper's floor from
// z = -10 to 3.01 under an eye at z = 3 rendered as background alone; to 2.96 it showed). Hard and antialias
// visibility draw them (render/raster.cpp), and soft visibility their part beyond the near plane (render/soft_dsl.h),
// with no warning: adjoint-render draws the floor at 0.5 (ambient light 1 on albedo 0.5).
TEST(MeshesInView, TrianglesFromBehindTheCameraAreDrawn) {
    TempDir tmp;
    const auto floor_to = [&](const char* z, const char* visibility) {
        std::ofstream(tmp / "floor.obj") << "v -10 -1 -10\nv 10 -1 -10\nv 10 -1 " << z << "\nv -10 -1 " << z
                                         << "\nf 1 4 3 2\n";
        std::ofstream(tmp / "floor.json") << R"({"format": 1,
          "camera": { "eye": [0, 0, 3], "target": [0, 0, 0], "resolution": [16, 16], "far": 50 },
          "render": { "visibility": ")" << visibility << R"(" },
          "materials": { "m": { "albedo": [0.5, 0.5, 0.5] } },
          "meshes": [ { "name": "floor", "file": "floor.obj", "material": "m" } ],
          "lights": [ { "name": "sun", "type": "ambient", "intensity": 1 } ] })";
        return load_scene(tmp / "floor.json");
    };
    EXPECT_EQ(triangles_across_the_eye(floor_to("3.01", "soft").meshes[0], floor_to("3.01", "soft").views[0]), 2u);
    EXPECT_EQ(triangles_across_the_eye(floor_to("2.96", "soft").meshes[0], floor_to("2.96", "soft").views[0]), 0u);
    const auto render = [&] {
        return run(std::string(ADJOINT_BINARY_DIR) + "/app/adjoint-render --scene " + (tmp / "floor.json").string() +
                   " --out " + (tmp / "r.png").string());
    };
    // The floor fills the image's rows 10-15: their rays meet it 8.8 to 2.9 along the view (row 9's, at 14.7, pass
    // its far edge). Soft visibility blends the far edge's row (10) and the side edges' columns over a pixel or so.
    for (const char* visibility : {"hard", "antialias", "soft"}) {
        (void)floor_to("3.01", visibility);
        const Result r = render();
        EXPECT_EQ(r.code, exit_ok) << r.err;
        EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
        const Image image = read_png_linear(tmp / "r.png");
        const bool soft = std::string(visibility) == "soft";
        for (int y = soft ? 11 : 10; y < 16; ++y)
            for (int x = 0; x < 16; ++x)
                EXPECT_NEAR(image.at(x, y, 0), 0.5f, 0.01f) << visibility << ": pixel " << x << ", " << y;
    }
}

} // namespace
} // namespace adjoint::app::test
