// 1D dispatches of up to 2^32 - 1 threads: the planned rows of groups, and the generated kernel's last row.
#include "support/device_fixture.h"
#include "support/error_text.h"

#include "compile/glsl_compiler.h"
#include "vulkan/vk_runtime.h"

#include <adjoint/pipeline/lower.h>
#include <adjoint/codegen/binding_layout.h>
#include <adjoint/codegen/glsl.h>

namespace adjoint::test {

namespace {

using Groups = std::array<uint32_t, 3>;
constexpr Groups kLavapipeLimits = {65535, 65535, 65535};
constexpr Groups kBlock1D = {256, 1, 1};

} // namespace

TEST(DispatchGrid, OneDimensionalSizesUpToTheLargestBecomeRows) {
    // 2^32 - 1 threads in blocks of 256 need 2^24 groups: 257 rows of 65535 (the last row mostly surplus).
    EXPECT_EQ(codegen::plan_dispatch("k", 1, {0xFFFFFFFFu, 1, 1}, kBlock1D, kLavapipeLimits), (Groups{65535, 257, 1}));
    // The first size that needs a 257th row, and the last one that does not.
    EXPECT_EQ(codegen::plan_dispatch("k", 1, {4294901760u + 1, 1, 1}, kBlock1D, kLavapipeLimits), (Groups{65535, 257, 1}));
    EXPECT_EQ(codegen::plan_dispatch("k", 1, {4294901760u, 1, 1}, kBlock1D, kLavapipeLimits), (Groups{65535, 256, 1}));
    // Within the x limit: one row, exactly the groups needed.
    EXPECT_EQ(codegen::plan_dispatch("k", 1, {65535u * 256u, 1, 1}, kBlock1D, kLavapipeLimits), (Groups{65535, 1, 1}));
    EXPECT_EQ(codegen::plan_dispatch("k", 1, {65535u * 256u + 1, 1, 1}, kBlock1D, kLavapipeLimits), (Groups{65535, 2, 1}));
    EXPECT_EQ(codegen::plan_dispatch("k", 1, {1, 1, 1}, kBlock1D, kLavapipeLimits), (Groups{1, 1, 1}));
    // A device with a large x limit needs no rows: 2^24 groups of 256 end exactly at 2^32.
    EXPECT_EQ(codegen::plan_dispatch("k", 1, {0xFFFFFFFFu, 1, 1}, kBlock1D, {0x7FFFFFFF, 65535, 65535}),
              (Groups{16777216, 1, 1}));
    EXPECT_EQ(codegen::plan_dispatch("k", 1, {0, 1, 1}, kBlock1D, kLavapipeLimits), (Groups{0, 0, 0}));
}

TEST(DispatchGrid, RowsCoverEveryGroupWithNoEmptyRow) {
    for (uint32_t n : {1u, 255u, 256u, 257u, 16776960u, 16776961u, 123456789u, 4294901760u, 4294901761u,
                       0xFFFFFF00u, 0xFFFFFFFFu}) {
        Groups g = codegen::plan_dispatch("k", 1, {n, 1, 1}, kBlock1D, kLavapipeLimits);
        uint64_t needed = (uint64_t(n) + 255) / 256;
        EXPECT_LE(g[0], 65535u) << n;
        EXPECT_GE(uint64_t(g[0]) * g[1], needed) << n;
        EXPECT_LT(uint64_t(g[0]) * (g[1] - 1), needed) << n;
        EXPECT_EQ(g[2], 1u) << n;
    }
}

TEST(DispatchGrid, GridsBeyondTheLimitsAreRefusedByName) {
    EXPECT_TRUE(throws_error(
        [] {
            codegen::plan_dispatch("wide", 2, {65536u * 16u, 1, 1}, {16, 16, 1}, kLavapipeLimits);
        },
        "dispatch of 'wide': 65536 workgroups in dimension 0 exceed the device limit of 65535"));
    // A device whose limits cannot hold 2^24 groups even as rows.
    EXPECT_TRUE(throws_error(
        [] {
            codegen::plan_dispatch("long", 1, {0xFFFFFFFFu, 1, 1}, kBlock1D, {1000, 1000, 1});
        },
        "dispatch of 'long': 4294967295 threads need 16777216 workgroups of 256, more than the device's "
        "limits of 1000 x 1000 hold"));
}

// The last row of a dispatch of 2^32 - 1 threads, run for real: the kernel's own GLSL with its group's y
// shifted by 256 rows, so 65535 groups (16.8 million threads) stand in for the 4.3 billion of the full grid.
// Before the fix, the row's surplus groups formed indices past 2^32 that wrapped to 0, 1, 2, ... and ran
// those threads a second time.
TEST(DispatchGrid, BlocksThatAreNotPowersOfTwoStopBeforeIndicesWrap) {
    // 96 threads per block: ceil((2^32 - 1) / 96) blocks would number threads up to past 2^32.
    std::string e = error_of([] { codegen::plan_dispatch("k", 1, {0xFFFFFFFFu, 1, 1}, {96, 1, 1}, kLavapipeLimits); });
    EXPECT_NE(e.find("dispatch of 'k': 4294967295 threads in dimension 0 in blocks of 96 would number threads past 2^32"),
              std::string::npos) << e;
    // The largest size whose blocks of 96 all end within 2^32: 44739242 blocks, ending at 4294967232.
    EXPECT_EQ(codegen::plan_dispatch("k", 1, {4294967232u, 1, 1}, {96, 1, 1}, {65535, 65535, 65535}),
              (Groups{65535, 683, 1}));
    EXPECT_EQ(codegen::plan_dispatch("k", 2, {1000, 700, 1}, {12, 10, 1}, kLavapipeLimits), (Groups{84, 70, 1}));
}

TEST(DispatchGrid, TheLastRowOfTheLargestDispatchRunsEachIndexOnce) {
    constexpr uint32_t n = 0xFFFFFFFFu;
    constexpr uint32_t last_row_start = 256u * 65535u * 256u;   // 4,294,901,760
    Kernel1D k = [](BufferUInt low, BufferUInt high) noexcept {
        auto i = dispatch_id().x;
        $if (i < 1024u) { low.atomic(i).fetch_add(1u); };
        $if (i >= 4294901760u) { high.atomic(i - 4294901760u).fetch_add(1u); };
    };
    Groups grid = codegen::plan_dispatch("k", 1, {n, 1, 1}, kBlock1D, kLavapipeLimits);
    ASSERT_EQ(grid, (Groups{65535, 257, 1}));

    auto lowered = pipeline::lower(*k.function(), "last_row");
    codegen::GlslKernel glsl = codegen::emit_glsl(*lowered.function);
    std::string source = glsl.source;
    const std::string group_y = "gl_WorkGroupID.y";
    size_t at = source.find(group_y);
    ASSERT_NE(at, std::string::npos) << source;
    ASSERT_EQ(source.find(group_y, at + 1), std::string::npos) << "the row is read once, in the prologue";
    source.replace(at, group_y.size(), "(gl_WorkGroupID.y + " + std::to_string(grid[1] - 1) + "u)");
    ASSERT_EQ(glsl.buffer_count, 2u);
    ASSERT_EQ(glsl.image_count, 0u);

    auto ctx = vk::Context::create(vk::ContextOptions::from_environment());
    {
        auto spirv = compile::compile_glsl(source, "last_row", true);
        vk::Pipeline pipeline(ctx, spirv, {glsl.buffer_count, 0, glsl.push_bytes}, "last_row");
        vk::Buffer low(ctx, 1024 * 4), high(ctx, 65536 * 4);
        vk::Bindings b;
        b.buffers = {&low, &high};
        b.buffer_written = {true, true};
        b.push_constants.resize(glsl.push_bytes);
        const uint32_t size[3] = {n, 1, 1};
        std::memcpy(b.push_constants.data(), size, sizeof size);
        vk::Stream stream(ctx);
        stream.fill_zero(low);
        stream.fill_zero(high);
        stream.dispatch(pipeline, b, grid[0], 1, 1);
        std::vector<uint32_t> got_low(1024), got_high(65536);
        stream.download(low, 0, got_low.data(), 1024 * 4);
        stream.download(high, 0, got_high.data(), 65536 * 4);
        stream.synchronize();
        uint32_t wrapped = 0, missing = 0;
        for (uint32_t v : got_low) wrapped += v;
        for (uint32_t j = 0; j + 1 < 65536; ++j) missing += got_high[j] != 1;
        EXPECT_EQ(wrapped, 0u) << "threads of the last row wrapped around to low indices";
        EXPECT_EQ(missing, 0u) << "indices " << last_row_start << ".." << n - 1 << " must each run once";
        EXPECT_EQ(got_high[65535], 0u) << "index 2^32 - 1 is past the dispatch";
    }
    auto messages = ctx->validation_messages();
    EXPECT_EQ(ctx->validation_message_count(), 0u) << (messages.empty() ? "" : messages.front());
}

} // namespace adjoint::test
