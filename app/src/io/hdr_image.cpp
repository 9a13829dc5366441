// High-dynamic-range images from files: OpenEXR (libopenexr), Radiance .hdr and PNG/JPEG (stb_image).
#include "io/hdr_image.h"

#include <adjoint/app/atomic_file.h>
#include <adjoint/core/error.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stb_image.h>
#include <string>
#include <vector>

#include <Iex.h>
#include <ImfChannelList.h>
#include <ImfFrameBuffer.h>
#include <ImfHeader.h>
#include <ImfIO.h>
#include <ImfInputFile.h>
#include <ImfRgbaFile.h>
#include <ImfVersion.h>

namespace adjoint::app {
namespace {

// The file is read whole with read_file, so that a missing or unreadable file gives the same message as
// every other input, and OpenEXR then reads from memory.
class MemoryStream : public Imf::IStream {
public:
    MemoryStream(const std::string& bytes, const std::string& shown)
        : Imf::IStream(shown.c_str()), bytes_(bytes) {}
    bool read(char c[], int n) override {
        if (n < 0 || uint64_t(n) > bytes_.size() - position_)
            throw Iex::InputExc("unexpected end of file");
        std::memcpy(c, bytes_.data() + position_, size_t(n));
        position_ += uint64_t(n);
        return position_ < bytes_.size();
    }
    uint64_t tellg() override { return position_; }
    void seekg(uint64_t position) override {
        if (position > bytes_.size())
            throw Iex::InputExc("seek past the end of the file");
        position_ = position;
    }

private:
    const std::string& bytes_;
    uint64_t position_ = 0;
};

// Before any allocation of pixels: a corrupt or hostile header must not make us reserve gigabytes.
void check_size(int64_t width, int64_t height, uint32_t max_side, const std::string& shown) {
    if (width <= 0 || height <= 0)
        fail(shown, ": the image is empty (", width, "x", height, ")");
    if (width > int64_t(max_side) || height > int64_t(max_side))
        fail(shown, " is ", width, "x", height, ", larger than ", max_side, " per side");
}

// R, G, B, A as float slices over the data window; channels the file lacks take the fill values.
Image read_exr_rgba_channels(Imf::InputFile& file) {
    const Imath::Box2i window = file.header().dataWindow();
    Image image(window.max.x - window.min.x + 1, window.max.y - window.min.y + 1, 4);
    Imf::FrameBuffer frame;
    const char* names[4] = {"R", "G", "B", "A"};
    for (int c = 0; c < 4; ++c)
        frame.insert(names[c],
                     Imf::Slice::Make(Imf::FLOAT, image.pixels.data() + c, window, 4 * sizeof(float),
                                      4 * sizeof(float) * size_t(image.width), 1, 1, c == 3 ? 1.0 : 0.0));
    file.setFrameBuffer(frame);
    file.readPixels(window.min.y, window.max.y);
    return image;
}

// Luminance(-chroma) files: only the RGBA interface turns Y, RY, BY into RGB. It works in half, which is
// what such files store.
Image read_exr_luminance(const std::string& bytes, const std::string& shown) {
    MemoryStream stream(bytes, shown);
    Imf::RgbaInputFile file(stream);
    const Imath::Box2i window = file.dataWindow();
    const int width = window.max.x - window.min.x + 1, height = window.max.y - window.min.y + 1;
    std::vector<Imf::Rgba> rgba(size_t(width) * size_t(height));
    // OpenEXR's idiom: the frame buffer's base is where the data window's origin (0, 0) would lie.
    file.setFrameBuffer(rgba.data() - window.min.x - ptrdiff_t(window.min.y) * width, 1, size_t(width));
    file.readPixels(window.min.y, window.max.y);
    Image image(width, height, 4);
    for (size_t t = 0; t < rgba.size(); ++t) {
        image.pixels[4 * t + 0] = float(rgba[t].r);
        image.pixels[4 * t + 1] = float(rgba[t].g);
        image.pixels[4 * t + 2] = float(rgba[t].b);
        image.pixels[4 * t + 3] = float(rgba[t].a);
    }
    return image;
}

// The bytes OpenEXR 3.1 reads for an attribute's value: it parses a known type by its content, not by the
// size the file declares (so the two must agree, or it goes on reading from elsewhere), and reads an unknown
// type's declared size into a buffer it allocates first. Unknown types: the declared size.
uint64_t exr_value_size(const std::string& type, const std::string& bytes, size_t pos, uint32_t declared) {
    static const std::pair<const char*, uint32_t> fixed[] = {
        {"box2i", 16}, {"box2f", 16}, {"chromaticities", 32}, {"compression", 1}, {"deepImageState", 1},
        {"double", 8}, {"envmap", 1}, {"float", 4}, {"int", 4}, {"keycode", 28}, {"lineOrder", 1}, {"m33f", 36},
        {"m33d", 72}, {"m44f", 64}, {"m44d", 128}, {"rational", 8}, {"tiledesc", 9}, {"timecode", 8},
        {"v2i", 8}, {"v2f", 8}, {"v2d", 16}, {"v3i", 12}, {"v3f", 12}, {"v3d", 24}};
    for (const auto& [name, size] : fixed)
        if (type == name) return size;
    const auto u32 = [&](size_t at) {
        uint32_t v = 0;
        for (int i = 3; i >= 0 && at + 4 <= bytes.size(); --i) v = (v << 8) | uint8_t(bytes[at + size_t(i)]);
        return v;
    };
    if (type == "preview")   // width, height, then 4 bytes a pixel (OpenEXR allocates them first)
        return declared < 8 ? 8 : 8 + 4 * uint64_t(u32(pos)) * uint64_t(u32(pos + 4));
    if (type == "chlist") {   // name, 16 bytes, ... up to an empty name
        size_t at = pos;
        while (at < bytes.size() && bytes[at] != '\0') {
            const size_t end = bytes.find('\0', at);
            if (end == std::string::npos) return uint64_t(bytes.size()) + 1;
            at = end + 1 + 16;
        }
        return at + 1 - pos;
    }
    return declared;
}

// OpenEXR allocates an attribute's size before it reads the value: a 388-byte file whose attribute claimed
// 1.7 GB made it reserve that much (found by tools/fuzz/fuzz_image). Every header's attributes (name, type,
// int32 size, value) must be as large as the file says and fit in it; a multi-part file's list of headers
// ends with an empty one.
void check_exr_attribute_sizes(const std::string& bytes, int version, const std::string& shown) {
    size_t pos = 8;
    const auto damaged = [&](const std::string& why) { fail(shown, ": cannot read the OpenEXR file: ", why); };
    const auto string = [&] {
        const size_t end = bytes.find('\0', pos);
        if (end == std::string::npos) damaged("the header ends inside an attribute");
        std::string s = bytes.substr(pos, end - pos);
        pos = end + 1;
        return s;
    };
    for (bool empty = false; !empty;) {
        empty = true;
        while (true) {
            if (pos >= bytes.size()) damaged("the header is truncated");
            if (bytes[pos] == '\0') break;
            empty = false;
            const std::string name = string(), type = string();
            if (bytes.size() - pos < 4) damaged("the header is truncated");
            uint32_t size = 0;
            for (int i = 3; i >= 0; --i) size = (size << 8) | uint8_t(bytes[pos + size_t(i)]);
            pos += 4;
            if (size > bytes.size() - pos)
                damaged("attribute \"" + name + "\" claims " + std::to_string(size) + " bytes; the file has " +
                        std::to_string(bytes.size() - pos) + " left");
            if (exr_value_size(type, bytes, pos, size) != size)
                damaged("attribute \"" + name + "\" of type " + type + " does not hold the " + std::to_string(size) +
                        " bytes it claims");
            pos += size;
        }
        ++pos;
        if (!Imf::isMultiPart(version)) return;
    }
}

// The first part's header alone: OpenEXR's file classes size tables from the data window as they open,
// so a damaged window must be refused before them.
Imath::Box2i exr_data_window(const std::string& bytes, const std::string& shown) {
    if (bytes.size() < 8 || !Imf::isImfMagic(bytes.data()))
        throw Iex::InputExc("no OpenEXR magic number");
    int version = 0;
    for (int i = 3; i >= 0; --i)
        version = (version << 8) | int(uint8_t(bytes[size_t(4 + i)])); // little-endian
    if (Imf::getVersion(version) != Imf::EXR_VERSION || !Imf::supportsFlags(Imf::getFlags(version)))
        throw Iex::InputExc("unsupported OpenEXR version field " + std::to_string(version));
    check_exr_attribute_sizes(bytes, version, shown);
    MemoryStream stream(bytes, shown);
    stream.seekg(8);
    Imf::Header header;
    header.readFrom(stream, version);
    return header.dataWindow();
}

Image read_exr(const std::string& bytes, const std::string& shown, uint32_t max_side) {
    try {
        const Imath::Box2i window = exr_data_window(bytes, shown);
        check_size(int64_t(window.max.x) - window.min.x + 1, int64_t(window.max.y) - window.min.y + 1,
                   max_side, shown);
        MemoryStream stream(bytes, shown);
        Imf::InputFile file(stream);
        const Imf::ChannelList& channels = file.header().channels();
        if (channels.findChannel("R") || channels.findChannel("G") || channels.findChannel("B"))
            return read_exr_rgba_channels(file);
        if (channels.findChannel("Y"))
            return read_exr_luminance(bytes, shown);
        std::string names;
        for (auto c = channels.begin(); c != channels.end(); ++c)
            names += std::string(names.empty() ? "" : ", ") + c.name();
        fail(shown, ": the OpenEXR file has no R, G, B or Y channel (it has ", names.empty() ? "none" : names,
             ")");
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {
        // Iex exceptions (and bad_alloc from a corrupt header) carry OpenEXR's reason; the file's name leads.
        fail(shown, ": cannot read the OpenEXR file: ", e.what());
    }
}

// What is wrong with a Radiance file's pixels, or "": stb_image reads past the end as zeros (a file cut short
// rendered black, or kept its first rows, with no word), and Debian's loops for ever on a run of length 0. So the data
// is walked as stb reads it first: an image 8 to 32767 wide whose first scanline starts 2 2 and its width is run-length
// encoded, each scanline four channels of runs (a byte over 128: a run of that less 128 of the next byte; else that
// many bytes); any other, 4 bytes a pixel.
std::string radiance_problem(const std::string& bytes, int w, int h) {
    const std::string cut = "the Radiance file is cut short (its pixels end before its last scanline)";
    size_t at = bytes.find("\n\n");
    if (at != std::string::npos) at = bytes.find('\n', at + 2);   // the end of the resolution line
    if (at == std::string::npos) return cut;
    ++at;
    const auto byte = [&](size_t i) { return uint8_t(bytes[i]); };
    const auto scanline_rle = [&] {
        return bytes.size() - at >= 4 && byte(at) == 2 && byte(at + 1) == 2 && (byte(at + 2) & 0x80) == 0;
    };
    // Flat pixels from `at` on: stb reads all w * h of them (from a later scanline too: all over again less one).
    const auto flat = [&]() -> std::string { return bytes.size() - at < size_t(w) * size_t(h) * 4 ? cut : ""; };
    if (w < 8 || w >= 32768) return flat();   // too narrow or too wide for run-length encoding
    for (int y = 0; y < h; ++y) {
        if (!scanline_rle()) return flat();
        if ((byte(at + 2) << 8 | byte(at + 3)) != w) return "";         // stb: invalid decoded scanline length
        at += 4;
        for (int channel = 0; channel < 4; ++channel)
            for (int x = 0; x < w;) {
                if (at >= bytes.size()) return cut;
                const int count = byte(at++), run = count > 128 ? count - 128 : count;
                if (run == 0 || run > w - x)
                    return "cannot decode the Radiance file: bad RLE data (scanline " + std::to_string(y) + ")";
                const size_t data = count > 128 ? 1 : size_t(count);
                if (bytes.size() - at < data) return cut;
                at += data;
                x += run;
            }
    }
    return "";
}

Image read_radiance(const std::string& bytes, const std::string& shown, uint32_t max_side) {
    const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
    const int len = int(bytes.size());
    // stbi_loadf would gamma-decode an 8-bit file given the wrong extension: radiance only from RGBE data.
    if (!stbi_is_hdr_from_memory(data, len))
        fail(shown, ": not a Radiance .hdr file (no #?RADIANCE or #?RGBE header)");
    int w = 0, h = 0, n = 0;
    if (!stbi_info_from_memory(data, len, &w, &h, &n)) {
        // The resolution line follows the header's blank line; stb reads only the standard "-Y H +X W" and calls
        // any other layout (a flipped or rotated picture) an "unknown image type".
        const size_t blank = bytes.find("\n\n");
        if (blank == std::string::npos || bytes.find('\n', blank + 2) == std::string::npos)
            fail(shown, ": the Radiance file is cut short (in its header)");
        const std::string layout =
            blank == std::string::npos ? "" : bytes.substr(blank + 2, bytes.find('\n', blank + 2) - blank - 2);
        const bool shown_as_is = std::all_of(layout.begin(), layout.end(), [](char c) { return c >= ' ' && c < 127; });
        if (!layout.empty() && layout.size() < 40 && shown_as_is && layout.rfind("-Y ", 0) != 0)
            fail(shown, ": the Radiance file is laid out \"", layout,
                 "\"; Adjoint reads the standard layout \"-Y height +X width\"");
        // stb's info fails on some files cut short (4 wide, a quarter of its pixels): said as for the others.
        int lw = 0, lh = 0;
        char after = 0;
        if (std::sscanf(layout.c_str(), "-Y %d +X %d%c", &lh, &lw, &after) == 2) {
            check_size(lw, lh, max_side, shown);
            if (const std::string why = radiance_problem(bytes, lw, lh); !why.empty()) fail(shown, ": ", why);
        }
        fail(shown, ": cannot decode the Radiance file: ",
             stbi_failure_reason() ? stbi_failure_reason() : "unknown error");
    }
    check_size(w, h, max_side, shown);
    if (const std::string why = radiance_problem(bytes, w, h); !why.empty()) fail(shown, ": ", why);
    float* raw = stbi_loadf_from_memory(data, len, &w, &h, &n, 4); // 4: stb fills alpha with 1
    if (!raw)
        fail(shown, ": cannot decode the Radiance file: ",
             stbi_failure_reason() ? stbi_failure_reason() : "unknown error");
    Image image(w, h, 4);
    std::copy(raw, raw + image.pixels.size(), image.pixels.begin());
    stbi_image_free(raw);
    return image;
}

Image read_srgb(const std::string& bytes, const std::string& shown, uint32_t max_side) {
    int w = 0, h = 0, n = 0;
    check_png_or_jpeg(bytes, shown, w, h, n);
    check_size(w, h, max_side, shown);
    const Image decoded = decode_image_linear(bytes, shown);
    if (decoded.channels == 4)
        return decoded;
    Image image(decoded.width, decoded.height, 4, 1.0f);
    const size_t texels = size_t(decoded.width) * size_t(decoded.height);
    for (size_t t = 0; t < texels; ++t)
        std::copy_n(decoded.pixels.data() + 3 * t, 3, image.pixels.data() + 4 * t);
    return image;
}

// The decision on values the file should not hold (see the header).
void sanitize(Image& image, const std::string& shown) {
    float largest = 0;
    for (float v : image.pixels) largest = std::max(largest, v);   // NaN compares false: not taken
    const float noise = -std::max(0.01f, 1e-3f * largest);
    for (size_t i = 0; i < image.pixels.size(); ++i) {
        float& v = image.pixels[i];
        if (!std::isfinite(v) || v < noise) {
            const size_t texel = i / 4;
            fail(shown, ": texel (", texel % size_t(image.width), ", ", texel / size_t(image.width),
                 ") channel ", "RGBA"[i % 4], " is ", v,
                 std::isfinite(v) ? "; radiance cannot be negative (beyond a lossy compression's noise)"
                                  : "; radiance must be finite");
        }
        v = std::max(v, 0.0f);
    }
}

} // namespace

Image read_hdr_image(const std::filesystem::path& path, uint32_t max_side) {
    const std::string shown = path.string();
    const std::string ext = lowercase_extension(path);
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) fail(shown, ": is a folder, not an image file");
    const bool srgb = ext == ".png" || ext == ".jpg" || ext == ".jpeg";
    if (ext != ".exr" && ext != ".hdr" && !srgb)
        fail(shown, ": unsupported image extension \"", ext, "\" (expected .exr, .hdr, .png, .jpg or .jpeg)");
    const std::string bytes = read_file(path);
    if (bytes.size() > size_t(std::numeric_limits<int>::max()))
        fail(shown, ": the image file is too large");
    Image image = ext == ".exr"   ? read_exr(bytes, shown, max_side)
                  : ext == ".hdr" ? read_radiance(bytes, shown, max_side)
                                  : read_srgb(bytes, shown, max_side);
    sanitize(image, shown);
    return image;
}

} // namespace adjoint::app
