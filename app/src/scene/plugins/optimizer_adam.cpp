// Adam (Kingma and Ba) with bias correction: two moments per element.
#include "scene/plugins/registry.h"

#include <cmath>

namespace adjoint::app::plugins {

namespace {

constexpr OptimizerKey adam_keys[] = {
    {.name = "betas", .count = 2, .defaults = {0.9f, 0.999f}, .lo = 0, .hi = 1,
     .expected = "[beta1, beta2] of numbers in [0, 1)", .plural = true},
    {.name = "eps", .count = 1, .defaults = {1e-8f}, .lo = 0, .hi = INFINITY, .lo_open = true, .expected = "a number > 0"},
};
constexpr std::string_view adam_state[] = {"moment1", "moment2"};

} // namespace

const OptimizerModel optimizer_adam{
    "adam", adam_keys, adam_state,
    // Bias corrections 1 - beta^t, t counted from 1.
    [](const std::array<float, 4>& s, uint32_t iteration) -> std::array<float, 4> {
        const float t = float(iteration + 1);
        return {1.0f - std::pow(s[0], t), 1.0f - std::pow(s[1], t), 0, 0};
    },
    [](const OptimizerStepInputs& in, std::array<Float, 2>& m) -> Float {
        Float b1 = in.settings.x, b2 = in.settings.y, eps = in.settings.z;
        m[0] = b1 * m[0] + (1.0f - b1) * in.gradient;
        m[1] = b2 * m[1] + (1.0f - b2) * in.gradient * in.gradient;
        return in.rate * (m[0] / in.per_iteration.x) / (sqrt(m[1] / in.per_iteration.y) + eps);
    }};

} // namespace adjoint::app::plugins
