// The shadows' light-space grids (render/shadow_grid.h) against the brute-force loop over every triangle
// (ADJOINT_SHADOW_GRID=0): the same images and the same gradients, within float rounding (the
// grid only changes the order the candidates' logarithms are summed in), with a sun and a point light; and a
// cell too long for lavapipe's loop limit refused with a message naming the light.
#include "finite_difference.h"
#include "support/device_fixture.h"

#include <adjoint/app/optimization.h>
#include <adjoint/app/renderer.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <fstream>
#include <string>

namespace adjoint::test {

namespace {

const std::filesystem::path kAssets = std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets";

// A sphere (1,280 triangles) and a box over a 200-triangle floor, under a sun and a lamp that both cast
// shadows, and a little ambient light; seen from the side, so that both shadows and the sphere's own
// shadowed side are in view. In soft the brute force loops over all 1,492 triangles for each light and each of
// a pixel's fragments, 2,984 iterations a fragment: the soft stage takes a pixel's list in parts of
// 16,384 / 2,985 = 5 entries (SoftStage::forward, ShadowGrid::point_loops), where one part of the whole list
// passed lavapipe's 65,535 loop iterations.
std::string grid_scene(const std::string& render, const std::string& optimize = "") {
    return R"({
  "format": 1,
  "camera": { "eye": [0.6, 2.8, 3.2], "target": [0, 0.3, 0], "fov_y": 45, "resolution": [48, 48] },
  "background": [0.1, 0.1, 0.1],
  "materials": { "floor": { "albedo": [0.6, 0.6, 0.6] }, "dark": { "albedo": [0.3, 0.2, 0.1] } },
  "meshes": [
    { "name": "ball", "file": "meshes/ico_sphere.obj", "material": "dark", "scale": 0.45, "translation": [-0.3, 0.8, 0.2] },
    { "name": "box", "file": "meshes/box.obj", "material": "dark", "scale": 0.35, "translation": [0.6, 0.5, -0.3],
      "rotation": { "axis": [0, 1, 0], "angle": 25 } },
    { "name": "floor", "file": "meshes/plane.obj", "material": "floor" }
  ],
  "lights": [ { "name": "sun", "type": "directional", "direction": [-0.4, -1, -0.3], "intensity": 1.2, "shadows": true },
              { "name": "lamp", "type": "point", "position": [0.9, 2.2, 0.8], "intensity": 5, "shadows": true },
              { "name": "fill", "type": "ambient", "intensity": 0.1 } ],
  "render": )" + render + (optimize.empty() ? std::string() : ",\n  \"optimize\": " + optimize) + "\n}";
}

app::Scene load(const std::string& text) { return app::load_scene_from_string(text, kAssets, "grid.json"); }

// `count` copies of one triangle at height 0.5, `half` wide each way, all on the same spot: as many triangles in
// the light-space cells under it. Returns the OBJ file's path.
std::filesystem::path write_stack(const std::string& name, float half, int count) {
    const auto dir = std::filesystem::path(ADJOINT_BINARY_DIR) / "shadow_grid_test";
    std::filesystem::create_directories(dir);
    std::ofstream obj(dir / name);
    obj << "v " << -half << " 0.5 " << -half << "\nv " << half << " 0.5 " << -half << "\nv 0 0.5 " << half << "\n";
    for (int i = 0; i < count; ++i) obj << "f 1 2 3\n";
    return dir / name;
}

// While it lives, renderers made test every triangle (ADJOINT_SHADOW_GRID=0, read when one is made).
struct BruteForce {
    BruteForce() { setenv("ADJOINT_SHADOW_GRID", "0", 1); }
    ~BruteForce() { unsetenv("ADJOINT_SHADOW_GRID"); }
};

const char* kModes[] = {R"({ "visibility": "hard" })", R"({ "visibility": "antialias" })",
                        R"({ "visibility": "soft", "soft": { "sigma": 1e-3, "gamma": 1e-2 } })"};

} // namespace

class ShadowGrid : public DeviceTest {};

// Every pixel of the grid's image equals the brute force's within float rounding, in every visibility mode;
// the scene has shadows (pixels darker than the same scene without them) so the comparison means something.
TEST_F(ShadowGrid, ImagesEqualTheBruteForce) {
    for (const char* render : kModes) {
        const std::string text = grid_scene(render);
        app::SceneRenderer grid(device, load(text));
        const app::LinearImage a = grid.render(0);
        app::LinearImage b;
        {
            BruteForce brute_force;
            app::SceneRenderer brute(device, load(text));
            b = brute.render(0);
        }
        app::Scene unshadowed = load(text);
        for (app::Light& l : unshadowed.lights) l.shadows = false;
        const app::LinearImage lit = app::SceneRenderer(device, unshadowed).render(0);
        ASSERT_EQ(a.texels.size(), b.texels.size());
        float worst = 0;
        int shadowed = 0;
        for (size_t i = 0; i < a.texels.size(); ++i) {
            for (int k = 0; k < 4; ++k) worst = std::max(worst, std::fabs(a.texels[i][k] - b.texels[i][k]));
            shadowed += b.texels[i].x < lit.texels[i].x - 0.02f;
        }
        EXPECT_LT(worst, 1e-5f) << render;
        EXPECT_GT(shadowed, 80) << render;
    }
}

