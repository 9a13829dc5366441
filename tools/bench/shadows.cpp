// Section `shadows`: the cost of a sun's shadows, forward and per iteration, at 5k triangles and 256x256 in
// one run: without shadows, with the brute-force loop over every triangle (ADJOINT_SHADOW_GRID=0) and with
// the light-space grid (the default); then a 50k-triangle scene with the grid.
#include "bench.h"

#ifdef ADJOINT_BENCH_HAS_APP

#include <adjoint/app/optimization.h>
#include <adjoint/app/renderer.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

namespace adjoint::bench {

namespace fs = std::filesystem;

namespace {

// The 5k-triangle torus (or `meshes`, JSON) over a floor quad at 256x256, antialiased (the dynamic chain, as
// every scene with shadows), under a sun and an ambient light, the material's values and the sun's direction
// free. `iterate`: time optimizer steps too.
json shadow_case(Env& env, bool shadows, bool grid, const std::string& meshes, bool iterate) {
    const fs::path assets = fs::path(ADJOINT_SOURCE_DIR) / "assets";
    const std::string text = R"({"format": 1,
      "camera": { "eye": [0, 1.6, 4.2], "target": [0, -0.3, 0], "fov_y": 38, "resolution": [256, 256] },
      "materials": { "m": {"albedo": [0.8, 0.4, 0.2]}, "floor": {"albedo": [0.6, 0.6, 0.6]} },
      "meshes": [ )" + meshes + R"(,
                  { "name": "floor", "file": ")" + (assets / "meshes" / "quad.obj").string() +
                             R"(", "material": "floor", "translation": [0, -1.2, 0] } ],
      "lights": [ { "name": "sun", "type": "directional", "direction": [0.5, -1, -0.4], "intensity": 1, "shadows": )" +
                             std::string(shadows ? "true" : "false") + R"( },
                  { "name": "fill", "type": "ambient", "intensity": 0.25 } ],
      "render": { "visibility": "antialias" },
      "optimize": { "parameters": { "materials.m.albedo": {"init": [0.5, 0.5, 0.5]},
                                    "lights.sun.direction": {"init": [0.4, -1, -0.5]} }, "iterations": 1000000 } })";
    auto scene = app::load_scene_from_string(text, assets, "shadows.json");
    Device& device = env.device();
    Reps reps = env.reps({1, 2}, {1, 1});
    // The renderers read ADJOINT_SHADOW_GRID when they are made.
    if (!grid) setenv("ADJOINT_SHADOW_GRID", "0", 1);
    app::SceneRenderer renderer(device, scene);
    std::optional<app::Optimizer> opt;
    if (iterate) opt.emplace(device, scene);
    unsetenv("ADJOINT_SHADOW_GRID");
    json j;
    j["forward"] = measure(reps, [&] { renderer.render(0); }).to_json();
    if (opt) j["iteration"] = measure(reps, [&] { opt->step(); }).to_json();
    return j;
}

std::string knot(const std::string& name, float x, float z, float scale) {
    const fs::path file = fs::path(ADJOINT_SOURCE_DIR) / "assets" / "meshes" / "torus_knot.obj";
    return R"({ "name": ")" + name + R"(", "file": ")" + file.string() + R"(", "material": "m", "scale": )" +
           std::to_string(scale) + R"(, "translation": [)" + std::to_string(x) + ", 0, " + std::to_string(z) + "] }";
}

} // namespace

json bench_shadows(Env& env) {
    json out;
    if (env.quick()) {
        // Brute force takes seconds a render on lavapipe: too long for the smoke run (the tests run the code).
        out["shadows_5k_256"] = {{"skipped", "--quick"}};
        return out;
    }
    auto ms = [](const json& j, const char* what) { return j[what]["median_ms"].get<double>(); };
    const std::string one = knot("m", 0, 0, 1);
    json plain = shadow_case(env, false, true, one, true), brute = shadow_case(env, true, false, one, true),
         grid = shadow_case(env, true, true, one, true);
    out["shadows_5k_256"] = {
        {"what", "5,002 triangles (the torus and a floor quad) at 256x256, antialiased, a sun and an ambient light, "
                 "the albedo and the sun's direction free: the sun without shadows, with shadows testing every "
                 "triangle, with shadows from the light-space grid"},
        {"without_shadows", plain},
        {"brute_force", brute},
        {"grid", grid},
        {"grid_forward_over_without", ms(grid, "forward") / ms(plain, "forward")},
        {"grid_iteration_over_without", ms(grid, "iteration") / ms(plain, "iteration")},
        {"brute_force_forward_over_grid", ms(brute, "forward") / ms(grid, "forward")},
        {"brute_force_iteration_over_grid", ms(brute, "iteration") / ms(grid, "iteration")}};
    // Ten knots (51,200 triangles) in two rows over the floor: the brute force's loop would pass lavapipe's
    // 65,535 iterations at a shaded point under a shadowing light with a few more; the grid's cells hold tens.
    std::string ten;
    for (int i = 0; i < 10; ++i)
        ten += (i ? ", " : "") + knot("k" + std::to_string(i), -1.6f + 0.8f * float(i % 5), i < 5 ? -0.5f : 0.6f, 0.3f);
    json plain50 = shadow_case(env, false, true, ten, true), grid50 = shadow_case(env, true, true, ten, true);
    out["shadows_50k_256"] = {
        {"what", "ten torus knots (51,200 triangles) and the floor quad, otherwise as shadows_5k_256: without "
                 "shadows and with the grid's"},
        {"without_shadows", plain50},
        {"grid", grid50},
        {"grid_forward_over_without", ms(grid50, "forward") / ms(plain50, "forward")},
        {"grid_iteration_over_without", ms(grid50, "iteration") / ms(plain50, "iteration")}};
    return out;
}

} // namespace adjoint::bench

#endif // ADJOINT_BENCH_HAS_APP
