// The Optimizer's studio hooks: render_current into a device buffer is the host render_current, bit for bit;
// a learning rate set during a run acts exactly as the same rate given in the scene file; the saved state holds the
// parameter slots' floats without the layout's gaps.
#include "render/scene_data.h"
#include "support/device_fixture.h"
#include "support/error_text.h"

#include <adjoint/app/optimization.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace adjoint::test {

namespace {

std::string scene_text(float texture_lr) {
    return R"({
  "format": 1,
  "camera": { "eye": [0, 0.9, 3.6], "target": [0, 0, 0], "fov_y": 40, "resolution": [32, 24] },
  "views": [ { "eye": [0, 0.9, 3.6] }, { "eye": [2.5, 0.5, 2.5] } ],
  "background": [0.1, 0.1, 0.1],
  "materials": { "skin": { "albedo_texture": "textures/colourful_128.png" } },
  "meshes": [ { "name": "ball", "file": "meshes/uv_sphere.obj", "material": "skin" } ],
  "lights": [ { "name": "key", "type": "point", "position": [1.5, 2.5, 2], "intensity": 9 },
              { "name": "fill", "type": "ambient", "intensity": 0.2 } ],
  "optimize": {
    "target": "scene",
    "parameters": {
      "materials.skin.albedo_texture": { "init": [0.5, 0.5, 0.5], "resolution": [8, 8], "lr": )" +
           std::to_string(texture_lr) + R"( },
      "lights.key.intensity": { "init": 6, "lr": 0.05 }
    },
    "iterations": 10, "views_per_iteration": 2
  }
})";
}

app::Scene load(float texture_lr) {
    return app::load_scene_from_string(scene_text(texture_lr), std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets",
                                       "hooks.json");
}

} // namespace

class StudioHooks : public DeviceTest {};

TEST_F(StudioHooks, RenderCurrentIntoABufferIsTheHostRender) {
    app::Optimizer opt(device, load(0.03f));
    opt.step();
    for (uint32_t view : {0u, 1u}) {
        app::LinearImage host = opt.render_current(view);
        auto buffer = device.create_buffer<float4>(32 * 24);
        opt.render_current(view, buffer);
        std::vector<float4> got(32 * 24);
        stream << buffer.copy_to(got.data()) << synchronize();
        ASSERT_EQ(host.texels.size(), got.size());
        EXPECT_EQ(std::memcmp(host.texels.data(), got.data(), got.size() * sizeof(float4)), 0) << "view " << view;
    }
    auto wrong = device.create_buffer<float4>(10);
    EXPECT_EQ(error_of([&] { opt.render_current(0, wrong); }),
              "render_current: the buffer holds 10 texels, the view has 768");
    EXPECT_EQ(error_of([&] { opt.render_current(2, wrong); }),
              "render_current: view 2 does not exist (the scene has 2)");
}

// The texture is optimized at 8x8 against a 128x128 truth: its error is against the truth box-filtered to 8x8 (it
// was unknown: an empty loss.csv column), as is the truth report.png and params.json show. The init's grey 0.5 is
// off by the truth's deviations from 0.5; the error falls as the texture learns.
TEST_F(StudioHooks, ATextureAtAnotherSizeThanItsTruthHasAnError) {
    const app::Scene scene = load(0.03f);
    app::Optimizer opt(device, scene);
    const std::vector<float> truth = app::parameter_value_at_its_size(scene, scene.optimize->parameters[0]);
    ASSERT_EQ(truth.size(), 8u * 8u * 3u);
    std::vector<app::ParameterState> p = opt.parameters();
    ASSERT_TRUE(p[0].true_value.has_value());
    EXPECT_EQ(*p[0].true_value, truth);
    double d2 = 0, t2 = 0;
    for (size_t i = 0; i < truth.size(); ++i) {
        d2 += (0.5 - truth[i]) * (0.5 - truth[i]);
        t2 += double(truth[i]) * truth[i];
    }
    ASSERT_TRUE(p[0].error.has_value());
    EXPECT_NEAR(*p[0].error, std::sqrt(d2 / std::max(t2, 1.0)), 1e-4);
    const app::IterationReport first = opt.step();
    ASSERT_EQ(first.errors.size(), 2u);
    ASSERT_TRUE(first.errors[0].has_value());   // loss.csv's column
    for (int i = 0; i < 30; ++i) opt.step();
    EXPECT_LT(*opt.parameters()[0].error, 0.9 * *p[0].error);
}

