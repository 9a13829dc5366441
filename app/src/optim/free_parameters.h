// The free parameters on the optimizer's side, from their kinds' descriptors (parameter_kinds.h): start
// values (init or a seeded perturbation), where they live in the parameter buffer with their rates,
// bounds, truths and sum chunks, and their errors against the truth.
#pragma once
#include "stages.h"

#include <adjoint/app/parameter_kinds.h>

namespace adjoint::app {

// The scene's value v moved by `amount` as the kind's perturbation rule says, then clamped to its range;
// draws from rng exactly as the rule needs (a run's start depends on nothing else).
std::vector<float> perturbed_value(const Parameter& p, std::vector<float> v, float amount, Rng& rng);

// A parameter's error by its kind's metric; value and truth hold n floats.
double parameter_error(const ParameterKindInfo& kind, const float* value, const float* truth, size_t n);

// Per float of the parameter buffer its truth (0 where none); per free parameter its place and chunks. The
// step runs over the chunks only, so fixed values are never touched.
struct FreeParameterTables {
    std::vector<FreeParam> free;
    std::vector<float> truth;
    std::vector<ErrorChunk> chunks;
};
FreeParameterTables free_parameter_tables(const Optimization& opt, const Scene& current, const Scene* truth,
                                          const ParamLayout& layout, const std::vector<float>& values);

// Per free parameter and run of its ranges (Parameter::value_ranges) {learning rate, lo, hi, 0}: what the step
// reads through a chunk's `rate`.
std::vector<float4> parameter_rates(const std::vector<FreeParam>& free);

// The largest error over the free parameters with a truth, from the last step's chunk sums (relative L2)
// and the values read back (geodesic angles); nullopt when none has a truth.
std::optional<double> worst_parameter_error(const OptimizerStages& s);
// Every free parameter's error in its units (error_in_units), from the same sums; nullopt without truth.
std::vector<std::optional<double>> parameter_errors_in_units(const OptimizerStages& s);

} // namespace adjoint::app
