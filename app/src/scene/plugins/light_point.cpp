// The point light: radiance falls off with the inverse square of the distance.
#include "scene/json_value.h"
#include "scene/plugins/registry.h"

namespace adjoint::app::plugins {

namespace {
constexpr std::string_view point_keys[] = {"position"};
}

const LightModel light_point{
    "point", point_keys, "position",
    [](const detail::JsonValue& entry, const std::filesystem::path&, Scene&, Light& light) {
        light.position = entry.require("position").vec3();
    },
    [](const ParamReads& params, const Expr<LightSlots>& light, const Float3& position) -> LightIncoming {
        Float3 d = params.read3(light.vector) - position;
        Float dist2 = dot(d, d);
        Float3 radiance = params.read3(light.color) * params.read(light.intensity);
        return {d * rsqrt(dist2), radiance * (1.0f / dist2)};
    },
    nullptr, nullptr,
    [](const ParamReads& params, const Expr<LightSlots>& light) -> ShadowSource {
        return {params.read3(light.vector), true};
    }};

} // namespace adjoint::app::plugins
