// Surfaces that run under the camera, drawn without cutting their triangles (render/raster.h's homogeneous_edges):
// the antialias walk blends a floor's far edge, whose triangle has a corner behind the camera, and leaves a roof's
// ridge (a fold whose far vertices lie behind the camera) unblended, as it does for the same meshes cut so that those
// triangles lie wholly in front; soft visibility draws such triangles' part beyond the near plane.
#include "io_test_util.h"
#include "support/device_fixture.h"

#include <adjoint/app/renderer.h>

#include <algorithm>
#include <cmath>
#include <fstream>

namespace adjoint::test {

namespace {

const std::filesystem::path kAssets = std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets";

// A scene of one mesh, `obj` written to dir/name.obj, under `lights` (JSON), on black, seen from `camera` (JSON
// members) at 64x64 with `visibility` (or, starting with a quote, the render block's members); `mesh`: more members
// of the mesh.
app::Scene one_mesh(const std::filesystem::path& dir, const std::string& name, const std::string& obj,
                    const std::string& camera, const std::string& lights, const std::string& visibility,
                    const std::string& mesh = "") {
    const std::string render = visibility[0] == '"' ? visibility : R"("visibility": ")" + visibility + "\"";
    const std::filesystem::path file = dir / (name + ".obj");
    std::ofstream(file) << obj;
    return app::load_scene_from_string(R"({
  "format": 1,
  "camera": { )" + camera + R"(, "fov_y": 50, "resolution": [64, 64] },
  "background": [0, 0, 0],
  "materials": { "white": { "albedo": [1, 1, 1] } },
  "meshes": [ { "name": ")" + name + R"(", "file": ")" + file.string() + R"(", "material": "white")" + mesh + R"( } ],
  "lights": )" + lights + R"(,
  "render": { )" + render + R"( }
})", kAssets, name + ".json");
}

const std::string kFloorCamera = R"("eye": [0, 0.2, 3], "target": [0, -0.5, 0])";
const std::string kSky = R"([ { "name": "sky", "type": "ambient", "intensity": 1 } ])";

// A white floor at y = -1 from z = -6 to 8 (the camera stands at z = 3) under ambient light 1, on black. `cut_at`:
// the floor as two quads that meet there (4 triangles), else one quad (2 triangles, both reaching behind the camera).
app::Scene floor_scene(const std::filesystem::path& dir, const char* visibility, const char* cut_at) {
    const std::string obj = cut_at ? "v -6 -1 -6\nv 6 -1 -6\nv 6 -1 " + std::string(cut_at) + "\nv -6 -1 " + cut_at +
                                         "\nv 6 -1 8\nv -6 -1 8\nf 1 4 3 2\nf 4 6 5 3\n"
                                   : "v -6 -1 -6\nv 6 -1 -6\nv 6 -1 8\nv -6 -1 8\nf 1 4 3 2\n";
    return one_mesh(dir, "floor", obj, kFloorCamera, kSky, visibility);
}

