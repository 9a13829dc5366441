// Optimizer kernels. Elements whose learning rate is 0 are fixed scene values and are left alone.
#include "kernels.h"

namespace adjoint::app {

namespace {

// The sums have a few hundred threads: small blocks let lavapipe share them among its threads (one block of
// 256 would run on one CPU core).
constexpr uint32_t kSumBlock = 64;

// Adam with bias correction; the step is projected onto [lo, hi] (colours stay non-negative, ...).
auto adam_kernel() {
    return Kernel1D([](BufferFloat p, BufferFloat g, BufferFloat m, BufferFloat v, BufferFloat lr, BufferFloat lo,
                          BufferFloat hi, Float lr_scale, Float b1, Float b2, Float eps, Float bc1,
                          Float bc2) noexcept {
    UInt i = dispatch_id().x;
    Float rate = lr.read(i) * lr_scale;
    $if (rate > 0.0f) {
        Float gi = g.read(i);
        Float mi = b1 * m.read(i) + (1.0f - b1) * gi;
        Float vi = b2 * v.read(i) + (1.0f - b2) * gi * gi;
        m.write(i, mi);
        v.write(i, vi);
        Float step = rate * (mi / bc1) / (sqrt(vi / bc2) + eps);
        p.write(i, clamp(p.read(i) - step, lo.read(i), hi.read(i)));
    };
    });
}

auto sgd_kernel() {
    return Kernel1D([](BufferFloat p, BufferFloat g, BufferFloat m, BufferFloat lr, BufferFloat lo, BufferFloat hi,
                         Float lr_scale, Float momentum) noexcept {
    UInt i = dispatch_id().x;
    Float rate = lr.read(i) * lr_scale;
    $if (rate > 0.0f) {
        Float mi = momentum * m.read(i) + g.read(i);
        m.write(i, mi);
        p.write(i, clamp(p.read(i) - rate * mi, lo.read(i), hi.read(i)));
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

OptimKernels::OptimKernels(Device& device)
    : adam(device.compile(adam_kernel(), {.name = "optim_adam"})),
      sgd(device.compile(sgd_kernel(), {.name = "optim_sgd"})),
      sum_chunks(device.compile(sum_kernel(), {.name = "sum_chunks"})),
      parameter_sums(device.compile(parameter_sums_kernel(), {.name = "parameter_sums"})) {}

} // namespace adjoint::app
