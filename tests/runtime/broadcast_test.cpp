// Built-ins given a scalar where a vector is expected (reflect(v, s), pow(v, s), lerp(a, b, t), ...): the
// value folded at compile time, the device's value (GLSL widens the scalar) and the interpreter's agree.
#include "support/device_fixture.h"
#include "support/host_run.h"

#include <cmath>

namespace adjoint::test {

namespace {

constexpr uint32_t kSlots = 10;

// Every broadcasting built-in once, on a = (1, 2, 3), b = (-1, 0.5, 4), s = 0.5, t = 2.5.
template <typename V, typename S>
void all_ops(BufferFloat3& out, const V& a, const V& b, const S& s, const S& t) {
    out.write(0u, reflect(a, s));
    out.write(1u, pow(a, t));
    out.write(2u, step(a, t));
    out.write(3u, fmod(a, t));
    out.write(4u, lerp(a, b, s));
    out.write(5u, clamp(a, s, t));
    out.write(6u, smoothstep(s, t, a));
    out.write(7u, fma(a, s, b));
    out.write(8u, atan2(s, b));
    out.write(9u, min(a, t) + max(s, b));
}

Kernel1D folded = [](BufferFloat3 out) noexcept {
    Float3 a = make_float3(1.0f, 2.0f, 3.0f);
    Float3 b = make_float3(-1.0f, 0.5f, 4.0f);
    all_ops(out, Expr<float3>(a), Expr<float3>(b), Expr<float>(0.5f), Expr<float>(2.5f));
};

Kernel1D computed = [](BufferFloat3 out, Float3 a, Float3 b, Float s, Float t) noexcept { all_ops(out, a, b, s, t); };

float3 f3(float x, float y, float z) { return float3{x, y, z}; }

} // namespace

class Broadcast : public DeviceTest {};

TEST_F(Broadcast, FoldedDeviceAndInterpreterAgree) {
    const float3 a = f3(1, 2, 3), b = f3(-1, 0.5f, 4);
    const float s = 0.5f, t = 2.5f;
    // The folded kernel holds no arithmetic: its values are the host's, written as constants.
    auto fs = device.compile(folded);
    EXPECT_EQ(fs.glsl().find("reflect("), std::string::npos) << fs.glsl();
    auto out_folded = device.create_buffer<float3>(kSlots);
    stream << fs(out_folded).dispatch(1);
    auto got_folded = download(stream, out_folded);

    auto cs = device.compile(computed);
    EXPECT_NE(cs.glsl().find("reflect("), std::string::npos) << cs.glsl();
    auto out_device = device.create_buffer<float3>(kSlots);
    stream << cs(out_device, a, b, s, t).dispatch(1);
    auto got_device = download(stream, out_device);

    std::vector<float3> got_host(kSlots);
    float3 ha = a, hb = b;
    float hs = s, ht = t;
    interpret(computed, {1, 1, 1}, got_host, ha, hb, hs, ht);

    // By hand: reflect(a, s) = a - 2 (s (1 + 2 + 3)) s = a - 3.
    EXPECT_EQ(got_folded[0].x, -2.0f);
    EXPECT_EQ(got_folded[0].y, -1.0f);
    EXPECT_EQ(got_folded[0].z, 0.0f);
    EXPECT_EQ(got_folded[2].x, 1.0f);   // step(edge = a, t): t < a ? 0 : 1, per component of a
    EXPECT_EQ(got_folded[2].z, 0.0f);
    EXPECT_EQ(got_folded[5].x, 1.0f);   // clamp(a, 0.5, 2.5)
    EXPECT_EQ(got_folded[5].z, 2.5f);
    for (uint32_t k = 0; k < kSlots; ++k)
        for (int c = 0; c < 3; ++c) {
            EXPECT_EQ(got_folded[k][c], got_host[k][c]) << "slot " << k << " component " << c;
            EXPECT_NEAR(got_device[k][c], got_host[k][c], 2e-4 * (1 + std::fabs(got_host[k][c])))
                << "slot " << k << " component " << c;
        }
}

// The gradient of reflect(a, s) with a scalar normal: L = sum(a - 2 s^2 sum(a)) = sum(a) (1 - 6 s^2), so
// dL/ds = -12 s sum(a) and dL/da_j = 1 - 6 s^2.
TEST_F(Broadcast, ReflectWithAScalarNormalHasItsGradient) {
    Kernel1D k = [](BufferFloat out, Float3 a, Float s) noexcept {
        $autodiff {
            requires_grad(a, s);
            Float3 y = reflect(a, s);
            backward(y.x + y.y + y.z);
            out.write(0u, grad(s));
            out.write(1u, grad(a).x);
            out.write(2u, grad(a).z);
        };
    };
    auto shader = device.compile(k);
    auto out = device.create_buffer<float>(3);
    stream << shader(out, f3(1, 2, 3), 0.5f).dispatch(1);
    auto got = download(stream, out);
    EXPECT_NEAR(got[0], -12 * 0.5f * 6, 1e-4f);
    EXPECT_NEAR(got[1], 1 - 6 * 0.25f, 1e-5f);
    EXPECT_NEAR(got[2], 1 - 6 * 0.25f, 1e-5f);
}

} // namespace adjoint::test
