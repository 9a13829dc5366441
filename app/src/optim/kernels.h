// The optimizer's kernels: the optimizer plug-in's step over the flat parameter buffer (per-element learning
// rates and bounds), and chunked sums that leave only a few hundred floats for the host to add up.
#pragma once
#include <adjoint/adjoint.h>
#include <adjoint/app/plugins.h>

namespace adjoint::app {

constexpr uint32_t kSumChunk = 256;   // elements per thread in the sums (short loops for lavapipe)

// A run of elements of one free parameter, for the per-parameter sums.
struct ErrorChunk {
    uint32_t begin, end, parameter, pad;
};

struct OptimKernels {
    Shader<1> update, parameter_sums;
    OptimKernels(Device& device, const OptimizerModel& optimizer);
};

// out[first + c] = the sum of in[begin + c * kSumChunk, min(begin + (c + 1) * kSumChunk, end)): the
// objective's partial sums of its per-pixel terms.
Shader<1> compile_sum_chunks(Device& device);

} // namespace adjoint::app

ADJOINT_STRUCT(adjoint::app::ErrorChunk, begin, end, parameter, pad)
