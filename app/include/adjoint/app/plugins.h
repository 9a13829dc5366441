// The plug-ins a scene file names: light types, losses and optimizers (one file each in
// app/src/scene/plugins/, listed in registry.cpp). A plug-in holds its name, its scene keys and its formula as
// DSL code, so the loader, the renderer, the optimizer, the reports and the studio all derive from the same
// definition: adding a light type, a loss or an optimizer is one new file and one registration line
// (app/GUIDE.md).
#pragma once
#include <adjoint/adjoint.h>

#include <array>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace adjoint::app {

struct Light;
namespace detail {
class JsonValue;   // a located JSON value of the scene file (app/src/scene/json_value.h)
}

// Reads of the parameter buffer in shading code, whatever its type: plain values, or a differentiable buffer
// whose reads scatter their adjoints inside $autodiff.
struct ParamReads {
    std::function<Float(const UInt&)> read;
    Float3 read3(const UInt& at) const { return make_float3(read(at), read(at + 1u), read(at + 2u)); }
};

// ---- light types: `lights[i].type` -------------------------------------------------------------------------
// Where a light's values live in the parameter buffer (offsets in floats): its vector (a point light's
// position, a directional light's direction of travel; unused by ambient light), colour (3) and intensity (1).
struct LightSlots {
    uint32_t vector, color, intensity, pad;
};

// What a light delivers to a surface point: the unit direction towards the light and the radiance arriving
// (colour times intensity times any fall-off).
struct LightIncoming {
    Float3 direction;
    Float3 radiance;
};

struct LightModel {
    std::string_view name;
    std::span<const std::string_view> keys;    // its own keys (every light has name, type, color, intensity)
    std::string_view vector_key;               // the key its vector comes from ("position"), or empty
    bool ambient = false;                      // lights every point evenly, with no direction (diffuse only)
    // The loader: its own keys of `entry` into `light` (errors name the key).
    void (*read)(const detail::JsonValue& entry, Light& light);
    // The shading: what arrives at `position` (ignored for ambient light, whose direction is unused).
    LightIncoming (*incoming)(const ParamReads& params, const Expr<LightSlots>& light, const Float3& position);
};

// ---- losses: `optimize.loss` ----------------------------------------------------------------------------
// The loss of one pixel from the rendered and the target linear RGBA (alpha is coverage: 1 inside, 0 on the
// background, fractional at antialiased or soft edges). The reported loss is its mean over pixels, RGB channels
// and views; the gradient of every consumer is $autodiff of this one expression.
struct LossModel {
    std::string_view name;     // as the scene format spells it
    std::string_view summary;  // one line, for --help and the studio
    Float (*pixel)(const Float4& rendered, const Float4& target);
};

// ---- optimizers: `optimize.optimizer` ---------------------------------------------------------------------
// A key of the `optimize` block that an optimizer reads: `count` numbers, each in [lo, hi) (lo excluded when
// lo_open), the defaults when the file is silent, and the message that names the expected shape.
struct OptimizerKey {
    std::string_view name;
    uint32_t count = 1;
    std::array<float, 4> defaults{};
    float lo = 0, hi = 1;
    bool lo_open = false;
    std::string_view expected;   // e.g. "[beta1, beta2] of numbers in [0, 1)"
    bool plural = false;         // "betas apply", "eps applies"
};

// One element's step, in DSL values: the optimizer reads its state (named arrays beside the parameters, which
// the checkpoint saves by name) and returns the amount to subtract from the parameter.
struct OptimizerStepInputs {
    Float gradient;
    Float rate;                  // the element's learning rate times the decay
    Float4 settings;             // the keys' values, concatenated in key order
    Float4 per_iteration;        // what host_constants() computed for this iteration
};

struct OptimizerModel {
    std::string_view name;
    std::span<const OptimizerKey> keys;
    std::span<const std::string_view> state;   // the names of its per-element state arrays (at most 2)
    // Per-iteration constants (e.g. Adam's bias corrections) for `iteration` (0-based), from the settings.
    std::array<float, 4> (*host_constants)(const std::array<float, 4>& settings, uint32_t iteration);
    // The step of one element; reads and updates state[0 .. state.size()).
    Float (*step)(const OptimizerStepInputs& in, std::array<Float, 2>& state);
};

// ---- the registries ---------------------------------------------------------------------------------------
std::span<const LightModel* const> light_models();
const LightModel* find_light_model(std::string_view name);
const LightModel& light_model(std::string_view name);
std::span<const LossModel* const> loss_models();
std::span<const OptimizerModel* const> optimizer_models();
// By name; nullptr when there is none of that name.
const LossModel* find_loss(std::string_view name);
const OptimizerModel* find_optimizer(std::string_view name);
// By name; adjoint::Error when there is none (names the registered ones).
const LossModel& loss_model(std::string_view name);
const OptimizerModel& optimizer_model(std::string_view name);

} // namespace adjoint::app

ADJOINT_STRUCT(adjoint::app::LightSlots, vector, color, intensity, pad)
