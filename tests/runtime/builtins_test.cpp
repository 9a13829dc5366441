// Every built-in of the contract on random inputs: on the device, in the host interpreter and in <cmath>.
//
// One kernel per operation; each thread reads its own random input(s) and writes one result. The same
// kernel, lowered as the runtime lowers it, also runs in ir::Interpreter, and both are compared with a
// C++ reference. Tolerances (|got - want| <= abs + rel * |want|):
//  - kExact for operations that are exact in IEEE arithmetic (abs, floor, min, integer math, compares,
//    casts of small values, swizzles): any difference is a bug.
//  - kBasic (1e-5) for arithmetic that is correctly rounded on the host but may be a few ULP off on the
//    device: Vulkan allows division and sqrt to be computed as x * (1 / y) and 1 / inversesqrt(x)
//    (2.5 ULP), and lets the driver fuse a * b + c.
//  - kTranscendental (2e-4) for exp, log, pow, the trigonometric and hyperbolic functions: the Vulkan
//    precision rules only bound them to around 2^-11 absolute or 3 + 2|x| ULP, lavapipe uses its own
//    polynomial approximations, and GLSL's tan, pow, sinh... are compositions of those. 2e-4 relative
//    plus absolute is far below any real mistake (a wrong function or argument order is off by O(1)).
#include "support/device_fixture.h"
#include "support/host_run.h"

#include <cmath>
#include <functional>
#include <limits>
#include <tuple>

