// Section "reduce": a 2^22-element float sum, scattered with one float atomic per element vs. reduced in
// each block first (subgroup sums combined in shared memory: one atomic per block). The lesson for gradient
// scatters on lavapipe: reduce before scattering.
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
    auto scatter = device.compile(per_element, {.name = "bench_reduce_per_element"});
    auto reduce = device.compile(per_block, {.name = "bench_reduce_per_block"});
    auto x = device.create_buffer<float>(n);
    auto total = device.create_buffer<float>(1);
    stream << x.copy_from(host.data()) << synchronize();

    float got_scatter = 0, got_reduce = 0;
    auto run = [&](const Shader<1>& shader, float& out) {
        stream << total.fill_zero() << shader(x, total).dispatch(n) << total.copy_to(&out) << synchronize();
    };
    for (int i = 0; i < reps.warmup; ++i) {
        run(scatter, got_scatter);
        run(reduce, got_reduce);
    }
    Samples s_scatter, s_reduce;
    for (int i = 0; i < reps.reps; ++i) {   // interleaved, as the other sections
        auto t0 = Clock::now();
        run(scatter, got_scatter);
        s_scatter.add(ms_since(t0));
        t0 = Clock::now();
        run(reduce, got_reduce);
        s_reduce.add(ms_since(t0));
    }
    if (got_scatter != float(want) || got_reduce != float(want))
        throw std::runtime_error("reduce: a device sum differs from the host's (" + std::to_string(got_scatter) + ", " +
                                 std::to_string(got_reduce) + ", want " + std::to_string(want) + ")");
    json j;
    j["n"] = n;
    j["subgroup_size"] = device.subgroup_size();
    j["timed"] = "zero the total, one dispatch, read the total back, synchronize";
    j["atomic_per_element"] = s_scatter.to_json();
    j["subgroup_shared_atomic_per_block"] = s_reduce.to_json();
    j["per_element_over_per_block"] = s_scatter.median() / s_reduce.median();
    return j;
}

} // namespace adjoint::bench
