// Side effects inside differentiated loops: the taped reverse pass recomputes iterations, and must neither
// repeat atomics and buffer writes nor see memory the forward pass has since changed.
#include "support.h"

#include <cmath>

struct Particle {
    adjoint::float3 pos;
    float mass;
    int32_t hits;
};
ADJOINT_STRUCT(Particle, pos, mass, hits)

namespace adjoint::test {

class SideEffects : public DeviceTest {};

// A fetch_add whose result feeds the differentiated value: y_k = 0.5 y_(k-1) + x * (c_k + 1), c_k = 0, 1, 2.
// dy/dx = 0.25 * 1 + 0.5 * 2 + 3 = 4.25, exactly, and the counter ends at 3.
auto counter_kernel(bool taped) {
    return Kernel1D([taped](BufferFloat xs, BufferUInt counter, BufferUInt total, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = xs.read(i);
        $autodiff {
            requires_grad(x);
            Float y = 0.0f;
            if (taped) tape_capacity(8);   // the taped reverse mode; without it the loop goes forward
            $for (j, 3u) {
                UInt c = counter.atomic(i).fetch_add(1u);
                total.atomic(0u).fetch_add(1u);
                y = y * 0.5f + x * cast<float>(c + 1u);
            };
            backward(y);
            out.write(i, grad(x));
        };
    });
}

TEST_F(SideEffects, AtomicResultInATapedLoopIsTapedNotRepeated) {
    const uint32_t n = 300;
    auto xs = random_floats(n, -2, 2, 61);
    auto run = [&](auto& kernel, std::vector<uint32_t>& counts, uint32_t& total_count) {
        auto shader = device.compile(kernel);
        auto x = device.create_buffer<float>(n);
        auto counter = device.create_buffer<uint32_t>(n);
        auto total = device.create_buffer<uint32_t>(1);
        auto out = device.create_buffer<float>(n);
        std::vector<uint32_t> zeros(n, 0);
        std::vector<float> g(n);
        counts.resize(n);
        stream << x.copy_from(xs.data()) << counter.copy_from(zeros.data()) << total.copy_from(zeros.data())
               << shader(x, counter, total, out).dispatch(n) << out.copy_to(g.data()) << counter.copy_to(counts.data())
               << total.copy_to(&total_count) << synchronize();
        return g;
    };
    auto taped = counter_kernel(true);
    auto forward = counter_kernel(false);
    std::vector<uint32_t> taped_counts, forward_counts;
    uint32_t taped_total = 0, forward_total = 0;
    auto g_taped = run(taped, taped_counts, taped_total);
    auto g_forward = run(forward, forward_counts, forward_total);
    // The taped loop stores y and the side-tape position per iteration (3 x 8 bytes), and the three results
    // of the first fetch_add (12 bytes; the second one's result is unused, so nothing is kept for it).
    auto report = device.compile(taped).tape_report();
    ASSERT_EQ(report.size(), 1u);
    EXPECT_EQ(report[0].capacity, 3u);
    EXPECT_EQ(report[0].bytes_per_thread, 36u);
    EXPECT_EQ(taped_total, 3 * n);
    EXPECT_EQ(forward_total, 3 * n);
    for (uint32_t i = 0; i < n; ++i) {
        EXPECT_EQ(taped_counts[i], 3u) << i;
        EXPECT_EQ(forward_counts[i], 3u) << i;
        EXPECT_EQ(g_taped[i], 4.25f) << i;
        EXPECT_EQ(g_taped[i], g_forward[i]) << i;
    }
}

TEST_F(SideEffects, WritesHappenOnceAndReadsAfterWritesSeeTheForwardValues) {
    // data[i] starts at 1; iteration k reads a = data[i] (1, 2, 3, ...) and writes a + 1 back:
    // y = y * a + x, so y = x * (1 + 3 + 3*4 + ...) and data[i] ends at n + 1. A float atomic sum and an
    // int counter in the same loop must add once per iteration.
    Kernel1D k = [](BufferFloat xs, BufferUInt ns, BufferFloat data, BufferFloat sum, BufferUInt counter,
                    BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = xs.read(i);
        UInt n = ns.read(i);
        $autodiff {
            requires_grad(x);
            Float y = 0.0f;
            tape_capacity(16);   // the taped reverse mode (a scalar loop would otherwise go forward)
            $while (counter.read(i) < n) {   // the loop test itself reads a buffer the loop writes
                Float a = data.read(i);
                y = y * a + x;
                data.write(i, a + 1.0f);
                sum.atomic(i).fetch_add(a);
                counter.atomic(i).fetch_add(1u);
            };
            backward(y);
            out.write(i, grad(x));
        };
    };
    auto shader = device.compile(k);
    ASSERT_EQ(shader.tape_report().size(), 1u);
    EXPECT_EQ(shader.tape_report()[0].capacity, 16u);
    const uint32_t n = 256;
    auto xs = random_floats(n, -1, 1, 62);
    std::vector<uint32_t> ns(n), zeros(n, 0);
    for (uint32_t i = 0; i < n; ++i) ns[i] = i % 12;
    std::vector<float> ones(n, 1.0f), fzeros(n, 0.0f);
    auto x = device.create_buffer<float>(n);
    auto nb = device.create_buffer<uint32_t>(n);
    auto data = device.create_buffer<float>(n);
    auto sum = device.create_buffer<float>(n);
    auto counter = device.create_buffer<uint32_t>(n);
    auto out = device.create_buffer<float>(n);
    std::vector<float> g(n), d(n), s(n);
    std::vector<uint32_t> c(n);
    stream << x.copy_from(xs.data()) << nb.copy_from(ns.data()) << data.copy_from(ones.data())
           << sum.copy_from(fzeros.data()) << counter.copy_from(zeros.data()) << shader(x, nb, data, sum, counter, out).dispatch(n)
           << out.copy_to(g.data()) << data.copy_to(d.data()) << sum.copy_to(s.data()) << counter.copy_to(c.data())
           << synchronize();
    for (uint32_t i = 0; i < n; ++i) {
        double dy = 0, total = 0;
        for (uint32_t k = 1; k <= ns[i]; ++k) {
            dy = dy * k + 1;
            total += k;
        }
        EXPECT_EQ(c[i], ns[i]) << i;
        EXPECT_EQ(d[i], float(ns[i] + 1)) << i;
        EXPECT_EQ(s[i], float(total)) << i;
        EXPECT_EQ(g[i], float(dy)) << i;
    }
}

TEST_F(SideEffects, NestedLoopsReplayTheirAtomicsFromTheTape) {
    // The inner loop's fetch_add results change on every inner iteration of every outer iteration; the
    // outer reverse pass recomputes the inner loop, the inner reverse pass recomputes its iterations.
    Kernel1D k = [](BufferFloat xs, BufferUInt ns, BufferUInt counter, BufferUInt quiet, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = xs.read(i);
        UInt n = ns.read(i);
        $autodiff {
            requires_grad(x);
            Float y = 0.25f;
            $for (j, n) {
                $for (m, 2u) {
                    UInt c = counter.atomic(i).fetch_add(1u);
                    y = sin(y) * 0.5f + x * cast<float>(c % 3u);
                };
                $for (m, 3u) { quiet.atomic(i).fetch_add(1u); };   // an inactive loop inside a taped one
                y = y * 0.9f + cos(x * y) * 0.1f;
            };
            backward(y);
            out.write(i, grad(x));
        };
    };
    auto shader = device.compile(k);
    const uint32_t n = 200;
    auto xs = random_floats(n, -1, 1, 63);
    std::vector<uint32_t> ns(n), zeros(n, 0);
    for (uint32_t i = 0; i < n; ++i) ns[i] = i % 7;
    auto x = device.create_buffer<float>(n);
    auto nb = device.create_buffer<uint32_t>(n);
    auto counter = device.create_buffer<uint32_t>(n);
    auto quiet = device.create_buffer<uint32_t>(n);
    auto out = device.create_buffer<float>(n);
    std::vector<float> g(n);
    std::vector<uint32_t> c(n), q(n);
    stream << x.copy_from(xs.data()) << nb.copy_from(ns.data()) << counter.copy_from(zeros.data())
           << quiet.copy_from(zeros.data()) << shader(x, nb, counter, quiet, out).dispatch(n) << out.copy_to(g.data())
           << counter.copy_to(c.data()) << quiet.copy_to(q.data()) << synchronize();
    for (uint32_t i = 0; i < n; ++i) {
        EXPECT_EQ(c[i], 2 * ns[i]) << i;
        EXPECT_EQ(q[i], 3 * ns[i]) << i;
        Dual y = konst(0.25), xv{xs[i], 1};
        uint32_t cnt = 0;
        for (uint32_t j = 0; j < ns[i]; ++j) {
            for (int m = 0; m < 2; ++m) y = dsin(y) * konst(0.5) + xv * konst(double(cnt++ % 3));
            y = y * konst(0.9) + dcos(xv * y) * konst(0.1);
        }
        EXPECT_NEAR(g[i], y.d, 1e-4 * (1 + std::fabs(y.d))) << i;
    }
}

TEST_F(SideEffects, StructReadsAfterWritesReplayWholeStructs) {
    // A struct buffer updated in place by each iteration: the recomputation must see every member (float3,
    // float, int) as the forward pass read it.
    Kernel1D k = [](BufferVar<Particle> ps, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = out.read(i);
        $autodiff {
            requires_grad(x);
            Float y = 0.0f;
            tape_capacity(8);
            $for (j, 3u) {
                Var<Particle> p = ps.read(i);
                y = y * p.mass + x * p.pos.y * cast<float>(p.hits);
                p.pos = p.pos + make_float3(0.0f, 1.0f, 0.0f);
                p.mass = p.mass + 1.0f;
                p.hits = p.hits + 1;
                ps.write(i, p);
            };
            backward(y);
            out.write(i, grad(x));
        };
    };
    auto shader = device.compile(k);
    const uint32_t n = 64;
    std::vector<Particle> start(n), end(n);
    std::vector<float> xs(n, 1.0f), g(n);
    for (uint32_t i = 0; i < n; ++i) start[i] = Particle{float3{0.0f, float(i % 4), 0.0f}, 1.0f, 1};
    auto ps = device.create_buffer<Particle>(n);
    auto out = device.create_buffer<float>(n);
    stream << ps.copy_from(start.data()) << out.copy_from(xs.data()) << shader(ps, out).dispatch(n)
           << out.copy_to(g.data()) << ps.copy_to(end.data()) << synchronize();
    for (uint32_t i = 0; i < n; ++i) {
        // Iteration k sees pos.y = y0 + k, mass = 1 + k, hits = 1 + k: dy/dx = sum_k (y0+k)(1+k) prod_{m>k} (1+m).
        double y0 = i % 4, want = 0;
        for (int kk = 0; kk < 3; ++kk) {
            double term = (y0 + kk) * (1 + kk);
            for (int m = kk + 1; m < 3; ++m) term *= 1 + m;
            want += term;
        }
        EXPECT_EQ(g[i], float(want)) << i;
        EXPECT_EQ(end[i].pos.y, float(y0 + 3)) << i;
        EXPECT_EQ(end[i].mass, 4.0f) << i;
        EXPECT_EQ(end[i].hits, 4) << i;
    }
}

TEST_F(SideEffects, ImageWritesInATapedLoopHappenOnce) {
    // Each iteration adds 1 to the thread's pixel through a read-modify-write; a repeat would show.
    Kernel2D k = [](ImageFloat img, BufferFloat out) noexcept {
        auto p = dispatch_id().xy();
        Float x = cast<float>(p.x) * 0.25f + 0.5f;
        $autodiff {
            requires_grad(x);
            Float2 y = make_float2(0.0f, 1.0f);
            tape_capacity(8);
            $for (j, 4u) {
                Float4 v = img.read(p);
                img.write(p, v + make_float4(1.0f, 0.0f, 0.0f, 0.0f));
                y = make_float2(y.x * 0.5f + x * v.x, y.y);
            };
            backward(y.x);
            out.write(p.y * 4u + p.x, grad(x));
        };
    };
    auto shader = device.compile(k);
    auto img = device.create_image<float>(PixelFormat::RGBA32F, 4, 2);
    auto out = device.create_buffer<float>(8);
    std::vector<float4> zeros(8, float4{0, 0, 0, 0}), pixels(8);
    std::vector<float> g(8);
    stream << img.copy_from(zeros.data()) << shader(img, out).dispatch(4, 2) << img.copy_to(pixels.data())
           << out.copy_to(g.data()) << synchronize();
    // v.x = 0, 1, 2, 3: dy/dx = 0 * 0.125 + 1 * 0.25 + 2 * 0.5 + 3 = 4.25
    for (int i = 0; i < 8; ++i) {
        EXPECT_EQ(pixels[i].x, 4.0f) << i;
        EXPECT_EQ(g[i], 4.25f) << i;
    }
}

} // namespace adjoint::test
