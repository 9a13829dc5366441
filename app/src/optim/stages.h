// The optimizer's state between iterations (the parameter buffer, the optimizer's state arrays, rates and
// bounds, the objective), shared by optimization.cpp, free_parameters.cpp and studio_hooks.cpp.
#pragma once
#include <adjoint/app/optimization.h>

#include "optim/kernels.h"
#include "optim/objective.h"

#include <array>
#include <optional>

namespace adjoint::app {

// xoshiro256** (public-domain algorithm): small state that a checkpoint stores exactly.
struct Rng {
    std::array<uint64_t, 4> s{};
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    explicit Rng(uint64_t seed = 0) {
        uint64_t z = seed;
        for (auto& w : s) {   // splitmix64 expands the seed
            z += 0x9e3779b97f4a7c15ull;
            uint64_t x = z;
            x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
            x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
            w = x ^ (x >> 31);
        }
    }
    uint64_t next() {
        uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = rotl(s[3], 45);
        return r;
    }
    double uniform() { return double(next() >> 11) * 0x1.0p-53; }   // [0, 1)
    uint32_t below(uint32_t n) { return uint32_t(uniform() * n); }
};

struct FreeParam {
    Parameter p;
    uint32_t offset = 0;
    bool has_truth = false;
    uint32_t first_chunk = 0, chunks = 0;
};

struct OptimizerStages {
    Device& device;
    Stream stream;
    Scene truth;
    const Optimization& opt;   // truth's optimize block
    Scene current;
    SceneData data;
    const OptimizerModel& optimizer;
    OptimKernels kernels;
    std::optional<Objective> objective;      // renderer + loss + regularizers -> loss and gradient
    bool camera_free = false;
    // Indices into `free` of parameters whose error is an angle (error_measured_on_host: rotations, 4 floats, and
    // directions, 3), which the host computes from their values, read back with each step (4 floats a slot).
    std::vector<size_t> host_error_params;
    std::vector<float> host_error_values;
    std::vector<FreeParam> free;
    size_t floats = 0;          // the layout's floats (whole float4s, or 0: params and the state arrays hold 4)
    DiffBuffer<float> params;
    // The optimizer's named state arrays beside the parameters (Adam's moments, SGD's velocity); the kernel
    // binds two, so an optimizer with fewer gets one-element stand-ins.
    std::vector<Buffer<float>> state;
    Buffer<float> truth_values;
    // The same on the host, each free parameter's at its offset in its own shape (a texture resampled to its size:
    // parameter_value_at_its_size, once): what parameters() and the host's errors read.
    std::vector<float> truth_host;
    Buffer<float4> rates;   // per free parameter and run of ranges: learning rate, lo, hi (parameter_rates)
    // The free parameters' floats in runs of kSumChunk: the step and its sums go over these only (the buffer
    // also holds every fixed value, an environment map's texels among them).
    Buffer<ErrorChunk> chunks;
    Buffer<float4> chunk_sums;
    std::vector<float4> last_chunk_sums;
    uint32_t chunk_count = 0;
    uint32_t iteration = 0;
    Rng rng;
    bool has_truth = false;

    OptimizerStages(Device& d, const Scene& scene, bool dynamic = false);
    Scene prepare_current(const Scene& scene);
};

} // namespace adjoint::app
