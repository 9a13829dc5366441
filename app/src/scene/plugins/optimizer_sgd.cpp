// Stochastic gradient descent with momentum: one velocity per element.
#include "scene/plugins/registry.h"

namespace adjoint::app::plugins {

namespace {

constexpr OptimizerKey sgd_keys[] = {
    {.name = "momentum", .count = 1, .defaults = {0.9f}, .lo = 0, .hi = 1, .expected = "a number in [0, 1)"},
};
constexpr std::string_view sgd_state[] = {"velocity"};

} // namespace

const OptimizerModel optimizer_sgd{
    "sgd", sgd_keys, sgd_state,
    [](const std::array<float, 4>&, uint32_t) -> std::array<float, 4> { return {}; },
    [](const OptimizerStepInputs& in, std::array<Float, 2>& v) -> Float {
        v[0] = in.settings.x * v[0] + in.gradient;
        return in.rate * v[0];
    }};

} // namespace adjoint::app::plugins
