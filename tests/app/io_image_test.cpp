// Image encoding: sRGB 8-bit rounding and clamping, PNG round trips, PSNR and |a - b|.
#include "app/io_test_util.h"

#include <adjoint/app/atomic_file.h>
#include <adjoint/app/image_io.h>

#include <stb/stb_image.h>

#include <cmath>
#include <limits>

using namespace adjoint::app;
using adjoint::app::test::error_of;
using adjoint::app::test::TempDir;

TEST(IoImage, Srgb8RoundsAndClamps) {
    EXPECT_EQ(linear_to_srgb8(0.0f), 0);
    EXPECT_EQ(linear_to_srgb8(1.0f), 255);
    EXPECT_EQ(linear_to_srgb8(0.5f), 188);      // 1.055 * 0.5^(1/2.4) - 0.055 = 0.73536 -> 187.52
    EXPECT_EQ(linear_to_srgb8(0.001f), 3);      // linear segment: 0.01292 * 255 = 3.29
    EXPECT_EQ(linear_to_srgb8(-0.5f), 0);
    EXPECT_EQ(linear_to_srgb8(7.0f), 255);
    EXPECT_EQ(linear_to_srgb8(std::numeric_limits<float>::quiet_NaN()), 0);
    EXPECT_EQ(linear_to_srgb8(std::numeric_limits<float>::infinity()), 255);
}

TEST(IoImage, EveryEightBitCodeSurvivesDecodeThenEncode) {
    for (int k = 0; k < 256; ++k) EXPECT_EQ(linear_to_srgb8(srgb_to_linear(float(k) / 255.0f)), k) << k;
}

TEST(IoImage, PngRoundTripKeepsValuesAndPixelOrder) {
    Image image(5, 3, 3);
    for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 5; ++x)
            for (int c = 0; c < 3; ++c) image.at(x, y, c) = srgb_to_linear(float((x * 50 + y * 20 + c * 7) % 256) / 255.0f);
    Image back = decode_image_linear(encode_png_srgb(image), "mem");
    ASSERT_EQ(back.width, 5);
    ASSERT_EQ(back.height, 3);
    ASSERT_EQ(back.channels, 3);
    EXPECT_EQ(back.pixels, image.pixels);  // 8-bit-representable values come back bit for bit
}

// 16-bit PNGs (data textures in params.json): every value back to within half a step of 1/65535, for every
// channel count, read by stb_image as any reader would.
TEST(IoImage, SixteenBitPngsKeepTheirValues) {
    for (const int channels : {1, 2, 3, 4}) {
        Image image(37, 23, channels);
        uint32_t state = 12345;
        for (int y = 0; y < image.height; ++y)
            for (int x = 0; x < image.width; ++x)
                for (int c = 0; c < channels; ++c) {
                    state = state * 1664525u + 1013904223u;
                    // A ramp in the top rows, noise in [0, 1] below.
                    image.at(x, y, c) = y < 12 ? float(x * 7 + y * 3 + c) / 300.0f : float(state >> 8) / 16777215.0f;
                }
        const std::string png = encode_png16(image);
        int w = 0, h = 0, n = 0;
        stbi_us* back = stbi_load_16_from_memory(reinterpret_cast<const stbi_uc*>(png.data()), int(png.size()), &w,
                                                 &h, &n, channels);
        ASSERT_NE(back, nullptr) << channels;
        ASSERT_EQ(w * 1000 + h, 37 * 1000 + 23);
        ASSERT_EQ(n, channels);
        for (size_t i = 0; i < image.pixels.size(); ++i)
            ASSERT_NEAR(back[i] / 65535.0, image.pixels[i], 0.5 / 65535.0 + 1e-9) << channels << " " << i;
        stbi_image_free(back);
    }
}

TEST(IoImage, AlphaIsStoredLinearly) {
    Image image(1, 1, 4);
    image.pixels = {0.5f, 0.5f, 0.5f, 0.5f};
    Image back = decode_image_linear(encode_png_srgb(image), "mem");
    ASSERT_EQ(back.channels, 4);
    EXPECT_FLOAT_EQ(back.pixels[0], srgb_to_linear(188.0f / 255.0f));
    EXPECT_FLOAT_EQ(back.pixels[3], 128.0f / 255.0f);
}

