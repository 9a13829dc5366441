// Target images as the loss compares them: composited over the background, box-filtered to the views' size.
#include "scene/loading.h"

#include <algorithm>
#include <cmath>

namespace adjoint::app::detail {

namespace {

// The box filter along one axis: output pixel o covers input [o·n/m, (o + 1)·n/m); each input pixel weighs
// by its overlap with that footprint over the footprint's length.
struct Tap {
    uint32_t input;
    double weight;
};
std::vector<std::vector<Tap>> box_taps(uint32_t n, uint32_t m) {
    std::vector<std::vector<Tap>> taps(m);
    const double scale = double(n) / double(m);
    for (uint32_t o = 0; o < m; ++o) {
        const double lo = o * scale, hi = (o + 1) * scale;
        const auto first = static_cast<uint32_t>(std::floor(lo));
        const auto last = std::min(n, static_cast<uint32_t>(std::ceil(hi)));
        for (uint32_t i = first; i < last; ++i) {
            const double overlap = std::min(hi, double(i + 1)) - std::max(lo, double(i));
            if (overlap > 0) taps[o].push_back({i, overlap / scale});
        }
    }
    return taps;
}

// The box filter along the rows of an equirectangular map (n rows from one pole to the other), each input row
// weighing by the solid angle its overlap with the footprint covers: between polar angles a and b, in proportion
// to cos a - cos b.
std::vector<std::vector<Tap>> solid_angle_taps(uint32_t n, uint32_t m) {
    std::vector<std::vector<Tap>> taps = box_taps(n, m);
    const double scale = double(n) / double(m), pi = std::acos(-1.0);
    auto band = [&](double lo, double hi) { return std::cos(pi * lo / n) - std::cos(pi * hi / n); };
    for (uint32_t o = 0; o < m; ++o) {
        const double lo = o * scale, hi = (o + 1) * scale, whole = band(lo, hi);
        for (Tap& t : taps[o])
            t.weight = band(std::max(lo, double(t.input)), std::min(hi, double(t.input + 1))) / whole;
    }
    return taps;
}

// Bilinear interpolation along one axis of n texels at m > n output texels' centres, repeating across the edges
// (or clamped to them).
std::vector<std::vector<Tap>> bilinear_taps(uint32_t n, uint32_t m, bool clamp) {
    std::vector<std::vector<Tap>> taps(m);
    for (uint32_t o = 0; o < m; ++o) {
        const double u = (o + 0.5) * double(n) / double(m) - 0.5, lo = std::floor(u), f = u - lo;
        auto at = [&](double i) {
            const auto k = static_cast<int64_t>(i);
            return clamp ? uint32_t(std::clamp<int64_t>(k, 0, int64_t(n) - 1)) : uint32_t(((k % n) + n) % n);
        };
        taps[o] = {{at(lo), 1.0 - f}, {at(lo + 1), f}};
    }
    return taps;
}

// The image through separable taps: rows first (to xs.size() × image.height), then columns; in double, so that
// exact means stay exact.
LinearImage resample_with(const LinearImage& image, const std::vector<std::vector<Tap>>& xs,
                          const std::vector<std::vector<Tap>>& ys) {
    const auto width = uint32_t(xs.size()), height = uint32_t(ys.size());
    std::vector<double> rows(size_t(width) * image.height * 4, 0.0);
    for (uint32_t y = 0; y < image.height; ++y)
        for (uint32_t x = 0; x < width; ++x)
            for (const Tap& t : xs[x]) {
                const float4& p = image.texels[size_t(y) * image.width + t.input];
                double* out = &rows[(size_t(y) * width + x) * 4];
                for (size_t c = 0; c < 4; ++c) out[c] += t.weight * p[c];
            }
    LinearImage out;
    out.width = width;
    out.height = height;
    out.source = image.source;
    out.texels.resize(size_t(width) * height);
    for (uint32_t y = 0; y < height; ++y)
        for (uint32_t x = 0; x < width; ++x) {
            double sum[4] = {0, 0, 0, 0};
            for (const Tap& t : ys[y])
                for (size_t c = 0; c < 4; ++c) sum[c] += t.weight * rows[(size_t(t.input) * width + x) * 4 + c];
            out.texels[size_t(y) * width + x] = float4(float(sum[0]), float(sum[1]), float(sum[2]), float(sum[3]));
        }
    return out;
}

} // namespace

void composite_over(LinearImage& image, float3 background) {
    for (float4& t : image.texels) {
        const float a = t.w;
        t = float4(t.x * a + background.x * (1 - a), t.y * a + background.y * (1 - a),
                   t.z * a + background.z * (1 - a), a);
    }
}

LinearImage resample_box(const LinearImage& image, uint32_t width, uint32_t height) {
    return resample_with(image, box_taps(image.width, width), box_taps(image.height, height));
}

LinearImage resample_texture(const LinearImage& image, uint32_t width, uint32_t height, bool environment) {
    const uint32_t w = image.width, h = image.height;
    return resample_with(image, width > w ? bilinear_taps(w, width, false) : box_taps(w, width),
                         height > h       ? bilinear_taps(h, height, environment)
                         : environment    ? solid_angle_taps(h, height)
                                          : box_taps(h, height));
}

} // namespace adjoint::app::detail