// A roof whose ridge runs along z under the camera (x = 0, y = -0.5, from z = -6 to 8), its two slopes flat-shaded
// under a sun from the left and up, on black: `cut`, each slope as two quads that meet at z = 2.
app::Scene roof_scene(const std::filesystem::path& dir, bool cut) {
    std::string obj = "v -4 -1.5 -6\nv 0 -0.5 -6\nv 4 -1.5 -6\nv -4 -1.5 8\nv 0 -0.5 8\nv 4 -1.5 8\n"
                      "v -4 -1.5 2\nv 0 -0.5 2\nv 4 -1.5 2\nvn -1 4 0\nvn 1 4 0\n";
    obj += cut ? "f 1//1 2//1 8//1 7//1\nf 7//1 8//1 5//1 4//1\nf 2//2 3//2 9//2 8//2\nf 8//2 9//2 6//2 5//2\n"
               : "f 1//1 2//1 5//1 4//1\nf 2//2 3//2 6//2 5//2\n";
    return one_mesh(dir, "roof", obj, R"("eye": [0.3, 0, 3], "target": [0, -0.6, 0])",
                    R"([ { "name": "sun", "type": "directional", "direction": [1, -1, 0], "intensity": 1 } ])",
                    "antialias");
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

// Soft visibility clips a triangle that reaches nearer than the near plane at it (render/soft_dsl.h's
// clip_triangle). A floor triangle with two corners behind the camera draws as the triangle of its part
// in front: rgb and alpha as the triangle cut at z = 2 (its cut edge lies below the image's bottom, out of reach), with
// the same perspective-correct vertex colours. One with a corner behind draws as its quad, which the cut mesh holds as
// two triangles: the same but near the cut's diagonal, where SoftRas's coverage dips at a mesh's inner edge (alpha
// 1 - (1 - 1/2)^2 = 0.75 on it), and which the comparison leaves out (3 pixels either side).
TEST_F(UnderTheCamera, SoftVisibilityDrawsATrianglesPartBeyondTheNearPlane) {
    app::test::TempDir tmp;
    struct Case {
        const char *whole, *cut;
        float3 diagonal[2];   // the cut mesh's inner edge (none where both ends are equal)
    };
    const Case cases[] = {
        {"v 0 -1 -20 1 0 0\nv -30 -1 10 0 1 0\nv 30 -1 10 0 0 1\nf 1 2 3\n",
         "v 0 -1 -20 1 0 0\nv -22 -1 2 0.26666667 0.73333333 0\nv 22 -1 2 0.26666667 0 0.73333333\nf 1 2 3\n",
         {{0, 0, 0}, {0, 0, 0}}},
        {"v -20 -1 -20 1 0 0\nv 20 -1 -20 0 1 0\nv 0 -1 10 0 0 1\nf 1 2 3\n",
         "v -20 -1 -20 1 0 0\nv 20 -1 -20 0 1 0\nv 5.3333333 -1 2 0 0.26666667 0.73333333\n"
         "v -5.3333333 -1 2 0.26666667 0 0.73333333\nf 1 2 3\nf 1 3 4\n",
         {{-20, -1, -20}, {5.3333333f, -1, 2}}},
    };
    for (const Case& c : cases) {
        const std::string colours = R"(, "vertex_colors": true)";
        const app::Scene whole = one_mesh(tmp.path(), "whole", c.whole, kFloorCamera, kSky, "soft", colours);
        ASSERT_GT(app::triangles_across_the_eye(whole.meshes[0], whole.views[0]), 0u);
        const app::Scene cut = one_mesh(tmp.path(), "cut", c.cut, kFloorCamera, kSky, "soft", colours);
        ASSERT_EQ(app::triangles_across_the_eye(cut.meshes[0], cut.views[0]), 0u);
        const app::LinearImage a = app::SceneRenderer(device, whole).render(0);
        const app::LinearImage b = app::SceneRenderer(device, cut).render(0);
        // The diagonal in pixels.
        const float4x4 m = app::view_projection_matrix(whole.views[0]);
        float2 ends[2];
        for (int e = 0; e < 2; ++e) {
            const float3 p = c.diagonal[e];
            float q[4];
            for (size_t r = 0; r < 4; ++r) q[r] = m[0][r] * p.x + m[1][r] * p.y + m[2][r] * p.z + m[3][r];
            ends[e] = {(q[0] / q[3] * 0.5f + 0.5f) * 64.0f, (0.5f - q[1] / q[3] * 0.5f) * 64.0f};
        }
        const float dx = ends[1].x - ends[0].x, dy = ends[1].y - ends[0].y, length = std::hypot(dx, dy);
        int covered = 0, compared = 0;
        for (size_t i = 0; i < a.texels.size(); ++i) {
            const float x = float(i % 64) + 0.5f, y = float(i / 64) + 0.5f;
            covered += a.texels[i].w > 0.999f;
            if (length > 0 && std::fabs(dx * (y - ends[0].y) - dy * (x - ends[0].x)) / length < 3.0f) continue;
            ++compared;
            const float4 u = a.texels[i], v = b.texels[i];
            const float d = std::max({std::fabs(u.x - v.x), std::fabs(u.y - v.y), std::fabs(u.z - v.z),
                                      std::fabs(u.w - v.w)});
            EXPECT_LT(d, 1e-3f) << "pixel " << i % 64 << ", " << i / 64 << ": " << u.x << " " << u.y << " " << u.z
                                << " " << u.w << " against " << v.x << " " << v.y << " " << v.z << " " << v.w;
        }
        EXPECT_GT(covered, 1500);    // the lower two thirds and more
        EXPECT_GT(compared, 3000);
    }
}

// With faces_per_pixel, the selection keeps the fragments the exact blend counts beyond a near plane that cuts the
// view (camera.near 2.5: the floor fades out below its line): their nearest points lie on the
// line, where rounding put about 1% of them an ulp before the plane and the selection's near test dropped them
// (a reviewer's simulation). The floor, a triangle whose odd corner is its second (the other test's are first and
// third), is the one candidate of its pixels, so K = 8 keeps it and the two images are the same.
TEST_F(UnderTheCamera, SoftFacesPerPixelKeepsWhatTheExactBlendCountsBeyondANearLineInView) {
    app::test::TempDir tmp;
    const std::string obj = "v -30 -1 10 0 1 0\nv 0 -1 -20 1 0 0\nv 30 -1 10 0 0 1\nf 1 2 3\n";
    const std::string camera = kFloorCamera + R"(, "near": 2.5)";
    const std::string colours = R"(, "vertex_colors": true)";
    const auto render = [&](const std::string& faces) {
        const app::Scene scene = one_mesh(tmp.path(), "floor", obj, camera, kSky,
                                          R"("visibility": "soft", "soft": { "sigma": 1e-3)" + faces + " }", colours);
        return app::SceneRenderer(device, scene).render(0);
    };
    const app::LinearImage exact = render(""), kept = render(R"(, "faces_per_pixel": 8)");
    int fading = 0;
    for (size_t i = 0; i < exact.texels.size(); ++i) {
        const float4 u = exact.texels[i], v = kept.texels[i];
        fading += i / 64 > 40 && u.w > 0.01f && u.w < 0.99f;
        EXPECT_LT(std::max({std::fabs(u.x - v.x), std::fabs(u.y - v.y), std::fabs(u.z - v.z), std::fabs(u.w - v.w)}),
                  1e-5f)
            << "pixel " << i % 64 << ", " << i / 64 << ": " << u.w << " against " << v.w;
    }
    EXPECT_GT(fading, 60);   // the fade below the near plane's line crosses the image
}

} // namespace adjoint::test
