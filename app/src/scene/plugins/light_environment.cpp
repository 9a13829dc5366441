// The environment light: radiance from every direction as an equirectangular map (OpenEXR, Radiance .hdr,
// PNG/JPEG) or a uniform colour, turned about +Y; shaded by the split sum over the maps the renderer
// prefilters from it (plugins.h, "environment maps").
#include "io/hdr_image.h"
#include "scene/json_value.h"
#include "scene/loading.h"
#include "scene/plugins/registry.h"

#include <cmath>
#include <iostream>

namespace adjoint::app::plugins {

namespace {

constexpr std::string_view environment_keys[] = {"file", "rotation"};

// Wider maps are halved (box filter) down to this: the texture set lives in one storage buffer (lavapipe's
// cap is 128 MiB), and a sharper mirror than 2048 columns (0.18° a texel) is beyond what a rasterized
// object shows.
constexpr uint32_t kMaxWidth = 2048;

LinearImage halve(const LinearImage& in) {
    LinearImage out;
    out.width = in.width / 2;
    out.height = in.height / 2;
    out.source = in.source;
    out.texels.resize(size_t(out.width) * out.height);
    for (uint32_t y = 0; y < out.height; ++y)
        for (uint32_t x = 0; x < out.width; ++x) {
            float4 sum(0, 0, 0, 0);
            for (uint32_t dy = 0; dy < 2; ++dy)
                for (uint32_t dx = 0; dx < 2; ++dx)
                    for (int c = 0; c < 4; ++c) sum[c] += 0.25f * in.texels[size_t(2 * y + dy) * in.width + 2 * x + dx][c];
            out.texels[size_t(y) * out.width + x] = sum;
        }
    return out;
}

void read(const detail::JsonValue& entry, const std::filesystem::path& base_dir, Scene& scene, Light& light) {
    for (const Light& other : scene.lights)
        if (other.type == "environment")
            entry.require("type").fail("a scene has at most one environment light (" + other.name + " is one)");
    if (auto rotation = entry.get("rotation")) light.rotation = rotation->number();
    const auto file = entry.get("file");
    if (!file) {
        if (!entry.get("color")) entry.fail("an environment light needs a map (`file`) or a uniform sky (`color`)");
        return;
    }
    if (entry.get("color"))
        entry.require("color").fail("give either `file` (a map) or `color` (a uniform sky), not both; "
                                    "`intensity` scales a map");
    light.file = file->nonempty_string();
    Image image;
    try {
        image = read_hdr_image(base_dir / light.file, 16384);
    } catch (const std::exception& e) {
        file->fail(e.what());
    }
    if (image.width != 2 * image.height)
        file->fail(light.file + " is " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                   ", not an equirectangular map (its width must be twice its height)");
    LinearImage map;
    map.width = uint32_t(image.width);
    map.height = uint32_t(image.height);
    map.source = light.file;
    map.texels.resize(size_t(map.width) * map.height);
    for (size_t i = 0; i < map.texels.size(); ++i) {
        const float* p = &image.pixels[i * size_t(image.channels)];
        map.texels[i] = float4(p[0], p[image.channels > 1 ? 1 : 0], p[image.channels > 2 ? 2 : 0], 1.0f);
    }
    if (map.width > kMaxWidth) {
        std::cerr << "adjoint: note: " << light.file << " (" << map.width << "x" << map.height << ") is halved to ";
        while (map.width > kMaxWidth) map = halve(map);
        std::cerr << map.width << "x" << map.height << " for the renderer\n";
    }
    light.texture = int32_t(scene.textures.size());
    scene.textures.push_back(std::move(map));
}

// How wide a lobe of this roughness is, for blending levels: α = roughness², which a blend of two levels
// matches in the first moment better than roughness itself or α² (measured against brute force).
constexpr float spread_of(float roughness) { return roughness * roughness; }

// Bilinear at level 0 of a map turned by the light's rotation, in the direction d (world).
Float2 map_uv(const Float3& d, const Float& degrees) { return equirect_uv(into_map_frame(d, degrees)); }

SkyLight sky(const ParamReads& params, const Expr<LightSlots>& light) {
    Float3 scale = params.read3(light.color) * params.read(light.intensity);
    UInt map = light.texture, first = light.prefiltered;
    Float degrees = params.read(light.rotation);
    return {[params, scale, map, first, degrees](const Float3& n) {
                Float3 e = make_float3(1.0f);
                $if (map != kNoTexture) {
                    e = params.sample(first + (environment_levels - 1), map_uv(n, degrees), 0.0f);
                };
                return scale * e;
            },
            [params, scale, map, first, degrees](const Float3& r, const Float& roughness) {
                // Between two roughness levels, the blend of their maps (below the first, of the map itself and
                // the first), weighted by where this roughness's α lies between theirs.
                Float3 e = make_float3(1.0f);
                $if (map != kNoTexture) {
                    Float2 uv = map_uv(r, degrees);
                    Float rough = clamp(roughness, 0.0f, environment_roughness.back());
                    Float spread = rough * rough;   // spread_of(rough)
                    UInt lower = map, upper = first;
                    Float lo = 0.0f, hi = spread_of(environment_roughness[0]);
                    for (uint32_t k = 0; k + 1 < environment_roughness.size(); ++k) {
                        Bool above = rough > environment_roughness[k];
                        lower = ite(above, first + k, lower);
                        upper = ite(above, first + (k + 1), upper);
                        lo = ite(above, Float(spread_of(environment_roughness[k])), lo);
                        hi = ite(above, Float(spread_of(environment_roughness[k + 1])), hi);
                    }
                    Float f = clamp((spread - lo) / (hi - lo), 0.0f, 1.0f);
                    e = lerp(params.sample(lower, uv, 0.0f), params.sample(upper, uv, 0.0f), make_float3(f));
                };
                return scale * e;
            }};
}

Float3 radiance(const ParamReads& params, const Expr<LightSlots>& light, const Float3& d) {
    Float3 scale = params.read3(light.color) * params.read(light.intensity);
    Float3 e = make_float3(1.0f);
    $if (light.texture != kNoTexture) { e = params.sample(light.texture, map_uv(d, params.read(light.rotation)), 0.0f); };
    return scale * e;
}

} // namespace

const LightModel light_environment{"environment", environment_keys, "", read, nullptr, sky, radiance};

} // namespace adjoint::app::plugins
