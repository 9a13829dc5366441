// Surfaces that run under the camera, drawn without cutting their triangles (render/raster.h's homogeneous_edges):
// the antialias walk blends a floor's far edge, whose triangle has a corner behind the camera, and leaves a roof's
// ridge (a fold whose far vertices lie behind the camera) unblended, as it does for the same meshes cut so that those
// triangles lie wholly in front.
#include "io_test_util.h"
#include "support/device_fixture.h"

#include <adjoint/app/renderer.h>

#include <cmath>
#include <fstream>

namespace adjoint::test {

namespace {

const std::filesystem::path kAssets = std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets";

// A white floor at y = -1 from z = -6 to 8 (the camera stands at z = 3) under ambient light 1, on black. `cut_at`:
// the floor as two quads that meet there (4 triangles), else one quad (2 triangles, both reaching behind the camera).
app::Scene floor_scene(const std::filesystem::path& dir, const char* visibility, const char* cut_at) {
    std::ofstream obj(dir / "floor.obj");
    if (cut_at) {
        obj << "v -6 -1 -6\nv 6 -1 -6\nv 6 -1 " << cut_at << "\nv -6 -1 " << cut_at << "\nv 6 -1 8\nv -6 -1 8\n"
            << "f 1 4 3 2\nf 4 6 5 3\n";
    } else {
        obj << "v -6 -1 -6\nv 6 -1 -6\nv 6 -1 8\nv -6 -1 8\nf 1 4 3 2\n";
    }
    obj.close();
    return app::load_scene_from_string(R"({
  "format": 1,
  "camera": { "eye": [0, 0.2, 3], "target": [0, -0.5, 0], "fov_y": 50, "resolution": [64, 64] },
  "background": [0, 0, 0],
  "materials": { "white": { "albedo": [1, 1, 1] } },
  "meshes": [ { "name": "floor", "file": ")" + (dir / "floor.obj").string() + R"(", "material": "white" } ],
  "lights": [ { "name": "sky", "type": "ambient", "intensity": 1 } ],
  "render": { "visibility": ")" + visibility + R"(" }
})", kAssets, "floor.json");
}

// A roof whose ridge runs along z under the camera (x = 0, y = -0.5, from z = -6 to 8), its two slopes flat-shaded
// under a sun from the left and up, on black: `cut`, each slope as two quads that meet at z = 2.
app::Scene roof_scene(const std::filesystem::path& dir, bool cut) {
    std::ofstream obj(dir / "roof.obj");
    obj << "v -4 -1.5 -6\nv 0 -0.5 -6\nv 4 -1.5 -6\nv -4 -1.5 8\nv 0 -0.5 8\nv 4 -1.5 8\n"
        << "v -4 -1.5 2\nv 0 -0.5 2\nv 4 -1.5 2\nvn -1 4 0\nvn 1 4 0\n";
    if (cut) {
        obj << "f 1//1 2//1 8//1 7//1\nf 7//1 8//1 5//1 4//1\nf 2//2 3//2 9//2 8//2\nf 8//2 9//2 6//2 5//2\n";
    } else {
        obj << "f 1//1 2//1 5//1 4//1\nf 2//2 3//2 6//2 5//2\n";
    }
    obj.close();
    return app::load_scene_from_string(R"({
  "format": 1,
  "camera": { "eye": [0.3, 0, 3], "target": [0, -0.6, 0], "fov_y": 50, "resolution": [64, 64] },
  "background": [0, 0, 0],
  "materials": { "white": { "albedo": [1, 1, 1] } },
  "meshes": [ { "name": "roof", "file": ")" + (dir / "roof.obj").string() + R"(", "material": "white" } ],
  "lights": [ { "name": "sun", "type": "directional", "direction": [1, -1, 0], "intensity": 1 } ],
  "render": { "visibility": "antialias" }
})", kAssets, "roof.json");
}

} // namespace

class UnderTheCamera : public DeviceTest {};

TEST_F(UnderTheCamera, AFloorsFarEdgeIsBlendedAsWhenItsTrianglesLieInFront) {
    app::test::TempDir tmp;
    for (const char* visibility : {"hard", "antialias"}) {
        const app::Scene whole = floor_scene(tmp.path(), visibility, nullptr);
        ASSERT_EQ(app::triangles_across_the_eye(whole.meshes[0], whole.views[0]), 2u);
        const app::LinearImage a = app::SceneRenderer(device, whole).render(0);
        const app::Scene cut = floor_scene(tmp.path(), visibility, "2");
        ASSERT_EQ(app::triangles_across_the_eye(cut.meshes[0], cut.views[0]), 2u);   // the back quad's
        const app::LinearImage b = app::SceneRenderer(device, cut).render(0);
        int floor = 0, blended = 0;
        for (size_t i = 0; i < a.texels.size(); ++i) {
            EXPECT_NEAR(a.texels[i].x, b.texels[i].x, 1e-4f) << visibility << ": pixel " << i % 64 << ", " << i / 64;
            floor += a.texels[i].x > 0.999f;
            blended += a.texels[i].x > 0.02f && a.texels[i].x < 0.98f;
        }
        EXPECT_GT(floor, 1500) << visibility;   // the lower part of the image
        if (std::string(visibility) == "antialias") {
            EXPECT_GT(blended, 40);   // the far edge crosses the image's 64 columns
        } else {
            EXPECT_EQ(blended, 0);
        }
    }
}

// The ridge is a fold, not a silhouette: its pixels keep their slopes' colours (0.857 and 0.514), unblended, in both.
TEST_F(UnderTheCamera, ARidgeWhoseFarVerticesLieBehindTheCameraIsNotASilhouette) {
    app::test::TempDir tmp;
    const app::Scene whole = roof_scene(tmp.path(), false);
    ASSERT_EQ(app::triangles_across_the_eye(whole.meshes[0], whole.views[0]), 4u);
    const app::LinearImage a = app::SceneRenderer(device, whole).render(0);
    const app::LinearImage b = app::SceneRenderer(device, roof_scene(tmp.path(), true)).render(0);
    int left = 0, right = 0;
    for (size_t i = 0; i < a.texels.size(); ++i) {
        EXPECT_NEAR(a.texels[i].x, b.texels[i].x, 1e-4f) << "pixel " << i % 64 << ", " << i / 64;
        left += std::fabs(a.texels[i].x - 5 / std::sqrt(34.0f)) < 1e-3f;
        right += std::fabs(a.texels[i].x - 3 / std::sqrt(34.0f)) < 1e-3f;
    }
    EXPECT_GT(left, 500);
    EXPECT_GT(right, 500);
}

} // namespace adjoint::test
