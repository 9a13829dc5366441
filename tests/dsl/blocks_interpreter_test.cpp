// The interpreter's lockstep model (no device): which threads a subgroup operation sees as control flow
// splits and joins, shared arrays per block, and which kernels run a block at a time.
#include <adjoint/adjoint.h>
#include <adjoint/pipeline/lower.h>
#include <adjoint/ir/interpreter.h>

#include <gtest/gtest.h>

namespace adjoint::test {

namespace {

// Runs `kernel` over `n` threads with uint buffers, in subgroups of `subgroup` threads.
template <typename K>
std::unique_ptr<ir::Interpreter> run(const K& kernel, uint32_t n, std::vector<std::vector<uint32_t>*> buffers,
                                     uint32_t subgroup = 4) {
    static std::vector<std::unique_ptr<ir::Function>> keep;   // the interpreter refers to the function
    auto lowered = pipeline::lower(*kernel.function());
    keep.push_back(std::move(lowered.function));
    static std::vector<std::unique_ptr<ir::HostResource>> resources;
    std::vector<ir::HostArg> args;
    for (auto* b : buffers) {
        resources.push_back(std::make_unique<ir::HostResource>());
        resources.back()->data = reinterpret_cast<std::byte*>(b->data());
        resources.back()->bytes = b->size() * 4;
        ir::HostArg a;
        a.resource = resources.back().get();
        args.push_back(a);
    }
    auto interp = std::make_unique<ir::Interpreter>(*keep.back(), std::move(args), std::array<uint32_t, 3>{n, 1, 1});
    interp->subgroup_size = subgroup;
    interp->run_all();
    return interp;
}

} // namespace

TEST(BlocksInterpreter, ALoopLosesThreadsAsTheyLeaveIt) {
    // Thread t runs t % 4 + 1 iterations; each iteration counts the subgroup's threads still looping.
    Kernel1D k = [](BufferUInt seen) noexcept {
        set_block_size(8);
        UInt t = thread_id().x;
        UInt total = 0u;
        UInt one = 1u;
        $for (j, 0u, t % 4u + 1u) { total += subgroup_add(one); };
        seen.write(t, total);
    };
    std::vector<uint32_t> seen(8, 0);
    auto interp = run(k, 8, {&seen}, 4);
    EXPECT_TRUE(interp->runs_blocks_in_lockstep());
    // Subgroups {0,1,2,3} and {4,5,6,7}, each with trip counts 1, 2, 3, 4: 4, then 3, 2, 1 threads.
    EXPECT_EQ(seen, (std::vector<uint32_t>{4, 7, 9, 10, 4, 7, 9, 10}));
}

TEST(BlocksInterpreter, BranchesBreaksContinuesAndSwitches) {
    Kernel1D k = [](BufferUInt out) noexcept {
        set_block_size(8);
        UInt t = thread_id().x;
        UInt one = 1u;
        UInt r = 0u;
        $if (t % 2u == 0u) { r = subgroup_add(one) * 100u; } $else { r = subgroup_add(one); };   // 4 and 4
        $for (j, 0u, 8u) {
            $if (j == t) { $break; };
            $if (j % 2u == 1u) { $continue; };
            r += subgroup_add(one) * 1000u;   // threads still in the loop at even j
        };
        $switch (t % 3u) {
            $case (0u) { r += subgroup_add(one) * 100000u; };   // threads 0, 3, 6
            $default { r += 0u; };
        };
        out.write(t, r);
    };
    std::vector<uint32_t> out(8, 0);
    run(k, 8, {&out}, 8);
    for (uint32_t t = 0; t < 8; ++t) {
        uint32_t want = t % 2 == 0 ? 400 : 4;
        for (uint32_t j = 0; j < t; ++j)
            if (j % 2 == 0) want += 1000 * (8 - (j + 1));   // threads j+1..7 are still looping at j
        if (t % 3 == 0) want += 300000;
        EXPECT_EQ(out[t], want) << "thread " << t;
    }
}

TEST(BlocksInterpreter, SharedArraysStartAtZeroInEachBlock) {
    Kernel1D k = [](BufferUInt out) noexcept {
        set_block_size(4);
        Shared<uint> counter(1);
        UInt before = counter.atomic(0u).fetch_add(1u);
        sync_block();
        out.write(dispatch_id().x, before * 10u + counter.read(0u));
    };
    std::vector<uint32_t> out(8, 0);
    run(k, 8, {&out});
    EXPECT_EQ(out, (std::vector<uint32_t>{4, 14, 24, 34, 4, 14, 24, 34}));
}

TEST(BlocksInterpreter, PlainKernelsRunOneThreadAtATime) {
    Kernel1D k = [](BufferUInt out) noexcept { out.write(dispatch_id().x, thread_id().x + block_id().x * 1000u); };
    std::vector<uint32_t> out(300, 0);
    auto interp = run(k, 300, {&out});
    EXPECT_FALSE(interp->runs_blocks_in_lockstep());
    for (uint32_t i = 0; i < 300; ++i) EXPECT_EQ(out[i], i % 256 + (i / 256) * 1000) << i;
}

} // namespace adjoint::test
