// Gradients of texture samples: with respect to the texels (through the generated atomics, and through the
// mip chain back to level 0 by backward_mips) and with respect to uv and the level of detail, each against
// central finite differences of the forward kernels on the device.
#include "support/error_text.h"
#include "support.h"

#include <cmath>

namespace adjoint::test {

namespace {

// Keeps the points whose texel-space coordinate is at least `margin` from a texel centre (where bilinear
// filtering has its kinks) at every level the sample reads: there central differences are exact.
bool away_from_kinks(float u, float v, uint32_t w, uint32_t h, uint32_t levels, float margin) {
    for (uint32_t l = 0; l < levels; ++l) {
        uint32_t lw = std::max(1u, w >> l), lh = std::max(1u, h >> l);
        for (double p : {double(u) * lw - 0.5, double(v) * lh - 0.5}) {
            double f = p - std::floor(p);
            if (f < margin || f > 1 - margin) return false;
        }
    }
    return true;
}

} // namespace

class TextureGradients : public DeviceTest {};

TEST_F(TextureGradients, TexelGradientsThroughTheMipChainMatchFiniteDifferences) {
    // L = sum_i dot(w_i, c_i^2) with c_i = sample_grad at footprints from magnified to beyond the last level
    // of a 7x5 texture (levels 7x5, 3x2, 1x1): the gradient of a level-0 texel gathers what its mips read.
    // L is quadratic in the texels, so central differences are exact up to rounding.
    const uint32_t W = 7, H = 5, N = 96;
    auto tex = device.create_texture<float3>(W, H, {.wrap = TextureWrap::Repeat});
    auto base = random_floats(W * H * 3, 0, 1, 41);
    std::vector<float4> q(N);
    std::vector<float3> w(N);
    auto r = random_floats(N * 7, 0, 1, 42);
    for (uint32_t i = 0; i < N; ++i) {
        float texels = 0.3f * std::pow(30.0f, r[i * 7 + 2]);   // footprints of 0.3 to 9 level-0 texels
        q[i] = float4(r[i * 7] * 2 - 0.5f, r[i * 7 + 1] * 2 - 0.5f, texels / W, texels * r[i * 7 + 3] / H);
        w[i] = float3(r[i * 7 + 4] - 0.5f, r[i * 7 + 5] - 0.5f, r[i * 7 + 6] - 0.5f);
    }
    Kernel1D k = [](TextureFloat3 t, BufferFloat4 qs, BufferFloat3 ws, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float4 a = qs.read(i);
        Float3 wi = ws.read(i);
        $autodiff {
            Float3 c = t.sample_grad(a.xy(), make_float2(a.z, 0.0f), make_float2(0.0f, a.w));
            Float l = dot(wi, c * c);
            backward(l);
            out.write(i, l);
        };
    };
    auto shader = device.compile(k);
    auto qb = device.create_buffer<float4>(N);
    auto wb = device.create_buffer<float3>(N);
    auto out = device.create_buffer<float>(N);
    stream << qb.copy_from(q.data()) << wb.copy_from(w.data());
    std::vector<float> li(N);
    auto loss = [&](const std::vector<float>& texels) {
        stream << tex.copy_from(texels.data()) << tex.build_mips() << shader(tex, qb, wb, out).dispatch(N)
               << out.copy_to(li.data()) << synchronize();
        double s = 0;
        for (float x : li) s += x;
        return s;
    };
    std::vector<float> g(W * H * 3), coarse(3);
    stream << tex.copy_from(base.data()) << tex.build_mips() << tex.zero_grad() << shader(tex, qb, wb, out).dispatch(N)
           << tex.copy_grad_to(coarse.data(), 2) << tex.backward_mips() << tex.copy_grad_to(g.data()) << synchronize();
    // The 1x1 level was read: its gradient is what backward_mips spreads over every texel.
    EXPECT_GT(std::abs(coarse[0]) + std::abs(coarse[1]) + std::abs(coarse[2]), 1e-3f);
    const float h = 0.05f;
    for (size_t k = 0; k < base.size(); ++k) {
        auto plus = base, minus = base;
        plus[k] += h;
        minus[k] -= h;
        double fd = (loss(plus) - loss(minus)) / (2 * h);
        EXPECT_NEAR(g[k], fd, 2e-4 + 1e-3 * std::abs(fd)) << "texel float " << k;
    }
}

TEST_F(TextureGradients, UvGradientsMatchFiniteDifferencesForEachWrapMode) {
    // d/duv of dot(w, sample) for sample, sample_level between two levels and sample_grad, on a float2
    // texture; clamp-to-edge includes points beyond the edges, where the value is constant.
    const uint32_t W = 12, H = 9;
    const float lod = 0.6f, footprint = 2.6f;   // sample_level reads levels 0 and 1; sample_grad levels 1 and 2
    std::vector<float2> uvs;
    auto r = random_floats(2000, -1.2f, 2.2f, 43);
    for (size_t i = 0; i + 1 < r.size() && uvs.size() < 48; i += 2)
        if (away_from_kinks(r[i], r[i + 1], W, H, 3, 0.08f)) uvs.push_back(float2(r[i], r[i + 1]));
    ASSERT_EQ(uvs.size(), 48u);
    const uint32_t N = uint32_t(uvs.size());
    for (TextureWrap wrap : {TextureWrap::Repeat, TextureWrap::Clamp, TextureWrap::Mirror, TextureWrap::RepeatClamp}) {
        auto tex = device.create_texture<float2>(W, H, {.wrap = wrap});
        auto texels = random_floats(W * H * 2, 0, 1, 44);
        stream << tex.copy_from(texels.data()) << tex.build_mips() << synchronize();
        for (int op = 0; op < 3; ++op) {
            auto sample = [op, lod, footprint](const TextureFloat2& t, const Float2& uv) {
                if (op == 0) return t.sample(uv);
                if (op == 1) return t.sample_level(uv, lod);
                return t.sample_grad(uv, make_float2(footprint / W, 0.0f), make_float2(0.0f, 0.5f / H));
            };
            Kernel1D grad_k = [&](TextureFloat2 t, BufferFloat2 uvb, BufferFloat2 gout) noexcept {
                auto i = dispatch_id().x;
                Float2 uv = uvb.read(i);
                $autodiff {
                    requires_grad(uv);
                    Float2 c = sample(t, uv);
                    backward(dot(make_float2(0.7f, -1.3f), c));
                    gout.write(i, grad(uv));
                };
            };
            Kernel1D value_k = [&](TextureFloat2 t, BufferFloat2 uvb, BufferFloat out) noexcept {
                auto i = dispatch_id().x;
                out.write(i, dot(make_float2(0.7f, -1.3f), sample(t, uvb.read(i))));
            };
            auto gs = device.compile(grad_k);
            auto vs = device.compile(value_k);
            auto ub = device.create_buffer<float2>(N);
            auto gb = device.create_buffer<float2>(N);
            auto vb = device.create_buffer<float>(N);
            std::vector<float2> g(N);
            stream << ub.copy_from(uvs.data()) << gs(tex, ub, gb).dispatch(N) << gb.copy_to(g.data()) << synchronize();
            auto values_at = [&](float du, float dv) {
                std::vector<float2> moved(uvs);
                for (auto& p : moved) p = float2(p.x + du, p.y + dv);
                std::vector<float> v(N);
                stream << ub.copy_from(moved.data()) << vs(tex, ub, vb).dispatch(N) << vb.copy_to(v.data())
                       << synchronize();
                return v;
            };
            const float hu = 0.02f / W, hv = 0.02f / H;
            auto up = values_at(hu, 0), um = values_at(-hu, 0), vp = values_at(0, hv), vm = values_at(0, -hv);
            int zero = 0;
            for (uint32_t i = 0; i < N; ++i) {
                double fu = (double(up[i]) - um[i]) / (2 * hu), fv = (double(vp[i]) - vm[i]) / (2 * hv);
                const std::string where = "wrap " + std::to_string(int(wrap)) + " op " + std::to_string(op) + " uv " +
                                          std::to_string(uvs[i].x) + ", " + std::to_string(uvs[i].y);
                EXPECT_NEAR(g[i].x, fu, 2e-3 * (1 + std::abs(fu))) << where;
                EXPECT_NEAR(g[i].y, fv, 2e-3 * (1 + std::abs(fv))) << where;
                zero += g[i].x == 0.0f;
            }
            // Repeat has no flat regions; clamp-to-edge is flat beyond the edges (and mirror within half a texel
            // of its mirror lines), where the gradient is exactly 0.
            if (wrap == TextureWrap::Clamp) {
                EXPECT_GT(zero, 0);
            }
            if (wrap == TextureWrap::Repeat) {
                EXPECT_EQ(zero, 0);
            }
        }
    }
}

TEST_F(TextureGradients, ADetachedTextureGivesTheUvGradientAndScattersNothing) {
    // The same sample through texture(i) and texture(i).detached(): equal values and uv gradients, but the
    // detached kernel has no atomics and leaves the texels' gradient at zero.
    const uint32_t W = 6, H = 4, N = 32;
    auto set = device.create_texture_set<float3>({{W, H, {.wrap = TextureWrap::Repeat}}, {3, 3, {.wrap = TextureWrap::Clamp}}});
    auto texels = random_floats(W * H * 3, 0, 1, 45);
    std::vector<float2> uvs(N);
    auto r = random_floats(2 * N, -0.5f, 1.5f, 46);
    for (uint32_t i = 0; i < N; ++i) uvs[i] = float2(r[2 * i], r[2 * i + 1]);
    auto make = [](bool detached) {
        return Kernel1D([detached](TextureSetFloat3 t, BufferFloat2 uvb, BufferFloat out, BufferFloat2 gout) noexcept {
            auto i = dispatch_id().x;
            Float2 uv = uvb.read(i);
            $autodiff {
                requires_grad(uv);
                auto tex = detached ? t.texture(0u).detached() : t.texture(0u);
                Float l = dot(make_float3(0.7f, -1.3f, 0.4f), tex.sample_level(uv, 0.4f));
                backward(l);
                out.write(i, l);
                gout.write(i, grad(uv));
            };
        });
    };
    auto plain = device.compile(make(false)), detached = device.compile(make(true));
    EXPECT_NE(plain.glsl().find("atomic"), std::string::npos);
    EXPECT_EQ(detached.glsl().find("atomic"), std::string::npos) << detached.glsl();
    auto ub = device.create_buffer<float2>(N);
    auto out = device.create_buffer<float>(N);
    auto gb = device.create_buffer<float2>(N);
    std::vector<float> v0(N), v1(N), tg(W * H * 3, 1.0f);
    std::vector<float2> g0(N), g1(N);
    stream << set.copy_from(0, texels.data()) << set.build_mips() << ub.copy_from(uvs.data()) << set.zero_grad()
           << plain(set, ub, out, gb).dispatch(N) << out.copy_to(v0.data()) << gb.copy_to(g0.data())
           << set.copy_grad_to(0, tg.data()) << synchronize();
    double scattered = 0;
    for (float x : tg) scattered += std::abs(x);
    EXPECT_GT(scattered, 1e-3);
    stream << set.zero_grad() << detached(set, ub, out, gb).dispatch(N) << out.copy_to(v1.data())
           << gb.copy_to(g1.data()) << set.copy_grad_to(0, tg.data()) << synchronize();
    for (float x : tg) EXPECT_EQ(x, 0.0f);
    for (uint32_t i = 0; i < N; ++i) {
        EXPECT_EQ(v0[i], v1[i]) << i;
        EXPECT_NEAR(g0[i].x, g1[i].x, 1e-5f * (1 + std::abs(g0[i].x))) << i;
        EXPECT_NEAR(g0[i].y, g1[i].y, 1e-5f * (1 + std::abs(g0[i].y))) << i;
    }
}

TEST_F(TextureGradients, LodGradientIsTheDifferenceOfTheLevels) {
    // d/dlod of sample_level is c(level l0 + 1) - c(l0) inside the chain and 0 where lod is clamped; a
    // single-channel texture.
    auto tex = device.create_texture<float>(8, 8, {.wrap = TextureWrap::Mirror});   // 4 levels
    auto texels = random_floats(64, 0, 1, 45);
    stream << tex.copy_from(texels.data()) << tex.build_mips() << synchronize();
    std::vector<float2> qs;   // (lod, u)
    for (float lod : {-0.5f, 0.3f, 0.8f, 1.4f, 2.2f, 2.9f, 3.5f})
        for (float u : {0.11f, 0.37f, 0.62f, 0.9f}) qs.push_back(float2(lod, u));
    const uint32_t N = uint32_t(qs.size());
    Kernel1D grad_k = [](TextureFloat t, BufferFloat2 q, BufferFloat gout, BufferFloat vout) noexcept {
        auto i = dispatch_id().x;
        Float lod = q.read(i).x;
        Float2 uv = make_float2(q.read(i).y, 0.29f);
        $autodiff {
            requires_grad(lod);
            Float c = t.sample_level(uv, lod);
            backward(c);
            gout.write(i, grad(lod));
            vout.write(i, c);
        };
    };
    auto shader = device.compile(grad_k);
    auto qb = device.create_buffer<float2>(N);
    auto gb = device.create_buffer<float>(N);
    auto vb = device.create_buffer<float>(N);
    std::vector<float> g(N), v(N);
    auto run = [&](float dl) {
        std::vector<float2> moved(qs);
        for (auto& p : moved) p.x += dl;
        stream << qb.copy_from(moved.data()) << shader(tex, qb, gb, vb).dispatch(N) << gb.copy_to(g.data())
               << vb.copy_to(v.data()) << synchronize();
        return v;
    };
    auto plus = run(0.01f), minus = run(-0.01f);
    run(0);
    for (uint32_t i = 0; i < N; ++i) {
        double fd = (double(plus[i]) - minus[i]) / 0.02;
        EXPECT_NEAR(g[i], fd, 1e-3 * (1 + std::abs(fd))) << "lod " << qs[i].x;
        if (qs[i].x < 0 || qs[i].x > 3) EXPECT_EQ(g[i], 0.0f) << "lod " << qs[i].x;
        else EXPECT_NE(g[i], 0.0f) << "lod " << qs[i].x;
    }
}

TEST_F(TextureGradients, SetGradientsReachOnlyTheSampledTexture) {
    // At a texel centre the bilinear weight is 1 on one texel: its gradient is exactly the seed, and the other
    // texture of the set (float4 texels) gets none.
    auto set = device.create_texture_set<float4>({{4, 4}, {3, 2}});
    std::vector<float> a(4 * 4 * 4, 0.5f), b(3 * 2 * 4, 0.25f);
    Kernel1D k = [](TextureSetFloat4 s) noexcept {
        $autodiff {
            Float4 c = s.texture(1u).sample(make_float2(2.5f / 3.0f, 0.5f / 2.0f));   // texel (2, 0)
            backward(dot(c, make_float4(1.0f, 2.0f, 3.0f, 4.0f)));
        };
    };
    auto shader = device.compile(k);
    std::vector<float> ga(a.size()), gb(b.size());
    stream << set.copy_from(0, a.data()) << set.copy_from(1, b.data()) << set.build_mips() << set.zero_grad()
           << shader(set).dispatch(1) << set.backward_mips() << set.copy_grad_to(0, ga.data())
           << set.copy_grad_to(1, gb.data()) << synchronize();
    for (float x : ga) EXPECT_EQ(x, 0.0f);
    for (size_t i = 0; i < gb.size(); ++i) EXPECT_EQ(gb[i], i / 4 == 2 ? float(i % 4 + 1) : 0.0f) << i;
}

TEST_F(TextureGradients, HeldTexelsSummedOverRunsGiveTheScattersGradients) {
    // The same trilinear samples over a set of two textures, differentiated twice: each texel read scattering its
    // adjoint (the generated atomics), and each thread taking a run of 8 samples whose reads are held (HeldTexels)
    // and added by the kernel, one atomic a float of a tap that was read. Every texel's gradient at every level,
    // and each sample's uv gradient, agree. The footprints reach from magnified (one level read: taps 4..7 keep
    // kNoSlot) to beyond the last level.
    auto set = device.create_texture_set<float3>({{8, 6, {.wrap = TextureWrap::Repeat}}, {5, 7, {.wrap = TextureWrap::Mirror}}});
    const uint32_t N = 200, kRun = 8;
    auto r = random_floats(N * 6, 0, 1, 77);
    std::vector<float4> q(N);
    std::vector<float3> w(N);
    for (uint32_t i = 0; i < N; ++i) {
        float texels = 0.2f * std::pow(60.0f, r[i * 6 + 2]);
        q[i] = float4(0.013f * float(i) + 0.02f * r[i * 6], 0.3f + 0.05f * r[i * 6 + 1], texels / 8, texels / 6);
        w[i] = float3(r[i * 6 + 3] - 0.5f, r[i * 6 + 4] - 0.5f, r[i * 6 + 5] - 0.5f);
    }
    auto sample = [](const TextureSetFloat3& s, const UInt& i) { return s.texture(i % 2u); };
    Kernel1D scattered = [&](TextureSetFloat3 s, BufferFloat4 qs, BufferFloat3 ws, BufferFloat2 duv) noexcept {
        auto i = dispatch_id().x;
        Float4 a = qs.read(i);
        Float2 uv = a.xy();
        $autodiff {
            requires_grad(uv);
            Float3 c = sample(s, i).sample_grad(uv, make_float2(a.z, 0.0f), make_float2(0.0f, a.w));
            backward(dot(ws.read(i), c * c));
            duv.write(i, grad(uv));
        };
    };
    int used = 0;
    Kernel1D held = [&](TextureSetFloat3 s, BufferFloat texel_grad, BufferFloat4 qs, BufferFloat3 ws, BufferFloat2 duv) noexcept {
        $for (i, dispatch_id().x * kRun, min(dispatch_id().x * kRun + kRun, N)) {
            Float4 a = qs.read(i);
            Float2 uv = a.xy();
            $autodiff {
                HeldTexels<float3> taps(8);
                requires_grad(uv);
                Float3 c = sample(s, i).held(taps).sample_grad(uv, make_float2(a.z, 0.0f), make_float2(0.0f, a.w));
                backward(dot(ws.read(i), c * c));
                duv.write(i, grad(uv));
                used = taps.used();
                for (int k = 0; k < taps.used(); ++k) {
                    Float3 g = grad(taps.value(k));
                    $if (taps.at(k) != kNoSlot) {
                        for (uint32_t ch = 0; ch < 3; ++ch) texel_grad.atomic(taps.at(k) + ch).fetch_add(g[ch]);
                    };
                }
            };
        };
    };
    auto a = device.compile(scattered), b = device.compile(held);
    EXPECT_EQ(used, 8);   // two levels of four taps
    auto qb = device.create_buffer<float4>(N);
    auto wb = device.create_buffer<float3>(N);
    auto duv_a = device.create_buffer<float2>(N), duv_b = device.create_buffer<float2>(N);
    auto t0 = random_floats(8 * 6 * 3, 0, 1, 78), t1 = random_floats(5 * 7 * 3, 0, 1, 79);
    stream << qb.copy_from(q.data()) << wb.copy_from(w.data()) << set.copy_from(0, t0.data())
           << set.copy_from(1, t1.data()) << set.build_mips();
    const size_t floats = set.texels().grad.size();
    std::vector<float> ga(floats), gb(floats);
    std::vector<float2> ua(N), ub(N);
    stream << set.zero_grad() << a(set, qb, wb, duv_a).dispatch(N) << set.texels().grad.copy_to(ga.data())
           << duv_a.copy_to(ua.data()) << set.zero_grad() << b(set, set.texels().grad, qb, wb, duv_b).dispatch((N + kRun - 1) / kRun)
           << set.texels().grad.copy_to(gb.data()) << duv_b.copy_to(ub.data()) << synchronize();
    double largest = 0;
    for (size_t k = 0; k < floats; ++k) {
        largest = std::max(largest, double(std::abs(ga[k])));
        EXPECT_NEAR(gb[k], ga[k], 1e-5 + 1e-5 * std::abs(ga[k])) << "texel float " << k;
    }
    EXPECT_GT(largest, 0.1);
    for (uint32_t i = 0; i < N; ++i) {
        EXPECT_EQ(ub[i].x, ua[i].x) << i;
        EXPECT_EQ(ub[i].y, ua[i].y) << i;
    }
}

TEST_F(TextureGradients, HeldTexelsRefuseReadsTheyCannotHold) {
    // A read in a loop nested deeper than the holder would keep only the last iteration's; a read past the
    // capacity has no slot; outside $autodiff there is no gradient to hold. Each names its line.
    auto refused = [&](int capacity, bool in_loop, bool outside) {
        return error_of([&] {
            Kernel1D k = [&](TextureFloat3 t, BufferFloat out) noexcept {
                HeldTexels<float3> outer(capacity);
                if (outside) {
                    out.write(0u, t.held(outer).sample(make_float2(0.5f)).x);
                    return;
                }
                $autodiff {
                    HeldTexels<float3> taps(capacity);
                    Float3 c = make_float3(0.0f);
                    if (in_loop) {
                        $for (j, 0u, 2u) { c = c + t.held(taps).sample(make_float2(0.5f)); };
                    } else {
                        c = t.held(taps).sample(make_float2(0.5f));
                    }
                    backward(c.x);
                };
            };
            (void)device.compile(k);
        });
    };
    std::string loop = refused(8, true, false), full = refused(3, false, false), outside = refused(4, false, true);
    EXPECT_NE(loop.find("held texels: a texel read in a loop nested deeper than its holder's"), std::string::npos) << loop;
    EXPECT_NE(full.find("past its holder's capacity (capacity 3)"), std::string::npos) << full;
    EXPECT_NE(outside.find("outside $autodiff"), std::string::npos) << outside;
    for (const std::string* m : {&loop, &full, &outside})
        EXPECT_NE(m->find("texture_grad_test.cpp:"), std::string::npos) << *m;
}

} // namespace adjoint::test