namespace adjoint::test {

namespace {

constexpr uint32_t kN = 2048;   // threads (random inputs) per operation

struct Tol {
    double rel, abs;
};
constexpr Tol kExact{0, 0};
constexpr Tol kBasic{1e-5, 1e-6};
constexpr Tol kTranscendental{2e-4, 2e-4};

// Flattens a host value into doubles (one per component) and says whether the components are floats.
template <typename T>
void components(const T& v, std::vector<double>& out) {
    if constexpr (std::is_arithmetic_v<T>) {
        out.push_back(double(v));
    } else if constexpr (adjoint::detail::TypeDesc<T>::is_vector) {
        for (size_t i = 0; i < adjoint::detail::TypeDesc<T>::dim; ++i) out.push_back(double(v[i]));
    } else {
        for (const auto& c : v.cols) components(c, out);
    }
}

template <typename T>
bool near(const T& got, const T& want, Tol tol, std::string* why) {
    std::vector<double> g, w;
    components(got, g);
    components(want, w);
    for (size_t i = 0; i < g.size(); ++i) {
        if ((std::isnan(g[i]) && std::isnan(w[i])) || g[i] == w[i]) continue;   // equal infinities too
        double err = std::fabs(g[i] - w[i]);
        if (!(err <= tol.abs + tol.rel * std::fabs(w[i]))) {
            std::ostringstream os;
            os.precision(9);
            os << "component " << i << ": got " << g[i] << ", want " << w[i] << " (error " << err << ")";
            *why = os.str();
            return false;
        }
    }
    return true;
}

template <typename T>
std::string show(const T& v) {
    std::vector<double> c;
    components(v, c);
    std::ostringstream os;
    os.precision(9);
    os << "(";
    for (size_t i = 0; i < c.size(); ++i) os << (i ? ", " : "") << c[i];
    return os.str() + ")";
}

std::vector<int32_t> random_ints(size_t n, int32_t lo, int32_t hi, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int32_t> dist(lo, hi);
    std::vector<int32_t> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
}

std::vector<uint32_t> random_uints(size_t n, uint32_t lo, uint32_t hi, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<uint32_t> dist(lo, hi);
    std::vector<uint32_t> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
}

template <size_t N>
std::vector<Vector<float, N>> random_vectors(size_t n, float lo, float hi, uint32_t seed) {
    auto f = random_floats(n * N, lo, hi, seed);
    std::vector<Vector<float, N>> v(n);
    for (size_t i = 0; i < n; ++i)
        for (size_t c = 0; c < N; ++c) v[i][c] = f[i * N + c];
    return v;
}

// Well-conditioned random matrices: random entries in [-1, 1] plus 3 on the diagonal.
template <size_t N>
std::vector<Matrix<N>> random_matrices(size_t n, uint32_t seed) {
    auto f = random_floats(n * N * N, -1, 1, seed);
    std::vector<Matrix<N>> v(n);
    for (size_t i = 0; i < n; ++i)
        for (size_t c = 0; c < N; ++c)
            for (size_t r = 0; r < N; ++r) v[i][c][r] = f[(i * N + c) * N + r] + (r == c ? 3.0f : 0.0f);
    return v;
}

class Builtins : public DeviceTest {
protected:
    // Runs `kernel(inputs..., out)` over inputs[0].size() threads on the device and in the interpreter and
    // compares both with ref(input values...) at every thread.
    template <typename Out, typename K, typename Ref, typename... In>
    void check(const K& kernel, std::tuple<std::vector<In>...> inputs, Ref ref, Tol tol) {
        const size_t n = std::get<0>(inputs).size();
        auto shader = device.compile(kernel);
        auto out = device.create_buffer<Out>(n);
        std::vector<Out> gpu(n);
        std::apply([&](auto&... in) {
            auto bufs = std::make_tuple(upload(device, stream, in)...);
            std::apply([&](auto&... b) { stream << shader(b..., out).dispatch(uint32_t(n)); }, bufs);
            stream << out.copy_to(gpu.data()) << synchronize();
        }, inputs);

        std::vector<Out> host(n);
        std::apply([&](auto&... in) { interpret(kernel, {uint32_t(n), 1, 1}, in..., host); }, inputs);

        int failures = 0;
        for (size_t i = 0; i < n && failures < 5; ++i) {
            Out want = std::apply([&](auto&... in) { return Out(ref(in[i]...)); }, inputs);
            std::string why;
            if (!near(gpu[i], want, tol, &why)) {
                ++failures;
                ADD_FAILURE() << "device, thread " << i << ": " << why << "; got " << show(gpu[i]) << " want " << show(want);
            }
            if (!near(host[i], want, tol, &why)) {
                ++failures;
                ADD_FAILURE() << "interpreter, thread " << i << ": " << why;
            }
        }
    }
};

} // namespace

// ---- float scalar functions of one argument -------------------------------------------------------------
#define FLOAT_UNARY(Name, expr, ref, lo, hi, tol)                                                          \
    TEST_F(Builtins, Name) {                                                                                \
        Kernel1D k = [](BufferFloat in, BufferFloat out) noexcept {                                         \
            auto i = dispatch_id().x;                                                                       \
            Float x = in.read(i);                                                                           \
            out.write(i, expr);                                                                             \
        };                                                                                                  \
        check<float>(k, std::tuple{random_floats(kN, lo, hi, __LINE__)}, [](float x) { return ref; }, tol); \
    }

FLOAT_UNARY(Abs, abs(x), std::fabs(x), -10, 10, kExact)
FLOAT_UNARY(Sign, sign(x), x > 0 ? 1.0f : (x < 0 ? -1.0f : 0.0f), -10, 10, kExact)
FLOAT_UNARY(Floor, floor(x), std::floor(x), -10, 10, kExact)
FLOAT_UNARY(Ceil, ceil(x), std::ceil(x), -10, 10, kExact)
FLOAT_UNARY(Fract, fract(x), x - std::floor(x), -10, 10, kExact)
FLOAT_UNARY(Round, round(x), std::round(x), -10, 10, kExact)
FLOAT_UNARY(Trunc, trunc(x), std::trunc(x), -10, 10, kExact)
FLOAT_UNARY(Saturate, saturate(x), std::clamp(x, 0.0f, 1.0f), -2, 2, kExact)
FLOAT_UNARY(Exact, exact(x * 3.0f - 1.0f), x * 3.0f - 1.0f, -10, 10, kExact)
FLOAT_UNARY(Negate, -x, -x, -10, 10, kExact)
FLOAT_UNARY(Sqrt, sqrt(x), std::sqrt(x), 0, 100, kBasic)
FLOAT_UNARY(Rsqrt, rsqrt(x), 1.0 / std::sqrt(double(x)), 0.01f, 100, kBasic)
FLOAT_UNARY(Exp, exp(x), std::exp(double(x)), -10, 10, kTranscendental)
FLOAT_UNARY(Exp2, exp2(x), std::exp2(double(x)), -10, 10, kTranscendental)
FLOAT_UNARY(Log, log(x), std::log(double(x)), 0.001f, 1000, kTranscendental)
FLOAT_UNARY(Log2, log2(x), std::log2(double(x)), 0.001f, 1000, kTranscendental)
FLOAT_UNARY(Log10, log10(x), std::log10(double(x)), 0.001f, 1000, kTranscendental)
FLOAT_UNARY(Sin, sin(x), std::sin(double(x)), -10, 10, kTranscendental)
FLOAT_UNARY(Cos, cos(x), std::cos(double(x)), -10, 10, kTranscendental)
FLOAT_UNARY(Tan, tan(x), std::tan(double(x)), -1.4f, 1.4f, kTranscendental)
FLOAT_UNARY(Asin, asin(x), std::asin(double(x)), -1, 1, kTranscendental)
FLOAT_UNARY(Acos, acos(x), std::acos(double(x)), -1, 1, kTranscendental)
FLOAT_UNARY(Atan, atan(x), std::atan(double(x)), -10, 10, kTranscendental)
FLOAT_UNARY(Sinh, sinh(x), std::sinh(double(x)), -5, 5, kTranscendental)
FLOAT_UNARY(Cosh, cosh(x), std::cosh(double(x)), -5, 5, kTranscendental)
FLOAT_UNARY(Tanh, tanh(x), std::tanh(double(x)), -5, 5, kTranscendental)
// any/all of a single bool are that bool (GLSL's any/all only take vectors).
FLOAT_UNARY(AnyAllOfOneBool, cast<float>(any(x > 0.0f)) + 2.0f * cast<float>(all(x > 0.5f)),
            float(x > 0.0f) + 2.0f * float(x > 0.5f), -1, 1, kExact)

// round() rounds halves away from zero (std::round), also where x + 0.5 is inexact in float (0.49999997
// + 0.5 rounds up to 1.0) and at the edge of float's integer range.
TEST_F(Builtins, RoundEdgeCases) {
    Kernel1D k = [](BufferFloat in, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        out.write(i, round(in.read(i)));
    };
    std::vector<float> in{0.49999997f, -0.49999997f, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 1.4999999f, 8388607.5f,
                          -8388607.5f, 16777216.0f, 1e10f, -0.0f, 0.0f, 3.0f, 0.2f};
    check<float>(k, std::tuple{in}, [](float x) { return std::round(x); }, kExact);
}

TEST_F(Builtins, RoundVector) {
    Kernel1D k = [](BufferFloat4 in, BufferFloat4 out) noexcept {
        auto i = dispatch_id().x;
        out.write(i, round(in.read(i)));
    };
    std::vector<float4> in{float4(0.49999997f, -0.5f, 2.5f, -7.25f), float4(-0.49999997f, 0.5f, 1e10f, 3.75f)};
    for (auto& v : random_vectors<4>(500, -100, 100, 19)) in.push_back(v);
    check<float4>(k, std::tuple{in}, [](float4 v) {
        return float4(std::round(v.x), std::round(v.y), std::round(v.z), std::round(v.w));
    }, kExact);
}

// ---- float scalar functions and operators of two arguments ----------------------------------------------
#define FLOAT_BINARY(Name, expr, ref, xlo, xhi, ylo, yhi, tol)                                             \
    TEST_F(Builtins, Name) {                                                                                \
        Kernel1D k = [](BufferFloat a, BufferFloat b, BufferFloat out) noexcept {                           \
            auto i = dispatch_id().x;                                                                       \
            Float x = a.read(i);                                                                            \
            Float y = b.read(i);                                                                            \
            out.write(i, expr);                                                                             \
        };                                                                                                  \
        check<float>(k, std::tuple{random_floats(kN, xlo, xhi, __LINE__), random_floats(kN, ylo, yhi, __LINE__ + 1000)}, \
                     [](float x, float y) { return ref; }, tol);                                            \
    }

FLOAT_BINARY(Add, x + y, x + y, -100, 100, -100, 100, kExact)
FLOAT_BINARY(Sub, x - y, x - y, -100, 100, -100, 100, kExact)
FLOAT_BINARY(Mul, x * y, x * y, -100, 100, -100, 100, kExact)
FLOAT_BINARY(Div, x / y, double(x) / double(y), -100, 100, 0.5f, 100, kBasic)
FLOAT_BINARY(LiteralOnTheLeft, 2.0f - x * 0.5f + 1.0f / y, 2.0 - double(x) * 0.5 + 1.0 / y, -10, 10, 1, 10, kBasic)
FLOAT_BINARY(Min, min(x, y), std::min(x, y), -10, 10, -10, 10, kExact)
FLOAT_BINARY(Max, max(x, y), std::max(x, y), -10, 10, -10, 10, kExact)
FLOAT_BINARY(Pow, pow(x, y), std::pow(double(x), double(y)), 0.01f, 10, -3, 3, kTranscendental)
FLOAT_BINARY(Atan2, atan2(x, y), std::atan2(double(x), double(y)), -10, 10, -10, 10, kTranscendental)
// fmod follows C (the result has the sign of x): x - y * trunc(x / y). The rounding of y * trunc(..) is the
// error source: about one ULP of x, hence an absolute part for results near 0.
FLOAT_BINARY(Fmod, fmod(x, y), std::fmod(x, y), -10, 10, 0.5f, 3, (Tol{1e-5, 1e-5}))
FLOAT_BINARY(FmodNegativeDivisor, fmod(x, y), std::fmod(x, y), -10, 10, -3, -0.5f, (Tol{1e-5, 1e-5}))
FLOAT_BINARY(Step, step(x, y), y < x ? 0.0f : 1.0f, -1, 1, -1, 1, kExact)

// ---- float scalar functions of three arguments ----------------------------------------------------------
#define FLOAT_TERNARY(Name, expr, ref, xlo, xhi, ylo, yhi, zlo, zhi, tol)                                  \
    TEST_F(Builtins, Name) {                                                                                \
        Kernel1D k = [](BufferFloat a, BufferFloat b, BufferFloat c, BufferFloat out) noexcept {            \
            auto i = dispatch_id().x;                                                                       \
            Float x = a.read(i);                                                                            \
            Float y = b.read(i);                                                                            \
            Float z = c.read(i);                                                                            \
            out.write(i, expr);                                                                             \
        };                                                                                                  \
        check<float>(k,                                                                                     \
                     std::tuple{random_floats(kN, xlo, xhi, __LINE__), random_floats(kN, ylo, yhi, __LINE__ + 1000), \
                                random_floats(kN, zlo, zhi, __LINE__ + 2000)},                              \
                     [](float x, float y, float z) { return ref; }, tol);                                   \
    }

// Where GLSL leaves pow, atan2 and smoothstep undefined, the engine defines them, on the device as in the
// interpreter: x^0 = 1 (0^0 too; lavapipe's pow gave 0), NaN for x < 0, 0^y = 0 or +inf; atan2 at the origin as
// C's (lavapipe gave ±3pi/4); smoothstep with reversed or equal edges by its formula (equal edges: a step; the
// same value as both edges gave garbage). Scalars and vectors, component by component.
TEST_F(Builtins, PowAtan2AndSmoothstepWhereGlslLeavesThemUndefined) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    Kernel1D pw = [](BufferFloat a, BufferFloat b, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        out.write(i, pow(a.read(i), b.read(i)));
    };
    check<float>(pw, std::tuple{std::vector<float>{0, 0, -0.0f, 0, 0, -2, -2, 3, 2, nan},
                                std::vector<float>{0, 2, 0, -1, -0.5f, 2, 0, 0, 0.5f, 0}},
                 [](float x, float y) {
                     return y == 0 ? 1.0f : x < 0 ? NAN : x == 0 ? (y > 0 ? 0.0f : HUGE_VALF) : std::pow(x, y);
                 }, kTranscendental);
    EXPECT_EQ(std::pow(0.0f, 0.0f), 1.0f);
    Kernel1D at = [](BufferFloat a, BufferFloat b, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float3 y = make_float3(a.read(i)), x = make_float3(b.read(i), 1.0f, -1.0f);
        Float3 v = atan2(y, x);
        out.write(i, v.x + 10.0f * v.y + 100.0f * v.z);
    };
    check<float>(at,
                 std::tuple{std::vector<float>{0, -0.0f, 0, -0.0f, 1, 0}, std::vector<float>{0, 0, -0.0f, -0.0f, 0, 2}},
                 [](float y, float x) {
                     return std::atan2(y, x) + 10.0f * std::atan2(y, 1.0f) + 100.0f * std::atan2(y, -1.0f);
                 }, kTranscendental);
    Kernel1D sm = [](BufferFloat a, BufferFloat b, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float e = a.read(i), x = b.read(i);
        out.write(i, smoothstep(e, e, x) + 10.0f * smoothstep(e + 1.0f, e, x));
    };
    check<float>(sm, std::tuple{std::vector<float>{0.5f, 0.5f, 0, 0}, std::vector<float>{0.2f, 0.7f, 0.25f, 0.75f}},
                 [](float e, float x) {
                     auto s = [](float e0, float e1, float v) {
                         float t = std::clamp((v - e0) / (e1 - e0), 0.0f, 1.0f);
                         return t * t * (3 - 2 * t);
                     };
                     return s(e, e, x) + 10.0f * s(e + 1.0f, e, x);
                 }, kBasic);
}

