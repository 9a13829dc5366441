// Differentiable buffers: reads inside $autodiff are active, and the generated code scatters their adjoints
// into the paired gradient buffer with float atomics (Dr.Jit's differentiable arrays).
#include "support.h"

#include <cmath>

namespace adjoint::test {

class DiffBuffers : public DeviceTest {
protected:
    // Small multiples of 1/4: products and sums of a few hundred of them are exact in float, in any order.
    static std::vector<float> quarters(size_t n, int lo, int hi, uint32_t seed) {
        std::mt19937 rng(seed);
        std::uniform_int_distribution<int> dist(lo * 4, hi * 4);
        std::vector<float> v(n);
        for (auto& x : v) x = float(dist(rng)) * 0.25f;
        return v;
    }
};

TEST_F(DiffBuffers, AdjointsOfCollidingReadsAreScatteredExactly) {
    // Thread t: y = sum_j w[t, j] * x[idx[t, j]]^2 over J terms, with few distinct indices so that many
    // threads hit the same element. d y / d x[k] = sum over the terms reading k of 2 w x[k].
    constexpr uint32_t kThreads = 512, kTerms = 4, kElements = 37;
    Kernel1D k = [](DiffBufferFloat x, BufferFloat w, BufferUInt idx, BufferFloat out) noexcept {
        auto t = dispatch_id().x;
        $autodiff {
            Float y = 0.0f;
            $for (j, 4u) {
                UInt e = t * 4u + j;
                Float v = x.read(idx.read(e));
                y += w.read(e) * v * v;
            };
            backward(y);
            out.write(t, y);
        };
    };
    auto shader = device.compile(k);
    auto xs = quarters(kElements, -2, 2, 81);
    auto ws = quarters(kThreads * kTerms, -2, 2, 82);
    std::vector<uint32_t> ids(kThreads * kTerms);
    for (size_t e = 0; e < ids.size(); ++e) ids[e] = uint32_t((e * 7 + e / 5) % kElements);
    auto x = device.create_diff_buffer<float>(kElements);
    auto w = device.create_buffer<float>(ws.size());
    auto idx = device.create_buffer<uint32_t>(ids.size());
    auto out = device.create_buffer<float>(kThreads);
    std::vector<float> g(kElements), y(kThreads);
    stream << x.value.copy_from(xs.data()) << x.zero_grad() << w.copy_from(ws.data()) << idx.copy_from(ids.data())
           << shader(x, w, idx, out).dispatch(kThreads) << x.grad.copy_to(g.data()) << out.copy_to(y.data())
           << synchronize();
    std::vector<double> want(kElements, 0.0);
    for (uint32_t t = 0; t < kThreads; ++t) {
        double yt = 0;
        for (uint32_t j = 0; j < kTerms; ++j) {
            uint32_t e = t * kTerms + j;
            yt += double(ws[e]) * xs[ids[e]] * xs[ids[e]];
            want[ids[e]] += 2.0 * ws[e] * xs[ids[e]];
        }
        EXPECT_EQ(y[t], float(yt)) << t;
    }
    for (uint32_t e = 0; e < kElements; ++e) EXPECT_EQ(g[e], float(want[e])) << e;
    EXPECT_EQ(x.grad.size(), size_t(kElements));
}

TEST_F(DiffBuffers, SmoothFunctionAgainstAnalyticGradient) {
    // y = sum_j w_j sin(x[idx_j]) with colliding indices; float atomics sum in any order, hence the tolerance.
    constexpr uint32_t kThreads = 1024, kElements = 50;
    Kernel1D k = [](DiffBufferFloat x, BufferFloat w, BufferUInt idx) noexcept {
        auto t = dispatch_id().x;
        $autodiff {
            Float y = w.read(t) * sin(x.read(idx.read(t)));
            backward(y);
        };
    };
    auto shader = device.compile(k);
    auto xs = random_floats(kElements, -3, 3, 83);
    auto ws = random_floats(kThreads, -1, 1, 84);
    std::vector<uint32_t> ids(kThreads);
    for (uint32_t t = 0; t < kThreads; ++t) ids[t] = (t * 13) % kElements;
    auto x = device.create_diff_buffer<float>(kElements);
    auto w = device.create_buffer<float>(kThreads);
    auto idx = device.create_buffer<uint32_t>(kThreads);
    std::vector<float> g(kElements);
    stream << x.value.copy_from(xs.data()) << x.zero_grad() << w.copy_from(ws.data()) << idx.copy_from(ids.data())
           << shader(x, w, idx).dispatch(kThreads) << x.grad.copy_to(g.data()) << synchronize();
    std::vector<double> want(kElements, 0.0);
    for (uint32_t t = 0; t < kThreads; ++t) want[ids[t]] += ws[t] * std::cos(double(xs[ids[t]]));
    for (uint32_t e = 0; e < kElements; ++e) EXPECT_NEAR(g[e], want[e], 1e-5 * 32) << e;
}

TEST_F(DiffBuffers, ReadsInBranchesAndCallables) {
    Callable twice = [](DiffBufferFloat d, UInt i) noexcept { return d.read(i) * 2.0f; };
    Kernel1D k = [&](DiffBufferFloat d, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float y = 0.0f;
        $autodiff {
            $if (i % 2u == 0u) {
                y = twice(d, i) * d.read(i);           // 2 d[i]^2: 4 d[i]
            } $else {
                y = d.read(i - 1u) * 3.0f;              // 3 d[i-1]
            };
            backward(y);
        };
        out.write(i, y);
    };
    auto shader = device.compile(k);
    const uint32_t n = 256;
    auto ds = quarters(n, -3, 3, 85);
    auto d = device.create_diff_buffer<float>(n);
    auto out = device.create_buffer<float>(n);
    std::vector<float> g(n), y(n);
    stream << d.value.copy_from(ds.data()) << d.zero_grad() << shader(d, out).dispatch(n) << d.grad.copy_to(g.data())
           << out.copy_to(y.data()) << synchronize();
    for (uint32_t i = 0; i < n; i += 2) {
        EXPECT_EQ(g[i], 4.0f * ds[i] + 3.0f) << i;   // its own branch, and thread i + 1's read
        EXPECT_EQ(g[i + 1], 0.0f) << i + 1;
        EXPECT_EQ(y[i], 2.0f * ds[i] * ds[i]) << i;
        EXPECT_EQ(y[i + 1], 3.0f * ds[i]) << i + 1;
    }
}

TEST_F(DiffBuffers, AnElementsZeroAdjointAddsNothingAndNaNStillArrives) {
    // Thread i reads the float3 d[i] and y = w[i] * d[i].x + w2[i] * d[i].z: an element whose adjoint is zero in
    // every component is skipped (no atomics), one with any component nonzero adds all of them, and NaN arrives.
    // The gradient starts at -0.0, which an added +0.0 would turn into +0.0.
    Kernel1D k = [](DiffBufferFloat3 d, BufferFloat w, BufferFloat w2) noexcept {
        auto i = dispatch_id().x;
        $autodiff {
            Float3 v = d.read(i);
            backward(w.read(i) * v.x + w2.read(i) * v.z);
        };
    };
    auto shader = device.compile(k);
    const float nan = std::nanf("");
    const std::vector<float> ws = {0.0f, 2.0f, 0.0f, nan}, w2s = {0.0f, 0.0f, -1.5f, 0.0f};
    const uint32_t n = uint32_t(ws.size());
    std::vector<float> start(3 * n, -0.0f);              // the gradient: 3 floats an element, tightly packed
    std::vector<float3> ones(n, float3{1.0f, 1.0f, 1.0f});   // the values: float3s (16 bytes each)
    auto d = device.create_diff_buffer<float3>(n);
    auto w = device.create_buffer<float>(n);
    auto w2 = device.create_buffer<float>(n);
    std::vector<float> g(3 * n);
    stream << d.value.copy_from(ones.data()) << d.grad.copy_from(start.data()) << w.copy_from(ws.data())
           << w2.copy_from(w2s.data()) << shader(d, w, w2).dispatch(n) << d.grad.copy_to(g.data()) << synchronize();
    for (uint32_t c = 0; c < 3; ++c) {   // thread 0: zero adjoints, nothing added
        EXPECT_EQ(g[c], 0.0f);
        EXPECT_TRUE(std::signbit(g[c])) << c;
    }
    EXPECT_EQ(g[3], 2.0f);                                  // thread 1: x's adjoint, and z's zero added
    EXPECT_TRUE(std::signbit(g[4]));                        // (y's adjoint is the constant 0: never added)
    EXPECT_FALSE(std::signbit(g[5]));
    EXPECT_EQ(g[8], -1.5f);                                 // thread 2: z's adjoint
    EXPECT_FALSE(std::signbit(g[6]));
    EXPECT_TRUE(std::isnan(g[9]));                          // thread 3: NaN is not zero, and z's zero added
    EXPECT_FALSE(std::signbit(g[11]));
}

TEST_F(DiffBuffers, ReadsInARunTimeLoopFallBackToTheTapedLoop) {
    // s = 0.5 s + d[(i + j) % n] for j < m[i]: a scalar loop of two inputs would go forward mode, but a
    // differentiable read is a new input in every iteration, so the loop is taped. d s / d d[k] sums
    // 0.5^(m-1-j) over the iterations reading k.
    Kernel1D k = [](DiffBufferFloat d, BufferUInt ms) noexcept {
        auto i = dispatch_id().x;
        UInt m = ms.read(i);
        UInt n = d.size();
        $autodiff {
            Float s = 0.0f;
            $for (j, m) {
                s = s * 0.5f + d.read((i + j) % n);
            };
            backward(s);
        };
    };
    auto shader = device.compile(k);
    ASSERT_EQ(shader.tape_report().size(), 1u);
    EXPECT_GT(shader.tape_report()[0].capacity, 0u);
    const uint32_t n = 64;
    std::vector<float> ds(n, 1.0f);
    std::vector<uint32_t> ms(n);
    for (uint32_t i = 0; i < n; ++i) ms[i] = i % 6;
    auto d = device.create_diff_buffer<float>(n);
    auto mb = device.create_buffer<uint32_t>(n);
    std::vector<float> g(n);
    stream << d.value.copy_from(ds.data()) << d.zero_grad() << mb.copy_from(ms.data()) << shader(d, mb).dispatch(n)
           << d.grad.copy_to(g.data()) << synchronize();
    std::vector<double> want(n, 0.0);
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t j = 0; j < ms[i]; ++j) want[(i + j) % n] += std::ldexp(1.0, -int(ms[i] - 1 - j));
    for (uint32_t e = 0; e < n; ++e) EXPECT_EQ(g[e], float(want[e])) << e;
}