// The optimizer's gradient (lights' position and direction, the sphere's translation, the box's vertices)
// through the grid equals the brute force's, float for float within rounding, and is not zero.
TEST_F(ShadowGrid, GradientsEqualTheBruteForce) {
    const std::string optimize = R"({ "target": "scene", "parameters": {
        "lights.sun.direction": { "init": [-0.45, -1, -0.25] }, "lights.lamp.position": { "init": [0.95, 2.15, 0.85] },
        "meshes.ball.translation": { "init": [-0.28, 0.82, 0.21] }, "meshes.box.vertices": { "perturb": 0.01 } } })";
    for (const char* render : {kModes[1], kModes[2]}) {
        const std::string text = grid_scene(render, optimize);
        app::Optimizer grid(device, load(text));
        std::vector<float> ga, gb;
        const double la = grid.evaluate(&ga);
        BruteForce brute_force;
        app::Optimizer brute(device, load(text));
        const double lb = brute.evaluate(&gb);
        EXPECT_NEAR(la, lb, 1e-6 * std::fabs(lb)) << render;
        ASSERT_EQ(ga.size(), gb.size());
        double largest = 0;
        for (float g : gb) largest = std::max(largest, double(std::fabs(g)));
        ASSERT_GT(largest, 1e-4) << render;
        int nonzero = 0;
        for (size_t i = 0; i < ga.size(); ++i) {
            EXPECT_NEAR(ga[i], gb[i], 1e-4 * std::fabs(gb[i]) + 1e-5 * largest) << render << " float " << i;
            nonzero += std::fabs(gb[i]) > 1e-6 * largest;
        }
        EXPECT_GE(nonzero, 9) << render;   // both lights' vectors and the translation at least
    }
}

// 61,000 triangles stacked on one spot put as many in one cell of the sun's grid: more than a shaded point may
// loop over on lavapipe. The render is refused, naming the scene, the light and the count.
TEST_F(ShadowGrid, ACellTooLongIsRefused) {
    const auto stack = write_stack("stack.obj", 0.1f, 61000);
    const std::string text = R"({ "format": 1,
      "camera": { "eye": [0, 3, 2], "target": [0, 0, 0], "fov_y": 45, "resolution": [16, 16] },
      "materials": { "m": { "albedo": [0.5, 0.5, 0.5] } },
      "meshes": [ { "name": "stack", "file": ")" + stack.string() + R"(", "material": "m" },
                  { "name": "floor", "file": "meshes/quad.obj", "material": "m" } ],
      "lights": [ { "name": "sun", "type": "directional", "direction": [0, -1, 0], "shadows": true } ],
      "render": { "visibility": "hard" } })";
    app::SceneRenderer renderer(device, load(text));
    try {
        renderer.render(0);
        FAIL() << "a cell of 61,000 triangles was rendered";
    } catch (const app::SceneError& e) {
        EXPECT_NE(std::string(e.what()).find("grid.json: lights[0].shadows: light \"sun\": its shadows would test 6100"),
                  std::string::npos) << e.what();
    }
}

// 10,000 triangles stacked: cells within the budget, and most of the image (the stack's top and the floor under
// it) shades points whose cell holds all of them. The shading runs over the covered pixels' list, one pixel a
// thread where lights cast shadows: with eight a thread, as without shadows, a thread's loops would run up to
// 80,000 iterations and lavapipe would stop them. The image is the unshadowed one but for the stack's shadow.
TEST_F(ShadowGrid, ACellWithinTheBudgetRenders) {
    const auto stack = write_stack("stack10k.obj", 0.4f, 10000);
    auto scene = [&](bool shadows) {
        return load(R"({ "format": 1,
          "camera": { "eye": [0.15, 2.5, 1.0], "target": [0.15, 0, 0], "fov_y": 25, "resolution": [16, 16] },
          "background": [0, 0, 0],
          "materials": { "m": { "albedo": [0.5, 0.5, 0.5] } },
          "meshes": [ { "name": "stack", "file": ")" + stack.string() + R"(", "material": "m" },
                      { "name": "floor", "file": "meshes/quad.obj", "material": "m" } ],
          "lights": [ { "name": "sun", "type": "directional", "direction": [0.6, -1, 0], "shadows": )" +
                    std::string(shadows ? "true" : "false") + R"( } ],
          "render": { "visibility": "antialias" } })");
    };
    const app::LinearImage lit = app::SceneRenderer(device, scene(false)).render(0);
    const app::LinearImage shadowed = app::SceneRenderer(device, scene(true)).render(0);
    int dark = 0, same = 0;
    for (size_t i = 0; i < lit.texels.size(); ++i) {
        const float d = lit.texels[i].x - shadowed.texels[i].x;
        EXPECT_GE(d, -1e-4f) << "pixel " << i << ": a shadow brightens nothing";
        dark += d > 0.2f;
        same += std::fabs(d) < 1e-4f && lit.texels[i].x > 0.2f;
    }
    EXPECT_GE(dark, 4) << "the stack's shadow on the floor";
    EXPECT_GE(same, 30) << "the lit floor and the stack's top";
}

} // namespace adjoint::test
