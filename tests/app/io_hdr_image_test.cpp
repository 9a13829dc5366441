// HDR images: EXRs written with OpenEXR, Blender's HDRIs, Radiance .hdr, PNG, and bad files named.
#include "app/io_test_util.h"
#include "io/hdr_image.h"

#include <adjoint/app/atomic_file.h>
#include <adjoint/app/image_io.h>

#include <ImfChannelList.h>
#include <ImfFrameBuffer.h>
#include <ImfHeader.h>
#include <ImfOutputFile.h>
#include <ImfRgbaFile.h>
#include <half.h>
#include <stb_image_write.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace adjoint::app;
using adjoint::app::test::error_of;
using adjoint::app::test::TempDir;
namespace fs = std::filesystem;

namespace {

constexpr uint32_t kMaxSide = 8192; // the scene format's max_resolution

// The compression tests' image: large enough that every compressor shrinks it (OpenEXR stores a chunk that
// would not shrink as it is, and then the decoder under test would not run).
constexpr int kWidth = 64, kHeight = 32;

// Smooth values above 1 and below, most of them not representable in half (0.1 steps), alpha in (0, 1).
float sample(int x, int y, int c) {
    if (c == 3)
        return 0.2f + 0.01f * float(x);
    return 0.1f * float(1 + x + 2 * y) * float(c + 1) + (c == 2 ? 0.003f : 0.0f);
}

// What write_exr writes: by default the compression tests' image, RGBA half, ZIP.
struct ExrFile {
    int w = kWidth, h = kHeight;
    Imf::Compression compression = Imf::ZIP_COMPRESSION;
    Imf::PixelType type = Imf::HALF;
    bool alpha = true;
    Imath::V2i origin{0, 0}; // of the data window
    float (*value)(int, int, int) = sample;
    std::string layer = {};  // a prefix of the channel names, e.g. "diffuse."
    float dwa_level = 45.0f; // OpenEXR's default
};

void write_exr(const fs::path& path, const ExrFile& f) {
    const auto [w, h, compression, type, alpha, origin, value, layer, dwa_level] = f;
    Imath::Box2i window(origin, origin + Imath::V2i(w - 1, h - 1));
    Imf::Header header(window, window);
    header.compression() = compression;
    header.dwaCompressionLevel() = dwa_level;
    const int channels = alpha ? 4 : 3;
    std::vector<float> floats(size_t(w) * size_t(h) * size_t(channels));
    std::vector<half> halves(floats.size());
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            for (int c = 0; c < channels; ++c) {
                size_t i = (size_t(y) * size_t(w) + size_t(x)) * size_t(channels) + size_t(c);
                floats[i] = value(x, y, c);
                halves[i] = half(floats[i]);
            }
    Imf::FrameBuffer frame;
    const char* names[4] = {"R", "G", "B", "A"};
    const size_t size = type == Imf::HALF ? sizeof(half) : sizeof(float);
    for (int c = 0; c < channels; ++c) {
        const std::string name = layer + names[c];
        header.channels().insert(name, Imf::Channel(type));
        const void* base =
            type == Imf::HALF ? static_cast<const void*>(halves.data() + c) : floats.data() + c;
        frame.insert(
            name, Imf::Slice::Make(type, base, window, size * size_t(channels), size * size_t(channels * w)));
    }
    Imf::OutputFile file(path.c_str(), header);
    file.setFrameBuffer(frame);
    file.writePixels(h);
}

// What the file holds for `sample`: half rounds it.
float stored(float v, Imf::PixelType type) { return type == Imf::HALF ? float(half(v)) : v; }

// `sample` as stored, exactly or (colour only: alpha is always lossless) within `tolerance` relative to
// max(1, value).
void expect_samples(const Image& image, Imf::PixelType type, float tolerance, const std::string& what) {
    ASSERT_EQ(image.width, kWidth) << what;
    ASSERT_EQ(image.height, kHeight) << what;
    ASSERT_EQ(image.channels, 4) << what;
    for (int y = 0; y < kHeight; ++y)
        for (int x = 0; x < kWidth; ++x)
            for (int c = 0; c < 4; ++c) {
                const float want = stored(sample(x, y, c), type);
                if (tolerance == 0.0f || c == 3)
                    EXPECT_EQ(image.at(x, y, c), want) << what << " at " << x << "," << y << "," << c;
                else
                    EXPECT_NEAR(image.at(x, y, c), want, tolerance * std::max(1.0f, want))
                        << what << " at " << x << "," << y << "," << c;
            }
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

} // namespace

TEST(IoHdrImage, ExrReadsBackExactlyWithLosslessCompressions) {
    TempDir dir;
    for (auto [compression, name] :
         {std::pair{Imf::ZIP_COMPRESSION, "zip"}, std::pair{Imf::PIZ_COMPRESSION, "piz"}})
        for (Imf::PixelType type : {Imf::HALF, Imf::FLOAT}) {
            const std::string file = std::string(name) + (type == Imf::HALF ? "_half.exr" : "_float.exr");
            write_exr(dir / file, {.compression = compression, .type = type});
            const size_t raw = size_t(kWidth * kHeight * 4) * (type == Imf::HALF ? 2 : 4);
            EXPECT_LT(fs::file_size(dir / file), raw) << file << " was stored uncompressed";
            expect_samples(read_hdr_image(dir / file, kMaxSide), type, 0.0f, file);
        }
}

TEST(IoHdrImage, ExrDwabIsCloseToTheSource) {
    // DWAB quantizes R, G, B (half or float alike) in 8x8 DCT blocks, more coarsely the higher its level;
    // alpha stays lossless. Measured on this image: at most 1.4% at OpenEXR's default level 45, 0.6% at 1.
    TempDir dir;
    for (auto [level, tolerance] : {std::pair{45.0f, 0.02f}, std::pair{1.0f, 0.01f}})
        for (Imf::PixelType type : {Imf::HALF, Imf::FLOAT}) {
            const std::string file =
                "dwab_" + std::to_string(int(level)) + (type == Imf::HALF ? "_half.exr" : "_float.exr");
            write_exr(dir / file, {.compression = Imf::DWAB_COMPRESSION, .type = type, .dwa_level = level});
            const size_t raw = size_t(kWidth * kHeight * 4) * (type == Imf::HALF ? 2 : 4);
            EXPECT_LT(fs::file_size(dir / file), raw) << file << " was stored uncompressed";
            expect_samples(read_hdr_image(dir / file, kMaxSide), type, tolerance, file);
        }
}

TEST(IoHdrImage, ExrFloatKeepsValuesBeyondHalf) {
    TempDir dir;
    write_exr(dir / "sun.exr",
              {.w = 2, .h = 1, .type = Imf::FLOAT, .alpha = false, .value = [](int x, int, int c) {
                   return x == 0 ? 1.0e6f + float(c) : 0.1f;
               }});
    const Image image = read_hdr_image(dir / "sun.exr", kMaxSide);
    EXPECT_EQ(image.at(0, 0, 0), 1.0e6f); // half would make it infinite
    EXPECT_EQ(image.at(0, 0, 2), 1.0e6f + 2.0f);
    EXPECT_EQ(image.at(1, 0, 1), 0.1f);
}

TEST(IoHdrImage, ExrTakesTheDataWindowAndFillsMissingAlpha) {
    TempDir dir;
    write_exr(dir / "offset.exr",
              {.w = 8, .h = 4, .compression = Imf::PIZ_COMPRESSION, .alpha = false, .origin = {-3, 5}});
    const Image image = read_hdr_image(dir / "offset.exr", kMaxSide);
    ASSERT_EQ(image.width, 8);
    ASSERT_EQ(image.height, 4);
    for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 8; ++x) {
            for (int c = 0; c < 3; ++c)
                EXPECT_EQ(image.at(x, y, c), float(half(sample(x, y, c))));
            EXPECT_EQ(image.at(x, y, 3), 1.0f);
        }
}

