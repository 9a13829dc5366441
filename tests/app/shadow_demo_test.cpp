// The shadow demos, reduced: the sun's direction recovered from a box's shadow (sun-from-shadow.json) from
// starts 30 degrees away, and a box's height and rotation from a view that sees mostly its shadows
// (pose-from-shadow.json). ADJOINT_FULL_DEMOS=1 runs them at their own size and length instead, the sun from
// 10 random starts 30 degrees away (the README's figures come from that), printing the measures.
#include "support/device_fixture.h"

#include <adjoint/app/optimization.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

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

double angle_degrees(const std::vector<float>& a, const std::vector<float>& b) {
    double d = 0, na = 0, nb = 0;
    for (int k = 0; k < 3; ++k) d += double(a[k]) * b[k], na += double(a[k]) * a[k], nb += double(b[k]) * b[k];
    return std::acos(std::clamp(d / std::sqrt(na * nb), -1.0, 1.0)) * 180.0 / M_PI;
}

// The unit direction `degrees` away from t about a random axis perpendicular to it.
std::vector<float> turned(const float3& t, double degrees, std::mt19937& rng) {
    std::normal_distribution<double> n;
    const double tv[3] = {t.x, t.y, t.z};
    const double tl = std::sqrt(tv[0] * tv[0] + tv[1] * tv[1] + tv[2] * tv[2]);
    double u[3] = {tv[0] / tl, tv[1] / tl, tv[2] / tl}, r[3] = {n(rng), n(rng), n(rng)};
    const double ru = r[0] * u[0] + r[1] * u[1] + r[2] * u[2];
    for (int k = 0; k < 3; ++k) r[k] -= ru * u[k];
    const double rl = std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    const double a = degrees * M_PI / 180.0;
    std::vector<float> out(3);
    for (int k = 0; k < 3; ++k) out[size_t(k)] = float(u[k] * std::cos(a) + r[k] / rl * std::sin(a));
    return out;
}

// One run of sun-from-shadow from a start 30 degrees away (drawn from `seed`): the final error in degrees.
double sun_run(Device& device, uint32_t seed, uint32_t size, uint32_t iterations) {
    app::Scene scene = demo("sun-from-shadow.json", size, iterations);
    app::Optimizer opt(device, scene);
    std::mt19937 rng(seed);
    const std::vector<float> start = turned(scene.lights[0].direction, 30.0, rng);
    opt.set_free_values(start);
    const std::vector<float> truth = {scene.lights[0].direction.x, scene.lights[0].direction.y,
                                      scene.lights[0].direction.z};
    EXPECT_NEAR(angle_degrees(opt.free_values(), truth), 30.0, 1e-3);
    while (opt.iteration() < opt.total_iterations()) opt.step();
    return angle_degrees(opt.free_values(), truth);
}

} // namespace

class ShadowDemos : public DeviceTest {};

TEST_F(ShadowDemos, SunFromShadow) {
    const uint32_t starts = full() ? 10 : 2;
    int within = 0;
    for (uint32_t seed = 1; seed <= starts; ++seed) {
        const double e = sun_run(device, seed, 64, 150);
        within += e < 1.0;
        if (full()) std::printf("sun-from-shadow: start %u: %.2e degrees from the truth\n", seed, e);
        else EXPECT_LT(e, 1.0) << "start " << seed;
    }
    if (full()) {
        std::printf("sun-from-shadow: %d of %u starts 30 degrees away end within 1 degree\n", within, starts);
        EXPECT_GE(within, 9);
    }
}

TEST_F(ShadowDemos, PoseFromShadow) {
    app::Scene scene = demo("pose-from-shadow.json", 64, 200);
    app::Optimizer opt(device, scene);
    auto errors = [&] {
        double height = 0, degrees = 0;
        for (const auto& p : opt.parameters()) {
            if (p.kind == app::ParameterKind::mesh_translation) height = std::fabs(p.value[1] - (*p.true_value)[1]);
            if (p.kind == app::ParameterKind::mesh_rotation) degrees = *p.error * 180.0 / M_PI;
        }
        return std::pair{height, degrees};
    };
    const auto [h0, r0] = errors();
    while (opt.iteration() < opt.total_iterations()) opt.step();
    const auto [h1, r1] = errors();
    if (full()) std::printf("pose-from-shadow: height error %.4f -> %.2e, rotation %.2f -> %.2e degrees\n", h0, h1, r0, r1);
    EXPECT_GT(h0, 0.2);
    EXPECT_GT(r0, 10.0);
    EXPECT_LT(h1, 0.01);
    EXPECT_LT(r1, 1.0);
}

} // namespace adjoint::test
