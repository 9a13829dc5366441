// Optimizer kernels: the optimizer plug-in's step fused with the per-parameter sums, and the chunked sums. Each
// chunk is one subgroup's: its threads take every lanes-th element (short loops, neighbouring reads) and
// subgroup_add() joins them, no barriers (costly on lavapipe) and no serial loop over a whole chunk. Elements
// whose learning rate is 0 are fixed scene values and are left alone.
#include "kernels.h"

namespace adjoint::app {

namespace {

// Small blocks let lavapipe share the few hundred subgroups among its threads.
constexpr uint32_t kSumBlock = 64;

// Per chunk: the sums of the values before the step (a comparison with NaN is false, so the select counts NaN
// and inf alike), then the plug-in's step (adjoint/app/plugins.h) projected onto [lo, hi]. State arrays the
// optimizer does not use are bound but never read.
auto step_kernel(const OptimizerModel& model, uint32_t lanes) {
    return Kernel1D([&model, lanes](BufferVar<ErrorChunk> chunks, BufferFloat p, BufferFloat g, BufferFloat s0,
                             BufferFloat s1, BufferFloat4 rates, BufferFloat truth,
                             BufferFloat4 out, Float lr_scale, Float4 settings, Float4 per_iteration) noexcept {
    set_block_size(kSumBlock);
    UInt c = dispatch_id().x / lanes, lane = dispatch_id().x % lanes;
    auto ch = chunks.read(c);
    Float4 r = rates.read(ch.parameter);   // a chunk is one parameter's: one rate and one range
    Float rate = r.x * lr_scale;
    Float4 s = make_float4(0.0f);
    const size_t used = model.state.size();
    $for (i, ch.begin + lane, ch.end, lanes) {
        Float pi = p.read(i), t = truth.read(i), gi = g.read(i);
        Float d = pi - t;
        Float bad = ite(abs(gi) <= 3.0e38f, 0.0f, 1.0f);
        s = s + make_float4(d * d, t * t, ite(bad > 0.0f, 0.0f, gi * gi), bad);
        $if (rate > 0.0f) {
            std::array<Float, 2> state{0.0f, 0.0f};
            if (used > 0) state[0] = s0.read(i);
            if (used > 1) state[1] = s1.read(i);
            Float step = model.step({gi, rate, settings, per_iteration}, state);
            if (used > 0) s0.write(i, state[0]);
            if (used > 1) s1.write(i, state[1]);
            p.write(i, clamp(pi - step, r.y, r.z));
        };
    };
    Float4 total = subgroup_add(s);
    $if (lane == 0u) { out.write(c, total); };
    });
}

auto sum_kernel(uint32_t lanes) {
    return Kernel1D([lanes](BufferFloat a, BufferFloat b, BufferFloat out, UInt begin, UInt end, UInt first_a,
                       UInt first_b) noexcept {
    set_block_size(kSumBlock);
    UInt c = dispatch_id().x / lanes, lane = dispatch_id().x % lanes;
    UInt from = begin + c * kSumChunk;
    Float sa = 0.0f, sb = 0.0f;
    $for (k, from + lane, min(from + kSumChunk, end), lanes) {
        sa += a.read(k);
        sb += b.read(k);
    };
    Float ta = subgroup_add(sa), tb = subgroup_add(sb);
    $if (lane == 0u) {
        out.write(first_a + c, ta);
        out.write(first_b + c, tb);
    };
    });
}

} // namespace

// A chunk is one subgroup's, inside one block: the subgroup must divide both the block and the chunk. The
// kernels take the size as a constant (a power of two: shifts, not lavapipe's lane-by-lane division).
uint32_t sum_lanes(Device& device) {
    const uint32_t lanes = device.subgroup_size();
    if (lanes == 0 || kSumBlock % lanes != 0 || kSumChunk % lanes != 0)
        fail("the optimizer's sums need a subgroup size dividing ", kSumBlock, "; this device's is ", lanes);
    return lanes;
}

OptimKernels::OptimKernels(Device& device, const OptimizerModel& optimizer)
    : step(device.compile(step_kernel(optimizer, sum_lanes(device)),
                          {.name = "optim_" + std::string(optimizer.name)})),
      lanes(sum_lanes(device)) {}

Shader<1> compile_sum_chunks(Device& device) {
    return device.compile(sum_kernel(sum_lanes(device)), {.name = "sum_chunks"});
}

} // namespace adjoint::app
