// Gradients through control flow and data structures: branches, switch, callables with early return,
// local arrays at dynamic indices, structs, vector seeds, detach, several blocks, atomics scatter.
#include "support.h"

#include <cmath>

struct Body {
    adjoint::float3 pos;
    float mass;
};
ADJOINT_STRUCT(Body, pos, mass)

namespace adjoint::test {

class Control : public DeviceTest {};

TEST_F(Control, IfElifElseWithDataDependentConditions) {
    auto xs = random_floats(1000, -3, 3, 5);
    auto g = device_grad(device, stream, [](Float x) {
        Float y;
        $if (x < -1.0f) {
            y = x * x * x;
        } $elif (x < 1.0f) {
            y = sin(x) * 2.0f;
        } $else {
            y = exp(x);
        };
        return y * x;   // the branch result also meets x again
    }, xs);
    for (size_t i = 0; i < xs.size(); ++i) {
        double x = xs[i];
        double want = x < -1 ? 4 * x * x * x : x < 1 ? 2 * std::sin(x) + 2 * x * std::cos(x) : std::exp(x) * (1 + x);
        EXPECT_NEAR(g[i], want, 2e-4 * (1 + std::fabs(want))) << x;
    }
}

TEST_F(Control, Switch) {
    auto xs = random_floats(1000, 0, 4, 6);
    auto g = device_grad(device, stream, [](Float x) {
        Float y = 0.0f;
        $switch (cast<int>(x)) {
            $case (0) { y = x * x; };
            $case (1) { y = sin(x); };
            $case (2) { y = x * 3.0f; };
            $default { y = sqrt(x); };
        };
        return y;
    }, xs);
    for (size_t i = 0; i < xs.size(); ++i) {
        double x = xs[i];
        int c = int(xs[i]);
        double want = c == 0 ? 2 * x : c == 1 ? std::cos(x) : c == 2 ? 3 : 0.5 / std::sqrt(x);
        EXPECT_NEAR(g[i], want, 2e-4 * (1 + std::fabs(want))) << x;
    }
}

TEST_F(Control, CallablesWithEarlyReturnNested) {
    Callable square = [](Float v) noexcept { return v * v; };
    Callable early = [&](Float x) noexcept {
        $if (x < 0.0f) {
            $return(square(x) * 2.0f);
        };
        $for (k, 1, 4) {
            $if (x < cast<float>(k)) {
                $return(sin(x) * cast<float>(k));   // a return from inside a loop
            };
        };
        return x;
    };
    auto xs = random_floats(1000, -2, 5, 9);
    auto g = device_grad(device, stream, [&](Float x) { return early(x); }, xs);
    for (size_t i = 0; i < xs.size(); ++i) {
        double x = xs[i];
        double want = x < 0 ? 4 * x : x < 1 ? std::cos(x) : x < 2 ? 2 * std::cos(x) : x < 3 ? 3 * std::cos(x) : 1.0;
        EXPECT_NEAR(g[i], want, 2e-4 * (1 + std::fabs(want))) << x;
    }
}

TEST_F(Control, LocalArraysAtDynamicIndices) {
    Kernel1D k = [](BufferFloat in, BufferUInt idx, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = in.read(i);
        UInt j = idx.read(i);
        $autodiff {
            requires_grad(x);
            ArrayFloat<4> a;
            a[0u] = x;
            a[1u] = x * x;
            a[2u] = sin(x);
            a[3u] = 5.0f;
            a[j] = a[j] * x;              // read and write at a run-time index
            Float y = a[(j + 1u) % 4u] + a[j];
            backward(y);
            out.write(i, grad(x));
        };
    };
    auto shader = device.compile(k);
    const size_t n = 1000;
    auto xs = random_floats(n, -2, 2, 13);
    std::vector<uint32_t> js(n);
    for (size_t i = 0; i < n; ++i) js[i] = uint32_t(i % 4);
    auto in = device.create_buffer<float>(n);
    auto idx = device.create_buffer<uint32_t>(n);
    auto out = device.create_buffer<float>(n);
    std::vector<float> g(n);
    stream << in.copy_from(xs.data()) << idx.copy_from(js.data()) << shader(in, idx, out).dispatch(uint32_t(n))
           << out.copy_to(g.data()) << synchronize();
    for (size_t i = 0; i < n; ++i) {
        double x = xs[i];
        double d[4] = {1, 2 * x, std::cos(x), 0};
        double v[4] = {x, x * x, std::sin(x), 5};
        uint32_t j = js[i], j1 = (j + 1) % 4;
        double want = d[j1] + (d[j] * x + v[j]);   // a[j] := a[j] * x, then a[j1] + a[j]
        EXPECT_NEAR(g[i], want, 2e-4 * (1 + std::fabs(want))) << i;
    }
}

TEST_F(Control, StructsAndVectorSeeds) {
    Kernel1D k = [](BufferVar<Body> bodies, BufferVar<Body> grads) noexcept {
        auto i = dispatch_id().x;
        Var<Body> b = bodies.read(i);
        $autodiff {
            requires_grad(b);
            Float3 momentum = b.pos * b.mass;
            backward(momentum, make_float3(1.0f, 2.0f, 3.0f));   // a vector seed
            grads.write(i, grad(b));
        };
    };
    auto shader = device.compile(k);
    std::vector<Body> in(64), out(64);
    for (size_t i = 0; i < in.size(); ++i) in[i] = Body{float3(float(i), 1.0f - float(i), 0.5f), 2.0f + float(i) * 0.1f};
    auto bodies = device.create_buffer<Body>(in.size());
    auto grads = device.create_buffer<Body>(in.size());
    stream << bodies.copy_from(in.data()) << shader(bodies, grads).dispatch(uint32_t(in.size())) << grads.copy_to(out.data())
           << synchronize();
    for (size_t i = 0; i < in.size(); ++i) {
        EXPECT_FLOAT_EQ(out[i].pos.x, in[i].mass * 1.0f);
        EXPECT_FLOAT_EQ(out[i].pos.y, in[i].mass * 2.0f);
        EXPECT_FLOAT_EQ(out[i].pos.z, in[i].mass * 3.0f);
        EXPECT_FLOAT_EQ(out[i].mass, in[i].pos.x + 2.0f * in[i].pos.y + 3.0f * in[i].pos.z);
    }
}

// A scalar seed for a vector or matrix y seeds each component alike (it seeded one, silently: 1 for 3).
TEST_F(Control, AScalarSeedSeedsEveryComponent) {
    Kernel1D k = [](BufferFloat in, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = in.read(i);
        Float v = x;
        Float m = x;
        $autodiff {
            requires_grad(v, m);
            backward(make_float3(v, 2.0f * v, 3.0f * v), 0.5f);
            out.write(2u * i, grad(v));
        };
        $autodiff {
            requires_grad(m);
            backward(make_float2x2(m, 2.0f * m, 3.0f * m, 4.0f * m), 2.0f);
            out.write(2u * i + 1u, grad(m));
        };
    };
    auto shader = device.compile(k);
    auto in = device.create_buffer<float>(2);
    auto out = device.create_buffer<float>(4);
    std::vector<float> xs = {1.0f, -2.0f}, r(4);
    stream << in.copy_from(xs.data()) << shader(in, out).dispatch(2) << out.copy_to(r.data()) << synchronize();
    EXPECT_EQ(r, (std::vector<float>{3, 20, 3, 20}));
}

// `/` with a matrix, differentiated component-wise (it was refused with a type error naming no line).
TEST_F(Control, MatrixDividedByAScalarAndAScalarByAMatrix) {
    auto xs = random_floats(64, 0.5f, 2.0f, 53);
    auto g = device_grad(device, stream, [](Float x) {
        Float2x2 m = make_float2x2(x, 2.0f * x, x * x, 3.0f);
        Float2x2 a = m / (x + 1.0f);
        Float2x2 b = 2.0f / m;
        return a[0][0] + a[1][0] * 2.0f + a[1][1] + b[0][1] + b[1][0] * 3.0f + b[1][1];
    }, xs);
    for (size_t i = 0; i < xs.size(); ++i) {
        Dual x{xs[i], 1}, one = konst(1), two = konst(2);
        Dual s = x + one;
        Dual y = x / s + x * x / s * two + konst(3) / s + two / (two * x) + two / (x * x) * konst(3) + two / konst(3);
        EXPECT_NEAR(g[i], y.d, 1e-4 * (1 + std::fabs(y.d))) << xs[i];
    }
}

TEST_F(Control, DetachAndUnreachedInputs) {
    Kernel1D k = [](BufferFloat in, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = in.read(i);
        Float unused = x * 2.0f;
        $autodiff {
            requires_grad(x, unused);
            Float y = x * detach(x * x);   // d/dx = x^2, not 3x^2
            backward(y);
            out.write(i, grad(x) + 1000.0f * grad(unused));
        };
    };
    auto r = run_unary(device, stream, k, {2.0f, -3.0f});
    EXPECT_EQ(r, (std::vector<float>{4.0f, 9.0f}));
}

// The lanes of a marked array, struct or matrix that nothing reached read +0.0, as an unreached scalar does
// (they read -0.0, the adjoints' start value).
TEST_F(Control, UnreachedLanesOfArraysStructsAndMatricesAreExactlyPlusZero) {
    Kernel1D k = [](BufferFloat in, BufferFloat out) noexcept {
        Float x = in.read(0u);
        ArrayFloat<3> a;
        a[0] = x;
        a[1] = 2.0f * x;
        a[2] = 3.0f * x;
        Var<Body> b;
        b.pos = make_float3(x);
        b.mass = x;
        Float2x2 m = make_float2x2(x, x, x, x);
        $autodiff {
            requires_grad(a, b, m);
            backward(a[1] * 2.0f + b.pos.y + m[1][0]);
            for (uint32_t k = 0; k < 3; ++k) out.write(k, grad(a)[k]);
            Var<Body> gb = grad(b);
            out.write(3u, gb.pos.x);
            out.write(4u, gb.pos.y);
            out.write(5u, gb.mass);
            Float2x2 gm = grad(m);
            out.write(6u, gm[0][0]);
            out.write(7u, gm[1][0]);
        };
    };
    auto shader = device.compile(k);
    auto in = device.create_buffer<float>(1);
    auto out = device.create_buffer<float>(8);
    const float x = 1.5f;
    std::vector<float> r(8);
    stream << in.copy_from(&x) << shader(in, out).dispatch(1) << out.copy_to(r.data()) << synchronize();
    EXPECT_EQ(r, (std::vector<float>{0, 2, 0, 0, 1, 0, 0, 1}));
    for (size_t i : {0, 2, 3, 5, 6}) EXPECT_FALSE(std::signbit(r[i])) << "lane " << i << " reads -0.0";
}

TEST_F(Control, SeveralBlocksAndAtomicScatter) {
    // Two $autodiff blocks in one kernel; the gradients of all threads are summed with atomics.
    Kernel1D k = [](BufferFloat in, BufferFloat sums) noexcept {
        auto i = dispatch_id().x;
        Float x = in.read(i);
        $autodiff {
            requires_grad(x);
            backward(x * x);
            sums.atomic(0u).fetch_add(grad(x));
        };
        $autodiff {
            requires_grad(x);
            backward(sin(x));
            sums.atomic(1u).fetch_add(grad(x));
        };
    };
    auto shader = device.compile(k);
    const size_t n = 4096;
    std::vector<float> xs(n);
    for (size_t i = 0; i < n; ++i) xs[i] = (i % 2) ? 0.5f : 0.25f;   // exact sums in float
    auto in = device.create_buffer<float>(n);
    auto sums = device.create_buffer<float>(2);
    std::vector<float> r(2);
    stream << in.copy_from(xs.data()) << sums.fill_zero() << shader(in, sums).dispatch(uint32_t(n)) << sums.copy_to(r.data())
           << synchronize();
    EXPECT_FLOAT_EQ(r[0], float(n / 2) * 1.0f + float(n / 2) * 0.5f);
    EXPECT_NEAR(r[1], float(n / 2) * (std::cos(0.5f) + std::cos(0.25f)), 1e-4 * r[1]);   // float summation order
}

TEST_F(Control, GradientCheckerAgreesWithFiniteDifferences) {
    Callable f = [](ArrayFloat<3> v) noexcept {
        Float s = 0.0f;
        $for (k, 3) {
            s = s + sin(v[k] * cast<float>(k + 1)) * v[(k + 1) % 3];
        };
        return s;
    };
    auto report = check_gradients<3>(device, f, {.samples = 500, .lo = -2, .hi = 2});
    EXPECT_EQ(report.samples, 500u);
    EXPECT_LT(report.max_relative_error, 1e-2f) << report.worst;
    EXPECT_EQ(report.bad, 0u);
    // And it catches a wrong gradient: detach hides a dependency from reverse mode but not from the
    // finite differences.
    Callable wrong = [](ArrayFloat<3> v) noexcept { return v[0] * detach(v[1]) + v[2]; };
    auto bad = check_gradients<3>(device, wrong, {.samples = 200, .lo = 0.5f, .hi = 2});
    EXPECT_GT(bad.bad_fraction, 0.9f);
}

} // namespace adjoint::test