// GLSL leaves min, max and clamp of a NaN undefined; lavapipe (and IEEE 754's minNum and maxNum, as most GPUs)
// gives the number, where the interpreter gave the NaN for one order of the operands. Both give the number now.
TEST_F(Builtins, MinMaxAndClampOfANaNGiveTheNumber) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    Kernel1D k = [](BufferFloat a, BufferFloat b, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = a.read(i), y = b.read(i);
        out.write(i, min(x, y) + 10.0f * max(x, y) + 100.0f * clamp(x, -1.0f, 1.0f) + 1000.0f * clamp(y, -2.0f, 2.0f));
    };
    check<float>(k, std::tuple{std::vector<float>{nan, 3, nan, -4, 0.5f}, std::vector<float>{3, nan, -4, nan, 0.25f}},
                 [](float x, float y) {
                     const auto c = [](float v, float lo, float hi) { return std::fmin(std::fmax(v, lo), hi); };
                     return std::fmin(x, y) + 10.0f * std::fmax(x, y) + 100.0f * c(x, -1, 1) + 1000.0f * c(y, -2, 2);
                 }, kExact);
}

// clamp(x, lo, hi) with lo in [-5, -1] and hi in [1, 5]: lo < hi, as GLSL requires.
FLOAT_TERNARY(Clamp, clamp(x, y, z), std::clamp(x, y, z), -10, 10, -5, -1, 1, 5, kExact)
FLOAT_TERNARY(Lerp, lerp(x, y, z), double(x) + (double(y) - double(x)) * double(z), -10, 10, -10, 10, 0, 1,
              (Tol{1e-5, 1e-5}))
FLOAT_TERNARY(Smoothstep, smoothstep(x, y, z),
              [&] { double t = std::clamp((double(z) - x) / (double(y) - x), 0.0, 1.0); return t * t * (3 - 2 * t); }(),
              -2, -1, 1, 2, -3, 3, (Tol{1e-5, 1e-5}))
// fma may or may not be fused on the device (GLSL allows either): compare with the rounded product.
FLOAT_TERNARY(Fma, fma(x, y, z), double(x) * double(y) + double(z), -10, 10, -10, 10, -10, 10, (Tol{1e-5, 1e-5}))
FLOAT_TERNARY(Ite, ite(x < y, z, x * 2.0f), x < y ? z : x * 2.0f, -1, 1, -1, 1, -1, 1, kExact)

// ---- integer operators -----------------------------------------------------------------------------------
#define INT_BINARY(Name, expr, ref, xlo, xhi, ylo, yhi)                                                     \
    TEST_F(Builtins, Name) {                                                                                \
        Kernel1D k = [](BufferInt a, BufferInt b, BufferInt out) noexcept {                                 \
            auto i = dispatch_id().x;                                                                       \
            Int x = a.read(i);                                                                              \
            Int y = b.read(i);                                                                              \
            out.write(i, expr);                                                                             \
        };                                                                                                  \
        check<int32_t>(k, std::tuple{random_ints(kN, xlo, xhi, __LINE__), random_ints(kN, ylo, yhi, __LINE__ + 1000)}, \
                       [](int32_t x, int32_t y) { return ref; }, kExact);                                   \
    }

INT_BINARY(IntAdd, x + y, x + y, -100000, 100000, -100000, 100000)
INT_BINARY(IntSub, x - y, x - y, -100000, 100000, -100000, 100000)
INT_BINARY(IntMul, x * y, x * y, -10000, 10000, -10000, 10000)
INT_BINARY(IntDivTruncatesTowardZero, x / y, x / y, -100000, 100000, 1, 100)
INT_BINARY(IntDivNegative, x / y, x / y, -100000, 100000, -100, -1)
// GLSL leaves % undefined for negative operands: non-negative ones only.
INT_BINARY(IntMod, x % y, x % y, 0, 100000, 1, 100)
INT_BINARY(IntMin, min(x, y), std::min(x, y), -100, 100, -100, 100)
INT_BINARY(IntMax, max(x, y), std::max(x, y), -100, 100, -100, 100)
INT_BINARY(IntAbs, abs(x) + y * 0, std::abs(x), -100, 100, -100, 100)
INT_BINARY(IntClamp, clamp(x, -y, y), std::clamp(x, -y, y), -200, 200, 1, 100)
INT_BINARY(IntNegate, -x + y, -x + y, -100, 100, -100, 100)
INT_BINARY(IntBitAnd, x & y, x & y, -100000, 100000, -100000, 100000)
INT_BINARY(IntBitOr, x | y, x | y, -100000, 100000, -100000, 100000)
INT_BINARY(IntBitXor, x ^ y, x ^ y, -100000, 100000, -100000, 100000)
INT_BINARY(IntBitNot, ~x + y * 0, ~x, -100000, 100000, 0, 1)
INT_BINARY(IntShiftLeft, x << y, int32_t(uint32_t(x) << y), -1000, 1000, 0, 20)
// >> on int is arithmetic (sign-extending) in GLSL and in C++20.
INT_BINARY(IntShiftRight, x >> y, x >> y, -100000, 100000, 0, 31)
INT_BINARY(IntCompare,
           cast<int>(x < y) + 2 * cast<int>(x <= y) + 4 * cast<int>(x > y) + 8 * cast<int>(x >= y) +
               16 * cast<int>(x == y) + 32 * cast<int>(x != y),
           (x < y) + 2 * (x <= y) + 4 * (x > y) + 8 * (x >= y) + 16 * (x == y) + 32 * (x != y), -5, 5, -5, 5)