TEST(IoHdrImage, ExrLuminanceBecomesGrey) {
    TempDir dir;
    std::vector<Imf::Rgba> pixels(8 * 4);
    for (size_t i = 0; i < pixels.size(); ++i)
        pixels[i] = Imf::Rgba(half(0.5f * float(i)), half(0.5f * float(i)), half(0.5f * float(i)));
    {
        Imf::RgbaOutputFile file((dir / "grey.exr").c_str(), 8, 4, Imf::WRITE_Y, 1, Imath::V2f(0, 0), 1,
                                 Imf::INCREASING_Y, Imf::ZIP_COMPRESSION);
        file.setFrameBuffer(pixels.data(), 1, 8);
        file.writePixels(4);
    }
    const Image image = read_hdr_image(dir / "grey.exr", kMaxSide);
    ASSERT_EQ(image.width, 8);
    for (int c = 0; c < 3; ++c)
        EXPECT_NEAR(image.at(5, 2, c), 0.5f * 21.0f, 0.02f); // Y from Rec. 709 weights
    EXPECT_EQ(image.at(5, 2, 3), 1.0f);
}

// Blender's studio-light worlds (tools/setup.sh installs blender-data): DWAB-compressed equirectangular
// HDRIs.
TEST(IoHdrImage, BlenderHdrisLoad) {
    // Debian's package has no version folder (Blender's own builds put one between blender/ and datafiles/).
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator("/usr/share/blender", ec))
        if (e.path().extension() == ".exr" && e.path().parent_path().filename() == "world" &&
            e.path().parent_path().parent_path().filename() == "studiolights")
            files.push_back(e.path());
    ASSERT_FALSE(files.empty())
        << "no Blender HDRIs under /usr/share/blender (.../studiolights/world/*.exr): "
           "tools/setup.sh installs blender-data";
    for (const fs::path& file : files) {
        const Image image = read_hdr_image(file, kMaxSide);
        ASSERT_GT(image.height, 0) << file;
        EXPECT_EQ(image.width, 2 * image.height) << file;
        double sum = 0.0;
        float peak = 0.0f;
        for (float v : image.pixels) {
            ASSERT_TRUE(std::isfinite(v) && v >= 0.0f) << file << ": " << v;
            sum += double(v);
            peak = std::max(peak, v);
        }
        EXPECT_GT(sum / double(image.pixels.size()), 0.0) << file;
        EXPECT_GT(peak, 1.0f) << file << ": a high-dynamic-range map has values above 1";
    }
}