TEST_F(DiffBuffers, ReadsOfValuesTheLoopOverwrites) {
    // Each iteration reads d[i] and doubles it: the reads see a, 2a, 4a; y = sum of their squares, and the
    // adjoints of the three reads (2a + 4a + 8a) all land in grad[i]. The reverse pass recomputes from the
    // forward values (the side tape), not from the doubled buffer.
    Kernel1D k = [](DiffBufferFloat d) noexcept {
        auto i = dispatch_id().x;
        $autodiff {
            Float y = 0.0f;
            tape_capacity(4);
            $for (j, 3u) {
                Float a = d.read(i);
                d.write(i, a * 2.0f);
                y = y * 1.0f + a * a;
            };
            backward(y);
        };
    };
    auto shader = device.compile(k);
    const uint32_t n = 128;
    auto ds = quarters(n, -2, 2, 86);
    auto d = device.create_diff_buffer<float>(n);
    std::vector<float> g(n), v(n);
    stream << d.value.copy_from(ds.data()) << d.zero_grad() << shader(d).dispatch(n) << d.grad.copy_to(g.data())
           << d.value.copy_to(v.data()) << synchronize();
    for (uint32_t i = 0; i < n; ++i) {
        EXPECT_EQ(v[i], 8.0f * ds[i]) << i;
        EXPECT_EQ(g[i], 14.0f * ds[i]) << i;
    }
}

