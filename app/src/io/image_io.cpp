// Host images: sRGB PNG encoding/decoding through stb (Debian's libstb), PSNR and absolute difference.
#include <adjoint/app/atomic_file.h>
#include <adjoint/app/image_io.h>
#include <adjoint/core/error.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stb_image.h>
#include <stb_image_write.h>

// stb_image_write's zlib writer (Debian's libstb exports it; its header declares it only with the implementation).
extern "C" unsigned char* stbi_zlib_compress(unsigned char* data, int data_len, int* out_len, int quality);

namespace adjoint::app {
namespace {

void check_image(const Image& image, const char* what) {
    if (image.width <= 0 || image.height <= 0) fail(what, ": the image is empty (", image.width, "x", image.height, ")");
    if (image.channels < 1 || image.channels > 4) fail(what, ": an image has 1 to 4 channels, not ", image.channels);
    if (image.pixels.size() != size_t(image.width) * size_t(image.height) * size_t(image.channels))
        fail(what, ": the image holds ", image.pixels.size(), " values, not ", image.width, "x", image.height, "x",
             image.channels);
}

// Grey+alpha and RGBA carry alpha in their last channel; it is never sRGB-encoded.
int colour_channels(int channels) { return channels == 2 || channels == 4 ? channels - 1 : channels; }

void check_same_size(const Image& a, const Image& b, const char* what) {
    check_image(a, what);
    check_image(b, what);
    if (a.width != b.width || a.height != b.height || colour_channels(a.channels) != colour_channels(b.channels))
        fail(what, ": images differ in size (", a.width, "x", a.height, "x", a.channels, " and ", b.width, "x", b.height,
             "x", b.channels, ")");
}

// Why stb_image could not decode a PNG or JPEG, in words. Its reason is the last error it recorded: possibly
// from a format it tried first ("no SOI" is JPEG's, left behind for a damaged PNG), empty, or built from a
// damaged chunk's type bytes (cut at a zero byte, or not text at all). Only a plain reason is passed on.
std::string damage_reason(const char* stb_reason) {
    const std::string r = stb_reason ? stb_reason : "";
    static const std::string foreign[] = {"no SOI", "unknown image type", "not GIF", "not BMP", "not PSD",
                                          "not PNM", "not HDR", "not PIC", "not TGA"};
    const std::string chunk = "PNG chunk not known";
    const bool text = std::all_of(r.begin(), r.end(), [](char c) { return c >= ' ' && c <= '~'; });
    const bool words = r.size() >= 5 && std::any_of(r.begin(), r.end(), [](char c) { return c >= 'a' && c <= 'z'; });
    if (r == "outofdata") return "the file is cut short";
    if (r.size() >= chunk.size() && r.compare(r.size() - chunk.size(), chunk.size(), chunk) == 0)
        return "the file is damaged (a chunk of an unknown type)";
    if (!text || !words || std::find(std::begin(foreign), std::end(foreign), r) != std::end(foreign))
        return "the file is damaged or cut short";
    return "the file is damaged (" + r + ")";
}

// PNG's CRC-32 (ISO 3309, the polynomial 0xedb88320 reflected), by a table built once.
uint32_t png_crc(const char* data, size_t size) {
    static const std::array<uint32_t, 256> table = [] {
        std::array<uint32_t, 256> t{};
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < size; ++i) c = table[(c ^ uint8_t(data[i])) & 0xffu] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

// Why a PNG's chunks are broken, or "" when each chunk up to IEND is whole and each critical one (IHDR, PLTE,
// IDAT, IEND: an upper-case first letter) passes its CRC, as libpng requires. stb_image checks neither, so a
// flipped bit among the pixels decoded silently into a wrong image.
std::string png_chunk_damage(std::string_view bytes) {
    const auto u32 = [&](size_t at) {
        uint32_t v = 0;
        for (size_t i = 0; i < 4; ++i) v = v << 8 | uint8_t(bytes[at + i]);
        return v;
    };
    for (size_t pos = 8;;) {
        if (bytes.size() - pos < 12) return "the file is cut short";
        const uint64_t length = u32(pos);
        if (bytes.size() - pos - 12 < length) return "the file is cut short";
        const std::string_view type = bytes.substr(pos + 4, 4);
        const bool critical = (uint8_t(type[0]) & 0x20) == 0;
        if (critical && png_crc(bytes.data() + pos + 4, size_t(length) + 4) != u32(pos + 8 + size_t(length)))
            return "the file is damaged (a chunk fails its CRC check)";
        pos += 12 + size_t(length);
        if (type == "IEND") return "";
    }
}

uint8_t linear_to_8bit(float v) {
    if (!(v > 0.0f)) return 0;  // also NaN
    if (v >= 1.0f) return 255;
    return uint8_t(std::lround(v * 255.0f));
}

} // namespace

Image::Image(int width, int height, int channels, float fill)
    : width(width), height(height), channels(channels),
      pixels(size_t(std::max(width, 0)) * size_t(std::max(height, 0)) * size_t(std::max(channels, 0)), fill) {}

float srgb_to_linear(float s) {
    if (s <= 0.04045f) return s / 12.92f;
    return float(std::pow((double(s) + 0.055) / 1.055, 2.4));
}

float linear_to_srgb(float l) {
    if (l <= 0.0031308f) return l * 12.92f;
    return float(1.055 * std::pow(double(l), 1.0 / 2.4) - 0.055);
}

uint8_t linear_to_srgb8(float linear) {
    if (!(linear > 0.0f)) return 0;  // also NaN
    if (linear >= 1.0f) return 255;
    return uint8_t(std::lround(double(linear_to_srgb(linear)) * 255.0));
}

std::string encode_png_srgb(const Image& image, bool srgb) {
    check_image(image, "encode_png_srgb");
    const int colour = srgb ? colour_channels(image.channels) : 0;
    std::vector<uint8_t> bytes(image.pixels.size());
    for (size_t i = 0; i < bytes.size(); ++i) {
        bool alpha = int(i % size_t(image.channels)) >= colour;
        bytes[i] = alpha ? linear_to_8bit(image.pixels[i]) : linear_to_srgb8(image.pixels[i]);
    }
    std::string out;
    auto sink = [](void* context, void* data, int size) {
        static_cast<std::string*>(context)->append(static_cast<const char*>(data), size_t(size));
    };
    if (!stbi_write_png_to_func(sink, &out, image.width, image.height, image.channels, bytes.data(),
                                image.width * image.channels))
        fail("encode_png_srgb: stb_image_write could not encode a ", image.width, "x", image.height, " image");
    return out;
}

void write_png(const std::filesystem::path& path, const Image& image, bool srgb) {
    write_file_atomic(path, encode_png_srgb(image, srgb));
}

std::string encode_png16(const Image& image) {
    check_image(image, "encode_png16");
    // Rows of big-endian samples, each after its filter byte (0: none); deflated by stb's own zlib writer.
    const size_t row = size_t(image.width) * size_t(image.channels) * 2 + 1;
    if (row * size_t(image.height) > size_t(INT32_MAX))   // stb's zlib writer counts in ints
        fail("encode_png16: a ", image.width, "x", image.height, " image is too large for one 16-bit PNG");
    std::vector<unsigned char> raw(row * size_t(image.height));
    for (int y = 0; y < image.height; ++y) {
        unsigned char* out = raw.data() + row * size_t(y);
        *out++ = 0;
        for (int i = 0; i < image.width * image.channels; ++i) {
            const float v = image.pixels[size_t(y) * size_t(image.width * image.channels) + size_t(i)];
            const uint16_t q = !(v > 0.0f) ? 0 : v >= 1.0f ? 65535 : uint16_t(std::lround(double(v) * 65535.0));
            *out++ = uint8_t(q >> 8);
            *out++ = uint8_t(q & 0xffu);
        }
    }
    int deflated_size = 0;
    unsigned char* deflated = stbi_zlib_compress(raw.data(), int(raw.size()), &deflated_size, 8);
    if (!deflated)
        fail("encode_png16: stb_image_write could not compress a ", image.width, "x", image.height, " image");
    const std::string idat(reinterpret_cast<const char*>(deflated), size_t(deflated_size));
    std::free(deflated);
    std::string out = "\x89PNG\r\n\x1a\n";
    const auto chunk = [&](const char* type, const std::string& data) {
        const auto put32 = [&](uint32_t v) {
            for (int k = 3; k >= 0; --k) out.push_back(char(uint8_t(v >> (8 * k))));
        };
        put32(uint32_t(data.size()));
        const size_t at = out.size();
        out += type;
        out += data;
        put32(png_crc(out.data() + at, data.size() + 4));
    };
    static constexpr uint8_t kColourType[] = {0, 0, 4, 2, 6};   // by channels: grey, grey-alpha, RGB, RGBA
    std::string ihdr;
    for (uint32_t v : {uint32_t(image.width), uint32_t(image.height)})
        for (int k = 3; k >= 0; --k) ihdr.push_back(char(uint8_t(v >> (8 * k))));
    ihdr += std::string{char(16), char(kColourType[image.channels]), 0, 0, 0};
    chunk("IHDR", ihdr);
    chunk("IDAT", idat);
    chunk("IEND", "");
    return out;
}

void write_png16(const std::filesystem::path& path, const Image& image) {
    write_file_atomic(path, encode_png16(image));
}

void write_hdr(const std::filesystem::path& path, const Image& image) {
    check_image(image, "write_hdr");
    std::string out;
    auto sink = [](void* context, void* data, int size) {
        static_cast<std::string*>(context)->append(static_cast<const char*>(data), size_t(size));
    };
    if (!stbi_write_hdr_to_func(sink, &out, image.width, image.height, image.channels, image.pixels.data()))
        fail("write_hdr: stb_image_write could not encode a ", image.width, "x", image.height, " image");
    write_file_atomic(path, out);
}

std::string image_format_of(std::string_view bytes) {
    const auto starts = [&](std::string_view magic) { return bytes.substr(0, magic.size()) == magic; };
    if (starts("\x89PNG\r\n\x1a\n")) return "PNG";
    if (starts("\xff\xd8\xff")) return "JPEG";
    if (starts("GIF87a") || starts("GIF89a")) return "GIF";
    if (starts("BM")) return "BMP";
    if (bytes.size() >= 2 && bytes[0] == 'P' && bytes[1] >= '1' && bytes[1] <= '7') return "PNM";
    if (starts("#?RADIANCE") || starts("#?RGBE")) return "Radiance HDR";
    if (starts("\x76\x2f\x31\x01")) return "OpenEXR";
    if (starts("8BPS")) return "PSD";
    if (starts("\x53\x80\xf6\x34")) return "PIC";
    int w = 0, h = 0, n = 0;
    if (bytes.size() <= size_t(std::numeric_limits<int>::max()) &&
        stbi_info_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()), int(bytes.size()), &w, &h, &n))
        return "TGA";
    return "";
}

