// An iteration's report holds one iteration: every error column measured at the values that iteration rendered.
#include "support/device_fixture.h"

#include <adjoint/app/optimization.h>

#include <cmath>
#include <filesystem>

namespace adjoint::test {

class OptimizeReport : public DeviceTest {};

// A rotation's and a direction's errors, measured on the host, were read after the step had moved them: row 0
// of loss.csv gave a 30-degree perturbation as 19.76 degrees while the albedo beside it was at its start.
TEST_F(OptimizeReport, TheFirstRowHoldsTheStartValuesOfEveryKind) {
    const app::Scene scene = app::load_scene_from_string(R"({ "format": 1,
      "camera": { "eye": [0, 0.8, 4.2], "target": [0, 0, 0], "fov_y": 38, "resolution": [32, 32] },
      "materials": { "m": { "albedo": [0.8, 0.4, 0.2] } },
      "meshes": [ { "name": "knot", "file": "meshes/torus_knot.obj", "material": "m" } ],
      "lights": [ { "name": "sun", "type": "directional", "direction": [-0.4, -1, -0.5], "intensity": 2 },
                  { "name": "fill", "type": "ambient", "intensity": 0.2 } ],
      "optimize": { "parameters": {
          "meshes.knot.rotation": { "perturb": 30, "lr": 0.05 },
          "lights.sun.direction": { "init": [1, 1, 1], "lr": 0.05 },
          "materials.m.albedo": { "init": [0.4, 0.4, 0.4], "lr": 0.05 } }, "iterations": 4 } })",
                                                         std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets",
                                                         "report.json");
    app::Optimizer opt(device, scene);
    const app::IterationReport first = opt.step();
    ASSERT_EQ(first.errors.size(), 3u);
    ASSERT_TRUE(first.errors[0] && first.errors[1] && first.errors[2]);
    EXPECT_NEAR(*first.errors[0], 30.0, 1e-3);   // degrees: the perturbation
    const double cosine = (-0.4 - 1 - 0.5) / (std::sqrt(3.0) * std::sqrt(0.16 + 1 + 0.25));
    EXPECT_NEAR(*first.errors[1], std::acos(cosine) * 180 / M_PI, 1e-3);
    // Relative: the difference's length over the truth's, at least 1 (the truth's is 0.92 here).
    EXPECT_NEAR(*first.errors[2], std::sqrt(0.4 * 0.4 + 0.2 * 0.2), 1e-5);
    ASSERT_TRUE(first.param_error);   // the worst, in radians for an angle (here the direction's)
    EXPECT_NEAR(*first.param_error, std::max(30 * M_PI / 180, std::acos(cosine)), 1e-5);
    // The next row: each moved by its one step, the rotation no longer at 30.
    const app::IterationReport second = opt.step();
    EXPECT_GT(std::abs(*second.errors[0] - 30.0), 1e-3);
}

} // namespace adjoint::test