INT_BINARY(IntCompoundAssignment,
           [&] {
               Int v = x;
               v += y;
               v *= 3;
               v -= 1;
               v ^= 5;
               v <<= 2;
               v >>= 1;
               return Expr<int32_t>(v);
           }(),
           ((((x + y) * 3 - 1) ^ 5) << 2) >> 1, -1000, 1000, -1000, 1000)

#define UINT_BINARY(Name, expr, ref, xlo, xhi, ylo, yhi)                                                    \
    TEST_F(Builtins, Name) {                                                                                \
        Kernel1D k = [](BufferUInt a, BufferUInt b, BufferUInt out) noexcept {                              \
            auto i = dispatch_id().x;                                                                       \
            UInt x = a.read(i);                                                                             \
            UInt y = b.read(i);                                                                             \
            out.write(i, expr);                                                                             \
        };                                                                                                  \
        check<uint32_t>(k, std::tuple{random_uints(kN, xlo, xhi, __LINE__), random_uints(kN, ylo, yhi, __LINE__ + 1000)}, \
                        [](uint32_t x, uint32_t y) { return ref; }, kExact);                                \
    }

// Unsigned arithmetic wraps modulo 2^32 on both sides.
UINT_BINARY(UIntAdd, x + y, x + y, 0, 0xffffffffu, 0, 0xffffffffu)
UINT_BINARY(UIntSub, x - y, x - y, 0, 0xffffffffu, 0, 0xffffffffu)
UINT_BINARY(UIntMul, x * y, x * y, 0, 0xffffffffu, 0, 0xffffffffu)
UINT_BINARY(UIntDiv, x / y, x / y, 0, 0xffffffffu, 1, 1000)
UINT_BINARY(UIntMod, x % y, x % y, 0, 0xffffffffu, 1, 1000)
// abs of a uint is the identity (GLSL has no abs(uint)).
UINT_BINARY(UIntAbs, abs(x) + y * 0u, x, 0, 0xffffffffu, 0, 10)
UINT_BINARY(UIntMinMax, min(x, y) * 3u + max(x, y), std::min(x, y) * 3u + std::max(x, y), 0, 0xffffffffu, 0, 0xffffffffu)
UINT_BINARY(UIntBits, ((x & y) ^ (x | 0x0f0fu)) + ~y, ((x & y) ^ (x | 0x0f0fu)) + ~y, 0, 0xffffffffu, 0, 0xffffffffu)
// >> on uint is logical.
UINT_BINARY(UIntShifts, (x >> (y & 31u)) + (x << (y & 7u)), (x >> (y & 31u)) + (x << (y & 7u)), 0, 0xffffffffu, 0, 1000)
UINT_BINARY(UIntCompare, cast<uint>(x < y) + 2u * cast<uint>(x >= y) + 4u * cast<uint>(x == y),
            uint32_t(x < y) + 2u * (x >= y) + 4u * (x == y), 0, 10, 0, 10)

// ---- float comparisons and logic on bool values -----------------------------------------------------------
TEST_F(Builtins, FloatComparisonsAndLogic) {
    Kernel1D k = [](BufferFloat a, BufferFloat b, BufferInt out) noexcept {
        auto i = dispatch_id().x;
        Float x = a.read(i);
        Float y = b.read(i);
        Bool lt = x < y;
        Bool both = (x > 0.0f) && (y > 0.0f);
        Bool either = (x > 0.5f) || !(y < 0.5f);
        out.write(i, cast<int>(lt) + 2 * cast<int>(x <= y) + 4 * cast<int>(x > y) + 8 * cast<int>(x >= y) +
                         16 * cast<int>(x == y) + 32 * cast<int>(x != y) + 64 * cast<int>(both) +
                         128 * cast<int>(either) + 256 * cast<int>(lt == both) + 512 * cast<int>(lt != either));
    };
    // Equal inputs every few threads, so that == and <= see equality.
    auto xs = random_floats(kN, -1, 1, 7);
    auto ys = random_floats(kN, -1, 1, 8);
    for (size_t i = 0; i < kN; i += 5) ys[i] = xs[i];
    check<int32_t>(k, std::tuple{xs, ys}, [](float x, float y) {
        bool lt = x < y, both = x > 0 && y > 0, either = x > 0.5f || !(y < 0.5f);
        return lt + 2 * (x <= y) + 4 * (x > y) + 8 * (x >= y) + 16 * (x == y) + 32 * (x != y) + 64 * both +
               128 * either + 256 * (lt == both) + 512 * (lt != either);
    }, kExact);
}

// Division and remainder by 0, which GLSL leaves undefined (lavapipe gave all bits set for a uint's quotient and for
// both remainders): 0, on the device as in the interpreter, for scalars, vectors and a vector over a scalar. A signed
// division by -1 negates, INT_MIN / -1 wrapping to INT_MIN, with remainder 0 (undefined in GLSL, a trap on a CPU's
// divide instruction; lavapipe wraps already, so the emitted selects are what this pins on it, with the goldens).
// (A remainder of negative operands is undefined in GLSL too: only by 0 and -1 here.)
TEST_F(Builtins, IntegerDivisionByZeroGivesZero) {
    const std::vector<int32_t> xs = {7, -7, 0, 5, 9, 2147483647, 12, -12, -2147483647 - 1, -2147483647 - 1, 6};
    const std::vector<int32_t> ys = {0, 0, 0, 2, 4, 0, 5, 0, -1, 0, -1};
    const auto wrap = [](int64_t v) { return int64_t(int32_t(uint32_t(uint64_t(v)))); };
    const auto div = [&](int64_t x, int64_t y) { return y == 0 ? 0 : wrap(x / y); };
    const auto mod = [](int64_t x, int64_t y) { return y == 0 || y == -1 ? 0 : x % y; };
    Kernel1D scalars = [](BufferInt a, BufferInt b, BufferVar<uint4> out) noexcept {
        auto i = dispatch_id().x;
        Int x = a.read(i), y = b.read(i);
        UInt ux = cast<uint>(x), uy = cast<uint>(y);
        out.write(i, make_uint4(cast<uint>(x / y), cast<uint>(x % y), ux / uy, ux % uy));
    };
    check<uint4>(scalars, std::tuple{xs, ys}, [&](int32_t x, int32_t y) {
        return uint4(uint32_t(div(x, y)), uint32_t(mod(x, y)), uint32_t(div(uint32_t(x), uint32_t(y))),
                     uint32_t(mod(uint32_t(x), uint32_t(y))));
    }, kExact);
    Kernel1D vectors = [](BufferInt a, BufferInt b, BufferVar<int4> out) noexcept {
        auto i = dispatch_id().x;
        Int x = a.read(i), y = b.read(i);
        Int2 q = make_int2(x, -x) / make_int2(y, y + 1), r = make_int2(x, x + 1) % y;
        out.write(i, make_int4(q, r));
    };
    check<int4>(vectors, std::tuple{xs, ys}, [&](int32_t x, int32_t y) {
        return int4(int32_t(div(x, y)), int32_t(div(-int64_t(x), y + 1)), int32_t(mod(x, y)), int32_t(mod(x + 1, y)));
    }, kExact);
}

