// The demos, reduced (128x128, fewer iterations), must converge past thresholds: the texture recovered from
// one view and from several, and a light with two albedos recovered to small parameter error.
#include "support/device_fixture.h"

#include <adjoint/app/optimization.h>

namespace adjoint::test {

namespace {

app::Scene demo(const std::string& name, uint32_t iterations) {
    app::LoadOptions lo;
    lo.resolution = app::Resolution{128, 128};
    auto s = app::load_scene(std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets" / "scenes" / name, lo);
    s.optimize->iterations = iterations;
    return s;
}

app::IterationReport run(app::Optimizer& opt) {
    app::IterationReport r;
    while (opt.iteration() < opt.total_iterations()) r = opt.step();
    return r;
}

} // namespace

class Demos : public DeviceTest {};

TEST_F(Demos, TextureFromOneView) {
    app::Optimizer opt(device, demo("texture.json", 120));
    auto first = opt.step();
    auto last = run(opt);
    EXPECT_LT(first.image_psnr, 22.0);
    EXPECT_GT(last.image_psnr, 30.0) << "loss " << last.loss;
    EXPECT_LT(last.loss, first.loss * 0.05);
}

TEST_F(Demos, TextureFromEightViews) {
    app::Optimizer opt(device, demo("texture-8views.json", 120));
    auto first = opt.step();
    auto last = run(opt);
    EXPECT_GT(last.image_psnr, first.image_psnr + 8.0);
    EXPECT_GT(last.image_psnr, 26.0);
}

TEST_F(Demos, MaterialAndLight) {
    app::Optimizer opt(device, demo("material-light.json", 1000));
    auto first = opt.step();
    auto last = run(opt);
    ASSERT_TRUE(first.param_error && last.param_error);
    EXPECT_GT(*first.param_error, 0.2);
    EXPECT_LT(*last.param_error, 3e-3);
}

} // namespace adjoint::test