void check_png_or_jpeg(const std::string& bytes, const std::string& what, int& w, int& h, int& n) {
    if (bytes.size() > size_t(std::numeric_limits<int>::max())) fail(what, ": the image file is too large");
    const std::string format = image_format_of(bytes);
    if (format.empty()) fail(what, ": cannot decode the image: it is not a PNG or JPEG file");
    if (format != "PNG" && format != "JPEG")
        fail(what, ": cannot decode the image: it is a ", format, " file; images must be PNG or JPEG");
    if (format == "PNG")
        if (const std::string damage = png_chunk_damage(bytes); !damage.empty())
            fail(what, ": cannot decode the PNG image: ", damage);
    if (!stbi_info_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()), int(bytes.size()), &w, &h, &n))
        fail(what, ": cannot decode the ", format, " image: ", damage_reason(stbi_failure_reason()));
}

Image decode_image_linear(const std::string& bytes, const std::string& what) {
    int w = 0, h = 0, n = 0;
    check_png_or_jpeg(bytes, what, w, h, n);
    const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
    const int len = int(bytes.size());
    const int channels = (n == 2 || n == 4) ? 4 : 3;
    const bool sixteen = stbi_is_16_bit_from_memory(data, len);
    void* raw = sixteen ? static_cast<void*>(stbi_load_16_from_memory(data, len, &w, &h, &n, channels))
                        : static_cast<void*>(stbi_load_from_memory(data, len, &w, &h, &n, channels));
    if (!raw) fail(what, ": cannot decode the ", image_format_of(bytes), " image: ", damage_reason(stbi_failure_reason()));
    Image image(w, h, channels);
    const float peak = sixteen ? 65535.0f : 255.0f;
    for (size_t i = 0; i < image.pixels.size(); ++i) {
        float v = sixteen ? float(static_cast<const uint16_t*>(raw)[i]) / peak : float(static_cast<const uint8_t*>(raw)[i]) / peak;
        image.pixels[i] = int(i % size_t(channels)) == 3 ? v : srgb_to_linear(v);
    }
    stbi_image_free(raw);
    return image;
}

