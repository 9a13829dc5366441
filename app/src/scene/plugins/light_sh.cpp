// The sh light: radiance from every direction as real spherical harmonics of bands 0-3 (Sloan's "Stupid
// Spherical Harmonics Tricks": its basis, signs and order), times the light's colour and intensity.
#include "scene/loading.h"
#include "scene/plugins/registry.h"

#include <array>
#include <cmath>

namespace adjoint::app::plugins {

namespace {

constexpr std::string_view sh_keys[] = {"coefficients"};

// Y_i(d) for i < 16 at a unit direction (Sloan's appendix, with the Condon-Shortley phase).
std::array<Float, 16> basis(const Float3& d) {
    Float x = d.x, y = d.y, z = d.z;
    return {Float(0.282095f),
            -0.488603f * y, 0.488603f * z, -0.488603f * x,
            1.092548f * x * y, -1.092548f * y * z, 0.315392f * (3.0f * z * z - 1.0f), -1.092548f * x * z,
            0.546274f * (x * x - y * y),
            -0.590044f * y * (3.0f * x * x - y * y), 2.890611f * x * y * z, -0.457046f * y * (5.0f * z * z - 1.0f),
            0.373176f * z * (5.0f * z * z - 3.0f), -0.457046f * x * (5.0f * z * z - 1.0f),
            1.445306f * z * (x * x - y * y), -0.590044f * x * (x * x - 3.0f * y * y)};
}

constexpr uint32_t band_of(uint32_t i) { return i < 1 ? 0 : i < 4 ? 1 : i < 9 ? 2 : 3; }

// Σ_i weight(band i) · c_i · Y_i(d) over the light's `count` coefficients (4, 9 or 16) at `first`.
template <typename Weight>
Float3 expand(const ParamReads& params, const UInt& first, const UInt& count, const Float3& d, Weight weight) {
    const std::array<Float, 16> y = basis(d);
    Float3 sum = make_float3(0.0f);
    const auto add = [&](uint32_t begin, uint32_t end) {
        for (uint32_t i = begin; i < end; ++i) sum = sum + params.read3(first + 3u * i) * (y[i] * weight(band_of(i)));
    };
    add(0, 4);
    $if (count >= 9u) { add(4, 9); };
    $if (count >= 16u) { add(9, 16); };
    return sum;
}

void read(const detail::JsonValue& entry, const std::filesystem::path&, Scene&, Light& light) {
    const detail::JsonValue c = entry.require("coefficients");
    const char* shape = "expected 4, 9 or 16 coefficients [r, g, b] (bands 0-1, 0-2 or 0-3)";
    if (!c.json().is_array()) c.fail(shape);
    const size_t n = c.array_size();
    if (n != 4 && n != 9 && n != 16) c.fail(shape + std::string(", got ") + std::to_string(n));
    light.coefficients.clear();
    for (size_t i = 0; i < n; ++i) {
        const detail::JsonValue rgb = c[i];
        if (!rgb.json().is_array() || rgb.array_size() != 3) rgb.fail("expected [r, g, b]");
        light.coefficients.push_back({rgb[0].number(), rgb[1].number(), rgb[2].number()});
    }
}

// Diffuse: the clamped-cosine convolution (Ramamoorthi and Hanrahan 2001): band l scaled by A_l / π with
// A = (π, 2π/3, π/4, 0), exact for these bands. Specular: band l scaled by exp(−l²·α²/4), the zonal
// coefficients of a Phong lobe of exponent 2/α² − 2 that stands in for GGX of α = roughness² (an
// approximation, stated in the guide: the sky has no detail finer than band 3 to lose).
SkyLight sky(const ParamReads& params, const Expr<LightSlots>& light) {
    Float3 scale = params.read3(light.color) * params.read(light.intensity);
    UInt first = light.vector, count = light.count;
    return {[params, first, count, scale](const Float3& n) {
                return scale * expand(params, first, count, n, [](uint32_t l) {
                           constexpr float a[4] = {1.0f, 2.0f / 3.0f, 0.25f, 0.0f};
                           return Float(a[l]);
                       });
            },
            [params, first, count, scale](const Float3& r, const Float& roughness) {
                Float alpha2 = roughness * roughness * roughness * roughness;
                return scale * expand(params, first, count, r, [&alpha2](uint32_t l) {
                           return exp(-float(l * l) * 0.25f * alpha2);
                       });
            }};
}

Float3 radiance(const ParamReads& params, const Expr<LightSlots>& light, const Float3& d) {
    Float3 scale = params.read3(light.color) * params.read(light.intensity);
    return scale * expand(params, light.vector, light.count, d, [](uint32_t) { return Float(1.0f); });
}

} // namespace

const LightModel light_sh{"sh", sh_keys, "coefficients", read, nullptr, sky, radiance};

} // namespace adjoint::app::plugins
