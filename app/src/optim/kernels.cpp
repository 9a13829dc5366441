// Optimizer kernels: the optimizer plug-in's step and the sums. Elements whose learning rate is 0 are fixed
// scene values and are left alone.
#include "kernels.h"

namespace adjoint::app {

namespace {

// The sums have a few hundred threads: small blocks let lavapipe share them among its threads (one block of
// 256 would run on one CPU core).
constexpr uint32_t kSumBlock = 64;

// One optimizer step per element from `first` on (the plug-in's formula, adjoint/app/plugins.h), projected onto
// [lo, hi] (colours stay non-negative, ...). State arrays the optimizer does not use are bound but never read.
auto update_kernel(const OptimizerModel& model) {
    return Kernel1D([&model](BufferFloat p, BufferFloat g, BufferFloat s0, BufferFloat s1, BufferFloat lr,
                             BufferFloat lo, BufferFloat hi, Float lr_scale, Float4 settings,
                             Float4 per_iteration, UInt first) noexcept {
    UInt i = first + dispatch_id().x;
    Float rate = lr.read(i) * lr_scale;
    const size_t used = model.state.size();
    $if (rate > 0.0f) {
        std::array<Float, 2> state{0.0f, 0.0f};
        if (used > 0) state[0] = s0.read(i);
        if (used > 1) state[1] = s1.read(i);
        Float step = model.step({g.read(i), rate, settings, per_iteration}, state);
        if (used > 0) s0.write(i, state[0]);
        if (used > 1) s1.write(i, state[1]);
        p.write(i, clamp(p.read(i) - step, lo.read(i), hi.read(i)));
    };
    });
}

// out[first + c] = sum of in[begin + c * chunk .. min(begin + (c + 1) * chunk, end)).
auto sum_kernel() {
    return Kernel1D([](BufferFloat in, BufferFloat out, UInt begin, UInt end, UInt first) noexcept {
    set_block_size(kSumBlock);
    UInt c = dispatch_id().x;
    Float s = 0.0f;
    UInt from = begin + c * kSumChunk;
    $for (k, from, min(from + kSumChunk, end)) { s += in.read(k); };
    out.write(first + c, s);
    });
}

// Per chunk of a free parameter: sum (p - truth)^2, sum truth^2, sum g^2 and the count of non-finite
// gradient elements (a comparison with NaN is false, so the select counts NaN and inf alike).
auto parameter_sums_kernel() {
    return Kernel1D([](BufferVar<ErrorChunk> chunks, BufferFloat p, BufferFloat truth, BufferFloat g,
                                    BufferFloat4 out) noexcept {
    set_block_size(kSumBlock);
    UInt c = dispatch_id().x;
    auto ch = chunks.read(c);
    Float4 s = make_float4(0.0f);
    $for (k, ch.begin, ch.end) {
        Float d = p.read(k) - truth.read(k), t = truth.read(k), gk = g.read(k);
        Float bad = ite(abs(gk) <= 3.0e38f, 0.0f, 1.0f);
        s = s + make_float4(d * d, t * t, ite(bad > 0.0f, 0.0f, gk * gk), bad);
    };
    out.write(c, s);
    });
}

} // namespace

OptimKernels::OptimKernels(Device& device, const OptimizerModel& optimizer)
    : update(device.compile(update_kernel(optimizer), {.name = "optim_" + std::string(optimizer.name)})),
      parameter_sums(device.compile(parameter_sums_kernel(), {.name = "parameter_sums"})) {}

Shader<1> compile_sum_chunks(Device& device) { return device.compile(sum_kernel(), {.name = "sum_chunks"}); }

} // namespace adjoint::app
