// Which side of a surface the shading sees: a smooth sphere lit from the side keeps its dark half dark and its
// lit half lit up to the silhouette (where interpolated normals lean past the view direction), and a quad seen
// from behind is lit as its back (two-sided shading), in the static and the dynamic chains.
#include "support/device_fixture.h"

#include <adjoint/app/renderer.h>

#include <string>

namespace adjoint::test {

namespace {

const std::filesystem::path kAssets = std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets";

// A white smooth sphere (or the floor quad seen from below) on a black background under a sun travelling
// along `direction`, no ambient light: a pixel is lit exactly where the shading normal faces the sun.
app::Scene facing_scene(const std::string& mesh, const std::string& eye, const std::string& direction,
                        const std::string& visibility) {
    return app::load_scene_from_string(R"({
  "format": 1,
  "camera": { "eye": )" + eye + R"(, "target": [0, 0, 0], "fov_y": 38, "resolution": [96, 96] },
  "background": [0, 0, 0],
  "materials": { "white": { "albedo": [1, 1, 1] } },
  "meshes": [ { "name": "m", "file": ")" + mesh + R"(", "material": "white" } ],
  "lights": [ { "name": "sun", "type": "directional", "direction": )" + direction + R"(, "intensity": 1 } ],
  "render": { "visibility": ")" + visibility + R"(" }
})", kAssets, "facing.json");
}

} // namespace

class Facing : public DeviceTest {};

// The sun travels along -x, so the sphere's right half (+x, seen from +z) is lit. Every covered pixel two
// pixels or more left of the centre column is black, and every one two or more right of it is lit. Turning
// the interpolated normal by its own facing lit a pixel on the dark half's silhouette and darkened its mirror
// on the lit half (uv_sphere.obj at 96x96: pixels (21, 68) and (74, 68)).
TEST_F(Facing, ASmoothSilhouetteKeepsItsSidesLighting) {
    for (const char* visibility : {"hard", "antialias"}) {
        const app::Scene scene = facing_scene("meshes/uv_sphere.obj", "[0, 0.8, 4.2]", "[-1, 0, 0]", visibility);
        app::SceneRenderer renderer(device, scene);
        const app::LinearImage img = renderer.render(0);
        const auto samples = app::rasterize_view(device, scene, 0);
        auto covered = [&](int x, int y) { return samples[size_t(y) * 96 + x].covered; };
        int dark = 0, lit = 0;
        for (int y = 1; y < 95; ++y)
            for (int x = 1; x < 95; ++x) {
                const float v = img.texels[size_t(y) * 96 + x].x;
                if (x <= 45) {   // the background is black too
                    EXPECT_LT(v, 1e-6f) << visibility << ": pixel (" << x << ", " << y << ") on the dark half";
                    dark += covered(x, y);
                } else if (x >= 50 && covered(x, y) && covered(x - 1, y) && covered(x + 1, y) && covered(x, y - 1) &&
                           covered(x, y + 1)) {   // antialias blends the rim with the background
                    EXPECT_GT(v, 1e-3f) << visibility << ": pixel (" << x << ", " << y << ") on the lit half";
                    ++lit;
                }
            }
        EXPECT_GT(dark, 800) << visibility;
        EXPECT_GT(lit, 800) << visibility;
    }
}

// The floor quad (facing +y) seen from below, the sun shining up from below: its back faces the camera and
// the sun, so it is lit (the normal turned to the camera's side); with the sun above it is black.
TEST_F(Facing, AQuadSeenFromBehindIsLitFromBehind) {
    for (const char* visibility : {"hard", "antialias"}) {
        for (const bool from_below : {true, false}) {
            const app::Scene scene = facing_scene("meshes/quad.obj", "[0.3, -3, 1.5]",
                                                  from_below ? "[0.2, 1, 0.1]" : "[0.2, -1, 0.1]", visibility);
            app::SceneRenderer renderer(device, scene);
            const app::LinearImage img = renderer.render(0);
            ASSERT_TRUE(app::rasterize_view(device, scene, 0)[size_t(48) * 96 + 48].covered);
            const float4 centre = img.texels[size_t(48) * 96 + 48];
            if (from_below)
                EXPECT_GT(centre.x, 0.5f) << visibility;
            else
                EXPECT_LT(centre.x, 1e-6f) << visibility;
        }
    }
}

} // namespace adjoint::test
