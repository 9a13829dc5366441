// Derivatives outside an op's domain and at its poles: a NaN value has a NaN derivative (as in PyTorch and
// JAX), log at 0 has the derivative +inf, sqrt at 0 has 0 (the conventions' exception), and the zero adjoint
// of an ite's unchosen side still gives exactly 0.
#include "support.h"

#include <cmath>
#include <limits>

namespace adjoint::test {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

struct ValueGrad {
    float value, grad;
};

// f(x) and df/dx at each input, on the device.
template <typename F>
std::vector<ValueGrad> value_and_grad(Device& device, Stream& stream, F f, const std::vector<float>& inputs) {
    Kernel1D k = [&](BufferFloat in, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = in.read(i);
        $autodiff {
            requires_grad(x);
            Float y = f(x);
            backward(y);
            out.write(2u * i, y);
            out.write(2u * i + 1u, grad(x));
        };
    };
    auto shader = device.compile(k);
    auto in = device.create_buffer<float>(inputs.size());
    auto out = device.create_buffer<float>(2 * inputs.size());
    std::vector<float> r(2 * inputs.size());
    stream << in.copy_from(inputs.data()) << shader(in, out).dispatch(uint32_t(inputs.size())) << out.copy_to(r.data())
           << synchronize();
    std::vector<ValueGrad> vg;
    for (size_t i = 0; i < inputs.size(); ++i) vg.push_back({r[2 * i], r[2 * i + 1]});
    return vg;
}

// Equal, NaN matching NaN and infinities exactly; finite values within 5e-4 (lavapipe's asin and acos are
// polynomial approximations a few 1e-4 off; any wrong derivative is off by far more).
void expect_same(float got, float want, const char* what) {
    if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << what << ": " << got << ", want NaN";
    else if (std::isinf(want)) EXPECT_EQ(got, want) << what;
    else EXPECT_NEAR(got, want, 5e-4f * (1 + std::fabs(want))) << what;
}

template <typename F>
void expect(Device& device, Stream& stream, F f, std::vector<float> x, std::vector<ValueGrad> want) {
    auto got = value_and_grad(device, stream, f, x);
    for (size_t i = 0; i < x.size(); ++i) {
        SCOPED_TRACE("x = " + std::to_string(x[i]));
        expect_same(got[i].value, want[i].value, "value");
        expect_same(got[i].grad, want[i].grad, "derivative");
    }
}

const float kNaN = std::nanf("");

} // namespace

class DomainConventions : public DeviceTest {};

TEST_F(DomainConventions, SqrtNaNBelowZeroZeroAtZero) {
    expect(device, stream, [](Float x) { return sqrt(x); }, {-1.0f, 0.0f, -0.0f, 4.0f},
           {{kNaN, kNaN}, {0, 0}, {-0.0f, 0}, {2, 0.25f}});
}

TEST_F(DomainConventions, LogNaNBelowZeroPlusInfinityAtZero) {
    expect(device, stream, [](Float x) { return log(x); }, {-1.0f, 0.0f, -0.0f, 2.0f},
           {{kNaN, kNaN}, {-kInf, kInf}, {-kInf, kInf}, {std::log(2.0f), 0.5f}});
    expect(device, stream, [](Float x) { return log2(x) + log10(x); }, {-1.0f, 0.0f, 10.0f},
           {{kNaN, kNaN}, {-kInf, kInf}, {std::log2(10.0f) + 1, 1 / (10 * std::log(2.0f)) + 1 / (10 * std::log(10.0f))}});
}

TEST_F(DomainConventions, RsqrtAsinAcosOutsideTheirDomainAreNaN) {
    expect(device, stream, [](Float x) { return rsqrt(x); }, {-1.0f, 0.0f, 4.0f},
           {{kNaN, kNaN}, {kInf, -kInf}, {0.5f, -0.0625f}});
    expect(device, stream, [](Float x) { return asin(x); }, {2.0f, -2.0f, 0.5f},
           {{kNaN, kNaN}, {kNaN, kNaN}, {std::asin(0.5f), 1 / std::sqrt(0.75f)}});
    expect(device, stream, [](Float x) { return acos(x); }, {2.0f, 0.5f},
           {{kNaN, kNaN}, {std::acos(0.5f), -1 / std::sqrt(0.75f)}});
}

TEST_F(DomainConventions, PowOfANegativeBaseIsNaNInBothArguments) {
    Kernel1D k = [](BufferFloat in, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = in.read(2u * i);
        Float e = in.read(2u * i + 1u);
        $autodiff {
            requires_grad(x, e);
            Float y = pow(x, e);
            backward(y);
            out.write(3u * i, y);
            out.write(3u * i + 1u, grad(x));
            out.write(3u * i + 2u, grad(e));
        };
    };
    // pow(-0.6, 0) is 1, flat in x: d/dx 0 (it was NaN, where the value is not); d/dy NaN, as PyTorch's.
    std::vector<float> in = {-1.0f, 0.5f, 2.0f, 3.0f, -0.6f, 0.0f};
    auto shader = device.compile(k);
    auto ib = device.create_buffer<float>(in.size());
    auto ob = device.create_buffer<float>(9);
    std::vector<float> r(9);
    stream << ib.copy_from(in.data()) << shader(ib, ob).dispatch(3) << ob.copy_to(r.data()) << synchronize();
    EXPECT_EQ(r[6], 1.0f);
    EXPECT_EQ(r[7], 0.0f);
    expect_same(r[8], kNaN, "d/dy pow(-0.6, 0)");
    expect_same(r[0], kNaN, "pow(-1, 0.5)");
    expect_same(r[1], kNaN, "d/dx pow(-1, 0.5)");
    expect_same(r[2], kNaN, "d/dy pow(-1, 0.5)");
    EXPECT_NEAR(r[3], 8.0f, 1e-4f);
    EXPECT_NEAR(r[4], 12.0f, 1e-3f);
    EXPECT_NEAR(r[5], 8 * std::log(2.0f), 1e-3f);
}

// The NaN stays where the value is: an ite that does not choose it gives its zero adjoint, exactly 0.
TEST_F(DomainConventions, TheUnchosenSideOfAnIteStillGivesZero) {
    expect(device, stream, [](Float x) {
        return ite(x > 0.0f, sqrt(x) + log(x) + rsqrt(x) + asin(x) + pow(x, 0.5f), 2.0f * x);
    }, {-1.0f, 0.0f}, {{-2, 2}, {0, 2}});
}

} // namespace adjoint::test
