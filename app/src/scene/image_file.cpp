// Reading files and decoding images (stb_image) into linear RGBA for the scene loader.
#include "scene/loading.h"

#include <adjoint/app/atomic_file.h>
#include <adjoint/app/image_io.h>
#include <cmath>
#include <sstream>

namespace adjoint::app::detail {

std::optional<std::string> try_read_file(const std::filesystem::path& path, const std::string& shown,
                                         std::string& reason) {
    return app::try_read_file(path, shown, reason);   // regular files only, at most 1 GiB (atomic_file.h)
}

std::string read_file(const std::filesystem::path& path, const std::string& shown, const JsonValue& where) {
    std::string reason;
    std::optional<std::string> text = try_read_file(path, shown, reason);
    if (!text) where.fail(reason);
    return std::move(*text);
}

LinearImage load_image(const std::filesystem::path& path, const std::string& shown, const JsonValue& where) {
    return decode_image(read_file(path, shown, where), shown, where);
}

LinearImage decode_image(const std::string& bytes, const std::string& shown, const JsonValue& where) {
    int width = 0, height = 0, channels = 0;
    // Checked here first, so that the error names the JSON path and the size limit before any decoding.
    try {
        check_png_or_jpeg(bytes, shown, width, height, channels);
    } catch (const Error& e) {
        where.fail(e.what());
    }
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
