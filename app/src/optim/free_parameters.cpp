// The free parameters on the optimizer's side: start values, buffer tables and errors (free_parameters.h).
#include "free_parameters.h"

#include <algorithm>
#include <cmath>

namespace adjoint::app {

namespace {

// A standard normal draw (Box-Muller), as the perturbations have always drawn it.
double normal(Rng& rng) {
    const double u1 = std::max(rng.uniform(), 1e-300), u2 = rng.uniform();
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
}

// amount degrees about a random axis (normal components: uniform on the sphere), after the rotation q.
std::vector<float> rotated(const std::vector<float>& q, float amount, Rng& rng) {
    double axis[3], n = 0;
    for (double& a : axis) {
        a = normal(rng);
        n += a * a;
    }
    Quaternion d = quaternion_from_axis_angle(float3(float(axis[0]), float(axis[1]), float(axis[2])), amount);
    if (!(n > 0)) d = Quaternion{};
    // d * q: the perturbation applied after the scene's rotation.
    const float w = q[0], x = q[1], y = q[2], z = q[3];
    return {d.w * w - d.x * x - d.y * y - d.z * z, d.w * x + d.x * w + d.y * z - d.z * y,
            d.w * y - d.x * z + d.y * w + d.z * x, d.w * z + d.x * y - d.y * x + d.z * w};
}

// A random direction of length amount * max(|v|, 1); the norm and the draws interleave as they always have.
void offset_along_direction(std::vector<float>& v, float amount, Rng& rng) {
    double norm = 0, dn = 0;
    std::vector<double> dir(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
        norm += double(v[i]) * v[i];
        dir[i] = normal(rng);
        dn += dir[i] * dir[i];
    }
    const double len = amount * std::max(std::sqrt(norm), 1.0) / std::max(std::sqrt(dn), 1e-12);
    for (size_t i = 0; i < v.size(); ++i) v[i] = float(v[i] + dir[i] * len);
}

} // namespace

std::vector<float> perturbed_value(const Parameter& p, std::vector<float> v, float amount, Rng& rng) {
    const ParameterKindInfo& kind = kind_info(p.kind);
    if (kind.perturbation == Perturbation::rotation) {
        v = rotated(v, amount, rng);
    } else if (kind.perturbation == Perturbation::direction || v.size() <= 4) {
        offset_along_direction(v, amount, rng);
    } else {
        for (auto& x : v) x = float(x + amount * (2 * rng.uniform() - 1));
    }
    size_t i = 0;
    for (const Parameter::Run& run : p.value_ranges())
        for (size_t end = std::min(v.size(), i + run.count); i < end; ++i) v[i] = std::clamp(v[i], run.lo, run.hi);
    return v;
}

// The worst error's units: relative L2, or radians for an angle.
double error_from_sums(const ParameterKindInfo& kind, double d2, double t2) {
    if (kind.metric == ErrorMetric::wrapped_degrees) return wrap_degrees(std::sqrt(d2)) * M_PI / 180.0;
    return std::sqrt(d2) / std::max(std::sqrt(t2), 1.0);
}

double parameter_error(const ParameterKindInfo& kind, const float* value, const float* truth, size_t n) {
    // An angle, as error_in_units gives it in degrees.
    if (error_measured_on_host(kind.metric)) return error_in_units(kind, value, truth, n) * M_PI / 180.0;
    double d2 = 0, t2 = 0;
    for (size_t i = 0; i < n; ++i) {
        d2 += double(value[i] - truth[i]) * (value[i] - truth[i]);
        t2 += double(truth[i]) * truth[i];
    }
    return error_from_sums(kind, d2, t2);
}

// The start values: `init`, or the scene's value plus a seeded offset of size `perturb` (perturbed_value).
Scene start_scene(const Scene& scene) {
    if (!scene.optimize) return scene;
    Scene s = scene;
    Rng init_rng(scene.optimize->seed ^ 0x5eedf00dull);
    for (const auto& p : scene.optimize->parameters) {
        if (!p.init.empty()) {
            set_parameter_value(s, p, p.init);
            continue;
        }
        const float amount = p.perturb.value_or(0.0f);
        set_parameter_value(s, p, perturbed_value(p, parameter_value(scene, p), amount, init_rng));
    }
    return s;
}

Scene OptimizerStages::prepare_current(const Scene& scene) { return start_scene(scene); }

FreeParameterTables free_parameter_tables(const Optimization& opt, const Scene& current, const Scene* truth,
                                          const ParamLayout& layout, const std::vector<float>& values) {
    FreeParameterTables t;
    t.truth.assign(values.size(), 0.0f);
    uint32_t rate_row = 0;
    for (const auto& p : opt.parameters) {
        FreeParam f{p, layout.of(current, p)};
        const uint32_t size = uint32_t(p.size);
        if (truth) {   // a texture optimized at another resolution against the truth resampled to it
            const std::vector<float> v = parameter_value_at_its_size(*truth, p);
            f.has_truth = v.size() == p.size;   // always, but a mismatch must not write past the parameter
            if (f.has_truth) std::copy(v.begin(), v.end(), t.truth.begin() + f.offset);
        }
        f.first_chunk = uint32_t(t.chunks.size());
        // Chunks within a run of one range, each with its rate's row (parameter_rates, in the same order).
        uint32_t at = 0;
        for (const Parameter::Run& run : p.value_ranges()) {
            const uint32_t end = std::min(at + run.count, size);
            for (uint32_t b = at; b < end; b += kSumChunk)
                t.chunks.push_back({f.offset + b, f.offset + std::min(b + kSumChunk, end), uint32_t(t.free.size()),
                                    rate_row});
            at = end;
            ++rate_row;
        }
        f.chunks = uint32_t(t.chunks.size()) - f.first_chunk;
        t.free.push_back(std::move(f));
    }
    return t;
}

std::vector<float4> parameter_rates(const std::vector<FreeParam>& free) {
    std::vector<float4> r;
    for (const auto& f : free)
        for (const Parameter::Run& run : f.p.value_ranges()) r.emplace_back(f.p.lr, run.lo, run.hi, 0.0f);
    return r;
}

std::optional<double> worst_parameter_error(const OptimizerStages& s) {
    double worst = 0;
    bool any = false;
    for (size_t i = 0; i < s.host_error_params.size(); ++i) {   // errors that need the value on the host
        const FreeParam& f = s.free[s.host_error_params[i]];
        if (!f.has_truth) continue;
        const float* t = &s.truth_host[f.offset];
        worst = std::max(worst, parameter_error(kind_info(f.p.kind), &s.host_error_values[4 * i], t, f.p.size));
        any = true;
    }
    for (const auto& f : s.free) {   // from the chunk sums: |p - t|^2 in x, |t|^2 in y
        if (!f.has_truth || error_measured_on_host(kind_info(f.p.kind).metric)) continue;
        double d2 = 0, t2 = 0;
        for (uint32_t c = 0; c < f.chunks; ++c) {
            d2 += s.last_chunk_sums[f.first_chunk + c].x;
            t2 += s.last_chunk_sums[f.first_chunk + c].y;
        }
        worst = std::max(worst, error_from_sums(kind_info(f.p.kind), d2, t2));
        any = true;
    }
    return any ? std::optional<double>(worst) : std::nullopt;
}

std::vector<std::optional<double>> parameter_errors_in_units(const OptimizerStages& s) {
    std::vector<std::optional<double>> out(s.free.size());
    for (size_t i = 0; i < s.host_error_params.size(); ++i) {
        const FreeParam& f = s.free[s.host_error_params[i]];
        if (!f.has_truth) continue;
        const float* t = &s.truth_host[f.offset];
        out[s.host_error_params[i]] =
            error_in_units(kind_info(f.p.kind), &s.host_error_values[4 * i], t, f.p.size);
    }
    for (size_t i = 0; i < s.free.size(); ++i) {
        const FreeParam& f = s.free[i];
        if (!f.has_truth || error_measured_on_host(kind_info(f.p.kind).metric)) continue;
        double d2 = 0, t2 = 0;
        for (uint32_t c = 0; c < f.chunks; ++c) {
            d2 += s.last_chunk_sums[f.first_chunk + c].x;
            t2 += s.last_chunk_sums[f.first_chunk + c].y;
        }
        out[i] = error_in_units_from_sums(kind_info(f.p.kind), d2, t2, f.p.size);
    }
    return out;
}

} // namespace adjoint::app