// ---- casts -----------------------------------------------------------------------------------------------
TEST_F(Builtins, CastFloatToIntTruncates) {
    Kernel1D k = [](BufferFloat a, BufferInt out) noexcept {
        auto i = dispatch_id().x;
        out.write(i, cast<int>(a.read(i)));
    };
    check<int32_t>(k, std::tuple{random_floats(kN, -1000, 1000, 11)}, [](float x) { return int32_t(x); }, kExact);
}

TEST_F(Builtins, CastFloatToUInt) {
    Kernel1D k = [](BufferFloat a, BufferUInt out) noexcept {
        auto i = dispatch_id().x;
        out.write(i, cast<uint>(a.read(i)));
    };
    check<uint32_t>(k, std::tuple{random_floats(kN, 0, 100000, 12)}, [](float x) { return uint32_t(x); }, kExact);
}

TEST_F(Builtins, CastIntAndUIntToFloat) {
    Kernel1D k = [](BufferInt a, BufferUInt b, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        out.write(i, cast<float>(a.read(i)) * 0.5f + cast<float>(b.read(i)));
    };
    check<float>(k, std::tuple{random_ints(kN, -1000000, 1000000, 13), random_uints(kN, 0, 1000000, 14)},
                 [](int32_t x, uint32_t y) { return float(x) * 0.5f + float(y); }, kBasic);
}

TEST_F(Builtins, CastIntToUIntKeepsTheBits) {
    Kernel1D k = [](BufferInt a, BufferUInt out) noexcept {
        auto i = dispatch_id().x;
        out.write(i, cast<uint>(a.read(i)) + cast<uint>(cast<int>(a.read(i) > 0)));
    };
    check<uint32_t>(k, std::tuple{random_ints(kN, -1000000, 1000000, 15)},
                    [](int32_t x) { return uint32_t(x) + uint32_t(x > 0); }, kExact);
}

// And back: GLSL's int(uint) keeps the bits, as uint(int) does; the interpreter saturated 3e9u to 2147483647.
TEST_F(Builtins, CastUIntToIntKeepsTheBits) {
    Kernel1D k = [](BufferUInt a, BufferInt out) noexcept {
        auto i = dispatch_id().x;
        out.write(i, cast<int>(a.read(i)));
    };
    auto u = random_uints(kN, 0, 4294967295u, 19);
    u[0] = 3000000000u;
    u[1] = 2147483648u;
    u[2] = 4294967295u;
    check<int32_t>(k, std::tuple{u}, [](uint32_t x) { return int32_t(x); }, kExact);
}

TEST_F(Builtins, CastToBoolAndBack) {
    Kernel1D k = [](BufferInt a, BufferFloat b, BufferInt out) noexcept {
        auto i = dispatch_id().x;
        out.write(i, cast<int>(cast<bool>(a.read(i))) + 2 * cast<int>(cast<bool>(b.read(i))));
    };
    auto ints = random_ints(kN, -2, 2, 16);
    auto floats = random_floats(kN, -1, 1, 17);
    for (size_t i = 0; i < kN; i += 3) floats[i] = 0.0f;
    check<int32_t>(k, std::tuple{ints, floats}, [](int32_t x, float y) { return int32_t(x != 0) + 2 * (y != 0); },
                   kExact);
}

TEST_F(Builtins, CastVectors) {
    Kernel1D k = [](BufferFloat3 a, BufferFloat3 out) noexcept {
        auto i = dispatch_id().x;
        Int3 v = cast<int>(a.read(i));
        out.write(i, cast<float>(v) + cast<float>(cast<uint>(abs(v))) * 0.5f);
    };
    check<float3>(k, std::tuple{random_vectors<3>(kN, -100, 100, 18)}, [](float3 v) {
        float3 r;
        for (int c = 0; c < 3; ++c) r[c] = float(int32_t(v[c])) + float(uint32_t(std::abs(int32_t(v[c])))) * 0.5f;
        return r;
    }, kExact);
}

// Floats outside an integer type's range, infinities and NaN, which GLSL leaves undefined (lavapipe gave
// uint(-1.0) = 4294967295 and int(NaN) = -2147483648): saturated at the range, NaN to 0, on the device as in the
// interpreter; scalars (ternaries in GLSL) and vectors (mix) alike.
namespace saturating {
const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
const std::vector<float> kFloats = {nan, inf, -inf, -1.0f, -0.5f, -0.0f, 0.5f, 1.5f, -1.5f, 123456.7f, 2147483520.0f,
                                    2147483648.0f, 3e9f, -2147483648.0f, -2147483904.0f, -3e9f, 4294967040.0f,
                                    4294967296.0f, 1e20f, -1e20f, 18446742974197923840.0f, 18446744073709551616.0f,
                                    1e30f, -nan};
int32_t to_int(float x) {
    if (std::isnan(x)) return 0;
    if (x >= 2147483648.0f) return std::numeric_limits<int32_t>::max();
    if (x <= -2147483648.0f) return std::numeric_limits<int32_t>::min();
    return int32_t(x);
}
uint32_t to_uint(float x) { return std::isnan(x) || x <= 0.0f ? 0u : x >= 4294967296.0f ? ~0u : uint32_t(x); }
uint64_t to_uint64(float x) {
    return std::isnan(x) || x <= 0.0f ? 0u : x >= 18446744073709551616.0f ? ~uint64_t(0) : uint64_t(x);
}
} // namespace saturating

TEST_F(Builtins, CastOfAnyFloatToAnIntegerIsDefined) {
    using namespace saturating;
    Kernel1D k = [](BufferFloat a, BufferVar<uint4> out) noexcept {
        auto i = dispatch_id().x;
        Float x = a.read(i);
        UInt64 w = cast<uint64_t>(x);
        out.write(i, make_uint4(cast<uint>(cast<int>(x)), cast<uint>(x), cast<uint>(w & 0xffffffffull),
                                cast<uint>(w >> 32u)));
    };
    check<uint4>(k, std::tuple{kFloats}, [](float x) {
        uint64_t w = to_uint64(x);
        return uint4(uint32_t(to_int(x)), to_uint(x), uint32_t(w), uint32_t(w >> 32));
    }, kExact);
}