TEST(IoImage, WritePngIsReadBackFromDisk) {
    TempDir dir;
    Image image(2, 2, 3, 1.0f);
    image.at(1, 1, 0) = 0.0f;
    write_png(dir / "x.png", image);
    Image back = read_png_linear(dir / "x.png");
    EXPECT_EQ(back.pixels, image.pixels);
    EXPECT_EQ(dir.names(), std::vector<std::string>{"x.png"});
}

TEST(IoImage, BadInputIsNamed) {
    EXPECT_EQ(error_of([] { decode_image_linear("not an image", "textures/fur.png"); }).rfind("textures/fur.png: cannot decode", 0), 0u);
    Image broken(2, 2, 3);
    broken.pixels.pop_back();
    EXPECT_NE(error_of([&] { encode_png_srgb(broken); }).find("holds 11 values, not 2x2x3"), std::string::npos);
    EXPECT_NE(error_of([] { encode_png_srgb(Image()); }).find("empty"), std::string::npos);
    TempDir dir;
    EXPECT_NE(error_of([&] { read_png_linear(dir / "none.png"); }).find("none.png: No such file"), std::string::npos);
}

TEST(IoImage, PsnrIsLinearClampedPeakOne) {
    Image a(4, 4, 3, 0.0f), b(4, 4, 3, 0.1f);
    EXPECT_NEAR(psnr(a, b), 20.0, 1e-5);  // mse 0.01
    b.pixels.assign(b.pixels.size(), 0.0f);
    b.at(0, 0, 0) = 1.0f;                 // one value of 48 off by 1: mse 1/48
    EXPECT_NEAR(psnr(a, b), 10.0 * std::log10(48.0), 1e-9);
    EXPECT_EQ(psnr(a, a), std::numeric_limits<double>::infinity());
    Image bright(4, 4, 3, 3.0f), white(4, 4, 3, 1.0f);
    EXPECT_EQ(psnr(bright, white), std::numeric_limits<double>::infinity());  // clamped to 1 first
    Image rgba1(4, 4, 4, 0.5f), rgba2(4, 4, 4, 0.5f);
    rgba2.at(2, 2, 3) = 0.0f;  // alpha differs only
    EXPECT_EQ(psnr(rgba1, rgba2), std::numeric_limits<double>::infinity());
    EXPECT_NE(error_of([&] { psnr(a, Image(4, 5, 3)); }).find("differ in size"), std::string::npos);
}

TEST(IoImage, AbsDiffPerChannel) {
    Image a(2, 1, 4, 0.25f), b(2, 1, 3, 0.5f);
    a.at(1, 0, 2) = 1.0f;
    Image d = abs_diff(a, b);
    ASSERT_EQ(d.channels, 3);
    EXPECT_EQ(d.pixels, (std::vector<float>{0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.5f}));
}

// A flipped bit among a PNG's pixels decoded silently (stb_image checks no CRC), so a damaged target.png
// resumed a run against a wrong image. Critical chunks must pass their CRC; an ancillary one need not (libpng's
// rule); a chunk running past the end is a file cut short.
TEST(IoImage, APngsCriticalChunksMustPassTheirCrc) {
    Image image(8, 8, 3);
    for (size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = float(i % 17) / 16.0f;
    const std::string good = encode_png_srgb(image);
    ASSERT_NO_THROW(decode_image_linear(good, "t.png"));
    const size_t idat = good.find("IDAT");
    ASSERT_NE(idat, std::string::npos);
    std::string flipped = good;
    flipped[idat + 4 + 6] = char(flipped[idat + 4 + 6] ^ 0x10);   // a byte of the compressed pixels
    EXPECT_EQ(error_of([&] { decode_image_linear(flipped, "t.png"); }),
              "t.png: cannot decode the PNG image: the file is damaged (a chunk fails its CRC check)");
    // An ancillary chunk (lower-case first letter) with a wrong CRC, put before IEND: still decoded.
    std::string extra = good;
    extra.insert(good.size() - 12, std::string("\0\0\0\2tEXta\0\0\0\0\0", 14));
    EXPECT_NO_THROW(decode_image_linear(extra, "t.png"));
    std::string critical = extra;
    critical[critical.size() - 12 - 14 + 4] = 'T';   // the same chunk made critical ("TEXt")
    EXPECT_EQ(error_of([&] { decode_image_linear(critical, "t.png"); }),
              "t.png: cannot decode the PNG image: the file is damaged (a chunk fails its CRC check)");
    EXPECT_EQ(error_of([&] { decode_image_linear(good.substr(0, idat + 10), "t.png"); }),
              "t.png: cannot decode the PNG image: the file is cut short");
}