TEST_F(DiffBuffers, Float3ElementsHaveThreePackedGradients) {
    // y = dot(p, c) + p.x * p.y * p.z: gradient c + (yz, xz, xy), three floats per element in grad.
    Kernel1D k = [](DiffBufferFloat3 p, BufferFloat3 out) noexcept {
        auto i = dispatch_id().x;
        $autodiff {
            Float3 v = p.read(i);
            Float y = dot(v, make_float3(1.0f, 2.0f, 3.0f)) + v.x * v.y * v.z;
            backward(y);
            out.write(i, v);
        };
    };
    auto shader = device.compile(k);
    const uint32_t n = 100;
    auto q = quarters(3 * n, -2, 2, 87);
    std::vector<float3> ps(n), back(n);
    for (uint32_t i = 0; i < n; ++i) ps[i] = float3{q[3 * i], q[3 * i + 1], q[3 * i + 2]};
    auto p = device.create_diff_buffer<float3>(n);
    auto out = device.create_buffer<float3>(n);
    EXPECT_EQ(p.grad.size(), size_t(3 * n));
    std::vector<float> g(3 * n);
    stream << p.value.copy_from(ps.data()) << p.zero_grad() << shader(p, out).dispatch(n) << p.grad.copy_to(g.data())
           << out.copy_to(back.data()) << synchronize();
    for (uint32_t i = 0; i < n; ++i) {
        EXPECT_EQ(back[i].x, ps[i].x);
        EXPECT_EQ(back[i].z, ps[i].z);
        EXPECT_EQ(g[3 * i + 0], 1.0f + ps[i].y * ps[i].z) << i;
        EXPECT_EQ(g[3 * i + 1], 2.0f + ps[i].x * ps[i].z) << i;
        EXPECT_EQ(g[3 * i + 2], 3.0f + ps[i].x * ps[i].y) << i;
    }
}

