// adjoint-optimize --check-gradients: the optimizer's gradient ($autodiff, all views) against central finite
// differences of the same loss, component by component, with a verdict per row.
#pragma once
#include <adjoint/app/optimization.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace adjoint::app {

struct GradientCheckOptions {
    uint64_t seed = 0;       // which components of a texture or vertex set are checked
    uint32_t samples = 8;    // components checked of a texture or vertex set (all of every other parameter)
    // Test-only hook (adjoint-optimize's hidden --test-break-gradient): this parameter's analytic gradient is
    // negated before the comparison, so a test sees the check fail. Empty: none. Must name a free parameter.
    std::string break_parameter;
    double break_factor = -1.0;   // what the hook multiplies that gradient by (tests: 0, a half)
    // Polled before each row (a row takes up to a dozen renders): true ends the check there, with the rows done
    // (GradientCheck::interrupted). adjoint-optimize passes its Ctrl-C flag. Empty: never.
    std::function<bool()> stop;
};

// unsure: the difference is within its noise or the loss's rounding of 0, so a zero gradient and the negation
// would match as well (not a failure).
enum class CheckVerdict { pass, fail, unsure, skipped };

struct GradientCheckRow {
    std::string path;
    size_t component = 0;     // index of the float within the parameter
    double value = 0;         // the start value of that float
    double step = 0;          // the step h of the difference that decided (the cubic's: its span ±h)
    std::string method;       // what decided: "central" (at `step`), "median" (of slopes `step` apart), "cubic"
    double analytic = 0;      // d loss / d value from $autodiff
    double numeric = 0;       // the loss's slope by `method`
    double noise = 0;         // geometry with antialias or soft: the fitted slope's standard error (else 0)
    double relative_error = 0;// |analytic − numeric| / max(|analytic|, |numeric|), 0 when both are 0
    // The same of the loss's parts (each view's share, the regularizers'): their |analytic − numeric| summed over
    // their max(|analytic|, |numeric|) summed; a row passes on either (gradient_check.cpp, judge).
    double parts_error = 0;
    double tolerance = 0;     // the loss test's allowed |analytic − numeric| (the parts' test: judge)
    CheckVerdict verdict = CheckVerdict::pass;
    std::string note;         // why a row is skipped; "geometry" on a failing geometry row (the table adds a hint)
};

struct GradientCheck {
    std::string scene;
    double loss = 0;          // at the start values, over every view
    uint32_t views = 0;
    std::vector<GradientCheckRow> rows;
    size_t planned = 0;       // the rows a whole check has; more than rows.size() when `stop` ended it early
    bool interrupted() const { return rows.size() < planned; }
    bool passed() const;      // no row failed
};

// Relative tolerance: colour and light parameters, and geometry parameters with antialias or soft visibility.
inline constexpr double kCheckRelativeTolerance = 0.02;
inline constexpr double kCheckGeometryRelativeTolerance = 0.1;
// Geometry with antialias or soft visibility: the central difference with step h = kCheckGeometryStep ·
// max(|x|, 1) (a quaternion component: kCheckGeometryStep); where that fails, the median of the slopes between
// the loss at x + k·h, k = -kCheckGeometryPoints .. kCheckGeometryPoints; where that fails too, the slope fitted
// to the loss at 2 · kCheckGeometryPoints points spread evenly over x ± H, H = kCheckGeometrySpan · max(|x|, 1)
// (a quaternion component: kCheckGeometrySpan), and its standard error ("noise": the antialiased image's small
// jumps), admitted kCheckNoiseFactor times.
inline constexpr double kCheckGeometryStep = 1e-4;
inline constexpr int kCheckGeometryPoints = 4;
inline constexpr double kCheckGeometrySpan = 1e-2;
inline constexpr double kCheckNoiseFactor = 3.0;
// The absolute part: the float rounding of the loss's sums, kCheckLossRounding · L / h, L the largest loss the
// difference evaluated (not the loss at x alone, 0 at a minimum). Measured: differences
// at h = 1e-4 step by about 2e-9 of loss / h (eight views of a texture); 2e-7 admitted a negated texel of a
// multi-view scene, whose gradient is small against the loss.
inline constexpr double kCheckLossRounding = 2e-8;

// Whether `p` moves edges in the image: geometry, or the position or direction of a light with shadows (its
// shadows' outlines move as silhouettes do). The check differences these as geometry; the hard-visibility warning
// (hard_geometry_warning) names them.
bool moves_edges(const Scene& scene, const Parameter& p);

// At the optimizer's current values (the start, for a fresh Optimizer); leaves them as they were. Geometry
// parameters under `hard` visibility are not differentiated across silhouettes, so their finite differences
// jump at pixel edges: their rows are skipped ("skipped: hard visibility"). Throws Error when
// break_parameter names no free parameter.
GradientCheck check_gradients(Optimizer& optimizer, const Scene& scene, const GradientCheckOptions& options);

// The table (a header stating the step and tolerance, one row per checked component, a summary line).
std::string format_gradient_check(const GradientCheck& check);

} // namespace adjoint::app
