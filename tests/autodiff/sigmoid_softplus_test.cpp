// sigmoid and softplus: value and derivative finite and right from -1000 to 1000 (1 / (1 + exp(-x)) written
// out has a NaN derivative below -88), for scalars and vectors, on the device and in the interpreter.
#include "support.h"
#include "support/host_run.h"

#include <cmath>

namespace adjoint::test {

namespace {

const std::vector<float> kX = {-1000.0f, -89.0f, -10.0f, 0.0f, 10.0f, 89.0f, 1000.0f};

double sigmoid_ref(double x) { return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)); }
double softplus_ref(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }

// Within 1e-5 relative; results below float's normal range (sigmoid(-89) = 2.2e-39) may flush to zero.
void expect_close(float got, double want, const std::string& what) {
    EXPECT_TRUE(std::isfinite(got)) << what << " = " << got;
    EXPECT_NEAR(got, want, 1e-5 * std::fabs(want) + 1.2e-38) << what;
}

// Writes f(x) and its derivative for x, and the same for the float3 (x, -x, x / 2).
template <typename F>
auto kernel_for(F f) {
    return Kernel1D([f](BufferFloat in, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = in.read(i);
        Float3 v = make_float3(x, -x, x * 0.5f);
        $autodiff {
            requires_grad(x, v);
            Float y = f(x);
            Float3 w = f(v);
            backward(y + w.x + w.y + w.z);
            out.write(8u * i, y);
            out.write(8u * i + 1u, grad(x));
            out.write(8u * i + 2u, w.x);
            out.write(8u * i + 3u, w.y);
            out.write(8u * i + 4u, w.z);
            out.write(8u * i + 5u, grad(v).x);
            out.write(8u * i + 6u, grad(v).y);
            out.write(8u * i + 7u, grad(v).z);
        };
    });
}

void check(Device& device, Stream& stream, bool soft) {
    auto k = soft ? kernel_for([](const auto& x) { return softplus(x); })
                  : kernel_for([](const auto& x) { return sigmoid(x); });
    auto shader = device.compile(k);
    auto in = upload(device, stream, kX);
    auto out = device.create_buffer<float>(8 * kX.size());
    stream << shader(in, out).dispatch(uint32_t(kX.size()));
    auto gpu = download(stream, out);
    std::vector<float> xs = kX, host(8 * kX.size());
    interpret(k, {uint32_t(kX.size()), 1, 1}, xs, host);
    auto f = soft ? softplus_ref : sigmoid_ref;
    // d/dx softplus = sigmoid; d/dx sigmoid = sigmoid (1 - sigmoid) = e / (1 + e)^2 with e = exp(-|x|) (1 -
    // sigmoid itself would round to 0 at x = 44.5, even in double).
    auto dsigmoid = [](double x) {
        double e = std::exp(-std::fabs(x));
        return e / ((1 + e) * (1 + e));
    };
    auto df = [&](double x) { return soft ? sigmoid_ref(x) : dsigmoid(x); };
    for (size_t i = 0; i < kX.size(); ++i) {
        double x = kX[i];
        double v[3] = {x, -x, double(kX[i] * 0.5f)};
        double want[8] = {f(x), df(x), f(v[0]), f(v[1]), f(v[2]), df(v[0]), df(v[1]), df(v[2])};
        const char* names[8] = {"f(x)", "f'(x)", "f(v).x", "f(v).y", "f(v).z", "f'(v).x", "f'(v).y", "f'(v).z"};
        for (size_t c = 0; c < 8; ++c) {
            std::string what = std::string(soft ? "softplus " : "sigmoid ") + names[c] + " at x = " + std::to_string(x);
            expect_close(gpu[8 * i + c], want[c], "device " + what);
            expect_close(host[8 * i + c], want[c], "interpreter " + what);
        }
    }
}

} // namespace

class SigmoidSoftplus : public DeviceTest {};

TEST_F(SigmoidSoftplus, SigmoidIsFiniteAndRightEverywhere) { check(device, stream, false); }
TEST_F(SigmoidSoftplus, SoftplusIsFiniteAndRightEverywhere) { check(device, stream, true); }

// The formula written out: its derivative is NaN below -88 (exp(-x) overflows), which is why the built-ins
// exist.
TEST_F(SigmoidSoftplus, TheNaiveFormulaFailsWhereTheBuiltInDoesNot) {
    auto g = device_grad(device, stream, [](Float x) { return 1.0f / (1.0f + exp(-x)); }, {-100.0f});
    EXPECT_TRUE(std::isnan(g[0])) << g[0];
    auto s = device_grad(device, stream, [](Float x) { return sigmoid(x); }, {-100.0f});
    EXPECT_TRUE(std::isfinite(s[0])) << s[0];
}

} // namespace adjoint::test
