// Mip chains from and gradients into a parameter buffer: build_mips_from against copy_base_from + build_mips,
// backward_mips and backward_mips_to against the level-by-level reverse of the box filter computed on the host
// (bit for bit, in the same order of additions), for even, odd and one-texel-wide sizes, every texel type and
// textures at an offset in a set; and the errors of ranges out of bounds.
#include "support/device_fixture.h"
#include "support/error_text.h"

namespace adjoint::test {

namespace {

// The levels of a texture on the host: offset (floats, from the texture's level 0), width, height.
struct HostLevel {
    size_t offset;
    uint32_t w, h;
};

std::vector<HostLevel> host_levels(uint32_t w, uint32_t h, uint32_t channels) {
    std::vector<HostLevel> out;
    size_t at = 0;
    for (;;) {
        out.push_back({at, w, h});
        at += size_t(w) * h * channels;
        if (w == 1 && h == 1) break;
        w = std::max(1u, w / 2);
        h = std::max(1u, h / 2);
    }
    return out;
}

// Each level's gradient added into the level below, coarsest first, through the reverse of the 2x2 box: each
// of the four texels the box read (clamped at the last row and column) gets a quarter of the gradient above.
void reference_backward(std::vector<float>& g, const std::vector<HostLevel>& lv, uint32_t c) {
    for (size_t l = lv.size() - 1; l >= 1; --l) {
        const HostLevel &s = lv[l - 1], &d = lv[l];
        for (uint32_t y = 0; y < d.h; ++y)
            for (uint32_t x = 0; x < d.w; ++x)
                for (uint32_t k = 0; k < c; ++k) {
                    float quarter = g[d.offset + (size_t(y) * d.w + x) * c + k] * 0.25f;
                    uint32_t x0 = std::min(2 * x, s.w - 1), x1 = std::min(2 * x + 1, s.w - 1);
                    uint32_t y0 = std::min(2 * y, s.h - 1), y1 = std::min(2 * y + 1, s.h - 1);
                    for (auto [xx, yy] : {std::pair{x0, y0}, {x1, y0}, {x0, y1}, {x1, y1}})
                        g[s.offset + (size_t(yy) * s.w + xx) * c + k] += quarter;
                }
    }
}

// Each level from the one below by the 2x2 box (clamped at the last row and column), added in box()'s order.
void reference_build(std::vector<float>& t, const std::vector<HostLevel>& lv, uint32_t c) {
    for (size_t l = 1; l < lv.size(); ++l) {
        const HostLevel &s = lv[l - 1], &d = lv[l];
        for (uint32_t y = 0; y < d.h; ++y)
            for (uint32_t x = 0; x < d.w; ++x)
                for (uint32_t k = 0; k < c; ++k) {
                    uint32_t x0 = std::min(2 * x, s.w - 1), x1 = std::min(2 * x + 1, s.w - 1);
                    uint32_t y0 = std::min(2 * y, s.h - 1), y1 = std::min(2 * y + 1, s.h - 1);
                    auto at = [&](uint32_t xx, uint32_t yy) { return t[s.offset + (size_t(yy) * s.w + xx) * c + k]; };
                    t[d.offset + (size_t(y) * d.w + x) * c + k] = (at(x0, y0) + at(x1, y0) + at(x0, y1) + at(x1, y1)) * 0.25f;
                }
    }
}

struct Size {
    uint32_t w, h;
};
// Even (with odd levels above), with rows of one texel above, multiples of 4 (the aligned kernels) with odd
// levels above, odd, one texel wide or high, one texel.
const std::vector<Size> kSizes = {{8, 6}, {16, 4}, {4, 16}, {12, 8}, {7, 5}, {13, 10}, {6, 1}, {1, 9}, {2, 2}, {1, 1}};

} // namespace

class TextureMips : public DeviceTest {
protected:
    // Texture 1 of a set whose texture 0 is 3 x 2, so its levels start past another texture's.
    // From float 7 texel by texel; from float 8 of a buffer of whole float4s a float4 at a time where level 0's
    // width and height are multiples of 4 (the aligned kernel).
    template <typename T>
    void check_build_from(Size size) {
        for (size_t at : {7, 8}) check_build_from<T>(size, at);
    }
    template <typename T>
    void check_build_from(Size size, size_t at) {
        constexpr uint32_t C = TextureRef<T>::channels;
        const size_t n = size_t(size.w) * size.h * C;
        auto params = device.create_buffer<float>(n + at + 4);
        auto values = random_floats(params.size(), -1, 1, size.w * 31 + size.h);
        auto a = device.create_texture_set<T>({{3, 2}, {size.w, size.h}});
        auto b = device.create_texture_set<T>({{3, 2}, {size.w, size.h}});
        stream << params.copy_from(values.data()) << a.copy_base_from(1, params, at) << a.build_mips()
               << b.build_mips_from(1, params, at) << synchronize();
        for (uint32_t l = 0; l < a.levels(1); ++l) {
            std::vector<float> want(size_t(a.width(1, l)) * a.height(1, l) * C), got(want.size());
            stream << a.copy_to(1, want.data(), l) << b.copy_to(1, got.data(), l) << synchronize();
            for (size_t i = 0; i < want.size(); ++i)
                ASSERT_EQ(got[i], want[i])
                    << size.w << "x" << size.h << " at " << at << " level " << l << " float " << i;
        }
        // Texture 0 was left alone (its texels are still zero).
        std::vector<float> other(3 * 2 * C, 1.0f);
        stream << b.copy_to(0, other.data()) << synchronize();
        for (float x : other) EXPECT_EQ(x, 0.0f);
    }

