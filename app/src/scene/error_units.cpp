// Parameter errors in their units (degrees, scene units, relative) for loss.csv, progress and report.png.
#include <adjoint/app/parameter_kinds.h>

#include <algorithm>
#include <cmath>
#include <string_view>

namespace adjoint::app {

ErrorUnit error_unit(const ParameterKindInfo& kind) {
    if (kind.metric != ErrorMetric::relative_l2) return ErrorUnit::degrees;
    return std::string_view(kind.units) == "scene units" ? ErrorUnit::scene_units : ErrorUnit::relative;
}

const char* error_unit_name(ErrorUnit unit) {
    return unit == ErrorUnit::degrees ? "deg" : unit == ErrorUnit::scene_units ? "scene_units" : "relative";
}

// |d| in degrees the shorter way round the circle: a light's rotation of 355 against 0 is 5 degrees off.
double wrap_degrees(double d) {
    const double e = std::fmod(std::abs(d), 360.0);
    return std::min(e, 360.0 - e);
}

double error_in_units_from_sums(const ParameterKindInfo& kind, double d2, double t2, size_t size) {
    if (kind.metric == ErrorMetric::wrapped_degrees) return wrap_degrees(std::sqrt(d2));
    // Points of 3 floats: a translation's error is its distance, a vertex list's the RMS over its vertices.
    if (error_unit(kind) == ErrorUnit::scene_units) return std::sqrt(d2 / std::max(double(size) / 3.0, 1.0));
    return std::sqrt(d2) / std::max(std::sqrt(t2), 1.0);
}

double error_in_units(const ParameterKindInfo& kind, const float* value, const float* truth, size_t size) {
    if (error_measured_on_host(kind.metric)) {
        // The cosine of the angle between the two, their lengths apart: quaternions (q and -q the same rotation,
        // whose angle is twice theirs) or directions.
        const bool rotation = kind.metric == ErrorMetric::geodesic_angle;
        double d = 0, na = 0, nb = 0;
        for (size_t i = 0; i < (rotation ? 4u : 3u) && i < size; ++i) {
            d += double(value[i]) * truth[i];
            na += double(value[i]) * value[i];
            nb += double(truth[i]) * truth[i];
        }
        const double c = std::clamp(d / std::max(std::sqrt(na * nb), 1e-300), -1.0, 1.0);
        return (rotation ? 2.0 * std::acos(std::abs(c)) : std::acos(c)) * 180.0 / M_PI;
    }
    double d2 = 0, t2 = 0;
    for (size_t i = 0; i < size; ++i) {
        d2 += double(value[i] - truth[i]) * (value[i] - truth[i]);
        t2 += double(truth[i]) * truth[i];
    }
    return error_in_units_from_sums(kind, d2, t2, size);
}

} // namespace adjoint::app
