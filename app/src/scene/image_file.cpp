// Reading files and decoding images (stb_image) into linear RGBA for the scene loader.
#include "scene/loading.h"

#include <adjoint/app/image_io.h>
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

LinearImage load_image(const std::filesystem::path& path, const std::string& shown, const JsonValue& where) {
    const std::string bytes = read_file(path, shown, where);
    const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
    const int size = static_cast<int>(bytes.size());
    int width = 0, height = 0, channels = 0;
    // Checked here first, so that the error names the JSON path and the size limit before any decoding.
    if (!stbi_info_from_memory(data, size, &width, &height, &channels))
        where.fail("cannot decode " + shown + ": " + stbi_failure_reason());
    if (width > static_cast<int>(max_resolution) || height > static_cast<int>(max_resolution)) {
        std::ostringstream os;
        os << shown << " is " << width << "x" << height << ", larger than " << max_resolution << " per side";
        where.fail(os.str());
    }
    // The outputs' decoder (image_io.h): sRGB to linear, alpha linear, grey expanded to RGB.
    Image decoded;
    try {
        decoded = decode_image_linear(bytes, shown);
    } catch (const Error& e) {
        where.fail(e.what());
    }
    LinearImage image;
    image.width = static_cast<uint32_t>(decoded.width);
    image.height = static_cast<uint32_t>(decoded.height);
    image.source = shown;
    image.texels.resize(static_cast<size_t>(decoded.width) * decoded.height);
    const size_t n = static_cast<size_t>(decoded.channels);
    for (size_t t = 0; t < image.texels.size(); ++t) {
        const float* p = decoded.pixels.data() + n * t;
        image.texels[t] = float4(p[0], p[1], p[2], n == 4 ? p[3] : 1.0f);
    }
    return image;
}

} // namespace adjoint::app::detail
