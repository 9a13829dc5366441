// One test per row of the derivative conventions (shared/ad-conventions.md), at the non-smooth points.
#include "support.h"

#include <cmath>
#include <limits>

namespace adjoint::test {

class Conventions : public DeviceTest {};

TEST_F(Conventions, AbsAtZeroIsZero) {
    auto g = device_grad(device, stream, [](Float x) { return abs(x); }, {0.0f, -0.0f, 2.0f, -3.0f});
    EXPECT_EQ(g, (std::vector<float>{0, 0, 1, -1}));
}

TEST_F(Conventions, MinMaxTiesSplitInHalf) {
    Kernel1D k = [](BufferFloat in, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float a = in.read(i);
        Float b = in.read(i);
        $autodiff {
            requires_grad(a, b);
            Float y = max(a, b) + 10.0f * min(a, b);
            backward(y);
            out.write(i, grad(a) + 100.0f * grad(b));
        };
    };
    // Each side gets half of max's adjoint (0.5) and half of min's (5): 5.5 + 100 * 5.5.
    auto r = run_unary(device, stream, k, {1.0f, -2.0f});
    EXPECT_FLOAT_EQ(r[0], 5.5f + 550.0f);
    EXPECT_FLOAT_EQ(r[1], 5.5f + 550.0f);
}

TEST_F(Conventions, ClampBoundsAreInclusiveForX) {
    Kernel1D k = [](BufferFloat in, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = in.read(i);
        Float lo = -1.0f;
        Float hi = 1.0f;
        $autodiff {
            requires_grad(x, lo, hi);
            Float y = clamp(x, lo, hi);
            backward(y);
            out.write(i, grad(x) + 10.0f * grad(lo) + 100.0f * grad(hi));
        };
    };
    auto r = run_unary(device, stream, k, {-1.0f, 1.0f, 0.0f, -2.0f, 3.0f});
    EXPECT_EQ(r, (std::vector<float>{1, 1, 1, 10, 100}));
}

// lo > hi: the value is hi (min(max(x, lo), hi)), and the adjoint goes to hi alone (it went to x's bounds
// both, 2 in all for a value that moves with hi only).
TEST_F(Conventions, ClampWithCrossedBoundsIsHiAndSoIsItsGradient) {
    Kernel1D k = [](BufferFloat in, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = in.read(i);
        Float lo = 2.0f;
        Float hi = 1.0f;
        $autodiff {
            requires_grad(x, lo, hi);
            Float y = clamp(x, lo, hi);
            backward(y);
            out.write(i, y + 1000.0f * (grad(x) + 10.0f * grad(lo) + 100.0f * grad(hi)));
        };
    };
    auto r = run_unary(device, stream, k, {0.0f, 1.5f, 3.0f, 1.0f, 2.0f});
    EXPECT_EQ(r, (std::vector<float>{100001, 100001, 100001, 100001, 100001}));
}

TEST_F(Conventions, SaturateLikeClamp) {
    auto g = device_grad(device, stream, [](Float x) { return saturate(x); }, {0.0f, 1.0f, 0.5f, -0.1f, 1.1f});
    EXPECT_EQ(g, (std::vector<float>{1, 1, 1, 0, 0}));
}

TEST_F(Conventions, SqrtLengthNormalizeAtZeroAreZeroNotNaN) {
    auto g = device_grad(device, stream, [](Float x) { return sqrt(x); }, {0.0f, 4.0f});
    EXPECT_EQ(g[0], 0.0f);
    EXPECT_FLOAT_EQ(g[1], 0.25f);
    auto l = device_grad(device, stream, [](Float x) { return length(make_float3(x, x, x)) + dot(normalize(make_float3(x, 0.0f, 0.0f)), make_float3(1.0f)); },
                         {0.0f});
    EXPECT_EQ(l[0], 0.0f);
}

TEST_F(Conventions, PowAtZero) {
    Kernel1D k = [](BufferFloat in, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = 0.0f;
        Float e = in.read(i);
        $autodiff {
            requires_grad(x, e);
            Float y = pow(x, e);
            backward(y);
            out.write(i, grad(x) * 1000.0f + grad(e));
        };
    };
    // d/dy = 0 at x = 0 (no 0 * log 0); d/dx = y*x^(y-1): 0 for y = 2, 1 for y = 1, inf -> 0 for y = 0.5.
    auto r = run_unary(device, stream, k, {2.0f, 1.0f, 0.5f});
    EXPECT_EQ(r, (std::vector<float>{0.0f, 1000.0f, 0.0f}));
}

TEST_F(Conventions, IteSelectsAndDoesNotLeakNaN) {
    // The unchosen side is NaN (sqrt of a negative) or inf (1/0): it must not reach the gradient.
    auto g = device_grad(device, stream, [](Float x) { return ite(x > 0.0f, sqrt(x) + 1.0f / x, x * x); }, {-1.0f, 0.0f, 4.0f});
    EXPECT_FLOAT_EQ(g[0], -2.0f);
    EXPECT_FLOAT_EQ(g[1], 0.0f);
    EXPECT_FLOAT_EQ(g[2], 0.25f - 1.0f / 16.0f);
}

TEST_F(Conventions, PiecewiseConstantOpsAreZero) {
    auto g = device_grad(device, stream, [](Float x) {
        return floor(x) + ceil(x) + round(x) + trunc(x) + sign(x) + step(0.5f, x) + cast<float>(cast<int>(x * 3.0f)) +
               ite(x > 1.0f, 1.0f, 0.0f);
    }, {0.3f, -1.7f, 2.5f});
    EXPECT_EQ(g, (std::vector<float>{0, 0, 0}));
}

TEST_F(Conventions, FractIsOneAndFmodAsDocumented) {
    auto g = device_grad(device, stream, [](Float x) { return fract(x) + fmod(x * 3.0f, 2.0f); }, {0.3f, -1.7f, 2.25f});
    EXPECT_EQ(g, (std::vector<float>{4, 4, 4}));
    Kernel1D k = [](BufferFloat in, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = in.read(i);
        Float m = 1.5f;
        $autodiff {
            requires_grad(m);
            Float y = fmod(x, m);
            backward(y);
            out.write(i, grad(m));
        };
    };
    auto r = run_unary(device, stream, k, {4.0f, -4.0f, 1.0f});
    EXPECT_EQ(r, (std::vector<float>{-2.0f, 2.0f, 0.0f}));   // -trunc(x / y)
}

TEST_F(Conventions, BufferReadsAreConstants) {
    // x is read from the same buffer twice: only the marked copy carries a gradient.
    Kernel1D k = [](BufferFloat in, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = in.read(i);
        $autodiff {
            requires_grad(x);
            Float y = x * in.read(i);
            backward(y);
            out.write(i, grad(x));
        };
    };
    auto r = run_unary(device, stream, k, {3.0f, -2.0f});
    EXPECT_EQ(r, (std::vector<float>{3.0f, -2.0f}));
}

TEST(AutodiffRules, EveryDifferentiableOpHasARule) {
    for (uint32_t i = 0; i < ir::op_count(); ++i) {
        auto op = ir::Op(i);
        const auto& oi = ir::info(op);
        if (oi.ad == ir::AdClass::D) {
            EXPECT_TRUE(autodiff::has_rule(op)) << oi.name << " is marked D but has no rule";
        } else {
            EXPECT_FALSE(autodiff::has_rule(op)) << oi.name << " has a rule but is not marked D";
        }
    }
}

} // namespace adjoint::test