TEST(IoHdrImage, RadianceRoundTripsWithinRgbe) {
    TempDir dir;
    std::vector<float> rgb(8 * 4 * 3);
    for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 8; ++x)
            for (int c = 0; c < 3; ++c)
                rgb[size_t((y * 8 + x) * 3 + c)] = sample(x, y, c) * 3.0f;
    ASSERT_TRUE(stbi_write_hdr((dir / "sky.HDR").c_str(), 8, 4, 3, rgb.data()));
    const Image image = read_hdr_image(dir / "sky.HDR", kMaxSide);
    ASSERT_EQ(image.width, 8);
    ASSERT_EQ(image.height, 4);
    ASSERT_EQ(image.channels, 4);
    for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 8; ++x) {
            // RGBE: an 8-bit mantissa per channel over the pixel's largest channel's exponent.
            const float* want = &rgb[size_t((y * 8 + x) * 3)];
            const float largest = *std::max_element(want, want + 3);
            for (int c = 0; c < 3; ++c)
                EXPECT_NEAR(image.at(x, y, c), want[c], largest / 128.0f) << x << "," << y << "," << c;
            EXPECT_EQ(image.at(x, y, 3), 1.0f);
        }
}

TEST(IoHdrImage, PngIsSrgbDecodedWithOpaqueAlpha) {
    TempDir dir;
    Image image(3, 2, 3);
    for (size_t i = 0; i < image.pixels.size(); ++i)
        image.pixels[i] = srgb_to_linear(float(13 * i) / 255.0f);
    write_png(dir / "sky.png", image);
    const Image back = read_hdr_image(dir / "sky.png", kMaxSide);
    ASSERT_EQ(back.channels, 4);
    ASSERT_EQ(back.width, 3);
    for (int y = 0; y < 2; ++y)
        for (int x = 0; x < 3; ++x) {
            for (int c = 0; c < 3; ++c)
                EXPECT_FLOAT_EQ(back.at(x, y, c), image.at(x, y, c));
            EXPECT_EQ(back.at(x, y, 3), 1.0f);
        }
}

