// The ambient light: the same radiance at every point from no direction (it lights the diffuse colour only).
#include "scene/plugins/registry.h"

namespace adjoint::app::plugins {

const LightModel light_ambient{
    "ambient", {}, "", true, [](const detail::JsonValue&, Light&) {},
    [](const ParamReads& params, const Expr<LightSlots>& light, const Float3&) -> LightIncoming {
        return {make_float3(0.0f), params.read3(light.color) * params.read(light.intensity)};
    }};

} // namespace adjoint::app::plugins
