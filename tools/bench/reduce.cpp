// Section "reduce": a 2^22-element float sum into one float, scattered with one float atomic per element
// vs. reduced first: per subgroup (subgroup_add, one atomic per subgroup), per block (subgroup sums
// combined in shared memory after a barrier, one atomic per block), and per block by shared memory alone.
// The lesson for gradient scatters: what to reduce with before scattering. On lavapipe (Mesa 22.3)
// subgroup sums are cheap and barriers are not: a block's threads run as SIMD groups that must all stop
// and resume at each sync_block().
#include "bench.h"

#include <cmath>
#include <random>
#include <stdexcept>

namespace adjoint::bench {

json bench_reduce(Env& env) {
    const uint32_t n = env.quick() ? 1u << 16 : 1u << 22;
    const Reps reps = env.reps({2, 10}, {1, 3});
    Device& device = env.device();
    Stream& stream = env.stream();

    std::vector<float> host(n);
    std::mt19937 rng(17);
    for (auto& v : host) v = float(rng() % 4);   // small integers: every partial sum (< 2^24) is exact
    double want = 0;
    for (float v : host) want += v;

    Kernel1D per_element = [](BufferFloat x, BufferFloat total) noexcept {
        total.atomic(0u).fetch_add(x.read(dispatch_id().x));
    };
    Kernel1D per_block = [](BufferFloat x, BufferFloat total) noexcept {
        set_block_size(256);
        Shared<float> partial(256);   // one slot per subgroup; room for subgroups of one thread
        UInt t = thread_id().x;
        Float s = subgroup_add(x.read(dispatch_id().x));
        $if (subgroup_elect()) { partial.write(t / subgroup_size(), s); };
        sync_block();
        $if (t < subgroup_size()) {   // the first subgroup sums the subgroup sums
            Float v = 0.0f;
            $for (g, t, 256u / subgroup_size(), subgroup_size()) { v += partial.read(g); };
            v = subgroup_add(v);
            $if (subgroup_elect()) { total.atomic(0u).fetch_add(v); };
        };
    };
    Kernel1D per_subgroup = [](BufferFloat x, BufferFloat total) noexcept {
        Float s = subgroup_add(x.read(dispatch_id().x));
        $if (subgroup_elect()) { total.atomic(0u).fetch_add(s); };
    };
    Kernel1D shared_only = [](BufferFloat x, BufferFloat total) noexcept {
        set_block_size(256);
        Shared<float> partial(256);
        UInt t = thread_id().x;
        partial.write(t, x.read(dispatch_id().x));
        sync_block();
        $if (t < 32u) {
            Float v = 0.0f;
            $for (g, t, 256u, 32u) { v += partial.read(g); };
            partial.write(t, v);
        };
        sync_block();
        $if (t == 0u) {
            Float v = 0.0f;
            $for (g, 0u, 32u) { v += partial.read(g); };
            total.atomic(0u).fetch_add(v);
        };
    };
    // The floor: the same reads and dispatch, no sum (the inputs are never negative).
    Kernel1D read_only = [](BufferFloat x, BufferFloat total) noexcept {
        Float v = x.read(dispatch_id().x);
        $if (v < 0.0f) { total.write(0u, v); };
    };
    auto scatter = device.compile(per_element, {.name = "bench_reduce_per_element"});
    auto floor = device.compile(read_only, {.name = "bench_reduce_read_only"});
    auto reduce = device.compile(per_block, {.name = "bench_reduce_per_block"});
    auto sub = device.compile(per_subgroup, {.name = "bench_reduce_per_subgroup"});
    auto shared = device.compile(shared_only, {.name = "bench_reduce_shared"});
    auto x = device.create_buffer<float>(n);
    auto total = device.create_buffer<float>(1);
    stream << x.copy_from(host.data()) << synchronize();

    float got_scatter = 0, got_reduce = 0, got_sub = 0, got_shared = 0, got_floor = 0;
    auto run = [&](const Shader<1>& shader, float& out) {
        stream << total.fill_zero() << shader(x, total).dispatch(n) << total.copy_to(&out) << synchronize();
    };
    for (int i = 0; i < reps.warmup; ++i) {
        run(scatter, got_scatter);
        run(reduce, got_reduce);
        run(sub, got_sub);
        run(shared, got_shared);
        run(floor, got_floor);
    }
    Samples s_scatter, s_reduce, s_sub, s_shared, s_floor;
    for (int i = 0; i < reps.reps; ++i) {   // interleaved, as the other sections
        auto t0 = Clock::now();
        run(scatter, got_scatter);
        s_scatter.add(ms_since(t0));
        t0 = Clock::now();
        run(reduce, got_reduce);
        s_reduce.add(ms_since(t0));
        t0 = Clock::now();
        run(sub, got_sub);
        s_sub.add(ms_since(t0));
        t0 = Clock::now();
        run(shared, got_shared);
        s_shared.add(ms_since(t0));
        t0 = Clock::now();
        run(floor, got_floor);
        s_floor.add(ms_since(t0));
    }
    for (float got : {got_scatter, got_reduce, got_sub, got_shared})
        if (got != float(want))
            throw std::runtime_error("reduce: a device sum (" + std::to_string(got) + ") differs from the host's (" +
                                     std::to_string(want) + ")");
    json j;
    j["n"] = n;
    j["subgroup_size"] = device.subgroup_size();
    j["timed"] = "zero the total, one dispatch, read the total back, synchronize";
    j["read_only_floor"] = s_floor.to_json();
    j["atomic_per_element"] = s_scatter.to_json();
    j["subgroup_sum_atomic_per_subgroup"] = s_sub.to_json();
    j["subgroup_and_shared_atomic_per_block"] = s_reduce.to_json();
    j["shared_tree_atomic_per_block"] = s_shared.to_json();
    j["per_element_over_per_subgroup"] = s_scatter.median() / s_sub.median();
    j["per_element_over_per_block"] = s_scatter.median() / s_reduce.median();
    return j;
}

} // namespace adjoint::bench