TEST_F(Builtins, CastOfAnyFloatVectorToIntegersIsDefined) {
    using namespace saturating;
    std::vector<float3> v;
    for (size_t i = 0; i < kFloats.size(); ++i)
        v.push_back(float3(kFloats[i], kFloats[(i + 7) % kFloats.size()], kFloats[(i + 13) % kFloats.size()]));
    Kernel1D ints = [](BufferFloat3 a, BufferVar<int3> out) noexcept {
        out.write(dispatch_id().x, cast<int>(a.read(dispatch_id().x)));
    };
    check<int3>(ints, std::tuple{v}, [](float3 x) { return int3(to_int(x[0]), to_int(x[1]), to_int(x[2])); }, kExact);
    Kernel1D uints = [](BufferFloat3 a, BufferVar<uint3> out) noexcept {
        out.write(dispatch_id().x, cast<uint>(a.read(dispatch_id().x)));
    };
    check<uint3>(uints, std::tuple{v}, [](float3 x) { return uint3(to_uint(x[0]), to_uint(x[1]), to_uint(x[2])); },
                 kExact);
}

// ---- constructors, members and swizzles -------------------------------------------------------------------
TEST_F(Builtins, MakeVectorsFromScalarsAndVectors) {
    Kernel1D k = [](BufferFloat a, BufferFloat b, BufferFloat4 out) noexcept {
        auto i = dispatch_id().x;
        Float x = a.read(i);
        Float y = b.read(i);
        Float2 v2 = make_float2(x, y);
        Float3 v3 = make_float3(v2, x * y);
        Float4 v4 = make_float4(v3, 1.0f) + make_float4(y) + make_float4(make_float2(x), v2);
        out.write(i, v4);
    };
    check<float4>(k, std::tuple{random_floats(kN, -10, 10, 21), random_floats(kN, -10, 10, 22)}, [](float x, float y) {
        return float4(x + y + x, y + y + x, x * y + y + x, 1.0f + y + y);
    }, kBasic);   // not exact: Vulkan lets a driver fuse x * y + y into one FMA (NVIDIA's does)
}

TEST_F(Builtins, MakeIntAndUIntVectors) {
    Kernel1D k = [](BufferInt a, BufferUInt b, BufferVar<int4> out) noexcept {
        auto i = dispatch_id().x;
        Int x = a.read(i);
        UInt y = b.read(i);
        Int3 v = make_int3(x, x * 2, 7);
        UInt2 u = make_uint2(y, y + 1u);
        out.write(i, make_int4(v.x + v.y, v.z, cast<int>(u.x), cast<int>(u.y)) + make_int4(x));
    };
    check<int4>(k, std::tuple{random_ints(kN, -1000, 1000, 23), random_uints(kN, 0, 1000, 24)}, [](int32_t x, uint32_t y) {
        return int4(3 * x + x, 7 + x, int32_t(y) + x, int32_t(y + 1) + x);
    }, kExact);
}

TEST_F(Builtins, MakeRemainingVectorsAndMatrices) {
    Kernel1D k = [](BufferInt a, BufferFloat b, BufferVar<uint4> out, BufferVar<float4x4> mats) noexcept {
        auto i = dispatch_id().x;
        Int x = a.read(i);
        Float y = b.read(i);
        Int2 p = make_int2(x, -x);
        UInt3 u = make_uint3(cast<uint>(abs(x)), 2u, make_uint2(7u).y);
        out.write(i, make_uint4(u.x + cast<uint>(p.y + x), u.y, u.z, cast<uint>(p.x * 0 + 9)) + make_uint4(1u));
        Float3x3 m3 = make_float3x3(make_float3(y), make_float3(1.0f, 2.0f, 3.0f), make_float3(0.0f, y, 0.0f));
        Float4x4 m4 = make_float4x4(m3[0].x, m3[1].y, m3[2].y, 0.0f, 1.0f, 1.0f, 1.0f, 1.0f, make_float4(y).x, 0.0f, 0.0f,
                                    0.0f, 0.0f, 0.0f, 0.0f, m3[1][2]);
        mats.write(i, m4);
    };
    const uint32_t n = 256;
    auto ints = random_ints(n, -1000, 1000, 28);
    auto floats = random_floats(n, -10, 10, 29);
    auto shader = device.compile(k);
    auto a = upload(device, stream, ints);
    auto b = upload(device, stream, floats);
    auto out = device.create_buffer<uint4>(n);
    auto mats = device.create_buffer<float4x4>(n);
    stream << shader(a, b, out, mats).dispatch(n);
    auto got = download(stream, out);
    auto got_m = download(stream, mats);
    std::vector<uint4> host(n);
    std::vector<float4x4> host_m(n);
    interpret(k, {n, 1, 1}, ints, floats, host, host_m);
    for (uint32_t i = 0; i < n; ++i) {
        uint4 want(uint32_t(std::abs(ints[i])) + 1, 3, 8, 10);
        float y = floats[i];
        float4x4 want_m;
        want_m[0] = float4(y, 2, y, 0);
        want_m[1] = float4(1, 1, 1, 1);
        want_m[2] = float4(y, 0, 0, 0);
        want_m[3] = float4(0, 0, 0, 3);
        EXPECT_EQ(got[i], want) << i;
        EXPECT_EQ(host[i], want) << "interpreter " << i;
        EXPECT_EQ(got_m[i], want_m) << i;
        EXPECT_EQ(host_m[i], want_m) << "interpreter " << i;
    }
}

TEST_F(Builtins, SwizzlesMembersAndDynamicIndex) {
    Kernel1D k = [](BufferFloat4 a, BufferUInt sel, BufferFloat4 out) noexcept {
        auto i = dispatch_id().x;
        Float4 v = a.read(i);
        UInt s = sel.read(i);
        Float2 xy = v.xy();
        Float3 zyx = v.xyzw().zyx();
        Float2 yx = v.yx();
        // A member written through a reference, and an element chosen at run time.
        Float4 w = v;
        w.y = w.w * 2.0f;
        out.write(i, make_float4(xy.y + zyx.x, yx.x * v.xz().y, v.yz().x - w.y, v[s] + w[s % 2u]));
    };
    check<float4>(k, std::tuple{random_vectors<4>(kN, -10, 10, 25), random_uints(kN, 0, 3, 26)}, [](float4 v, uint32_t s) {
        float4 w = v;
        w.y = w.w * 2.0f;
        return float4(v.y + v.z, v.y * v.z, v.y - w.y, v[s] + w[s % 2]);
    }, kExact);
}

TEST_F(Builtins, MakeMatrices) {
    Kernel1D k = [](BufferFloat4 a, BufferFloat4 out) noexcept {
        auto i = dispatch_id().x;
        Float4 v = a.read(i);
        Float2x2 m = make_float2x2(v.x, v.y, v.z, v.w);        // column by column
        Float2x2 n = make_float2x2(v.zyx().xy(), make_float2(v.w, 1.0f));
        Float2 c0 = m[0];
        Float2 c1 = n[1];
        out.write(i, make_float4(c0.y, c1.x, m[1].x + n[0].x, m[1][1]));
    };
    check<float4>(k, std::tuple{random_vectors<4>(kN, -10, 10, 27)}, [](float4 v) {
        return float4(v.y, v.w, v.z + v.z, v.w);
    }, kExact);
    // One scalar: the diagonal (LuisaCompute's make_float4x4(1.f), the identity).
    Kernel1D d = [](BufferFloat4 a, BufferFloat4 out) noexcept {
        auto i = dispatch_id().x;
        Float4 v = a.read(i);
        out.write(i, make_float4x4(1.0f) * v + make_float4x4(v.x) * make_float4(0.0f, 1.0f, 0.0f, 2.0f) +
                         make_float3x3(2.0f)[2].zzxy());
    };
    check<float4>(d, std::tuple{random_vectors<4>(kN, -10, 10, 28)}, [](float4 v) {
        return float4(v.x + 2, v.y + v.x + 2, v.z, v.w + 2 * v.x);
    }, kBasic);   // the products' sums in another order
}

