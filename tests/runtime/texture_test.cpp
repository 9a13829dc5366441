// Textures: sampled values against a host reference for each wrap mode (bilinear at texel centres, edges and
// wrapped coordinates), integer reads, mip chains of odd sizes, trilinear and footprint-selected levels,
// texture sets, callables, copies to and from parameter buffers, and the errors of bad arguments.
#include "support/device_fixture.h"
#include "support/texture_reference.h"
#include "support/error_text.h"

#include <map>

namespace adjoint::test {

namespace {

enum class Query { Sample, Level, Grad };

template <typename T>
void store(const BufferFloat& out, const UInt& at, const Var<T>& v) {
    if constexpr (std::is_same_v<T, float>) {
        out.write(at, v);
    } else {
        out.write(at, v.x);
        out.write(at + 1u, v.y);
        if constexpr (TextureRef<T>::channels > 2) out.write(at + 2u, v.z);
        if constexpr (TextureRef<T>::channels > 3) out.write(at + 3u, v.w);
    }
}

// Each query (u, v, a, b): sample(uv), sample_level(uv, a) or sample_grad(uv, (a, 0), (0, b)).
template <typename T>
std::vector<float> run_queries(Device& device, Stream& stream, const Texture2D<T>& tex, Query op,
                               const std::vector<float4>& queries) {
    constexpr uint32_t C = TextureRef<T>::channels;
    Kernel1D k = [op](TextureVar<T> t, BufferFloat4 qs, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float4 q = qs.read(i);
        Var<T> c;
        if (op == Query::Sample) c = t.sample(q.xy());
        else if (op == Query::Level) c = t.sample_level(q.xy(), q.z);
        else c = t.sample_grad(q.xy(), make_float2(q.z, 0.0f), make_float2(0.0f, q.w));
        store<T>(out, i * TextureRef<T>::channels, c);
    };
    auto shader = device.compile(k);
    auto qb = device.create_buffer<float4>(queries.size());
    auto out = device.create_buffer<float>(queries.size() * C);
    std::vector<float> result(queries.size() * C);
    stream << qb.copy_from(queries.data()) << shader(tex, qb, out).dispatch(uint32_t(queries.size()))
           << out.copy_to(result.data()) << synchronize();
    return result;
}

const char* name(TextureWrap w) {
    return w == TextureWrap::Repeat ? "repeat"
           : w == TextureWrap::Clamp ? "clamp"
           : w == TextureWrap::Mirror ? "mirror"
                                      : "repeat-clamp";
}

} // namespace

class Textures : public DeviceTest {
protected:
    template <typename T>
    std::pair<Texture2D<T>, HostTexture> make(uint32_t w, uint32_t h, TextureOptions options, uint32_t seed) {
        constexpr uint32_t C = TextureRef<T>::channels;
        auto texels = random_floats(size_t(w) * h * C, 0, 1, seed);
        auto tex = device.create_texture<T>(w, h, options);
        stream << tex.copy_from(texels.data()) << tex.build_mips() << synchronize();
        return {tex, HostTexture(w, h, C, options, texels)};
    }
};

TEST_F(Textures, BilinearMatchesTheReferenceForEachWrapMode) {
    const uint32_t W = 5, H = 3;
    std::vector<float4> q;
    // Texel centres (exactly the texel), edges, corners, one and several periods away, and random points.
    for (uint32_t y = 0; y < H; ++y)
        for (uint32_t x = 0; x < W; ++x) q.push_back(float4((x + 0.5f) / W, (y + 0.5f) / H, 0, 0));
    const size_t centres = q.size();
    for (float u : {0.0f, 0.05f, 0.5f, 0.97f, 1.0f, -0.02f, 1.03f, -1.3f, 1.7f, 2.45f, -2.6f})
        for (float v : {0.0f, 0.1f, 0.99f, 1.0f, -0.4f, 1.35f, 3.2f}) q.push_back(float4(u, v, 0, 0));
    auto r = random_floats(200, -3, 4, 7);
    for (size_t i = 0; i < r.size(); i += 2) q.push_back(float4(r[i], r[i + 1], 0, 0));

    for (TextureWrap wrap : {TextureWrap::Repeat, TextureWrap::Clamp, TextureWrap::Mirror, TextureWrap::RepeatClamp}) {
        auto [tex, ref] = make<float3>(W, H, {.wrap = wrap, .mipmaps = false}, 11);
        auto got = run_queries(device, stream, tex, Query::Sample, q);
        for (size_t i = 0; i < q.size(); ++i)
            for (uint32_t c = 0; c < 3; ++c) {
                if (i < centres) {   // the texel itself (uv in float is within 1e-7 of the centre)
                    EXPECT_NEAR(got[i * 3 + c], ref.texel(0, long(i % W), long(i / W), c), 1e-6)
                        << name(wrap) << " centre " << i;
                }
                EXPECT_NEAR(got[i * 3 + c], ref.bilinear(0, q[i].x, q[i].y, c), 2e-6)
                    << name(wrap) << " uv " << q[i].x << ", " << q[i].y;
            }
    }
}

TEST_F(Textures, WrapModesDifferWhereTheyShould) {
    // A 1D ramp 0, 1, 2, 3: just outside the right edge repeat blends towards texel 0, clamp and mirror stay
    // at texel 3; one texel past the left edge mirror reads texel 0 again, repeat texel 3.
    std::vector<float> ramp{0, 1, 2, 3};
    std::vector<float4> q{float4(1.0f, 0.5f, 0, 0), float4(-0.125f, 0.5f, 0, 0), float4(1.25f, 0.5f, 0, 0)};
    std::map<TextureWrap, std::vector<float>> want{{TextureWrap::Repeat, {1.5f, 3.0f, 0.5f}},
                                                   {TextureWrap::Clamp, {3.0f, 0.0f, 3.0f}},
                                                   {TextureWrap::Mirror, {3.0f, 0.0f, 2.5f}},
                                                   {TextureWrap::RepeatClamp, {1.5f, 3.0f, 0.5f}}};
    for (auto& [wrap, values] : want) {
        auto tex = device.create_texture<float>(4, 1, {.wrap = wrap});
        stream << tex.copy_from(ramp.data()) << synchronize();
        EXPECT_EQ(run_queries(device, stream, tex, Query::Sample, q), values) << name(wrap);
    }
}

TEST_F(Textures, ReadWrapsIntegerCoordinates) {
    for (TextureWrap wrap : {TextureWrap::Repeat, TextureWrap::Clamp, TextureWrap::Mirror, TextureWrap::RepeatClamp}) {
        auto [tex, ref] = make<float2>(4, 3, {.wrap = wrap}, 12);
        Kernel1D k = [](TextureFloat2 t, BufferInt xs, BufferUInt ys, BufferFloat out) noexcept {
            auto i = dispatch_id().x;
            Float2 c = t.read(xs.read(i), ys.read(i) % 4u, 1u);   // level 1: 2 x 1
            Float2 d = t.read(xs.read(i), ys.read(i));
            out.write(i * 4u, c.x);
            out.write(i * 4u + 1u, c.y);
            out.write(i * 4u + 2u, d.x);
            out.write(i * 4u + 3u, d.y);
        };
        std::vector<int32_t> xs;
        std::vector<uint32_t> ys;
        for (int x = -9; x <= 9; ++x)
            for (uint32_t y : {0u, 1u, 2u, 3u, 5u, 7u}) {
                xs.push_back(x);
                ys.push_back(y);
            }
        auto shader = device.compile(k);
        auto bx = device.create_buffer<int32_t>(xs.size());
        auto by = device.create_buffer<uint32_t>(ys.size());
        auto out = device.create_buffer<float>(xs.size() * 4);
        std::vector<float> got(xs.size() * 4);
        stream << bx.copy_from(xs.data()) << by.copy_from(ys.data())
               << shader(tex, bx, by, out).dispatch(uint32_t(xs.size())) << out.copy_to(got.data()) << synchronize();
        for (size_t i = 0; i < xs.size(); ++i)
            for (uint32_t c = 0; c < 2; ++c) {
                EXPECT_NEAR(got[i * 4 + c], ref.texel(1, xs[i], ys[i] % 4, c), 1e-6) << name(wrap) << " " << xs[i];
                EXPECT_EQ(got[i * 4 + 2 + c], float(ref.texel(0, xs[i], ys[i], c))) << name(wrap) << " " << xs[i];
            }
    }
}

// TextureLevelRef (TextureRef::level): the level's texel at coordinates clamped into it, whatever the wrap mode
// (repeat here: a wrap would read other texels), a level past the last read as the last; its size; and the
// gradient of its reads, exactly where they landed.
TEST_F(Textures, LevelReadsClampIntoTheLevelAndTheirGradientsLandThere) {
    auto [tex, ref] = make<float3>(5, 3, {.wrap = TextureWrap::Repeat}, 14);   // levels 5x3, 2x1, 1x1
    Kernel1D k = [](TextureFloat3 t, BufferInt xs, BufferInt ys, BufferUInt ls, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        auto level = t.level(ls.read(i));
        Float3 c = level.read(xs.read(i), ys.read(i));
        UInt2 n = level.size();
        out.write(i * 5u, c.x);
        out.write(i * 5u + 1u, c.y);
        out.write(i * 5u + 2u, c.z);
        out.write(i * 5u + 3u, cast<float>(n.x));
        out.write(i * 5u + 4u, cast<float>(n.y));
    };
    const uint32_t widths[3] = {5, 2, 1}, heights[3] = {3, 1, 1};
    std::vector<int32_t> xs, ys;
    std::vector<uint32_t> ls;
    for (uint32_t l : {0u, 1u, 2u, 7u})
        for (int x = -3; x <= 6; ++x)
            for (int y = -2; y <= 4; ++y) {
                xs.push_back(x);
                ys.push_back(y);
                ls.push_back(l);
            }
    auto shader = device.compile(k);
    auto bx = device.create_buffer<int32_t>(xs.size()), by = device.create_buffer<int32_t>(ys.size());
    auto bl = device.create_buffer<uint32_t>(ls.size());
    auto out = device.create_buffer<float>(xs.size() * 5);
    std::vector<float> got(xs.size() * 5);
    stream << bx.copy_from(xs.data()) << by.copy_from(ys.data()) << bl.copy_from(ls.data())
           << shader(tex, bx, by, bl, out).dispatch(uint32_t(xs.size())) << out.copy_to(got.data()) << synchronize();
    for (size_t i = 0; i < xs.size(); ++i) {
        const uint32_t l = std::min(ls[i], 2u);
        const long x = std::clamp<long>(xs[i], 0, widths[l] - 1), y = std::clamp<long>(ys[i], 0, heights[l] - 1);
        // Level 0 holds the texels as given; the host's mips are in double, the device's in float.
        for (uint32_t c = 0; c < 3; ++c)
            ASSERT_NEAR(got[i * 5 + c], ref.texel(l, x, y, c), l == 0 ? 0.0 : 1e-6)
                << "level " << ls[i] << " at " << xs[i] << ", " << ys[i];
        EXPECT_EQ(got[i * 5 + 3], float(widths[l]));
        EXPECT_EQ(got[i * 5 + 4], float(heights[l]));
    }
    // Gradients: 2 on texel (2, 1)'s green and 1 on its blue; (-5, 9) clamps to (0, 2), 3 on its red.
    Kernel1D seed = [](TextureFloat3 t) noexcept {
        auto level = t.level(0u);
        $autodiff {
            Float3 a = level.read(2, 1), b = level.read(-5, 9);
            backward(a.y * 2.0f + a.z + b.x * 3.0f);
        };
    };
    auto seeds = device.compile(seed);
    std::vector<float> grad(5 * 3 * 3);
    stream << tex.zero_grad() << seeds(tex).dispatch(1) << tex.copy_grad_to(grad.data()) << synchronize();
    for (uint32_t i = 0; i < grad.size(); ++i) {
        const float want = i == (1 * 5 + 2) * 3 + 1 ? 2.0f : i == (1 * 5 + 2) * 3 + 2 ? 1.0f : i == (2 * 5 + 0) * 3 ? 3.0f : 0.0f;
        EXPECT_EQ(grad[i], want) << i;
    }
}

TEST_F(Textures, MipChainsOfOddSizes) {
    struct Case {
        uint32_t w, h;
        std::vector<std::pair<uint32_t, uint32_t>> sizes;
    };
    for (const Case& c : {Case{7, 5, {{7, 5}, {3, 2}, {1, 1}}}, Case{6, 1, {{6, 1}, {3, 1}, {1, 1}}},
                          Case{1, 9, {{1, 9}, {1, 4}, {1, 2}, {1, 1}}}, Case{1, 1, {{1, 1}}}}) {
        auto [tex, ref] = make<float4>(c.w, c.h, {}, 13);
        ASSERT_EQ(tex.levels(), c.sizes.size());
        ASSERT_EQ(ref.level_count(), c.sizes.size());
        // Sizes and level counts as the kernels see them (levels past the last clamp to it).
        Kernel1D k = [](TextureFloat4 t, BufferUInt out) noexcept {
            auto l = dispatch_id().x;
            UInt2 s = t.size(l);
            out.write(l * 3u, s.x);
            out.write(l * 3u + 1u, s.y);
            out.write(l * 3u + 2u, t.levels());
        };
        auto shader = device.compile(k);
        const uint32_t n = uint32_t(c.sizes.size()) + 1;
        auto out = device.create_buffer<uint32_t>(n * 3);
        std::vector<uint32_t> sizes(n * 3);
        stream << shader(tex, out).dispatch(n) << out.copy_to(sizes.data()) << synchronize();
        for (uint32_t l = 0; l < n; ++l) {
            auto want = c.sizes[std::min<size_t>(l, c.sizes.size() - 1)];
            EXPECT_EQ(sizes[l * 3], want.first) << c.w << "x" << c.h << " level " << l;
            EXPECT_EQ(sizes[l * 3 + 1], want.second) << c.w << "x" << c.h << " level " << l;
            EXPECT_EQ(sizes[l * 3 + 2], c.sizes.size());
        }
        for (uint32_t l = 0; l < tex.levels(); ++l) {
            EXPECT_EQ(tex.width(l), c.sizes[l].first);
            EXPECT_EQ(tex.height(l), c.sizes[l].second);
            std::vector<float> got(size_t(tex.width(l)) * tex.height(l) * 4);
            stream << tex.copy_to(got.data(), l) << synchronize();
            for (size_t i = 0; i < got.size(); ++i)
                EXPECT_NEAR(got[i], ref.levels[l][i], 1e-6) << "level " << l << " float " << i;
        }
    }
    auto flat = device.create_texture<float>(8, 8, {.mipmaps = false});
    EXPECT_EQ(flat.levels(), 1u);
}

TEST_F(Textures, TrilinearBlendsNeighbouringLevels) {
    auto [tex, ref] = make<float3>(13, 10, {.wrap = TextureWrap::Mirror}, 14);   // 13x10, 6x5, 3x2, 1x1
    std::vector<float4> q;
    auto r = random_floats(120, -1, 2, 15);
    for (float lod : {-1.0f, 0.0f, 0.3f, 1.0f, 1.75f, 2.5f, 3.0f, 7.0f})
        for (size_t i = 0; i < r.size(); i += 8) q.push_back(float4(r[i], r[i + 1], lod, 0));
    auto got = run_queries(device, stream, tex, Query::Level, q);
    for (size_t i = 0; i < q.size(); ++i)
        for (uint32_t c = 0; c < 3; ++c)
            EXPECT_NEAR(got[i * 3 + c], ref.trilinear(q[i].x, q[i].y, q[i].z, c), 3e-6) << "lod " << q[i].z;
}

TEST_F(Textures, SampleGradPicksTheLevelFromTheFootprint) {
    auto [tex, ref] = make<float3>(16, 8, {}, 16);   // 16x8 .. 1x1: 5 levels
    std::vector<float4> q;
    auto r = random_floats(60, 0, 1, 17);
    // Footprints from magnified (level 0 only) to beyond the last level, x or y the longer one.
    for (float texels : {0.25f, 1.0f, 1.5f, 2.0f, 3.7f, 9.0f, 40.0f})
        for (size_t i = 0; i < r.size(); i += 6) {
            q.push_back(float4(r[i], r[i + 1], texels / 16, 0.5f / 8));
            q.push_back(float4(r[i + 2], r[i + 3], 0.5f / 16, texels / 8));
        }
    auto got = run_queries(device, stream, tex, Query::Grad, q);
    for (size_t i = 0; i < q.size(); ++i) {
        double lod = ref.lod_of(q[i].z, 0, 0, q[i].w);
        for (uint32_t c = 0; c < 3; ++c)
            EXPECT_NEAR(got[i * 3 + c], ref.trilinear(q[i].x, q[i].y, lod, c), 3e-6) << "lod " << lod;
    }
}

TEST_F(Textures, SetsPickTexturesByIndex) {
    std::vector<TextureDesc> descs{{9, 4, {.wrap = TextureWrap::Clamp}},
                                   {3, 7, {.wrap = TextureWrap::Repeat, .mipmaps = false}},
                                   {5, 5, {.wrap = TextureWrap::Mirror}}};
    auto set = device.create_texture_set<float2>(descs);
    ASSERT_EQ(set.size(), 3u);
    std::vector<HostTexture> refs;
    for (uint32_t t = 0; t < 3; ++t) {
        auto texels = random_floats(size_t(descs[t].width) * descs[t].height * 2, 0, 1, 20 + t);
        stream << set.copy_from(t, texels.data());
        refs.emplace_back(descs[t].width, descs[t].height, 2, descs[t].options, texels);
        EXPECT_EQ(set.levels(t), refs.back().level_count());
    }
    stream << set.build_mips() << synchronize();
    // An index past the end reads the last texture.
    Kernel1D k = [](TextureSetFloat2 s, BufferFloat4 qs, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float4 q = qs.read(i);
        auto tex = s.texture(cast<uint32_t>(q.z));
        Float2 c = tex.sample_level(q.xy(), q.w);
        out.write(i * 3u, c.x);
        out.write(i * 3u + 1u, c.y);
        out.write(i * 3u + 2u, cast<float>(s.size()));
    };
    std::vector<float4> q;
    auto r = random_floats(80, -1.5f, 2.5f, 24);
    for (uint32_t t = 0; t < 5; ++t)
        for (size_t i = 0; i < r.size(); i += 2) q.push_back(float4(r[i], r[i + 1], float(t), float(i % 7) * 0.4f));
    auto shader = device.compile(k);
    auto qb = device.create_buffer<float4>(q.size());
    auto out = device.create_buffer<float>(q.size() * 3);
    std::vector<float> got(q.size() * 3);
    stream << qb.copy_from(q.data()) << shader(set, qb, out).dispatch(uint32_t(q.size())) << out.copy_to(got.data())
           << synchronize();
    for (size_t i = 0; i < q.size(); ++i) {
        const HostTexture& ref = refs[std::min(uint32_t(q[i].z), 2u)];
        for (uint32_t c = 0; c < 2; ++c)
            EXPECT_NEAR(got[i * 3 + c], ref.trilinear(q[i].x, q[i].y, q[i].w, c), 3e-6) << "texture " << q[i].z;
        EXPECT_EQ(got[i * 3 + 2], 3.0f);
    }
}

TEST_F(Textures, CallablesTakeTextures) {
    auto [tex, ref] = make<float3>(6, 6, {}, 30);
    Callable tint = [](TextureFloat3 t, Float2 uv, Float3 scale) noexcept { return t.sample(uv) * scale; };
    Kernel1D k = [&](TextureFloat3 t, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float2 uv = make_float2(cast<float>(i) * 0.13f, 0.4f);
        Float3 c = tint(t, uv, make_float3(1.0f, 2.0f, 3.0f));
        out.write(i * 3u, c.x);
        out.write(i * 3u + 1u, c.y);
        out.write(i * 3u + 2u, c.z);
    };
    auto shader = device.compile(k);
    auto out = device.create_buffer<float>(30);
    std::vector<float> got(30);
    stream << shader(tex, out).dispatch(10) << out.copy_to(got.data()) << synchronize();
    for (uint32_t i = 0; i < 10; ++i)
        for (uint32_t c = 0; c < 3; ++c)
            EXPECT_NEAR(got[i * 3 + c], ref.bilinear(0, i * 0.13f, 0.4f, c) * (c + 1), 1e-5) << i;
}

TEST_F(Textures, BaseLevelFromAndGradientIntoAParameterBuffer) {
    // A texture that is a range of a flat parameter buffer (as in an optimizer): level 0 copied in, its
    // gradient added back into the range, the rest of the buffer untouched.
    const uint32_t W = 3, H = 2, at = 5;
    auto params = device.create_diff_buffer<float>(30);
    auto values = random_floats(30, 0, 1, 31);
    std::vector<float> grad_before(30);
    for (size_t i = 0; i < 30; ++i) grad_before[i] = float(i);
    auto tex = device.create_texture<float3>(W, H);
    // A kernel puts a known gradient into level 0: 1 on texel (1, 1)'s green channel via read().
    Kernel1D seed = [](TextureFloat3 t) noexcept {
        $autodiff {
            Float3 c = t.read(1, 1);
            backward(c.y * 2.0f);
        };
    };
    auto shader = device.compile(seed);
    std::vector<float> base(W * H * 3), grad(30);
    stream << params.value.copy_from(values.data()) << params.grad.copy_from(grad_before.data()) << tex.zero_grad()
           << tex.copy_base_from(params.value, at) << tex.build_mips() << shader(tex).dispatch(1)
           << tex.backward_mips() << tex.add_base_grad_to(params.grad, at) << tex.copy_to(base.data())
           << params.grad.copy_to(grad.data()) << synchronize();
    for (size_t i = 0; i < base.size(); ++i) EXPECT_EQ(base[i], values[at + i]) << i;
    for (size_t i = 0; i < 30; ++i) {
        float want = grad_before[i] + (i == at + (1 * W + 1) * 3 + 1 ? 2.0f : 0.0f);
        EXPECT_EQ(grad[i], want) << i;
    }
    EXPECT_NE(error_of([&] { (void)tex.copy_base_from(params.value, 13); }).find("floats [13, 31) of a buffer of 30"),
              std::string::npos);
    EXPECT_NE(error_of([&] { (void)tex.add_base_grad_to(params.grad, 40); }).find("add_base_grad_to"),
              std::string::npos);
}

TEST_F(Textures, ArgumentErrorsNameTheTexture) {
    Kernel1D k = [](TextureFloat3 t, BufferFloat out, Float s) noexcept {
        auto i = dispatch_id().x;
        out.write(i, t.sample(make_float2(0.5f)).x * s);
    };
    auto shader = device.compile(k, {.name = "tex_kernel"});
    auto tex = device.create_texture<float3>(4, 4);
    auto tex4 = device.create_texture<float4>(4, 4);
    auto set = device.create_texture_set<float3>({{4, 4}});
    auto out = device.create_buffer<float>(4);
    EXPECT_EQ(error_of([&] { shader(out, out, 1.0f); }),
              "argument 0 of kernel 'tex_kernel' must be texture<float3>, got buffer<float>");
    EXPECT_EQ(error_of([&] { shader(tex4, out, 1.0f); }),
              "argument 0 of kernel 'tex_kernel' must be texture<float3>, got texture<float4>");
    EXPECT_EQ(error_of([&] { shader(set, out, 1.0f); }),
              "argument 0 of kernel 'tex_kernel' must be texture<float3>, got texture_set<float3>");
    EXPECT_EQ(error_of([&] { shader(tex, tex, 1.0f); }),
              "argument 1 of kernel 'tex_kernel' must be buffer<float>, got texture<float3>");
    EXPECT_EQ(error_of([&] { shader(Texture2D<float3>{}, out, 1.0f); }),
              "argument 0 of kernel 'tex_kernel' is an empty texture<float3> (default-constructed or moved-from)");
    EXPECT_EQ(error_of([&] { shader(tex, out, true); }).rfind("argument 2 of kernel 'tex_kernel' is a float", 0), 0u);
    EXPECT_EQ(error_of([&] { shader(tex, out); }), "kernel 'tex_kernel' takes 3 arguments, got 2");
    stream << shader(tex, out, 2.0f).dispatch(4) << synchronize();   // the right arguments pass

    EXPECT_EQ(error_of([&] { device.create_texture<float>(0, 3); }),
              "create_texture: texture<float> of 0 x 3 texels; width and height must be at least 1");
    EXPECT_EQ(error_of([&] { device.create_texture_set<float>({}); }),
              "create_texture_set: a texture_set<float> needs at least one texture");
    std::vector<float> host(16);
    EXPECT_EQ(error_of([&] { (void)tex.copy_to(host.data(), 3); }),
              "texture<float3>::copy_to: level 3 of 3 (levels 0 to 2)");
    EXPECT_EQ(error_of([&] { (void)set.copy_from(1, host.data()); }), "texture_set<float3>::copy_from: texture 1 of 1");
    EXPECT_EQ(error_of([&] { (void)Texture2D<float>{}.build_mips(); }),
              "an empty texture (default-constructed or moved-from) was used");
}

} // namespace adjoint::test
