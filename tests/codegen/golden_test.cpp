// Golden GLSL: the exact text codegen emits for a few representative kernels, and their binding layout.
//
// Each kernel is lowered as the runtime lowers it (pipeline::lower) and emitted with codegen::emit_glsl;
// the text must equal tests/codegen/golden/<name>.glsl byte for byte. After an intended change to codegen
// or to the passes, review the diff and approve the new text with
//     ADJOINT_APPROVE=1 ./tests/test_codegen        (from the build directory)
// which rewrites the golden files instead of failing; commit them with the change.
#include <adjoint/adjoint.h>
#include <adjoint/pipeline/lower.h>
#include <adjoint/codegen/glsl.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

struct GoldenParticle {
    adjoint::float3 pos;
    float mass;
    adjoint::float2 vel;
};
ADJOINT_STRUCT(GoldenParticle, pos, mass, vel)

namespace adjoint::test {

namespace {

std::filesystem::path golden_path(const std::string& name) {
    return std::filesystem::path(ADJOINT_SOURCE_DIR) / "tests" / "codegen" / "golden" / (name + ".glsl");
}

bool approving() {
    const char* v = std::getenv("ADJOINT_APPROVE");
    return v && std::string(v) == "1";
}

// Emits `kernel` under a fixed name (the default one holds a line number) and compares with its golden file.
template <typename K>
codegen::GlslKernel expect_golden(K& kernel, const std::string& name, const codegen::GlslOptions& options = {}) {
    kernel.set_name(name);
    auto lowered = pipeline::lower(*kernel.function());
    auto glsl = codegen::emit_glsl(*lowered.function, options);
    auto path = golden_path(name);
    if (approving()) {
        std::filesystem::create_directories(path.parent_path());
        std::ofstream(path, std::ios::binary) << glsl.source;
        std::printf("approved %s\n", path.string().c_str());
        return glsl;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        ADD_FAILURE() << "missing golden file " << path << "; run with ADJOINT_APPROVE=1 to create it. Emitted:\n"
                      << glsl.source;
        return glsl;
    }
    std::stringstream want;
    want << in.rdbuf();
    EXPECT_EQ(glsl.source, want.str()) << "GLSL of '" << name << "' differs from " << path
                                       << " (ADJOINT_APPROVE=1 accepts the new text)";
    return glsl;
}

} // namespace

TEST(GoldenGlsl, Elementwise) {
    Kernel1D k = [](BufferFloat x, BufferFloat out, Float scale) noexcept {
        auto i = dispatch_id().x;
        Float v = x.read(i);
        out.write(i, v * scale + sin(v) - clamp(v, 0.0f, 1.0f));
    };
    auto g = expect_golden(k, "elementwise");
    ASSERT_EQ(g.args.size(), 3u);
    EXPECT_EQ(g.args[0].kind, codegen::ArgSlot::Kind::Buffer);
    EXPECT_EQ(g.args[0].binding, 0u);
    EXPECT_FALSE(g.args[0].written);
    EXPECT_EQ(g.args[1].binding, 1u);
    EXPECT_TRUE(g.args[1].written);
    EXPECT_EQ(g.args[2].kind, codegen::ArgSlot::Kind::Push);
    EXPECT_EQ(g.args[2].offset, 12u) << "right after the uvec3 dispatch size";
    EXPECT_EQ(g.push_bytes, 16u);
    EXPECT_EQ(g.buffer_count, 2u);
    EXPECT_FALSE(g.uses_status);
}

TEST(GoldenGlsl, LoopsSwitchAndBranches) {
    Kernel1D k = [](BufferInt in, BufferInt out) noexcept {
        auto i = dispatch_id().x;
        Int n = in.read(i);
        Int acc = 0;
        $for (j, n) {
            $if (j % 2 == 0) { $continue; };
            $switch (j % 3) {
                $case (0) { acc += j; };
                $case (1) { acc -= 1; $break; };
                $default { acc *= 2; };
            };
            $if (acc > 100) { $break; };
        };
        $while (acc > 10) { acc = acc / 2; };
        // A signed division by a value that may be 0 or -1 (ir/eval_lanes.cpp's rules: codegen/expressions.cpp).
        out.write(i, acc + acc / n);
    };
    expect_golden(k, "loops_switch_branches");
}

TEST(GoldenGlsl, StructImageAndVectorTypes) {
    Kernel2D k = [](BufferVar<GoldenParticle> ps, ImageFloat img, Float4x4 m) noexcept {
        auto p = dispatch_id().xy();
        UInt index = p.x + p.y * dispatch_size().x;
        Var<GoldenParticle> q = ps.read(index);
        q.pos = (m * make_float4(q.pos, 1.0f)).xyz();
        q.vel = ite(q.vel > 0.0f, q.vel, -q.vel);
        ps.write(index, q);
        img.write(p, make_float4(q.pos, q.mass));
    };
    auto g = expect_golden(k, "struct_image_vectors");
    ASSERT_EQ(g.args.size(), 3u);
    EXPECT_EQ(g.args[1].kind, codegen::ArgSlot::Kind::Image);
    EXPECT_EQ(g.args[1].binding, 1u) << "images follow the buffers";
    EXPECT_EQ(g.args[2].offset, 16u) << "a mat4 is 16-byte aligned";
    EXPECT_EQ(g.push_bytes, 80u);
    EXPECT_NE(g.source.find("float _pad1_0;"), std::string::npos) << "the float after a vec3 needs a pad";
}

TEST(GoldenGlsl, CallableWithEarlyReturnInlined) {
    Callable first_over = [](BufferFloat xs, Float limit) noexcept {
        $for (j, 8) {
            $if (xs.read(cast<uint>(j)) > limit) { $return(j); };
        };
        return Expr<int32_t>(-1);
    };
    Kernel1D k = [&](BufferFloat xs, BufferInt out) noexcept {
        auto i = dispatch_id().x;
        out.write(i, first_over(xs, cast<float>(i)));
    };
    expect_golden(k, "callable_early_return");
}

TEST(GoldenGlsl, AtomicsNativeAndCompareAndSwap) {
    Kernel1D k = [](BufferFloat sums, BufferInt counts) noexcept {
        auto i = dispatch_id().x;
        sums.atomic(i % 4u).fetch_add(1.0f);
        sums.atomic(4u).fetch_max(cast<float>(i));
        counts.atomic(0u).fetch_add(1);
    };
    auto native = expect_golden(k, "atomics_native");
    EXPECT_NE(native.source.find("#extension GL_EXT_shader_atomic_float : require"), std::string::npos);
    Kernel1D k2 = [](BufferFloat sums, BufferInt counts) noexcept {
        auto i = dispatch_id().x;
        sums.atomic(i % 4u).fetch_add(1.0f);
        sums.atomic(4u).fetch_max(cast<float>(i));
        counts.atomic(0u).fetch_add(1);
    };
    codegen::GlslOptions cas;
    cas.float_atomic_add = cas.float_atomic_min_max = false;
    auto fallback = expect_golden(k2, "atomics_cas", cas);
    EXPECT_EQ(fallback.source.find("GL_EXT_shader_atomic_float"), std::string::npos);
    EXPECT_NE(fallback.source.find("buffer Buffer0 { uint b0[]; }"), std::string::npos)
        << "a float buffer updated by CAS is declared as uint";
}

// Block features: a block size, shared arrays (declared at module scope, float atomics native or by
// compare-and-swap on the floats' bits), sync_block(); subgroup operations with their extensions; uint64
// values and 64-bit atomics.
TEST(GoldenGlsl, SharedMemoryAndSyncBlock) {
    auto make = [] {
        return Kernel2D([](BufferFloat x, BufferFloat sums) noexcept {
            set_block_size(8, 8);
            Shared<float> tile(64);
            Shared<float> total(1);
            UInt t = thread_id().x + thread_id().y * 8u;
            $if (t == 0u) { total.write(0u, 0.0f); };
            tile.write(t, x.read(dispatch_id().x));
            sync_block();
            total.atomic(0u).fetch_add(tile.read(63u - t));
            sync_block();
            $if (t == 0u) { sums.write(block_id().x, total.read(0u)); };
        });
    };
    auto k = make();
    auto g = expect_golden(k, "shared_sync_block");
    EXPECT_EQ(g.shared_bytes, 64u * 4 + 4);
    EXPECT_FALSE(g.barrier_at.empty());
    auto k2 = make();
    codegen::GlslOptions cas;
    cas.shared_float_atomic_add = false;
    auto fallback = expect_golden(k2, "shared_sync_block_cas", cas);
    EXPECT_EQ(fallback.source.find("GL_EXT_shader_atomic_float"), std::string::npos);
}

TEST(GoldenGlsl, SubgroupOperations) {
    Kernel1D k = [](BufferFloat x, BufferUInt out) noexcept {
        UInt i = dispatch_id().x;
        Float s = subgroup_add(x.read(i));
        UInt4 votes = subgroup_ballot(s > 0.0f);
        UInt first = subgroup_broadcast_first(subgroup_invocation_id());
        $if (subgroup_elect() && subgroup_all(s < 1e6f) && subgroup_all_equal(first)) {
            out.write(i / subgroup_size(), votes.x + subgroup_exclusive_add(first) + subgroup_max(i));
        };
    };
    auto g = expect_golden(k, "subgroups");
    EXPECT_NE(g.source.find("#extension GL_KHR_shader_subgroup_ballot : require"), std::string::npos);
}

TEST(GoldenGlsl, Uint64DepthTest) {
    Kernel1D k = [](BufferFloat depth, BufferUInt pixel, BufferUInt64 zbuffer, UInt64 bias) noexcept {
        UInt f = dispatch_id().x;
        UInt64 key = (cast<uint64_t>(bit_cast<uint>(depth.read(f))) << 32u) | cast<uint64_t>(f);
        UInt64 old = zbuffer.atomic(pixel.read(f)).fetch_min(key + bias);
        $if (old == 0xffffffffffffffffull) { zbuffer.write(0u, old >> 1u); };
    };
    auto g = expect_golden(k, "uint64_depth_test");
    EXPECT_EQ(g.args[3].offset, 16u) << "a uint64 push constant is 8-byte aligned";
}

TEST(GoldenGlsl, EmissionIsDeterministic) {
    // Recording the same kernel twice gives the same text (ids, names, order).
    auto make = [] {
        Kernel1D k = [](BufferFloat x) noexcept {
            auto i = dispatch_id().x;
            Float3 v = make_float3(x.read(i), 1.0f, 2.0f);
            x.write(i, dot(v, v) + length(v));
        };
        k.set_name("same");
        return codegen::emit_glsl(*pipeline::lower(*k.function()).function).source;
    };
    EXPECT_EQ(make(), make());
}

// Last in this file: the tape-overflow message names this file's line of the loop, and the trap's code (a hash
// of the message) is in the golden text.
TEST(GoldenGlsl, AutodiffTapeTrapIsTheKernelsOwn) {
    // A taped loop with a data-dependent trip count checks its tape's capacity and traps with a code of its
    // own. Its text must not depend on what was lowered before: lower another kernel with traps first.
    Kernel1D other = [](BufferFloat x, UInt n) noexcept {
        Float v = x.read(0u);
        $autodiff {
            requires_grad(v);
            Float s = v;
            tape_capacity(8);
            $for (j, 0u, n) { s = s * s; };
            backward(s);
            x.write(1u, grad(v));
        };
    };
    auto before = pipeline::lower(*other.function(), "other");
    ASSERT_EQ(before.function->traps.size(), 1u);
    Kernel1D k = [](BufferFloat x, BufferFloat out, UInt n) noexcept {
        auto i = dispatch_id().x;
        Float v = x.read(i);
        $autodiff {
            requires_grad(v);
            Float s = v;
            tape_capacity(64);   // a tape (not forward mode), whose capacity n may exceed
            $for (j, 0u, n) {
                $if (s > 1.0f) { s = s * 0.5f; } $else { s = s * s + 0.25f; };
            };
            backward(s);
            out.write(i, grad(v));
        };
    };
    auto g = expect_golden(k, "autodiff_tape_trap");
    EXPECT_TRUE(g.uses_status);
    ASSERT_EQ(g.traps.size(), 1u);
    const auto& [code, message] = *g.traps.begin();
    EXPECT_NE(message.find("autodiff tape overflow in kernel 'autodiff_tape_trap'"), std::string::npos) << message;
    EXPECT_NE(g.source.find("atomicCompSwap(adjoint_status[0], 0u, " + std::to_string(code) + "u);"), std::string::npos);
    EXPECT_NE(code, before.function->traps.begin()->first);
}

} // namespace adjoint::test
