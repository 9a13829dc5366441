// Reading files and decoding images (stb_image) into linear RGBA for the scene loader.
#include "scene/loading.h"
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <stb_image.h>

namespace adjoint::app::detail {

std::optional<std::string> try_read_file(const std::filesystem::path& path, const std::string& shown,
                                         std::string& reason) {
    errno = 0;
    std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file) {
        reason = "cannot read " + shown + ": " + std::strerror(errno);
        return std::nullopt;
    }
    std::string text;
    char buffer[1 << 16];
    size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) text.append(buffer, n);
    // fopen succeeds on a folder; the read then fails (EISDIR).
    if (std::ferror(file.get())) {
        reason = "cannot read " + shown + ": " + std::strerror(errno);
        return std::nullopt;
    }
    return text;
}

std::string read_file(const std::filesystem::path& path, const std::string& shown, const JsonValue& where) {
    std::string reason;
    std::optional<std::string> text = try_read_file(path, shown, reason);
    if (!text) where.fail(reason);
    return std::move(*text);
}

float srgb_to_linear(float c) {
    return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f);
}

LinearImage load_image(const std::filesystem::path& path, const std::string& shown, const JsonValue& where) {
    const std::string bytes = read_file(path, shown, where);
    const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
    const int size = static_cast<int>(bytes.size());
    int width = 0, height = 0, channels = 0;
    if (!stbi_info_from_memory(data, size, &width, &height, &channels))
        where.fail("cannot decode " + shown + ": " + stbi_failure_reason());
    if (width > static_cast<int>(max_resolution) || height > static_cast<int>(max_resolution)) {
        std::ostringstream os;
        os << shown << " is " << width << "x" << height << ", larger than " << max_resolution << " per side";
        where.fail(os.str());
    }
    // Decode to 4 channels; grey and grey+alpha expand to RGB(A).
    const bool wide = stbi_is_16_bit_from_memory(data, size) != 0;
    void* pixels = wide ? static_cast<void*>(stbi_load_16_from_memory(data, size, &width, &height, &channels, 4))
                        : static_cast<void*>(stbi_load_from_memory(data, size, &width, &height, &channels, 4));
    if (!pixels) where.fail("cannot decode " + shown + ": " + stbi_failure_reason());
    std::unique_ptr<void, void (*)(void*)> owner(pixels, &stbi_image_free);

    LinearImage image;
    image.width = static_cast<uint32_t>(width);
    image.height = static_cast<uint32_t>(height);
    image.source = shown;
    image.texels.resize(static_cast<size_t>(width) * height);
    // 8-bit values go through a table: 256 pow() calls instead of one per texel.
    float table[256];
    for (int i = 0; i < 256; ++i) table[i] = srgb_to_linear(static_cast<float>(i) / 255.0f);
    for (size_t t = 0; t < image.texels.size(); ++t) {
        float4& out = image.texels[t];
        if (wide) {
            const uint16_t* p = static_cast<const uint16_t*>(pixels) + 4 * t;
            for (int c = 0; c < 3; ++c) out[c] = srgb_to_linear(static_cast<float>(p[c]) / 65535.0f);
            out.w = static_cast<float>(p[3]) / 65535.0f;
        } else {
            const stbi_uc* p = static_cast<const stbi_uc*>(pixels) + 4 * t;
            for (int c = 0; c < 3; ++c) out[c] = table[p[c]];
            out.w = static_cast<float>(p[3]) / 255.0f;
        }
    }
    return image;
}

} // namespace adjoint::app::detail