// ---- vector geometry -------------------------------------------------------------------------------------
#define FLOAT3_BINARY(Name, OutT, OutBuf, expr, ref, tol)                                                  \
    TEST_F(Builtins, Name) {                                                                                \
        Kernel1D k = [](BufferFloat3 a, BufferFloat3 b, OutBuf out) noexcept {                              \
            auto i = dispatch_id().x;                                                                       \
            Float3 x = a.read(i);                                                                           \
            Float3 y = b.read(i);                                                                           \
            out.write(i, expr);                                                                             \
        };                                                                                                  \
        check<OutT>(k, std::tuple{random_vectors<3>(kN, -10, 10, __LINE__), random_vectors<3>(kN, -10, 10, __LINE__ + 1000)}, \
                    [](float3 x, float3 y) { return ref; }, tol);                                           \
    }

namespace {
double dot3(float3 a, float3 b) { return double(a.x) * b.x + double(a.y) * b.y + double(a.z) * b.z; }
float3 sub3(float3 a, float3 b) { return float3(a.x - b.x, a.y - b.y, a.z - b.z); }
float3 scale3(float3 a, double s) { return float3(float(a.x * s), float(a.y * s), float(a.z * s)); }
} // namespace

// Sums of products: a few ULP of the largest term, so the absolute tolerance scales with the inputs (~100).
FLOAT3_BINARY(Dot, float, BufferFloat, dot(x, y), dot3(x, y), (Tol{1e-5, 1e-4}))
FLOAT3_BINARY(Cross, float3, BufferFloat3, cross(x, y),
              float3(double(x.y) * y.z - double(x.z) * y.y, double(x.z) * y.x - double(x.x) * y.z,
                     double(x.x) * y.y - double(x.y) * y.x),
              (Tol{1e-5, 1e-4}))
FLOAT3_BINARY(Length, float, BufferFloat, length(x), std::sqrt(dot3(x, x)), kBasic)
FLOAT3_BINARY(LengthSquared, float, BufferFloat, length_squared(x), dot3(x, x), kBasic)
FLOAT3_BINARY(Distance, float, BufferFloat, distance(x, y), std::sqrt(dot3(sub3(x, y), sub3(x, y))), kBasic)
FLOAT3_BINARY(Normalize, float3, BufferFloat3, normalize(x), scale3(x, 1.0 / std::sqrt(dot3(x, x))), kBasic)
// reflect(i, n) = i - 2 dot(n, i) n for a unit n.
FLOAT3_BINARY(Reflect, float3, BufferFloat3, reflect(x, normalize(y)),
              [&] {
                  float3 n = scale3(y, 1.0 / std::sqrt(dot3(y, y)));
                  return sub3(x, scale3(n, 2.0 * dot3(n, x)));
              }(),
              (Tol{1e-5, 1e-4}))
FLOAT3_BINARY(VectorArithmetic, float3, BufferFloat3, (x + y) * 2.0f - x / 4.0f + 1.0f,
              float3((x.x + y.x) * 2 - x.x / 4 + 1, (x.y + y.y) * 2 - x.y / 4 + 1, (x.z + y.z) * 2 - x.z / 4 + 1),
              (Tol{1e-5, 1e-5}))
FLOAT3_BINARY(VectorFunctions, float3, BufferFloat3, clamp(abs(x), 1.0f, y * y + 1.0f) + floor(min(x, y)) + lerp(x, y, 0.25f),
              [&] {
                  float3 r;
                  for (int c = 0; c < 3; ++c)
                      r[c] = std::min(std::max(std::fabs(x[c]), 1.0f), y[c] * y[c] + 1.0f) + std::floor(std::min(x[c], y[c])) +
                             (x[c] * 0.75f + y[c] * 0.25f);
                  return r;
              }(),
              (Tol{1e-5, 1e-5}))
FLOAT3_BINARY(VectorIteAnyAll, float3, BufferFloat3,
              ite(x < y, x, y) + make_float3(cast<float>(any(x > y)), cast<float>(all(x > y)), cast<float>(!any(x > 20.0f))),
              ([&] {
                  float3 r;
                  bool any = false, all = true;
                  for (int c = 0; c < 3; ++c) {
                      r[c] = x[c] < y[c] ? x[c] : y[c];
                      any = any || x[c] > y[c];
                      all = all && x[c] > y[c];
                  }
                  return float3(r.x + float(any), r.y + float(all), r.z + 1.0f);
              }()),
              kExact)

// A scalar on either side of a vector comparison is broadcast (GLSL's lessThan & co. need two vectors).
FLOAT3_BINARY(VectorComparedWithScalar, float3, BufferFloat3,
              cast<float>(x > 1.0f) + cast<float>(2.0f >= y) * 2.0f + cast<float>(x == x) * 4.0f +
                  cast<float>(0.0f != x) * 8.0f,
              ([&] {
                  float3 r;
                  for (int c = 0; c < 3; ++c)
                      r[c] = float(x[c] > 1.0f) + float(2.0f >= y[c]) * 2 + 4 + float(0.0f != x[c]) * 8;
                  return r;
              }()),
              kExact)

TEST_F(Builtins, IntVectorOperators) {
    Kernel1D k = [](BufferVar<int4> a, BufferVar<int4> out) noexcept {
        auto i = dispatch_id().x;
        Int4 v = a.read(i);
        Int4 p = abs(v);
        out.write(i, (p % 7) + (v >> 2) + (p << make_int4(1, 2, 3, 4)) + ((v & 0xff) ^ (v | 3)) + min(v, 5) * max(v, -5) +
                         cast<int>(v < 0) - cast<int>(3 <= v));
    };
    std::vector<int4> in(kN);
    auto r = random_ints(kN * 4, -100000, 100000, 33);
    for (size_t i = 0; i < kN; ++i) in[i] = int4(r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3]);
    check<int4>(k, std::tuple{in}, [](int4 v) {
        int4 o;
        for (int c = 0; c < 4; ++c) {
            int32_t p = std::abs(v[c]);
            o[c] = (p % 7) + (v[c] >> 2) + int32_t(uint32_t(p) << (c + 1)) + ((v[c] & 0xff) ^ (v[c] | 3)) +
                   std::min(v[c], 5) * std::max(v[c], -5) + int32_t(v[c] < 0) - int32_t(3 <= v[c]);
        }
        return o;
    }, kExact);
}

TEST_F(Builtins, Float2AndFloat4Geometry) {
    Kernel1D k = [](BufferFloat4 a, BufferFloat4 out) noexcept {
        auto i = dispatch_id().x;
        Float4 v = a.read(i);
        Float2 p = v.xy();
        out.write(i, make_float4(length(v), dot(p, p), distance(v, make_float4(1.0f)), normalize(p).y));
    };
    check<float4>(k, std::tuple{random_vectors<4>(kN, -10, 10, 31)}, [](float4 v) {
        double l4 = std::sqrt(double(v.x) * v.x + double(v.y) * v.y + double(v.z) * v.z + double(v.w) * v.w);
        double p2 = double(v.x) * v.x + double(v.y) * v.y;
        double d = 0;
        for (int c = 0; c < 4; ++c) d += (double(v[c]) - 1) * (double(v[c]) - 1);
        return float4(float(l4), float(p2), float(std::sqrt(d)), float(v.y / std::sqrt(p2)));
    }, (Tol{1e-5, 1e-5}));
}

