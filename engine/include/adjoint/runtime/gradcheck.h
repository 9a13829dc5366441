// A gradient checker users can call: reverse-mode gradients of a callable against central finite
// differences of the same callable, both on the device, over many random inputs.
#pragma once
#include <adjoint/dsl/autodiff.h>
#include <adjoint/runtime/device.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace adjoint {

struct GradCheckOptions {
    size_t samples = 1000;
    float lo = -1.0f, hi = 1.0f;      // inputs are drawn uniformly from [lo, hi]
    float step = 1e-2f;               // finite-difference step, relative to max(1, |x|)
    float tolerance = 1e-2f;          // a sample is bad when its relative error exceeds this
    uint32_t seed = 1;
};

struct GradCheckReport {
    size_t samples = 0;
    size_t bad = 0;                   // samples with a component over the tolerance
    float bad_fraction = 0;
    float max_relative_error = 0;     // |ad - fd| / max(1, |fd|), the largest over all components
    std::string worst;                // where the largest error was seen
};

// f is a scalar function of N floats, as a Callable<float(std::array<float, N>)>.
template <size_t N>
GradCheckReport check_gradients(Device& device, const Callable<float(std::array<float, N>)>& f,
                                const GradCheckOptions& options = {}) {
    using Args = std::array<float, N>;
    Kernel1D eval = [&](BufferVar<Args> xs, BufferFloat ys) noexcept {
        auto i = dispatch_id().x;
        ys.write(i, f(xs.read(i)));
    };
    Kernel1D reverse = [&](BufferVar<Args> xs, BufferVar<Args> gs) noexcept {
        auto i = dispatch_id().x;
        Var<Args> x = xs.read(i);
        $autodiff {
            requires_grad(x);
            Float y = f(x);
            backward(y);
            gs.write(i, grad(x));
        };
    };
    auto eval_shader = device.compile(eval);
    auto reverse_shader = device.compile(reverse);
    const size_t n = options.samples;
    std::mt19937 rng(options.seed);
    std::uniform_real_distribution<float> dist(options.lo, options.hi);
    std::vector<Args> points(n), grads(n), probes(n * 2 * N);
    for (auto& p : points)
        for (auto& v : p) v = dist(rng);
    std::vector<float> steps(n * N);
    for (size_t s = 0; s < n; ++s)
        for (size_t k = 0; k < N; ++k) {
            float h = options.step * std::max(1.0f, std::fabs(points[s][k]));
            steps[s * N + k] = h;
            probes[(s * N + k) * 2] = points[s];
            probes[(s * N + k) * 2][k] += h;
            probes[(s * N + k) * 2 + 1] = points[s];
            probes[(s * N + k) * 2 + 1][k] -= h;
        }
    auto stream = device.create_stream();
    auto xs = device.create_buffer<Args>(n);
    auto gs = device.create_buffer<Args>(n);
    auto ps = device.create_buffer<Args>(probes.size());
    auto ys = device.create_buffer<float>(probes.size());
    std::vector<float> values(probes.size());
    stream << xs.copy_from(points.data()) << ps.copy_from(probes.data())
           << reverse_shader(xs, gs).dispatch(uint32_t(n)) << eval_shader(ps, ys).dispatch(uint32_t(probes.size()))
           << gs.copy_to(grads.data()) << ys.copy_to(values.data()) << synchronize();
    GradCheckReport report;
    report.samples = n;
    for (size_t s = 0; s < n; ++s) {
        bool bad = false;
        for (size_t k = 0; k < N; ++k) {
            float fd = (values[(s * N + k) * 2] - values[(s * N + k) * 2 + 1]) / (2 * steps[s * N + k]);
            float ad = grads[s][k];
            float err = std::fabs(ad - fd) / std::max(1.0f, std::fabs(fd));
            if (!(err <= options.tolerance)) bad = true;   // NaN counts as bad
            if (!(err <= report.max_relative_error)) {
                report.max_relative_error = std::isnan(err) ? INFINITY : err;
                std::ostringstream os;
                os << "sample " << s << ", input " << k << ": reverse mode " << ad << ", finite difference " << fd;
                report.worst = os.str();
            }
        }
        report.bad += bad;
    }
    report.bad_fraction = n ? float(report.bad) / float(n) : 0.0f;
    return report;
}

} // namespace adjoint