TEST_F(StudioHooks, ALearningRateSetMidRunActsAsTheFilesRate) {
    // Two steps at 0.03, then 0.12 from the third on, against a run whose file says 0.12 for steps 3..5 (its
    // state after two steps at 0.03 is loaded first).
    app::Optimizer a(device, load(0.03f)), b(device, load(0.12f)), c(device, load(0.03f));
    a.step();
    a.step();
    b.load_state(a.save_state());
    c.load_state(a.save_state());
    a.set_learning_rate(0, 0.12f);
    EXPECT_FLOAT_EQ(a.parameters()[0].lr, 0.12f);
    EXPECT_FLOAT_EQ(a.parameters()[1].lr, 0.05f);
    for (int i = 0; i < 3; ++i) {
        a.step();
        b.step();
        c.step();
    }
    // Gradients are summed with atomics in no fixed order, so runs agree to rounding, not bit for bit.
    auto max_diff = [](const std::vector<float>& x, const std::vector<float>& y) {
        EXPECT_EQ(x.size(), y.size());
        float d = 0;
        for (size_t i = 0; i < std::min(x.size(), y.size()); ++i) d = std::max(d, std::fabs(x[i] - y[i]));
        return d;
    };
    const auto pa = a.parameters(), pb = b.parameters(), pc = c.parameters();
    EXPECT_LT(max_diff(pa[0].value, pb[0].value), 1e-5f);
    EXPECT_LT(max_diff(pa[1].value, pb[1].value), 1e-5f);
    EXPECT_GT(max_diff(pa[0].value, pc[0].value), 1e-2f);   // the new rate moved the texture further
}

// The state a checkpoint saves holds the slots' floats back to back (ParamLayout::pack), not the gaps before texture
// slots on the device: the same floats as before the slots were aligned, so older checkpoints load. It loads back
// exactly, and a state of another length is refused.
TEST_F(StudioHooks, SavedStateHoldsTheSlotsFloatsWithoutTheLayoutsGaps) {
    const app::Scene scene = load(0.03f);
    app::Optimizer a(device, scene), b(device, scene);
    const app::ParamLayout layout = app::make_layout(a.current_scene());   // the texture at its 8x8
    ASSERT_LT(layout.packed_size(), layout.size) << "a gap before the texture's slot (the material's 7 floats)";
    a.step();
    a.step();
    app::OptimizerState st = a.save_state();
    EXPECT_EQ(st.params.size(), layout.packed_size());
    ASSERT_EQ(st.arrays.size(), 2u);
    for (const auto& [name, data] : st.arrays) EXPECT_EQ(data.size(), layout.packed_size()) << name;
    b.load_state(st);
    EXPECT_EQ(b.free_values(), a.free_values());
    EXPECT_EQ(b.save_state().arrays, st.arrays);
    st.params.resize(layout.size);
    EXPECT_EQ(error_of([&] { b.load_state(st); }), "the checkpoint holds " + std::to_string(layout.size) +
                                                     " parameter floats, this scene " +
                                                     std::to_string(layout.packed_size()));
}

TEST_F(StudioHooks, BadLearningRatesAreRefused) {
    app::Optimizer opt(device, load(0.03f));
    EXPECT_EQ(error_of([&] { opt.set_learning_rate(2, 0.1f); }),
              "set_learning_rate: parameter 2 does not exist (the scene has 2 free parameters)");
    EXPECT_EQ(error_of([&] { opt.set_learning_rate(1, 0.0f); }),
              "set_learning_rate: lights.key.intensity: the learning rate must be a number > 0, got 0");
    EXPECT_EQ(error_of([&] { opt.set_learning_rate(1, -1.0f); }),
              "set_learning_rate: lights.key.intensity: the learning rate must be a number > 0, got -1");
}

// set_target (adjoint.torch's vector-Jacobian products keep one optimizer): with the views' own renders at the
// current values plus 0.25 in every channel as targets, the l2 loss is 0.25^2 at every pixel, the background's
// included (the static chain makes its terms again for the new targets); the old targets give the old loss
// back; an image of another size is refused.
TEST_F(StudioHooks, SetTargetReplacesAViewsTargetEverywhere) {
    app::Optimizer opt(device, load(0.03f));
    const double before = opt.evaluate();
    ASSERT_GT(before, 1e-4);
    const app::LinearImage old0 = opt.target(0), old1 = opt.target(1);
    for (uint32_t view : {0u, 1u}) {
        app::LinearImage shifted = opt.render_current(view);
        for (float4& t : shifted.texels) t = float4{t.x + 0.25f, t.y + 0.25f, t.z + 0.25f, t.w};
        opt.set_target(view, shifted);
    }
    EXPECT_NEAR(opt.evaluate(), 0.0625, 1e-6);
    opt.set_target(0, old0);
    opt.set_target(1, old1);
    EXPECT_DOUBLE_EQ(opt.evaluate(), before);
    app::LinearImage small;
    small.width = small.height = 2;
    small.texels.resize(4);
    EXPECT_EQ(error_of([&] { opt.set_target(1, small); }), "set_target: view 1 is 32x24, the image 2x2");
}

} // namespace adjoint::test