// ---- matrices --------------------------------------------------------------------------------------------
namespace {
template <size_t N>
double det(const Matrix<N>& m) {
    // Laplace expansion in double along the first row.
    if constexpr (N == 2) {
        return double(m[0][0]) * m[1][1] - double(m[1][0]) * m[0][1];
    } else {
        double d = 0;
        for (size_t c = 0; c < N; ++c) {
            Matrix<N - 1> minor;
            for (size_t cc = 0, mc = 0; cc < N; ++cc) {
                if (cc == c) continue;
                for (size_t r = 1; r < N; ++r) minor[mc][r - 1] = m[cc][r];
                ++mc;
            }
            d += (c % 2 ? -1.0 : 1.0) * m[c][0] * det(minor);
        }
        return d;
    }
}
template <size_t N>
Matrix<N> transpose_ref(const Matrix<N>& m) {
    Matrix<N> t;
    for (size_t c = 0; c < N; ++c)
        for (size_t r = 0; r < N; ++r) t[r][c] = m[c][r];
    return t;
}
template <size_t N>
Matrix<N> inverse_ref(const Matrix<N>& m) {
    // Gauss-Jordan in double.
    double a[N][2 * N] = {};
    for (size_t r = 0; r < N; ++r) {
        for (size_t c = 0; c < N; ++c) a[r][c] = m[c][r];
        a[r][N + r] = 1;
    }
    for (size_t p = 0; p < N; ++p) {
        size_t best = p;
        for (size_t r = p + 1; r < N; ++r)
            if (std::fabs(a[r][p]) > std::fabs(a[best][p])) best = r;
        for (size_t c = 0; c < 2 * N; ++c) std::swap(a[p][c], a[best][c]);
        double inv = 1 / a[p][p];
        for (size_t c = 0; c < 2 * N; ++c) a[p][c] *= inv;
        for (size_t r = 0; r < N; ++r) {
            if (r == p) continue;
            double f = a[r][p];
            for (size_t c = 0; c < 2 * N; ++c) a[r][c] -= f * a[p][c];
        }
    }
    Matrix<N> out;
    for (size_t r = 0; r < N; ++r)
        for (size_t c = 0; c < N; ++c) out[c][r] = float(a[r][N + c]);
    return out;
}
template <size_t N>
Matrix<N> matmul_ref(const Matrix<N>& a, const Matrix<N>& b) {
    Matrix<N> out;
    for (size_t c = 0; c < N; ++c)
        for (size_t r = 0; r < N; ++r) {
            double s = 0;
            for (size_t k = 0; k < N; ++k) s += double(a[k][r]) * b[c][k];
            out[c][r] = float(s);
        }
    return out;
}
} // namespace

#define MATRIX_TESTS(N)                                                                                     \
    TEST_F(Builtins, Transpose##N) {                                                                        \
        Kernel1D k = [](BufferVar<float##N##x##N> a, BufferVar<float##N##x##N> out) noexcept {              \
            auto i = dispatch_id().x;                                                                       \
            out.write(i, transpose(a.read(i)));                                                             \
        };                                                                                                  \
        check<float##N##x##N>(k, std::tuple{random_matrices<N>(kN, 40 + N)}, transpose_ref<N>, kExact);     \
    }                                                                                                       \
    TEST_F(Builtins, Determinant##N) {                                                                      \
        Kernel1D k = [](BufferVar<float##N##x##N> a, BufferFloat out) noexcept {                            \
            auto i = dispatch_id().x;                                                                       \
            out.write(i, determinant(a.read(i)));                                                           \
        };                                                                                                  \
        check<float>(k, std::tuple{random_matrices<N>(kN, 50 + N)}, det<N>, (Tol{1e-5, 1e-4}));             \
    }                                                                                                       \
    TEST_F(Builtins, Inverse##N) {                                                                          \
        Kernel1D k = [](BufferVar<float##N##x##N> a, BufferVar<float##N##x##N> out) noexcept {              \
            auto i = dispatch_id().x;                                                                       \
            out.write(i, inverse(a.read(i)));                                                               \
        };                                                                                                  \
        check<float##N##x##N>(k, std::tuple{random_matrices<N>(kN, 60 + N)}, inverse_ref<N>, (Tol{1e-5, 1e-5})); \
    }                                                                                                       \
    TEST_F(Builtins, MatrixProducts##N) {                                                                   \
        Kernel1D k = [](BufferVar<float##N##x##N> a, BufferVar<float##N##x##N> b,                           \
                        BufferVar<float##N##x##N> out) noexcept {                                           \
            auto i = dispatch_id().x;                                                                       \
            Var<float##N##x##N> x = a.read(i);                                                              \
            Var<float##N##x##N> y = b.read(i);                                                              \
            Var<float##N##x##N> p = x * y;                                                                  \
            /* M * v and v * M on column 0 of y: stored as column 0 and 1 of the result. */                \
            Var<Vector<float, N>> mv = x * y[0];                                                            \
            Var<Vector<float, N>> vm = y[0] * x;                                                            \
            p[0] = p[0] + mv;                                                                               \
            p[1] = p[1] + vm * 2.0f;                                                                        \
            out.write(i, p);                                                                                \
        };                                                                                                  \
        check<float##N##x##N>(k, std::tuple{random_matrices<N>(kN, 70 + N), random_matrices<N>(kN, 80 + N)}, \
                              [](const Matrix<N>& x, const Matrix<N>& y) {                                  \
                                  Matrix<N> p = matmul_ref(x, y);                                           \
                                  for (size_t r = 0; r < N; ++r) {                                          \
                                      double mv = 0, vm = 0;                                                \
                                      for (size_t k = 0; k < N; ++k) {                                      \
                                          mv += double(x[k][r]) * y[0][k];                                  \
                                          vm += double(y[0][k]) * x[r][k];                                  \
                                      }                                                                     \
                                      p[0][r] = float(p[0][r] + mv);                                        \
                                      p[1][r] = float(p[1][r] + 2 * vm);                                    \
                                  }                                                                         \
                                  return p;                                                                 \
                              },                                                                            \
                              (Tol{1e-5, 1e-4}));                                                           \
    }

MATRIX_TESTS(2)
MATRIX_TESTS(3)
MATRIX_TESTS(4)

// Component-wise functions of a matrix (GLSL has them for vectors only: codegen writes them per column).
TEST_F(Builtins, MatrixComponentWiseFunctions) {
    Kernel1D k = [](BufferVar<float3x3> a, BufferVar<float3x3> out) noexcept {
        auto i = dispatch_id().x;
        Float3x3 m = a.read(i);
        out.write(i, min(abs(m), 2.5f) + floor(m) - clamp(m, -0.5f, 0.5f) * 2.0f + m / 4.0f);
    };
    check<float3x3>(k, std::tuple{random_matrices<3>(kN, 91)}, [](const float3x3& m) {
        float3x3 r;
        for (size_t c = 0; c < 3; ++c)
            for (size_t j = 0; j < 3; ++j) {
                float x = m[c][j];
                r[c][j] = std::min(std::fabs(x), 2.5f) + std::floor(x) - std::clamp(x, -0.5f, 0.5f) * 2.0f + x / 4.0f;
            }
        return r;
    }, (Tol{1e-6, 1e-6}));
}

} // namespace adjoint::test