TEST_F(DiffBuffers, GradientsAccumulateUntilZeroGrad) {
    Kernel1D k = [](DiffBufferFloat2 d) noexcept {
        auto i = dispatch_id().x;
        $autodiff {
            Float2 v = d.read(i);
            backward(v.x * 3.0f - v.y);
        };
    };
    auto shader = device.compile(k);
    const uint32_t n = 64;
    std::vector<float2> vs(n, float2{1.0f, 1.0f});
    auto d = device.create_diff_buffer<float2>(n);
    std::vector<float> g(2 * n);
    stream << d.value.copy_from(vs.data()) << d.zero_grad() << shader(d).dispatch(n) << shader(d).dispatch(n)
           << d.grad.copy_to(g.data()) << synchronize();
    for (uint32_t i = 0; i < n; ++i) {
        EXPECT_EQ(g[2 * i], 6.0f);
        EXPECT_EQ(g[2 * i + 1], -2.0f);
    }
    stream << d.zero_grad() << shader(d).dispatch(n) << d.grad.copy_to(g.data()) << synchronize();
    for (uint32_t i = 0; i < n; ++i) {
        EXPECT_EQ(g[2 * i], 3.0f);
        EXPECT_EQ(g[2 * i + 1], -1.0f);
    }
}

TEST_F(DiffBuffers, ReadsOutsideAutodiffArePlain) {
    Kernel1D k = [](DiffBufferFloat d, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float v = d.read(i);
        out.write(i, v * v);
        $autodiff {
            Float x = v;   // a value read before the block is a constant inside it
            requires_grad(x);
            backward(x * v);
            out.write(i, out.read(i) + grad(x));
        };
    };
    auto shader = device.compile(k);
    EXPECT_EQ(shader.glsl().find("atomic"), std::string::npos) << "nothing to scatter:\n" << shader.glsl();
    const uint32_t n = 32;
    auto ds = quarters(n, -2, 2, 88);
    std::vector<float> sevens(n, 7.0f), g(n), out_h(n);
    auto d = device.create_diff_buffer<float>(n);
    auto out = device.create_buffer<float>(n);
    stream << d.value.copy_from(ds.data()) << d.grad.copy_from(sevens.data()) << shader(d, out).dispatch(n)
           << d.grad.copy_to(g.data()) << out.copy_to(out_h.data()) << synchronize();
    for (uint32_t i = 0; i < n; ++i) {
        EXPECT_EQ(g[i], 7.0f) << "the gradient buffer is untouched";
        EXPECT_EQ(out_h[i], ds[i] * ds[i] + ds[i]) << i;
    }
}

TEST_F(DiffBuffers, ArgumentsAreChecked) {
    Kernel1D needs_diff = [](DiffBufferFloat d) noexcept {
        auto i = dispatch_id().x;
        $autodiff { backward(d.read(i) * 2.0f); };
    };
    Kernel1D plain = [](BufferFloat b, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        out.write(i, b.read(i) + 1.0f);
    };
    auto a = device.compile(needs_diff, {.name = "needs_diff"});
    auto p = device.compile(plain);
    auto buf = device.create_buffer<float>(4);
    auto d = device.create_diff_buffer<float>(4);
    try {
        (void)a(buf);
        FAIL() << "a plain buffer where a differentiable one is expected must be refused";
    } catch (const Error& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("argument 0 of kernel 'needs_diff' must be diff_buffer<float>, got buffer<float>"),
                  std::string::npos) << msg;
    }
    try {
        auto d2 = device.create_diff_buffer<float2>(4);
        (void)a(d2);
        FAIL() << "a differentiable buffer of another element type must be refused";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("got diff_buffer<float2>"), std::string::npos) << e.what();
    }
    // A differentiable buffer passes where a plain buffer of its type is expected: its values are bound.
    std::vector<float> vs{1, 2, 3, 4}, r(4);
    stream << d.value.copy_from(vs.data()) << p(d, buf).dispatch(4) << buf.copy_to(r.data()) << synchronize();
    EXPECT_EQ(r, (std::vector<float>{2, 3, 4, 5}));
}

} // namespace adjoint::test
