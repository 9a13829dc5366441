// The optimizer's kernels: the optimizer plug-in's step over the free parameters fused with their per-chunk sums
// (a learning rate and bounds per parameter), and chunked sums that leave only a few hundred floats for the host to
// add up.
#pragma once
#include <adjoint/adjoint.h>
#include <adjoint/app/plugins.h>

namespace adjoint::app {

constexpr uint32_t kSumChunk = 256;   // elements per chunk of the sums

// A run of elements of one free parameter, for the per-parameter sums.
struct ErrorChunk {
    uint32_t begin, end, parameter, rate;   // rate: its row of parameter_rates (a run of one range)
};

struct OptimKernels {
    // Per chunk of the free parameters, one subgroup: its sums (p - truth)^2, truth^2, g^2 and the count of
    // non-finite gradient elements (of the values before the step) into sums[chunk], and the step. Its arrays
    // (parameters, gradient, the two state arrays, truth) come twice, as floats and then as float4s
    // (Buffer::as<float4>(): each holds a whole number of float4s). Dispatched over chunks * lanes threads.
    Shader<1> step;
    uint32_t lanes;   // threads per chunk: the device's subgroup size
    OptimKernels(Device& device, const OptimizerModel& optimizer);
};

// One subgroup per chunk of kSumChunk elements of [begin, end): out[first_a + c] = the sum of a over chunk c,
// out[first_b + c] that of b (the objective's partial sums of its per-pixel terms). Dispatched over
// chunks * sum_lanes(device) threads.
Shader<1> compile_sum_chunks(Device& device);
uint32_t sum_lanes(Device& device);

} // namespace adjoint::app

ADJOINT_STRUCT(adjoint::app::ErrorChunk, begin, end, parameter, rate)