// Small negatives (a lossy compression's noise: Blender's maps go down to -0.004) become 0; a negative below
// -max(0.01, 1e-3 of the largest value) is not noise and is refused, as NaN and infinity are.
TEST(IoHdrImage, SmallNegativesBecomeZeroAndOtherBadValuesAreRefused) {
    TempDir dir;
    write_exr(dir / "negative.exr", {.w = 2, .h = 2, .type = Imf::FLOAT, .value = [](int x, int, int) {
                                         return x == 0 ? -0.004f : 20.0f;
                                     }});
    const Image image = read_hdr_image(dir / "negative.exr", kMaxSide);
    EXPECT_EQ(image.at(0, 1, 0), 0.0f);
    EXPECT_EQ(image.at(1, 1, 0), 20.0f);
    write_exr(dir / "below.exr", {.w = 2, .h = 2, .type = Imf::FLOAT, .value = [](int x, int y, int c) {
                                      return x == 1 && y == 0 && c == 0 ? -5.0f : 1.0f;
                                  }});
    const std::string below = error_of([&] { read_hdr_image(dir / "below.exr", kMaxSide); });
    EXPECT_TRUE(starts_with(below, (dir / "below.exr").string() + ": texel (1, 0) channel R is -5; radiance cannot be "
                                                                   "negative")) << below;
    write_exr(dir / "nan.exr",
              {.w = 3, .h = 2, .type = Imf::FLOAT, .value = [](int x, int y, int c) {
                   return x == 2 && y == 1 && c == 1 ? std::numeric_limits<float>::quiet_NaN() : 1.0f;
               }});
    const std::string nan = error_of([&] { read_hdr_image(dir / "nan.exr", kMaxSide); });
    EXPECT_TRUE(starts_with(nan, (dir / "nan.exr").string() + ": texel (2, 1) channel G is nan")) << nan;
    write_exr(dir / "inf.exr",
              {.w = 1, .h = 1, .alpha = false, .value = [](int, int, int) { return 1.0e5f; }});
    const std::string inf = error_of([&] { read_hdr_image(dir / "inf.exr", kMaxSide); });
    EXPECT_TRUE(starts_with(inf, (dir / "inf.exr").string() + ": texel (0, 0) channel R is inf")) << inf;
}

TEST(IoHdrImage, SidesOverTheLimitAreRefusedFromTheHeader) {
    TempDir dir;
    write_exr(dir / "wide.exr", {.w = 8, .h = 4});
    EXPECT_EQ(error_of([&] { read_hdr_image(dir / "wide.exr", 4); }),
              (dir / "wide.exr").string() + " is 8x4, larger than 4 per side");
    // A header that claims 100000 x 100000 pixels is refused before anything of that size is allocated.
    std::string bytes = read_file(dir / "wide.exr");
    const std::string key = std::string("dataWindow") + '\0' + "box2i" + '\0';
    const size_t at = bytes.find(key);
    ASSERT_NE(at, std::string::npos);
    const int32_t box[4] = {0, 0, 99999, 99999};
    std::memcpy(&bytes[at + key.size() + 4], box, sizeof box); // after the attribute's 4-byte size
    write_file_atomic(dir / "huge.exr", bytes);
    const std::string huge = error_of([&] { read_hdr_image(dir / "huge.exr", kMaxSide); });
    EXPECT_TRUE(starts_with(huge, (dir / "huge.exr").string())) << huge;
    EXPECT_NE(huge.find("100000x100000, larger than 8192 per side"), std::string::npos) << huge;
    Image big(9, 2, 3, 0.5f);
    write_png(dir / "big.png", big);
    EXPECT_EQ(error_of([&] { read_hdr_image(dir / "big.png", 8); }),
              (dir / "big.png").string() + " is 9x2, larger than 8 per side");
}