    // Random gradients in every level of texture 1 of a set; backward_mips() and backward_mips_to() against
    // the host's level-by-level reverse.
    template <typename T>
    void check_backward(Size size) {
        constexpr uint32_t C = TextureRef<T>::channels;
        auto set = device.create_texture_set<T>({{3, 2}, {size.w, size.h}});
        auto lv0 = host_levels(3, 2, C), lv = host_levels(size.w, size.h, C);
        // Texture 0 (3x2 and 1x1), texture 1 on the next whole float4, the set padded to whole float4s.
        auto float4s = [](size_t n) { return (n + 3) / 4 * 4; };
        const size_t first = float4s(lv0.back().offset + C);
        ASSERT_EQ(set.levels(1), lv.size());
        const size_t total = float4s(first + lv.back().offset + C);
        ASSERT_EQ(set.texels().grad.size(), total);
        auto seeded = random_floats(total, -1, 1, size.w * 17 + size.h);
        std::vector<float> want0(seeded.begin(), seeded.begin() + first),
            want(seeded.begin() + first, seeded.begin() + first + lv.back().offset + C);
        reference_backward(want0, lv0, C);
        reference_backward(want, lv, C);
        const size_t n0 = size_t(size.w) * size.h * C;

        // backward_mips: each texture's level 0 holds its whole gradient, the other levels keep theirs.
        std::vector<float> got(total);
        stream << set.texels().grad.copy_from(seeded.data()) << set.backward_mips()
               << set.texels().grad.copy_to(got.data()) << synchronize();
        // Every wrong float is counted and the first few named, so a failure shows its pattern.
        size_t wrong = 0;
        for (size_t i = 0; i < total; ++i) {
            bool level0 = i >= first && i < first + n0, other0 = i < 3 * 2 * C;
            float expect = level0 ? want[i - first] : other0 ? want0[i] : seeded[i];
            if (got[i] == expect || ++wrong > 6) continue;
            size_t texel = (i - (level0 ? first : 0)) / C;
            ADD_FAILURE() << size.w << "x" << size.h << " (" << C << " channels) float " << i << ": " << got[i]
                          << ", want " << expect
                          << (level0 ? " (level 0, texel " + std::to_string(texel % size.w) + ", " +
                                           std::to_string(texel / size.w) + ")"
                                     : "");
        }
        ASSERT_EQ(wrong, 0u) << size.w << "x" << size.h << " (" << C << " channels): floats wrong";

        // backward_mips_to: the same added into a range of another buffer; the texture's gradients untouched. At
        // float 5 texel by texel; at float 8 of a buffer of whole float4s a float4 at a time where level 0's
        // width and height are multiples of 4 (the aligned kernel).
        for (size_t at : {5, 8}) {
            auto dst = device.create_buffer<float>(n0 + at + 4);
            auto before = random_floats(dst.size(), -1, 1, 99);
            std::vector<float> after(dst.size());
            stream << set.texels().grad.copy_from(seeded.data()) << dst.copy_from(before.data())
                   << set.backward_mips_to(1, dst, at) << dst.copy_to(after.data())
                   << set.texels().grad.copy_to(got.data()) << synchronize();
            for (size_t i = 0; i < dst.size(); ++i) {
                bool in = i >= at && i < at + n0;
                ASSERT_EQ(after[i], in ? before[i] + want[i - at] : before[i])
                    << size.w << "x" << size.h << " at " << at << " float " << i;
            }
            EXPECT_EQ(got, seeded);
        }
    }
};

TEST_F(TextureMips, BuildFromAParameterBufferEqualsCopyThenBuild) {
    for (Size s : kSizes) {
        check_build_from<float>(s);
        check_build_from<float3>(s);
    }
    check_build_from<float2>({8, 6});
    check_build_from<float4>({7, 5});
    // Without mip levels it is a copy.
    auto params = device.create_buffer<float>(20);
    auto values = random_floats(20, 0, 1, 3);
    auto flat = device.create_texture<float>(4, 4, {.mipmaps = false});
    std::vector<float> got(16);
    stream << params.copy_from(values.data()) << flat.build_mips_from(params, 4) << flat.copy_to(got.data())
           << synchronize();
    for (size_t i = 0; i < 16; ++i) EXPECT_EQ(got[i], values[4 + i]);
}

// The last levels (a few thousand floats) are built in one dispatch: every level equals the host's level-by-level
// box filter bit for bit, for chains whose tail starts at level 1, 2 or further up, square or not, odd or even.
TEST_F(TextureMips, ChainsWithTheirLastLevelsInOneDispatchEqualTheBoxLevelByLevel) {
    auto check = [&]<typename T>(T, Size size) {
        constexpr uint32_t C = TextureRef<T>::channels;
        const auto lv = host_levels(size.w, size.h, C);
        std::vector<float> want(lv.back().offset + C);
        auto base = random_floats(size_t(size.w) * size.h * C, -1, 1, size.w * 7 + size.h);
        std::copy(base.begin(), base.end(), want.begin());
        reference_build(want, lv, C);
        auto params = device.create_buffer<float>(base.size());
        auto a = device.create_texture_set<T>({{size.w, size.h}});
        stream << params.copy_from(base.data()) << a.build_mips_from(0, params, 0) << synchronize();
        std::vector<float> got(a.texels().value.size());   // the chain, then up to 3 floats to a whole float4
        ASSERT_EQ(got.size(), (want.size() + 3) / 4 * 4);
        stream << a.texels().value.copy_to(got.data()) << synchronize();
        for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << size.w << "x" << size.h << " float " << i;
    };
    check(float3{}, {128, 128});
    check(float{}, {128, 128});
    check(float4{}, {96, 40});
    check(float{}, {70, 33});
    check(float2{}, {512, 4});
    check(float{}, {20, 12});
}

TEST_F(TextureMips, GradientsGoDownTheChainAsTheBoxFilterReversedLevelByLevel) {
    for (Size s : kSizes) {
        check_backward<float>(s);
        check_backward<float3>(s);
    }
    check_backward<float2>({16, 4});
    check_backward<float4>({13, 10});
}

TEST_F(TextureMips, RangesOutOfTheBufferNameTheCommand) {
    auto tex = device.create_texture<float3>(4, 4);
    auto buf = device.create_buffer<float>(50);
    EXPECT_EQ(error_of([&] { (void)tex.build_mips_from(buf, 3); }),
              "texture<float3>::build_mips_from: floats [3, 51) of a buffer of 50");
    EXPECT_EQ(error_of([&] { (void)tex.backward_mips_to(buf, 60); }),
              "texture<float3>::backward_mips_to: floats [60, 108) of a buffer of 50");
    auto set = device.create_texture_set<float>({{2, 2}});
    EXPECT_EQ(error_of([&] { (void)set.backward_mips_to(1, buf, 0); }),
              "texture_set<float>::backward_mips_to: texture 1 of 1");
    EXPECT_EQ(error_of([&] { (void)set.build_mips_from(1, buf, 0); }),
              "texture_set<float>::build_mips_from: texture 1 of 1");
}

} // namespace adjoint::test