Image read_png_linear(const std::filesystem::path& path) {
    return decode_image_linear(read_file(path), path.string());
}

double psnr(const Image& a, const Image& b) {
    check_same_size(a, b, "psnr");
    const int colour = colour_channels(a.channels);
    double sum = 0.0;
    size_t count = 0;
    for (int y = 0; y < a.height; ++y)
        for (int x = 0; x < a.width; ++x)
            for (int c = 0; c < colour; ++c) {
                // NaN propagates: a broken render must not look like a good one.
                double d = std::clamp(double(a.at(x, y, c)), 0.0, 1.0) - std::clamp(double(b.at(x, y, c)), 0.0, 1.0);
                sum += d * d;
                ++count;
            }
    double mse = sum / double(count);
    if (mse == 0.0) return std::numeric_limits<double>::infinity();
    return -10.0 * std::log10(mse);
}

Image abs_diff(const Image& a, const Image& b) {
    check_same_size(a, b, "abs_diff");
    const int colour = colour_channels(a.channels);
    Image out(a.width, a.height, colour);
    for (int y = 0; y < a.height; ++y)
        for (int x = 0; x < a.width; ++x)
            for (int c = 0; c < colour; ++c) out.at(x, y, c) = std::fabs(a.at(x, y, c) - b.at(x, y, c));
    return out;
}

} // namespace adjoint::app