// An attribute that claims more bytes than the file holds is refused before OpenEXR allocates them: a
// 388-byte file whose attribute claimed 1.7 GB made OpenEXR reserve that much (tools/fuzz/fuzz_image's
// findings; their inputs are in tools/fuzz/corpus/image/). The file's own sizes still read.
TEST(IoHdrImage, AttributesLargerThanTheFileAreRefused) {
    TempDir dir;
    write_exr(dir / "small.exr", {.w = 4, .h = 2});
    EXPECT_EQ(read_hdr_image(dir / "small.exr", kMaxSide).width, 4);
    std::string bytes = read_file(dir / "small.exr");
    const std::string key = std::string("screenWindowWidth") + '\0' + "float" + '\0';
    const size_t at = bytes.find(key);
    ASSERT_NE(at, std::string::npos);
    const size_t left = bytes.size() - (at + key.size() + 4);
    for (const uint32_t size : {0x68000004u, 0x80000000u, uint32_t(left + 1)}) {
        std::memcpy(&bytes[at + key.size()], &size, 4);   // little-endian, as the file
        write_file_atomic(dir / "claims.exr", bytes);
        EXPECT_EQ(error_of([&] { read_hdr_image(dir / "claims.exr", kMaxSide); }),
                  (dir / "claims.exr").string() + ": cannot read the OpenEXR file: attribute \"screenWindowWidth\" "
                  "claims " + std::to_string(size) + " bytes; the file has " + std::to_string(left) + " left");
    }
    // A known type's size must be its content's: OpenEXR parses those by content, and a float that claimed
    // 5 bytes would leave it reading the next attribute from the wrong place.
    const uint32_t five = 5;
    std::memcpy(&bytes[at + key.size()], &five, 4);
    write_file_atomic(dir / "claims.exr", bytes);
    EXPECT_EQ(error_of([&] { read_hdr_image(dir / "claims.exr", kMaxSide); }),
              (dir / "claims.exr").string() + ": cannot read the OpenEXR file: attribute \"screenWindowWidth\" of "
              "type float does not hold the 5 bytes it claims");
    // fuzz_image's two inputs (a byte that picks the decoder, then the file): refused by name, at once.
    for (const char* name : {"attribute_size.exr", "attribute_parse.exr"}) {
        const std::string input = read_file(fs::path(ADJOINT_SOURCE_DIR) / "tools/fuzz/corpus/image" / name);
        write_file_atomic(dir / name, input.substr(1));
        const std::string e = error_of([&] { read_hdr_image(dir / name, kMaxSide); });
        EXPECT_TRUE(starts_with(e, (dir / name).string() + ": cannot read the OpenEXR file: attribute \"")) << e;
    }
}

