// What recording costs: exact instruction counts (vector members extracted only when used, one instruction
// per distinct constant in scope) and the full set of swizzles, checked by running them in the interpreter.
#include <adjoint/adjoint.h>
#include <adjoint/pipeline/lower.h>
#include <adjoint/ir/interpreter.h>
#include <adjoint/ir/printer.h>
#include <adjoint/ir/verify.h>

#include <gtest/gtest.h>

#include <functional>
#include <map>

namespace adjoint::test {

namespace {

// Instructions placed in the function's blocks, by op (the body and every region).
std::map<ir::Op, int> placed(const ir::Function& f) {
    std::map<ir::Op, int> n;
    std::function<void(const ir::Block&)> walk = [&](const ir::Block& b) {
        for (ir::ValueId id : b.insts) {
            ++n[f.inst(id).op];
            for (auto& r : f.inst(id).regions) walk(*r);
        }
    };
    walk(f.body());
    return n;
}

int total(const std::map<ir::Op, int>& n) {
    int t = 0;
    for (auto& [op, k] : n) t += k;
    return t;
}

// Runs a 1D kernel over `n` threads in the interpreter with float buffers.
template <typename K>
void interpret(const K& kernel, uint32_t n, std::vector<std::vector<float>*> buffers) {
    auto lowered = pipeline::lower(*kernel.function());
    std::vector<std::unique_ptr<ir::HostResource>> resources;
    std::vector<ir::HostArg> args;
    for (auto* b : buffers) {
        resources.push_back(std::make_unique<ir::HostResource>());
        resources.back()->data = reinterpret_cast<std::byte*>(b->data());
        resources.back()->bytes = b->size() * 4;
        ir::HostArg a;
        a.resource = resources.back().get();
        args.push_back(a);
    }
    ir::Interpreter interp(*lowered.function, std::move(args), std::array<uint32_t, 3>{n, 1, 1});
    interp.run_all();
}

template <typename V> concept HasYx = requires(V v) { v.yx(); };
template <typename V> concept HasXz = requires(V v) { v.xz(); };
template <typename V> concept HasXw = requires(V v) { v.xw(); };
template <typename V> concept HasZyx = requires(V v) { v.zyx(); };
template <typename V> concept HasXxyy = requires(V v) { v.xxyy(); };
template <typename V> concept HasWzyx = requires(V v) { v.wzyx(); };

} // namespace

TEST(RecordingCost, ASmallKernelRecordsOnlyWhatItUses) {
    // Four meaningful operations (read, two multiplies, an add) and the write. dispatch_id() is a uint3 of
    // which only .x is used; the three 2.0f are one constant.
    Kernel1D k = [](BufferFloat3 xs, BufferFloat ys) noexcept {
        auto i = dispatch_id().x;
        Float3 p = xs.read(i);
        ys.write(i, p.x * 2.0f + p.y * 2.0f + 2.0f);
    };
    const ir::Function& f = *k.function();
    auto n = placed(f);
    std::string text = ir::print(f);
    EXPECT_EQ(ir::verify(f), "");
    // Two args, the builtin, its .x (an extract and the index 0), the read, the local p and its store, p.y
    // and p.x (a load each, through the indices 1 and 0), 2.0, two mul, two add and the write: 17. Before
    // members were lazy and constants shared, the same kernel recorded 24 (.y and .z of dispatch_id() and
    // their indices, the indices again for p's loads, 2.0 three times).
    EXPECT_EQ(n[ir::Op::Const], 3) << text;      // 0, 1 (int indices) and 2.0 (float), each once
    EXPECT_EQ(n[ir::Op::Extract], 1) << text;    // dispatch_id().x only; not .y and .z
    EXPECT_EQ(n[ir::Op::Mul], 2) << text;
    EXPECT_EQ(n[ir::Op::Add], 2) << text;
    EXPECT_EQ(total(n), 17) << text;
}

TEST(RecordingCost, AnExprVectorRecordsNoMembersUntilUsed) {
    Kernel1D k = [](BufferFloat4 xs, BufferFloat4 ys, BufferFloat zs) noexcept {
        auto i = dispatch_id().x;
        Expr<float4> v = xs.read(i);   // x, y, z, w not used: none extracted
        ys.write(i, v);
        Expr<float4> u = v;            // a copy records nothing either
        zs.write(i, u.w * u.w);        // .w twice: one extract
    };
    const ir::Function& f = *k.function();
    auto n = placed(f);
    EXPECT_EQ(ir::verify(f), "");
    EXPECT_EQ(n[ir::Op::Extract], 2) << ir::print(f);   // dispatch_id().x and u.w
    EXPECT_EQ(n[ir::Op::Const], 2) << ir::print(f);     // the indices 0 and 3
}

TEST(RecordingCost, ConstantsAndMembersAreSharedOnlyWhereTheyAreVisible) {
    // A constant first used inside a branch is recorded again after it (the branch's is not visible there);
    // one used before the branch is reused inside it. A member first used inside a branch or loop is
    // extracted before that statement, where its vector is visible, so later uses share it and no loop
    // extracts it per iteration.
    Kernel1D k = [](BufferFloat3 xs, BufferFloat ys) noexcept {
        auto i = dispatch_id().x;
        Expr<float3> p = xs.read(i);
        Float s = 1.5f;
        $if (i > 3u) { s += p.y * 4.0f + 1.5f; }
        $else { s += 4.0f; };
        $for (j, 2u) { s += p.z; };
        ys.write(i, s + p.y * 4.0f);
    };
    const ir::Function& f = *k.function();
    auto n = placed(f);
    std::string text = ir::print(f);
    EXPECT_EQ(ir::verify(f), "") << text;
    // Body: 0 (index of .x), 1.5, 3u, 1 (index of .y, before the $if), 2 (index of .z, before the loop),
    // 0u and 2u (the $for's bounds), 1u (its step), 4.0 after the $if; the then-branch: 4.0 (1.5 is the
    // body's); the else-branch: 4.0.
    EXPECT_EQ(n[ir::Op::Const], 11) << text;
    EXPECT_EQ(n[ir::Op::Extract], 3) << text;   // .x, .y and .z, each once in the body
    int body_extracts = 0;
    for (ir::ValueId id : f.body().insts) body_extracts += f.inst(id).op == ir::Op::Extract;
    EXPECT_EQ(body_extracts, 3) << text;
    std::vector<float> xs(4 * 8), ys(8);   // float3 elements take 16 bytes
    for (size_t j = 0; j < xs.size(); ++j) xs[j] = float(j);
    interpret(k, 8, {&xs, &ys});
    for (uint32_t t = 0; t < 8; ++t) {
        float y = xs[4 * t + 1], z = xs[4 * t + 2];
        float s = 1.5f + (t > 3 ? y * 4.0f + 1.5f : 4.0f);
        s += z;
        s += z;
        EXPECT_EQ(ys[t], s + y * 4.0f) << t;
    }
}

TEST(RecordingCost, EverySwizzleOfTheVectorsSize) {
    // Which swizzles exist: components within the vector's size only.
    static_assert(HasYx<Expr<float2>> && HasXxyy<Expr<float2>> && !HasXz<Expr<float2>>);
    static_assert(HasZyx<Expr<float3>> && HasXz<Expr<float3>> && !HasXw<Expr<float3>>);
    static_assert(HasXw<Float4> && HasWzyx<Float4> && HasXxyy<Float4>);
    static_assert(!HasYx<Float> && !HasYx<Expr<float2x2>>);
    static_assert(std::is_same_v<decltype(std::declval<Expr<float3>>().xxyy()), Expr<float4>>);
    static_assert(std::is_same_v<decltype(std::declval<UInt4>().wx()), Expr<uint2>>);
    Kernel1D k = [](BufferFloat4 xs, BufferFloat4 ys) noexcept {
        auto i = dispatch_id().x;
        Float4 v = xs.read(i);
        Float3 a = v.wzy();
        Float2 b = a.zx();
        ys.write(i, b.xxyy() + v.wwxy() + make_float4(a.zyx(), b.y));
    };
    std::vector<float> xs(4 * 4), ys(4 * 4);
    for (size_t j = 0; j < xs.size(); ++j) xs[j] = float(j * j);
    interpret(k, 4, {&xs, &ys});
    for (uint32_t t = 0; t < 4; ++t) {
        const float* v = &xs[4 * t];
        float a[3] = {v[3], v[2], v[1]}, b[2] = {a[2], a[0]};
        float want[4] = {b[0] + v[3] + a[2], b[0] + v[3] + a[1], b[1] + v[0] + a[0], b[1] + v[1] + b[1]};
        for (int c = 0; c < 4; ++c) EXPECT_EQ(ys[4 * t + c], want[c]) << t << " " << c;
    }
}

} // namespace adjoint::test
