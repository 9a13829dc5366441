// Images on the host: a plain linear-float RGB(A) image, sRGB PNG encoding/decoding, PSNR and |a - b|.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace adjoint::app {

// Linear-light floats, row-major, top row first, channels interleaved (3 = RGB, 4 = RGBA).
// pixels.size() == width * height * channels.
struct Image {
    int width = 0;
    int height = 0;
    int channels = 3;
    std::vector<float> pixels;

    Image() = default;
    Image(int width, int height, int channels = 3, float fill = 0.0f);
    float& at(int x, int y, int c) { return pixels[(size_t(y) * size_t(width) + size_t(x)) * size_t(channels) + size_t(c)]; }
    float at(int x, int y, int c) const { return pixels[(size_t(y) * size_t(width) + size_t(x)) * size_t(channels) + size_t(c)]; }
};

// The sRGB transfer functions (IEC 61966-2-1), on [0, 1].
float srgb_to_linear(float srgb);
float linear_to_srgb(float linear);
// One linear value as an 8-bit sRGB code: clamped to [0, 1] (NaN as 0), encoded, rounded to nearest.
uint8_t linear_to_srgb8(float linear);

// An 8-bit PNG of the image: colour channels sRGB-encoded by linear_to_srgb8 (or, not `srgb`, stored as alpha
// is: data such as normals), alpha (if any) stored linearly with the same clamping and rounding. Throws
// adjoint::Error for an empty or inconsistent image.
std::string encode_png_srgb(const Image& image, bool srgb = true);
// encode_png_srgb written atomically (write_file_atomic).
void write_png(const std::filesystem::path& path, const Image& image, bool srgb = true);
// A 16-bit PNG of the image's values as they are (no sRGB: data such as normals), each clamped to [0, 1] and
// rounded to the nearest of 65,536 levels (an 8-bit PNG's 256 put a normal texture up to 7/255 off in a render),
// written atomically. Channels 1 to 4: grey, grey-alpha, RGB, RGBA.
std::string encode_png16(const Image& image);
void write_png16(const std::filesystem::path& path, const Image& image);
// A Radiance .hdr file (RGBE: 8-bit mantissas with a shared exponent, about 1% precision) of linear values
// (1 or 3 channels; negatives written as 0), atomically.
void write_hdr(const std::filesystem::path& path, const Image& image);

// The image format a file's first bytes name: "PNG", "JPEG", "BMP", "GIF", "PNM", "Radiance HDR", "OpenEXR",
// "PSD", "PIC", "TGA" (stb_image reads it and it has no signature), or "" when none.
std::string image_format_of(std::string_view bytes);

// Decodes a PNG or JPEG (8 or 16 bits) to linear floats: grey becomes RGB, colour channels are
// sRGB-decoded, alpha is kept linear. The result has 3 channels, or 4 when the file has alpha.
// adjoint::Error naming `what` (the file) when the data cannot be decoded: another format (named:
// "<what>: cannot decode the image: it is a BMP file; images must be PNG or JPEG"), or a damaged PNG or
// JPEG ("<what>: cannot decode the PNG image: the file is damaged (<stb_image's reason>)").
Image decode_image_linear(const std::string& bytes, const std::string& what);
// The check decode_image_linear starts with: the bytes are a PNG or JPEG whose header stb_image reads,
// else that Error; the image's size and channel count are returned in the last three arguments.
void check_png_or_jpeg(const std::string& bytes, const std::string& what, int& width, int& height, int& channels);
Image read_png_linear(const std::filesystem::path& path);

// PSNR in dB over the colour channels (RGB; alpha ignored) of two images of the same size: values
// clamped to [0, 1], peak 1, i.e. -10 log10(mean squared difference). +infinity for identical images.
// Throws adjoint::Error when the sizes differ.
double psnr(const Image& a, const Image& b);
// Per-pixel |a - b| over the colour channels (an RGB image; alpha ignored); sizes must match.
Image abs_diff(const Image& a, const Image& b);

} // namespace adjoint::app
