// The ambient light: the same radiance from every direction at every point.
#include "scene/plugins/registry.h"

namespace adjoint::app::plugins {

const LightModel light_ambient{
    "ambient", {}, "", [](const detail::JsonValue&, const std::filesystem::path&, Scene&, Light&) {}, nullptr,
    [](const ParamReads& params, const Expr<LightSlots>& light) -> SkyLight {
        Float3 radiance = params.read3(light.color) * params.read(light.intensity);
        return {[radiance](const Float3&) { return radiance; },
                [radiance](const Float3&, const Float&) { return radiance; }};
    }};

} // namespace adjoint::app::plugins
