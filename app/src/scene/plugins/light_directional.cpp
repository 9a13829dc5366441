// The directional light (a sun): parallel light travelling along `direction`, no fall-off.
#include "scene/loading.h"
#include "scene/plugins/registry.h"

namespace adjoint::app::plugins {

namespace {
constexpr std::string_view directional_keys[] = {"direction"};
}

const LightModel light_directional{
    "directional", directional_keys, "direction",
    [](const detail::JsonValue& entry, const std::filesystem::path&, Scene&, Light& light) {
        const detail::JsonValue direction = entry.require("direction");
        const float3 d = direction.vec3();
        if (detail::length(d) == 0) direction.fail("expected a non-zero direction");
        light.direction = detail::normalize(d);
    },
    [](const ParamReads& params, const Expr<LightSlots>& light, const Float3&) -> LightIncoming {
        return {-normalize(params.read3(light.vector)), params.read3(light.color) * params.read(light.intensity)};
    },
    nullptr, nullptr,
    [](const ParamReads& params, const Expr<LightSlots>& light) -> ShadowSource {
        return {-normalize(params.read3(light.vector)), false};
    }};

} // namespace adjoint::app::plugins
