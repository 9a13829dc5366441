// The split sum's second factor for glTF's specular lobe, integrated on the host once (plugins.h, dfg_table).
#include <adjoint/app/plugins.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

namespace adjoint::app {

namespace {

// Hammersley point i of n in [0, 1)².
std::pair<double, double> hammersley(uint32_t i, uint32_t n) {
    uint32_t bits = i;
    bits = (bits << 16u) | (bits >> 16u);
    bits = ((bits & 0x55555555u) << 1u) | ((bits & 0xAAAAAAAAu) >> 1u);
    bits = ((bits & 0x33333333u) << 2u) | ((bits & 0xCCCCCCCCu) >> 2u);
    bits = ((bits & 0x0F0F0F0Fu) << 4u) | ((bits & 0xF0F0F0F0u) >> 4u);
    bits = ((bits & 0x00FF00FFu) << 8u) | ((bits & 0xFF00FF00u) >> 8u);
    return {double(i) / n, double(bits) * 2.3283064365386963e-10};
}

// (A, B, lean, spread) at n·v and roughness: half-vectors drawn from GGX's distribution of normals (pdf D·n·h),
// each light direction weighted by F·D·V·(n·l) / pdf(l) = F·V·(n·l)·4(v·h)/(n·h), with F = F0·(1 − Fc) + Fc.
// The lean t puts normalize((1 − t)·n + t·r) (r the mirror direction) along the lobe's centroid, the direction
// a lobe around it must be fetched in for a linear sky to come out right; the spread is the length of the
// lobe's mean direction (D·V·(n·l)-weighted), how far that sky's gradient is averaged away.
std::array<double, 4> integrate(double nv, double roughness) {
    constexpr uint32_t samples = 1024;
    const double r = std::max(roughness, double(kMinRoughness)), a = r * r, a2 = a * a;
    const double vx = std::sqrt(1 - nv * nv), vz = nv;   // v in the plane y = 0, n = +z
    double A = 0, B = 0, cx = 0, cz = 0, total = 0;
    for (uint32_t i = 0; i < samples; ++i) {
        const auto [u1, u2] = hammersley(i, samples);
        const double phi = 2 * std::numbers::pi * u1;
        const double cos_h = std::sqrt((1 - u2) / (1 + (a2 - 1) * u2)), sin_h = std::sqrt(1 - cos_h * cos_h);
        const double hx = sin_h * std::cos(phi), hy = sin_h * std::sin(phi), hz = cos_h;
        const double vh = vx * hx + vz * hz;
        const double lx = 2 * vh * hx - vx, lz = 2 * vh * hz - vz;   // l = reflect(−v, h); its y averages out
        (void)hy;
        if (lz <= 0 || vh <= 0) continue;
        const double nl = lz;
        const double vis = 0.5 / (nl * std::sqrt(nv * nv * (1 - a2) + a2) + nv * std::sqrt(nl * nl * (1 - a2) + a2));
        const double weight = vis * nl * 4 * vh / hz;
        const double fc = std::pow(1 - vh, 5);
        A += (1 - fc) * weight;
        B += fc * weight;
        cx += lx * weight;
        cz += lz * weight;
        total += weight;
    }
    // The mirror direction is at the angle θr of v from n, on the other side (−x); the centroid at θc.
    const double theta_r = std::acos(std::clamp(nv, 0.0, 1.0));
    const double tan_c = cz > 0 ? -cx / cz : 0.0;
    // Along the normal any lean will do; a centroid at or past the normal (a rough lobe seen at a grazing angle
    // leans back towards v) is fetched along the normal, the nearest the lean reaches.
    double lean = 1;
    if (theta_r > 1e-3) lean = tan_c > 0 ? tan_c / (std::sin(theta_r) + tan_c * (1 - std::cos(theta_r))) : 0.0;
    return {A / samples, B / samples, std::clamp(lean, 0.0, 1.0), total > 0 ? std::hypot(cx, cz) / total : 1.0};
}

// The roughness to blur a lobe's first factor by: the one at which the prefiltered maps' blend (plugins.h,
// "environment maps": the map itself below the first level, then two levels weighted by α = roughness²)
// has the lobe's spread. A level's lobe is seen along the normal (N = V = R), so its mean direction is
// integrate(1, level)'s spread, and a blend's is the same blend of its levels': matching it makes the split
// sum exact for a linear sky at any n·v, where blurring by the lobe's own roughness is not (a lobe seen
// obliquely is narrower: ~3% off at n·v = 0.5; and the α blend is off ~0.5% between levels even along the
// normal). Beyond the widest level's spread (roughness near 1 at grazing angles) it stays at that level.
class BlendInverse {
public:
    BlendInverse() {
        for (size_t k = 0; k < environment_roughness.size(); ++k) {
            alpha_[k + 1] = double(environment_roughness[k]) * environment_roughness[k];
            spread_[k + 1] = integrate(1.0, environment_roughness[k])[3];
        }
    }
    double roughness(double spread) const {
        for (size_t k = 0; k + 1 < spread_.size(); ++k)
            if (spread >= spread_[k + 1]) {
                const double f = std::clamp((spread_[k] - spread) / (spread_[k] - spread_[k + 1]), 0.0, 1.0);
                return std::sqrt(alpha_[k] + f * (alpha_[k + 1] - alpha_[k]));
            }
        return environment_roughness.back();
    }

private:
    std::array<double, environment_roughness.size() + 1> alpha_{0.0}, spread_{1.0};   // the map itself first
};

} // namespace

const std::vector<float>& dfg_table() {
    static const std::vector<float> table = [] {
        const BlendInverse inverse;
        std::vector<float> t(size_t(kDfgSize) * kDfgSize * 2 * 3, 0.0f);
        const size_t half = size_t(kDfgSize) * kDfgSize * 3;
        for (uint32_t y = 0; y < kDfgSize; ++y)
            for (uint32_t x = 0; x < kDfgSize; ++x) {
                const auto abls = integrate(std::max((x + 0.5) / kDfgSize, 1e-4), (y + 0.5) / kDfgSize);
                const size_t at = (size_t(y) * kDfgSize + x) * 3;
                for (int c = 0; c < 3; ++c) t[at + c] = float(abls[c]);
                t[half + at] = float(inverse.roughness(abls[3]));
            }
        return t;
    }();
    return table;
}

} // namespace adjoint::app
