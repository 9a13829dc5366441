// exact(): its value is declared `precise`, and glslang marks every operation it depends on NoContraction in the
// SPIR-V, so that no driver fuses them into fma (what the rasterizer's watertight edges rely on).
#include <adjoint/adjoint.h>
#include <adjoint/codegen/glsl.h>
#include <adjoint/pipeline/lower.h>

#include "compile/glsl_compiler.h"

#include <gtest/gtest.h>

#include <set>

namespace adjoint::test {

namespace {

// The result ids of the SPIR-V's float multiplications and subtractions, and the ids decorated NoContraction.
struct Contraction {
    std::set<uint32_t> arithmetic, no_contraction;
};
Contraction scan(const std::vector<uint32_t>& spirv) {
    constexpr uint32_t kOpDecorate = 71, kOpFSub = 131, kOpFMul = 133, kNoContraction = 42;
    Contraction c;
    for (size_t at = 5; at < spirv.size();) {
        const uint32_t words = spirv[at] >> 16, op = spirv[at] & 0xffffu;
        if (words == 0) break;
        if (op == kOpDecorate && words >= 3 && spirv[at + 2] == kNoContraction) c.no_contraction.insert(spirv[at + 1]);
        if ((op == kOpFMul || op == kOpFSub) && words >= 3) c.arithmetic.insert(spirv[at + 2]);
        at += words;
    }
    return c;
}

template <typename K>
Contraction contraction_of(K& kernel) {
    auto lowered = pipeline::lower(*kernel.function());
    auto glsl = codegen::emit_glsl(*lowered.function, {});
    return scan(compile::compile_glsl(glsl.source, "exact", false));
}

} // namespace

TEST(Exact, EveryMultiplicationAndSubtractionItDependsOnIsNoContraction) {
    Kernel1D plain = [](BufferFloat4 in, BufferFloat out) noexcept {
        Float4 v = in.read(dispatch_id().x);
        out.write(dispatch_id().x, v.x * v.y - v.z * v.w);
    };
    Kernel1D exact_one = [](BufferFloat4 in, BufferFloat out) noexcept {
        Float4 v = in.read(dispatch_id().x);
        out.write(dispatch_id().x, exact(v.x * v.y - v.z * v.w));
    };
    const Contraction a = contraction_of(plain), b = contraction_of(exact_one);
    EXPECT_EQ(a.arithmetic.size(), 3u);
    EXPECT_TRUE(a.no_contraction.empty());
    ASSERT_EQ(b.arithmetic.size(), 3u);   // two products and their difference
    for (uint32_t id : b.arithmetic) EXPECT_TRUE(b.no_contraction.count(id)) << "%" << id << " may be contracted";
}

} // namespace adjoint::test