TEST(IoHdrImage, BadFilesAreNamed) {
    TempDir dir;
    const auto error_starts = [&](const std::string& name, const std::string& prefix) {
        const std::string e = error_of([&] { read_hdr_image(dir / name, kMaxSide); });
        EXPECT_TRUE(starts_with(e, prefix)) << e;
    };
    const std::string missing = error_of([&] { read_hdr_image(dir / "none.exr", kMaxSide); });
    EXPECT_NE(missing.find((dir / "none.exr").string() + ": No such file"), std::string::npos) << missing;
    write_file_atomic(dir / "garbage.exr", "this is not an OpenEXR file at all");
    error_starts("garbage.exr", (dir / "garbage.exr").string() + ": cannot read the OpenEXR file: ");
    write_exr(dir / "whole.exr", {});
    const std::string whole = read_file(dir / "whole.exr");
    for (size_t keep : {size_t(8), size_t(200), whole.size() / 2, whole.size() - 5}) {
        write_file_atomic(dir / "cut.exr", whole.substr(0, keep));
        error_starts("cut.exr", (dir / "cut.exr").string() + ": cannot read the OpenEXR file: ");
    }
    // A run-length encoded scanline with a run of 0.
    const char garbage[] = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 4 +X 8\n\x02\x02\x00\x08\x00\x00\x00\x00";
    write_file_atomic(dir / "garbage.hdr", std::string(garbage, sizeof(garbage) - 1));
    error_starts("garbage.hdr", (dir / "garbage.hdr").string() + ": cannot decode the Radiance file: ");
    // Cut short, run-length encoded (32 wide) or flat (4 wide): stb read the missing pixels as zeros.
    for (const int width : {32, 4}) {
        std::vector<float> rgb(size_t(width) * 16 * 3);
        for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = 0.25f + float(i % 7);
        ASSERT_TRUE(stbi_write_hdr((dir / "sky.hdr").c_str(), width, 16, 3, rgb.data()));
        const std::string all = read_file(dir / "sky.hdr");
        EXPECT_EQ(read_hdr_image(dir / "sky.hdr", kMaxSide).width, width);
        const size_t pixels = all.find('\n', all.find("+X")) + 1;
        for (const size_t keep : {pixels + 6, (pixels + all.size()) / 2, all.size() - 1}) {
            SCOPED_TRACE("width " + std::to_string(width) + ", " + std::to_string(keep) + " of " +
                         std::to_string(all.size()) + " bytes");
            write_file_atomic(dir / "cut.hdr", all.substr(0, keep));
            error_starts("cut.hdr", (dir / "cut.hdr").string() +
                                        ": the Radiance file is cut short (its pixels end before its last scanline)");
        }
        write_file_atomic(dir / "cut.hdr", all.substr(0, pixels - 8));
        error_starts("cut.hdr", (dir / "cut.hdr").string() + ": the Radiance file is cut short (in its header)");
        if (width == 32) {
            // A run-length encoded scanline, then one pixel that is not: stb decodes all pixels flat from there.
            std::string two = all.substr(0, all.find('\n', all.find("+X")) + 1);
            two.replace(two.find("-Y 16"), 5, "-Y 2");
            ASSERT_TRUE(stbi_write_hdr((dir / "one.hdr").c_str(), 32, 1, 3, rgb.data()));
            const std::string one = read_file(dir / "one.hdr");
            const size_t one_pixels = one.find('\n', one.find("+X")) + 1;
            two += one.substr(one_pixels) + std::string("\x80\x80\x80\x81", 4);
            write_file_atomic(dir / "cut.hdr", two);
            error_starts("cut.hdr", (dir / "cut.hdr").string() +
                                        ": the Radiance file is cut short (its pixels end before its last scanline)");
        }
    }
    // A layout other than the standard one (here flipped vertically): stb said "unknown image type".
    write_file_atomic(dir / "flipped.hdr",
                      "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n+Y 1 +X 2\n\x80\x80\x80\x81\x80\x80\x80\x81");
    error_starts("flipped.hdr", (dir / "flipped.hdr").string() + ": the Radiance file is laid out \"+Y 1 +X 2\"; "
                                                                 "Adjoint reads the standard layout \"-Y height +X "
                                                                 "width\"");
    write_png(dir / "ldr.png", Image(2, 1, 3, 0.5f));
    write_file_atomic(dir / "ldr.hdr", read_file(dir / "ldr.png"));
    error_starts("ldr.hdr", (dir / "ldr.hdr").string() + ": not a Radiance .hdr file");
    write_file_atomic(dir / "garbage.png", "not a png");
    error_starts("garbage.png", (dir / "garbage.png").string() + ": cannot decode the image: ");
    write_file_atomic(dir / "sky.tga", "x");
    error_starts("sky.tga", (dir / "sky.tga").string() + ": unsupported image extension \".tga\"");
    std::filesystem::create_directories(dir / "sky.exr");
    error_starts("sky.exr", (dir / "sky.exr").string() + ": is a folder, not an image file");
    write_exr(dir / "layers.exr", {.w = 2, .h = 2, .layer = "diffuse."});
    error_starts("layers.exr", (dir / "layers.exr").string() +
                                   ": the OpenEXR file has no R, G, B or Y channel (it has "
                                   "diffuse.A, diffuse.B, diffuse.G, diffuse.R)");
}
