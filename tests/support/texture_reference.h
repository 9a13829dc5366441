// A host reference of the engine's textures (in double): wrap modes, the box-filtered mip chain, bilinear,
// trilinear and footprint-selected sampling, by the conventions of engine/include/adjoint/dsl/texture.h.
#pragma once
#include <adjoint/adjoint.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace adjoint::test {

struct HostTexture {
    uint32_t channels = 3;
    TextureWrap wrap = TextureWrap::Repeat;
    std::vector<uint32_t> w, h;
    std::vector<std::vector<double>> levels;

    HostTexture(uint32_t width, uint32_t height, uint32_t c, TextureOptions options, const std::vector<float>& level0)
        : channels(c), wrap(options.wrap) {
        w.push_back(width);
        h.push_back(height);
        levels.emplace_back(level0.begin(), level0.end());
        while (options.mipmaps && (w.back() > 1 || h.back() > 1)) {
            uint32_t sw = w.back(), sh = h.back(), dw = std::max(1u, sw / 2), dh = std::max(1u, sh / 2);
            std::vector<double> d(size_t(dw) * dh * c);
            const auto& s = levels.back();
            for (uint32_t y = 0; y < dh; ++y)
                for (uint32_t x = 0; x < dw; ++x)
                    for (uint32_t k = 0; k < c; ++k) {
                        uint32_t x0 = std::min(2 * x, sw - 1), x1 = std::min(2 * x + 1, sw - 1);
                        uint32_t y0 = std::min(2 * y, sh - 1), y1 = std::min(2 * y + 1, sh - 1);
                        auto at = [&](uint32_t xx, uint32_t yy) { return s[(size_t(yy) * sw + xx) * c + k]; };
                        d[(size_t(y) * dw + x) * c + k] = (at(x0, y0) + at(x1, y0) + at(x0, y1) + at(x1, y1)) / 4;
                    }
            w.push_back(dw);
            h.push_back(dh);
            levels.push_back(std::move(d));
        }
    }

    uint32_t level_count() const { return uint32_t(levels.size()); }

    static long wrap_coord(long x, long n, TextureWrap mode) {
        auto mod = [](long a, long m) { return ((a % m) + m) % m; };
        switch (mode) {
        case TextureWrap::Repeat: return mod(x, n);
        case TextureWrap::Clamp: return std::clamp(x, 0L, n - 1);
        case TextureWrap::Mirror: {
            long m = mod(x, 2 * n);
            return m < n ? m : 2 * n - 1 - m;
        }
        case TextureWrap::RepeatClamp: break;   // per axis: see texel()
        }
        return 0;
    }

    double texel(uint32_t l, long x, long y, uint32_t k) const {
        const bool per_axis = wrap == TextureWrap::RepeatClamp;
        long xx = wrap_coord(x, w[l], per_axis ? TextureWrap::Repeat : wrap);
        long yy = wrap_coord(y, h[l], per_axis ? TextureWrap::Clamp : wrap);
        return levels[l][(size_t(yy) * w[l] + size_t(xx)) * channels + k];
    }

    double bilinear(uint32_t l, double u, double v, uint32_t k) const {
        double px = u * w[l] - 0.5, py = v * h[l] - 0.5;
        double fx = std::floor(px), fy = std::floor(py), tx = px - fx, ty = py - fy;
        long x0 = long(fx), y0 = long(fy);
        double top = texel(l, x0, y0, k) * (1 - tx) + texel(l, x0 + 1, y0, k) * tx;
        double bottom = texel(l, x0, y0 + 1, k) * (1 - tx) + texel(l, x0 + 1, y0 + 1, k) * tx;
        return top * (1 - ty) + bottom * ty;
    }

    double trilinear(double u, double v, double lod, uint32_t k) const {
        lod = std::clamp(lod, 0.0, double(level_count() - 1));
        uint32_t l0 = uint32_t(std::floor(lod));
        double f = lod - l0;
        double c = bilinear(l0, u, v, k);
        return f > 0 ? c * (1 - f) + bilinear(l0 + 1, u, v, k) * f : c;
    }

    // The level of detail sample_grad picks for these derivatives of uv.
    double lod_of(double dudx, double dvdx, double dudy, double dvdy) const {
        double rho = std::max(std::hypot(dudx * w[0], dvdx * h[0]), std::hypot(dudy * w[0], dvdy * h[0]));
        return std::log2(std::max(rho, 1e-8));
    }
};

} // namespace adjoint::test
