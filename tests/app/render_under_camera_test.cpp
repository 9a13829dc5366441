// A floor that runs under the camera, drawn without cutting its triangles (render/raster.cpp's setup_triangle): the
// antialias walk blends its far edge, whose triangle has a corner behind the camera, as it blends the same floor cut
// so that the far edge's triangles lie wholly in front.
#include "io_test_util.h"
#include "support/device_fixture.h"

#include <adjoint/app/renderer.h>

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

} // namespace adjoint::test
