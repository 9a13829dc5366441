// The glTF and dataset demos, reduced: gltf.json recovers the file's own pbr materials (base colours and the
// copper's roughness) from three views; dataset.json recovers a colour and a light's position from the
// project's NeRF-format dataset assets/datasets/knot8. ADJOINT_FULL_DEMOS=1 runs them at their own size and
// length instead (the figures in assets/README.md come from that), printing the measures.
#include "support/device_fixture.h"

#include <adjoint/app/optimization.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace adjoint::test {

namespace {

bool full() {
    const char* v = std::getenv("ADJOINT_FULL_DEMOS");
    return v && std::string(v) == "1";
}

app::Scene demo(const std::string& name, uint32_t size, uint32_t iterations) {
    app::LoadOptions lo;
    if (!full()) lo.resolution = app::Resolution{size, size};
    auto s = app::load_scene(std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets" / "scenes" / name, lo);
    if (!full()) s.optimize->iterations = iterations;
    return s;
}

void run(app::Optimizer& opt) {
    while (opt.iteration() < opt.total_iterations()) opt.step();
}

// The largest difference of a parameter's floats from `truth`.
double max_error(app::Optimizer& opt, const std::string& path, std::vector<float> truth) {
    for (const auto& p : opt.parameters())
        if (p.path == path) {
            double e = 0;
            for (size_t i = 0; i < truth.size(); ++i) e = std::max(e, std::abs(double(p.value[i]) - truth[i]));
            return e;
        }
    ADD_FAILURE() << "no parameter " << path;
    return 1e9;
}

} // namespace

class AssetDemos : public DeviceTest {};

// The truth is the glTF file's: copper [0.9, 0.5, 0.3] roughness 0.35, paint [0.2, 0.45, 0.7].
TEST_F(AssetDemos, GltfMaterialsAreRecovered) {
    auto scene = demo("gltf.json", 64, 150);
    app::Optimizer opt(device, scene);
    run(opt);
    const double copper = max_error(opt, "materials.knot/copper.base_color", {0.9f, 0.5f, 0.3f});
    const double roughness = max_error(opt, "materials.knot/copper.roughness", {0.35f});
    const double paint = max_error(opt, "materials.knot/paint.base_color", {0.2f, 0.45f, 0.7f});
    std::printf("gltf: copper base colour %.4f, roughness %.4f, paint base colour %.4f (max abs error)\n", copper,
                roughness, paint);
    EXPECT_LT(copper, 0.03);
    EXPECT_LT(roughness, 0.03);
    EXPECT_LT(paint, 0.03);
}

// The truth is tools/make_dataset.py's: albedo [0.8, 0.35, 0.15], key light at [1.5, 2.5, 2].
TEST_F(AssetDemos, DatasetColourAndLightAreRecovered) {
    auto scene = demo("dataset.json", 96, 500);   // the photographs' own size: no resampling between them
    app::Optimizer opt(device, scene);
    run(opt);
    const double albedo = max_error(opt, "materials.knot.albedo", {0.8f, 0.35f, 0.15f});
    const double light = max_error(opt, "lights.key.position", {1.5f, 2.5f, 2.0f});
    std::printf("dataset: albedo %.4f, light position %.4f (max abs error), loss %.3g\n", albedo, light,
                opt.evaluate());
    EXPECT_LT(albedo, 0.02);   // from 0.35 off
    EXPECT_LT(light, 0.08);    // from 2.5 off
}

} // namespace adjoint::test
