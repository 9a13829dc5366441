// Optimizer kernels: the optimizer plug-in's step fused with the per-parameter sums, and the chunked sums. Each
// chunk is one subgroup's: its threads take every lanes-th element (short loops, neighbouring reads) and
// subgroup_add() joins them, no barriers (costly on lavapipe) and no serial loop over a whole chunk. Elements
// whose learning rate is 0 are fixed scene values and are left alone.
#include "kernels.h"

namespace adjoint::app {

namespace {

// Small blocks let lavapipe share the few hundred subgroups among its threads.
constexpr uint32_t kSumBlock = 64;

// One element's sums before the step: (p - truth)^2, truth^2, g^2 and whether g is not finite (a comparison with
// NaN is false, so the select counts NaN and inf alike).
Float4 element_sums(const Expr<float>& p, const Expr<float>& truth, const Expr<float>& g) {
    Float d = p - truth;
    Float bad = ite(abs(g) <= 3.0e38f, 0.0f, 1.0f);
    return make_float4(d * d, truth * truth, ite(bad > 0.0f, 0.0f, g * g), bad);
}

// Per chunk: the sums of the values before the step, then the plug-in's step (adjoint/app/plugins.h) projected
// onto [lo, hi]. The chunk's whole float4s (a parameter owns every float4 inside its range, so no other thread
// writes them) are read and written as float4s: lavapipe loads and stores lane by lane, and a float4 costs it
// what one float does. The few floats before the first and after the last whole float4 go one by one. State
// arrays the optimizer does not use are bound but never read.
auto step_kernel(const OptimizerModel& model, uint32_t lanes) {
    return Kernel1D([&model, lanes](BufferVar<ErrorChunk> chunks, BufferFloat p, BufferFloat g, BufferFloat s0,
                                    BufferFloat s1, BufferFloat truth, BufferFloat4 p4, BufferFloat4 g4,
                                    BufferFloat4 s04, BufferFloat4 s14, BufferFloat4 truth4, BufferFloat4 rates,
                                    BufferFloat4 out, Float lr_scale, Float4 settings, Float4 per_iteration) noexcept {
    set_block_size(kSumBlock);
    UInt c = dispatch_id().x / lanes, lane = dispatch_id().x % lanes;
    auto ch = chunks.read(c);
    Float4 r = rates.read(ch.rate);   // a chunk is one parameter's, within one run of its ranges
    Float rate = r.x * lr_scale;
    Float4 s = make_float4(0.0f);
    const size_t used = model.state.size();
    // Elements with their values, their state and where they go: their sums, then their step.
    using Floats = std::vector<Expr<float>>;
    using State = std::array<Floats, 2>;
    auto update = [&](const Floats& pv, const Floats& tv, const Floats& gv, auto read_state, auto write) {
        for (size_t k = 0; k < pv.size(); ++k) s = s + element_sums(pv[k], tv[k], gv[k]);
        $if (rate > 0.0f) {
            State state = read_state();
            Floats next;
            for (size_t k = 0; k < pv.size(); ++k) {
                std::array<Float, 2> st{state[0][k], state[1][k]};
                Float step = model.step({gv[k], rate, settings, per_iteration}, st);
                state[0][k] = st[0], state[1][k] = st[1];
                next.push_back(clamp(pv[k] - step, r.y, r.z));
            }
            write(next, state);
        };
    };
    auto four = [](const Expr<float4>& v) { return Floats{v.x, v.y, v.z, v.w}; };
    auto float4_of = [](const Floats& v) { return make_float4(v[0], v[1], v[2], v[3]); };
    UInt first = (ch.begin + 3u) / 4u, last = max(ch.end / 4u, first);   // the whole float4s [first, last)
    $for (q, first + lane, last, lanes) {
        update(four(p4.read(q)), four(truth4.read(q)), four(g4.read(q)),
               [&] {
                   State st{Floats(4, 0.0f), Floats(4, 0.0f)};
                   if (used > 0) st[0] = four(s04.read(q));
                   if (used > 1) st[1] = four(s14.read(q));
                   return st;
               },
               [&](const Floats& v, const State& st) {
                   if (used > 0) s04.write(q, float4_of(st[0]));
                   if (used > 1) s14.write(q, float4_of(st[1]));
                   p4.write(q, float4_of(v));
               });
    };
    // The rest one by one: `head` floats from the chunk's begin, then those from the last whole float4's end.
    UInt head = min(first * 4u, ch.end) - ch.begin, tail_at = min(max(last * 4u, ch.begin + head), ch.end);
    $for (j, lane, head + (ch.end - tail_at), lanes) {
        UInt i = ite(j < head, ch.begin + j, tail_at + (j - head));
        update({p.read(i)}, {truth.read(i)}, {g.read(i)},
               [&] {
                   State st{Floats{0.0f}, Floats{0.0f}};
                   if (used > 0) st[0][0] = s0.read(i);
                   if (used > 1) st[1][0] = s1.read(i);
                   return st;
               },
               [&](const Floats& v, const State& st) {
                   if (used > 0) s0.write(i, st[0][0]);
                   if (used > 1) s1.write(i, st[1][0]);
                   p.write(i, v[0]);
               });
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
                          {.name = "optim_" + std::string(optimizer.name), .disjoint_views = true})),
      lanes(sum_lanes(device)) {}

Shader<1> compile_sum_chunks(Device& device) {
    return device.compile(sum_kernel(sum_lanes(device)), {.name = "sum_chunks"});
}

} // namespace adjoint::app
