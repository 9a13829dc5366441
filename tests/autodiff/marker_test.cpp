// requires_grad inside a branch or a loop of an $autodiff block: what it means, and what is refused.
#include "support.h"

#include <cmath>

namespace adjoint::test {

class Markers : public DeviceTest {};

TEST_F(Markers, InsideABranchMarksTheBranchValue) {
    // Where the branch runs, grad(x) is d/dx of x * x * x; elsewhere x is never marked and grad(x) is 0.
    auto xs = random_floats(512, -2, 2, 71);
    Kernel1D k = [](BufferFloat in, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = in.read(i);
        $autodiff {
            Float y = x * 3.0f;
            $if (x > 0.0f) {
                requires_grad(x);
                y = x * x * x;
            };
            backward(y);
            out.write(i, grad(x));
        };
    };
    auto g = run_unary(device, stream, k, xs);
    for (size_t i = 0; i < xs.size(); ++i) {
        float want = xs[i] > 0 ? 3 * xs[i] * xs[i] : 0.0f;
        EXPECT_NEAR(g[i], want, 1e-5f * (1 + std::fabs(want))) << xs[i];
        if (xs[i] <= 0) {
            EXPECT_EQ(std::signbit(g[i]), false) << "an unmarked input's gradient is +0.0";
        }
    }
}

TEST_F(Markers, InsideABranchThatNeverRunsGivesZero) {
    // A branch whose condition is a constant is pruned before autodiff; grad() of the value marked in the branch
    // that never runs is +0.0 (it once named a marker the pruning had removed: "not defined before this use").
    auto xs = random_floats(64, -2, 2, 73);
    Kernel1D k = [](BufferFloat in, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = in.read(i), z = in.read(i);
        $autodiff {
            Float y = x * 3.0f;
            $if (UInt(2u) == 3u) {
                requires_grad(x);
                y = x * x;
            };
            $if (UInt(2u) == 2u) {
                requires_grad(z);
                y = y + z * z;
            };
            backward(y);
            out.write(i, grad(x) + 10.0f * grad(z));
        };
    };
    auto g = run_unary(device, stream, k, xs);
    for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(g[i], 20.0f * xs[i], 1e-5f * (1 + std::fabs(xs[i]))) << xs[i];
}

TEST_F(Markers, InsideALoopMarksTheLastIterationsValue) {
    // grad(x) is the derivative with respect to x as marked in the last iteration that ran the mark
    // (values marked in earlier iterations held fixed). Here that value is v = x0 * 2^(n-1), and y depends
    // on it through the last iteration's y += v * v only: grad = 2v. No iteration: grad = 0.
    Kernel1D k = [](BufferFloat xs, BufferUInt ns, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = xs.read(i);
        UInt n = ns.read(i);
        $autodiff {
            Float y = 0.0f;
            $for (j, n) {
                requires_grad(x);
                y = y * 0.5f + x * x;
                x = x * 2.0f;
            };
            backward(y);
            out.write(i, grad(x));
        };
    };
    auto shader = device.compile(k);
    const uint32_t count = 256;
    auto xs = random_floats(count, -1, 1, 72);
    std::vector<uint32_t> ns(count);
    for (uint32_t i = 0; i < count; ++i) ns[i] = i % 6;
    auto x = device.create_buffer<float>(count);
    auto nb = device.create_buffer<uint32_t>(count);
    auto out = device.create_buffer<float>(count);
    std::vector<float> g(count);
    stream << x.copy_from(xs.data()) << nb.copy_from(ns.data()) << shader(x, nb, out).dispatch(count)
           << out.copy_to(g.data()) << synchronize();
    for (uint32_t i = 0; i < count; ++i) {
        float want = ns[i] == 0 ? 0.0f : 2.0f * std::ldexp(xs[i], int(ns[i]) - 1);
        EXPECT_EQ(g[i], want) << "n = " << ns[i];
    }
}

TEST_F(Markers, InsideABranchInsideALoop) {
    // The mark runs only in the iterations where j is even: grad(x) is d y / d x as marked in the last even
    // iteration; later iterations multiply that y by 0.5 and add terms not depending on the mark.
    Kernel1D k = [](BufferFloat xs, BufferUInt ns, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = xs.read(i);
        UInt n = ns.read(i);
        $autodiff {
            Float y = 0.0f;
            $for (j, n) {
                $if (j % 2u == 0u) { requires_grad(x); };
                y = y * 0.5f + sin(x);
                x = x + 1.0f;
            };
            backward(y);
            out.write(i, grad(x));
        };
    };
    auto shader = device.compile(k);
    const uint32_t count = 128;
    auto xs = random_floats(count, -1, 1, 73);
    std::vector<uint32_t> ns(count);
    for (uint32_t i = 0; i < count; ++i) ns[i] = i % 7;
    auto x = device.create_buffer<float>(count);
    auto nb = device.create_buffer<uint32_t>(count);
    auto out = device.create_buffer<float>(count);
    std::vector<float> g(count);
    stream << x.copy_from(xs.data()) << nb.copy_from(ns.data()) << shader(x, nb, out).dispatch(count)
           << out.copy_to(g.data()) << synchronize();
    for (uint32_t i = 0; i < count; ++i) {
        double want = 0;
        if (ns[i] > 0) {
            uint32_t last = (ns[i] - 1) & ~1u;   // the last even iteration
            // x marked there is x0 + last; it feeds sin(x) in that iteration and (through x = x + 1)
            // sin(x) in every later one, each scaled by 0.5 per following iteration.
            for (uint32_t j = last; j < ns[i]; ++j)
                want += std::cos(double(xs[i]) + j) * std::pow(0.5, double(ns[i] - 1 - j));
        }
        EXPECT_NEAR(g[i], want, 1e-5 * (1 + std::fabs(want))) << "n = " << ns[i];
    }
}

TEST(MarkerMisuse, MarkingOneVariableTwiceWhereOneMarkIsNested) {
    // Two marks of x in exclusive branches would leave grad(x) meaning one of them only: refused.
    int first = 0, second = 0;
    std::string msg;
    try {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = out.read(0u);
            $autodiff {
                $if (x > 0.0f) {
                    first = __LINE__; requires_grad(x);
                } $else {
                    second = __LINE__; requires_grad(x);
                };
                backward(x * x);
                out.write(0u, grad(x));
            };
        };
    } catch (const Error& e) {
        msg = e.what();
    }
    EXPECT_NE(msg.find("marked twice"), std::string::npos) << msg;
    EXPECT_NE(msg.find("marker_test.cpp:" + std::to_string(second)), std::string::npos) << msg;
    EXPECT_NE(msg.find("marker_test.cpp:" + std::to_string(first)), std::string::npos) << msg;
}

} // namespace adjoint::test
