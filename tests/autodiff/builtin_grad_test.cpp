// Every differentiable built-in, differentiated by the engine at 1,024 random points on the device and
// compared with its analytic derivative (scalar ops) or a double-precision reference Jacobian (vector
// and matrix ops).
#include "support/device_fixture.h"

#include <cmath>
#include <functional>

namespace adjoint::test {

namespace {

constexpr size_t kPoints = 1024;

// Relative comparison with an absolute floor: float32 device math differs from libm by a few ULP, and a
// derivative of a function near a pole is large, so the bound scales with the magnitude.
void expect_close(float got, double want, const std::string& what, double rel = 2e-3, double abs_floor = 2e-4) {
    EXPECT_LE(std::fabs(got - want), abs_floor + rel * std::fabs(want)) << what << ": got " << got << ", want " << want;
}

} // namespace

class BuiltinGrad : public DeviceTest {
protected:
    using Binary = std::function<Expr<float>(Float, Float)>;
    using Ref = std::function<double(double, double)>;

    // y = f(a, b); checks dy/da and dy/db at kPoints points drawn from [lo, hi]^2.
    void check(const char* name, Binary f, Ref da, Ref db, float lo, float hi, float lo_b, float hi_b) {
        Kernel1D k = [&](BufferFloat A, BufferFloat B, BufferFloat GA, BufferFloat GB) noexcept {
            auto i = dispatch_id().x;
            Float a = A.read(i);
            Float b = B.read(i);
            $autodiff {
                requires_grad(a, b);
                Float y = f(a, b);
                backward(y);
                GA.write(i, grad(a));
                GB.write(i, grad(b));
            };
        };
        auto shader = device.compile(k);
        auto as = random_floats(kPoints, lo, hi, 11);
        auto bs = random_floats(kPoints, lo_b, hi_b, 12);
        auto A = device.create_buffer<float>(kPoints);
        auto B = device.create_buffer<float>(kPoints);
        auto GA = device.create_buffer<float>(kPoints);
        auto GB = device.create_buffer<float>(kPoints);
        std::vector<float> ga(kPoints), gb(kPoints);
        stream << A.copy_from(as.data()) << B.copy_from(bs.data()) << shader(A, B, GA, GB).dispatch(uint32_t(kPoints))
               << GA.copy_to(ga.data()) << GB.copy_to(gb.data()) << synchronize();
        for (size_t i = 0; i < kPoints; ++i) {
            std::string at = std::string(name) + " at (" + std::to_string(as[i]) + ", " + std::to_string(bs[i]) + ")";
            expect_close(ga[i], da(as[i], bs[i]), at + " d/da");
            expect_close(gb[i], db(as[i], bs[i]), at + " d/db");
        }
    }
    void unary(const char* name, std::function<Expr<float>(Float)> f, std::function<double(double)> d, float lo, float hi) {
        // The second input does not reach the output: its gradient must be exactly 0.
        check(name, [f](Float a, Float) { return f(a); }, [d](double a, double) { return d(a); },
              [](double, double) { return 0.0; }, lo, hi, -1, 1);
    }
};

TEST_F(BuiltinGrad, Arithmetic) {
    check("add", [](Float a, Float b) { return a + b; }, [](double, double) { return 1.0; },
          [](double, double) { return 1.0; }, -5, 5, -5, 5);
    check("sub", [](Float a, Float b) { return a - b; }, [](double, double) { return 1.0; },
          [](double, double) { return -1.0; }, -5, 5, -5, 5);
    check("mul", [](Float a, Float b) { return a * b; }, [](double, double b) { return b; },
          [](double a, double) { return a; }, -5, 5, -5, 5);
    check("div", [](Float a, Float b) { return a / b; }, [](double, double b) { return 1 / b; },
          [](double a, double b) { return -a / (b * b); }, -5, 5, 0.5f, 4);
    unary("neg", [](Float a) { return -a; }, [](double) { return -1.0; }, -5, 5);
}

TEST_F(BuiltinGrad, Transcendental) {
    unary("sin", [](Float a) { return sin(a); }, [](double a) { return std::cos(a); }, -6, 6);
    unary("cos", [](Float a) { return cos(a); }, [](double a) { return -std::sin(a); }, -6, 6);
    unary("tan", [](Float a) { return tan(a); }, [](double a) { return 1 / (std::cos(a) * std::cos(a)); }, -1.2f, 1.2f);
    unary("asin", [](Float a) { return asin(a); }, [](double a) { return 1 / std::sqrt(1 - a * a); }, -0.95f, 0.95f);
    unary("acos", [](Float a) { return acos(a); }, [](double a) { return -1 / std::sqrt(1 - a * a); }, -0.95f, 0.95f);
    unary("atan", [](Float a) { return atan(a); }, [](double a) { return 1 / (1 + a * a); }, -5, 5);
    unary("sinh", [](Float a) { return sinh(a); }, [](double a) { return std::cosh(a); }, -3, 3);
    unary("cosh", [](Float a) { return cosh(a); }, [](double a) { return std::sinh(a); }, -3, 3);
    unary("tanh", [](Float a) { return tanh(a); }, [](double a) { return 1 - std::tanh(a) * std::tanh(a); }, -3, 3);
    unary("exp", [](Float a) { return exp(a); }, [](double a) { return std::exp(a); }, -4, 4);
    unary("exp2", [](Float a) { return exp2(a); }, [](double a) { return std::exp2(a) * std::log(2.0); }, -4, 4);
    unary("log", [](Float a) { return log(a); }, [](double a) { return 1 / a; }, 0.1f, 10);
    unary("log2", [](Float a) { return log2(a); }, [](double a) { return 1 / (a * std::log(2.0)); }, 0.1f, 10);
    unary("log10", [](Float a) { return log10(a); }, [](double a) { return 1 / (a * std::log(10.0)); }, 0.1f, 10);
    unary("sqrt", [](Float a) { return sqrt(a); }, [](double a) { return 0.5 / std::sqrt(a); }, 0.05f, 10);
    unary("rsqrt", [](Float a) { return rsqrt(a); }, [](double a) { return -0.5 * std::pow(a, -1.5); }, 0.1f, 10);
    check("pow", [](Float a, Float b) { return pow(a, b); }, [](double a, double b) { return b * std::pow(a, b - 1); },
          [](double a, double b) { return std::pow(a, b) * std::log(a); }, 0.2f, 3, -2, 2);
    check("atan2", [](Float a, Float b) { return atan2(a, b); }, [](double y, double x) { return x / (x * x + y * y); },
          [](double y, double x) { return -y / (x * x + y * y); }, -3, 3, 0.3f, 3);
}

TEST_F(BuiltinGrad, PiecewiseAndInterpolation) {
    unary("abs", [](Float a) { return abs(a); }, [](double a) { return a > 0 ? 1.0 : -1.0; }, -5, 5);
    unary("fract", [](Float a) { return fract(a); }, [](double) { return 1.0; }, -5, 5);
    unary("saturate", [](Float a) { return saturate(a); }, [](double a) { return a >= 0 && a <= 1 ? 1.0 : 0.0; }, -1, 2);
    for (auto [name, fn] : {std::pair<const char*, std::function<Expr<float>(Float)>>{"floor", [](Float a) { return floor(a); }},
                            {"ceil", [](Float a) { return ceil(a); }},
                            {"round", [](Float a) { return round(a); }},
                            {"trunc", [](Float a) { return trunc(a); }},
                            {"sign", [](Float a) { return sign(a); }}})
        unary(name, fn, [](double) { return 0.0; }, -5, 5);
    check("min", [](Float a, Float b) { return min(a, b); }, [](double a, double b) { return a < b ? 1.0 : 0.0; },
          [](double a, double b) { return b < a ? 1.0 : 0.0; }, -5, 5, -5, 5);
    check("max", [](Float a, Float b) { return max(a, b); }, [](double a, double b) { return a > b ? 1.0 : 0.0; },
          [](double a, double b) { return b > a ? 1.0 : 0.0; }, -5, 5, -5, 5);
    check("fmod", [](Float a, Float b) { return fmod(a, b); }, [](double, double) { return 1.0; },
          [](double a, double b) { return -std::trunc(float(a) / float(b)); }, -10, 10, 0.7f, 3);
    check("step", [](Float a, Float b) { return step(a, b); }, [](double, double) { return 0.0; },
          [](double, double) { return 0.0; }, -5, 5, -5, 5);
    check("lerp(a, b, 0.3)", [](Float a, Float b) { return lerp(a, b, 0.3f); }, [](double, double) { return 0.7; },
          [](double, double) { return 0.3; }, -5, 5, -5, 5);
    check("lerp(1, 2a, b)", [](Float a, Float b) { return lerp(1.0f, a * 2.0f, b); }, [](double, double b) { return 2 * b; },
          [](double a, double) { return 2 * a - 1; }, -5, 5, -1, 2);
    check("clamp(a, -1, b)", [](Float a, Float b) { return clamp(a, -1.0f, b); },
          [](double a, double b) { return a >= -1 && a <= b ? 1.0 : 0.0; },
          [](double a, double b) { return a > b ? 1.0 : 0.0; }, -3, 3, 0, 2);
    check("fma", [](Float a, Float b) { return fma(a, b, a); }, [](double, double b) { return b + 1; },
          [](double a, double) { return a; }, -3, 3, -3, 3);
    // smoothstep: exact in x, e0 and e1 (LuisaCompute 2024 returned 0 silently).
    auto ss = [](double e0, double e1, double x) {
        double t = std::clamp((x - e0) / (e1 - e0), 0.0, 1.0);
        return t * t * (3 - 2 * t);
    };
    auto fd = [](std::function<double(double)> g, double x) { return (g(x + 1e-6) - g(x - 1e-6)) / 2e-6; };
    check("smoothstep(a, 2, b)", [](Float a, Float b) { return smoothstep(a, 2.0f, b); },
          [&](double a, double b) { return fd([&](double v) { return ss(v, 2, b); }, a); },
          [&](double a, double b) { return fd([&](double v) { return ss(a, 2, v); }, b); }, -1, 0.5f, -1.5f, 2.5f);
    check("smoothstep(-1, a, b)", [](Float a, Float b) { return smoothstep(-1.0f, a, b); },
          [&](double a, double b) { return fd([&](double v) { return ss(-1, v, b); }, a); },
          [&](double a, double b) { return fd([&](double v) { return ss(-1, a, v); }, b); }, 0.5f, 2, -1.5f, 2.5f);
    // Equal edges: a step, flat on both sides: 0, not the 0 / 0 of the general rule (NaN).
    check("smoothstep(a, a, b)", [](Float a, Float b) { return smoothstep(a, a, b); },
          [](double, double) { return 0.0; }, [](double, double) { return 0.0; }, -1, 1, -1, 1);
}

// Vector and matrix ops: y = dot(w, f(v)) (or a weighted sum of a matrix result) against a double
// central-difference Jacobian of the same function written in C++.
TEST_F(BuiltinGrad, VectorOps) {
    struct Case {
        const char* name;
        std::function<Expr<float>(Float3, Float3)> f;     // already reduced to a scalar with fixed weights
        std::function<double(const double*, const double*)> ref;
    };
    auto dotd = [](const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; };
    const double w[3] = {0.3, -0.7, 1.1};
    std::vector<Case> cases = {
        {"dot", [](Float3 a, Float3 b) { return dot(a, b); }, [=](const double* a, const double* b) { return dotd(a, b); }},
        {"length", [](Float3 a, Float3) { return length(a); }, [=](const double* a, const double*) { return std::sqrt(dotd(a, a)); }},
        {"length_squared", [](Float3 a, Float3) { return length_squared(a); }, [=](const double* a, const double*) { return dotd(a, a); }},
        {"distance", [](Float3 a, Float3 b) { return distance(a, b); },
         [=](const double* a, const double* b) { double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; return std::sqrt(dotd(d, d)); }},
        {"normalize", [](Float3 a, Float3) { return dot(normalize(a), make_float3(0.3f, -0.7f, 1.1f)); },
         [=](const double* a, const double*) { double l = std::sqrt(dotd(a, a)); double n[3] = {a[0] / l, a[1] / l, a[2] / l}; return dotd(n, w); }},
        {"cross", [](Float3 a, Float3 b) { return dot(cross(a, b), make_float3(0.3f, -0.7f, 1.1f)); },
         [=](const double* a, const double* b) {
             double c[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
             return dotd(c, w);
         }},
        {"reflect", [](Float3 a, Float3 b) { return dot(reflect(a, b), make_float3(0.3f, -0.7f, 1.1f)); },
         [=](const double* i, const double* n) {
             double d = dotd(n, i);
             double r[3] = {i[0] - 2 * d * n[0], i[1] - 2 * d * n[1], i[2] - 2 * d * n[2]};
             return dotd(r, w);
         }},
        {"vector arithmetic", [](Float3 a, Float3 b) { return dot(a * b + a / (b * b + 1.0f) - sin(a) * 2.0f, make_float3(0.3f, -0.7f, 1.1f)); },
         [=](const double* a, const double* b) {
             double r[3];
             for (int k = 0; k < 3; ++k) r[k] = a[k] * b[k] + a[k] / (b[k] * b[k] + 1) - std::sin(a[k]) * 2;
             return dotd(r, w);
         }},
    };
    for (auto& c : cases) {
        Kernel1D k = [&](BufferFloat3 A, BufferFloat3 B, BufferFloat3 GA, BufferFloat3 GB) noexcept {
            auto i = dispatch_id().x;
            Float3 a = A.read(i);
            Float3 b = B.read(i);
            $autodiff {
                requires_grad(a, b);
                Float y = c.f(a, b);
                backward(y);
                GA.write(i, grad(a));
                GB.write(i, grad(b));
            };
        };
        auto shader = device.compile(k);
        auto raw_a = random_floats(kPoints * 3, -2, 2, 21);
        auto raw_b = random_floats(kPoints * 3, -2, 2, 22);
        std::vector<float3> as(kPoints), bs(kPoints), ga(kPoints), gb(kPoints);
        for (size_t i = 0; i < kPoints; ++i) {
            as[i] = float3(raw_a[3 * i], raw_a[3 * i + 1], raw_a[3 * i + 2]);
            bs[i] = float3(raw_b[3 * i], raw_b[3 * i + 1], raw_b[3 * i + 2]);
        }
        auto A = device.create_buffer<float3>(kPoints);
        auto B = device.create_buffer<float3>(kPoints);
        auto GA = device.create_buffer<float3>(kPoints);
        auto GB = device.create_buffer<float3>(kPoints);
        stream << A.copy_from(as.data()) << B.copy_from(bs.data()) << shader(A, B, GA, GB).dispatch(uint32_t(kPoints))
               << GA.copy_to(ga.data()) << GB.copy_to(gb.data()) << synchronize();
        for (size_t i = 0; i < kPoints; ++i) {
            double a[3] = {as[i].x, as[i].y, as[i].z}, b[3] = {bs[i].x, bs[i].y, bs[i].z};
            for (int k2 = 0; k2 < 3; ++k2) {
                double h = 1e-6;
                double ap[3] = {a[0], a[1], a[2]}, am[3] = {a[0], a[1], a[2]};
                ap[k2] += h; am[k2] -= h;
                double bp[3] = {b[0], b[1], b[2]}, bm[3] = {b[0], b[1], b[2]};
                bp[k2] += h; bm[k2] -= h;
                double da = (c.ref(ap, b) - c.ref(am, b)) / (2 * h);
                double db = (c.ref(a, bp) - c.ref(a, bm)) / (2 * h);
                expect_close(ga[i][size_t(k2)], da, std::string(c.name) + " d/da[" + std::to_string(k2) + "] #" + std::to_string(i));
                expect_close(gb[i][size_t(k2)], db, std::string(c.name) + " d/db[" + std::to_string(k2) + "] #" + std::to_string(i));
            }
        }
    }
}

// Matrices (column-major): inverse (-M^-T dY M^-T), determinant, transpose and products, through
// y = sum(W o f(M)) with fixed weights W.
TEST_F(BuiltinGrad, MatrixOps) {
    using M3 = std::array<double, 9>;   // column-major
    auto at = [](const M3& m, int r, int c) { return m[size_t(c * 3 + r)]; };
    auto det = [&](const M3& m) {
        return at(m, 0, 0) * (at(m, 1, 1) * at(m, 2, 2) - at(m, 1, 2) * at(m, 2, 1)) -
               at(m, 0, 1) * (at(m, 1, 0) * at(m, 2, 2) - at(m, 1, 2) * at(m, 2, 0)) +
               at(m, 0, 2) * (at(m, 1, 0) * at(m, 2, 1) - at(m, 1, 1) * at(m, 2, 0));
    };
    auto inv = [&](const M3& m) {
        M3 r{};
        double d = det(m);
        for (int row = 0; row < 3; ++row)
            for (int col = 0; col < 3; ++col) {
                int r0 = (col + 1) % 3, r1 = (col + 2) % 3, c0 = (row + 1) % 3, c1 = (row + 2) % 3;
                r[size_t(col * 3 + row)] = (at(m, r0, c0) * at(m, r1, c1) - at(m, r0, c1) * at(m, r1, c0)) / d;
            }
        return r;
    };
    const double W[9] = {0.5, -1.0, 0.25, 2.0, 0.1, -0.3, 0.7, 0.9, -0.6};
    auto weighted = [&](const M3& m) {
        double s = 0;
        for (int i = 0; i < 9; ++i) s += W[i] * m[size_t(i)];
        return s;
    };
    struct Case {
        const char* name;
        std::function<Expr<float>(Float3x3, Float3)> f;
        std::function<double(const M3&, const double*)> ref;
    };
    auto wsum = [](Expr<float3x3> m) {
        Float3x3 w = make_float3x3(make_float3(0.5f, -1.0f, 0.25f), make_float3(2.0f, 0.1f, -0.3f), make_float3(0.7f, 0.9f, -0.6f));
        return dot(m[0], w[0]) + dot(m[1], w[1]) + dot(m[2], w[2]);
    };
    std::vector<Case> cases = {
        {"inverse", [&](Float3x3 m, Float3) { return wsum(inverse(m)); }, [&](const M3& m, const double*) { return weighted(inv(m)); }},
        {"determinant", [](Float3x3 m, Float3) { return determinant(m); }, [&](const M3& m, const double*) { return det(m); }},
        {"transpose", [&](Float3x3 m, Float3) { return wsum(transpose(m)); },
         [&](const M3& m, const double*) {
             M3 t{};
             for (int r = 0; r < 3; ++r)
                 for (int c = 0; c < 3; ++c) t[size_t(c * 3 + r)] = at(m, c, r);
             return weighted(t);
         }},
        {"matrix*vector", [](Float3x3 m, Float3 v) { return dot(m * v, make_float3(0.3f, -0.7f, 1.1f)); },
         [&](const M3& m, const double* v) {
             double s = 0;
             const double w[3] = {0.3, -0.7, 1.1};
             for (int r = 0; r < 3; ++r)
                 for (int c = 0; c < 3; ++c) s += w[r] * at(m, r, c) * v[c];
             return s;
         }},
        {"vector*matrix", [](Float3x3 m, Float3 v) { return dot(v * m, make_float3(0.3f, -0.7f, 1.1f)); },
         [&](const M3& m, const double* v) {
             double s = 0;
             const double w[3] = {0.3, -0.7, 1.1};
             for (int c = 0; c < 3; ++c)
                 for (int r = 0; r < 3; ++r) s += w[c] * v[r] * at(m, r, c);
             return s;
         }},
        {"matrix*matrix", [&](Float3x3 m, Float3) { return wsum(m * m); },
         [&](const M3& m, const double*) {
             M3 p{};
             for (int r = 0; r < 3; ++r)
                 for (int c = 0; c < 3; ++c) {
                     double s = 0;
                     for (int k = 0; k < 3; ++k) s += at(m, r, k) * at(m, k, c);
                     p[size_t(c * 3 + r)] = s;
                 }
             return weighted(p);
         }},
    };
    const size_t n = 1024;
    for (auto& c : cases) {
        Kernel1D k = [&](BufferVar<float3x3> Ms, BufferFloat3 Vs, BufferVar<float3x3> GM, BufferFloat3 GV) noexcept {
            auto i = dispatch_id().x;
            Float3x3 m = Ms.read(i);
            Float3 v = Vs.read(i);
            $autodiff {
                requires_grad(m, v);
                Float y = c.f(m, v);
                backward(y);
                GM.write(i, grad(m));
                GV.write(i, grad(v));
            };
        };
        auto shader = device.compile(k);
        auto raw = random_floats(n * 12, -1, 1, 31);
        std::vector<float3x3> ms(n), gm(n);
        std::vector<float3> vs(n), gv(n);
        for (size_t i = 0; i < n; ++i) {
            for (size_t col = 0; col < 3; ++col)
                for (size_t r = 0; r < 3; ++r) ms[i][col][r] = raw[i * 12 + col * 3 + r] + (r == col ? 2.5f : 0.0f);
            vs[i] = float3(raw[i * 12 + 9], raw[i * 12 + 10], raw[i * 12 + 11]);
        }
        auto Ms = device.create_buffer<float3x3>(n);
        auto Vs = device.create_buffer<float3>(n);
        auto GM = device.create_buffer<float3x3>(n);
        auto GV = device.create_buffer<float3>(n);
        stream << Ms.copy_from(ms.data()) << Vs.copy_from(vs.data()) << shader(Ms, Vs, GM, GV).dispatch(uint32_t(n))
               << GM.copy_to(gm.data()) << GV.copy_to(gv.data()) << synchronize();
        for (size_t i = 0; i < n; ++i) {
            M3 m{};
            for (int col = 0; col < 3; ++col)
                for (int r = 0; r < 3; ++r) m[size_t(col * 3 + r)] = ms[i][size_t(col)][size_t(r)];
            double v[3] = {vs[i].x, vs[i].y, vs[i].z};
            for (int e = 0; e < 9; ++e) {
                M3 p = m, q = m;
                p[size_t(e)] += 1e-6;
                q[size_t(e)] -= 1e-6;
                double want = (c.ref(p, v) - c.ref(q, v)) / 2e-6;
                expect_close(gm[i][size_t(e / 3)][size_t(e % 3)], want, std::string(c.name) + " dM[" + std::to_string(e) + "]");
            }
            for (int e = 0; e < 3; ++e) {
                double p[3] = {v[0], v[1], v[2]}, q[3] = {v[0], v[1], v[2]};
                p[e] += 1e-6;
                q[e] -= 1e-6;
                expect_close(gv[i][size_t(e)], (c.ref(m, p) - c.ref(m, q)) / 2e-6, std::string(c.name) + " dv");
            }
        }
    }
}

} // namespace adjoint::test
