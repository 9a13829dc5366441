// What recording produces (no device): literal types in ite, callables' signatures, lines on instructions.
#include <adjoint/adjoint.h>
#include <adjoint/ir/printer.h>
#include <adjoint/ir/verify.h>

#include <gtest/gtest.h>

#include <functional>

namespace adjoint::test {

namespace {

// Finds the first placed instruction with op `op` (kNoValue if none).
ir::ValueId find_op(const ir::Function& f, ir::Op op) {
    ir::ValueId found = ir::kNoValue;
    std::function<void(const ir::Block&)> walk = [&](const ir::Block& b) {
        for (ir::ValueId id : b.insts) {
            if (found == ir::kNoValue && f.inst(id).op == op) found = id;
            for (auto& r : f.inst(id).regions) walk(*r);
        }
    };
    walk(f.body());
    return found;
}

} // namespace

TEST(Recording, IteOfTwoLiteralsTakesTheirType) {
    Kernel1D k = [](BufferInt ints, BufferUInt uints, BufferFloat floats) noexcept {
        Bool c = dispatch_id().x > 3u;
        auto i = ite(c, 1, 2);
        auto u = ite(c, 1u, 2u);
        auto f = ite(c, 1.0f, 2);
        auto b = ite(c, true, false);
        static_assert(std::is_same_v<decltype(i), Expr<int32_t>>);
        static_assert(std::is_same_v<decltype(u), Expr<uint32_t>>);
        static_assert(std::is_same_v<decltype(f), Expr<float>>);
        static_assert(std::is_same_v<decltype(b), Expr<bool>>);
        ints.write(0u, i);
        uints.write(0u, u);
        floats.write(0u, ite(b, f, 0.5f));
    };
    EXPECT_EQ(ir::verify(*k.function()), "");
}

TEST(Recording, CallablesRecordOnceWithTheirSignature) {
    Callable add = [](Float a, Int b) noexcept { return a + cast<float>(b); };
    Callable<void(BufferFloat, float)> store = [](BufferFloat buf, Float v) noexcept { buf.write(0u, v); };
    EXPECT_EQ(add.function()->params.size(), 2u);
    EXPECT_EQ(add.function()->params[0], ir::Type::f32());
    EXPECT_EQ(add.function()->params[1], ir::Type::i32());
    EXPECT_EQ(add.function()->return_type, ir::Type::f32());
    EXPECT_EQ(store.function()->return_type, ir::Type::void_type());
    EXPECT_EQ(store.function()->params[0], ir::Type::buffer(ir::Type::f32()));
    int call_line = 0;
    Kernel1D k = [&](BufferFloat out) noexcept {
        call_line = __LINE__; store(out, add(1.0f, 2));
    };
    // Two calls recorded, each naming the line where it is written.
    const ir::Function& f = *k.function();
    int calls = 0;
    for (size_t id = 0; id < f.inst_count(); ++id) {
        const ir::Inst& in = f.inst(ir::ValueId(id));
        if (in.op != ir::Op::Call) continue;
        ++calls;
        EXPECT_EQ(int(in.loc.line()), call_line) << ir::print(f);
    }
    EXPECT_EQ(calls, 2);
}

TEST(Recording, InstructionsCarryTheLineOfTheirDslCall) {
    int read_line = 0, make_line = 0;
    Kernel1D k = [&](BufferFloat in, BufferFloat3 out) noexcept {
        auto i = dispatch_id().x;
        read_line = __LINE__; Float x = in.read(i);
        make_line = __LINE__; out.write(i, make_float3(x, 1.0f, 2.0f));
    };
    const ir::Function& f = *k.function();
    auto read = find_op(f, ir::Op::BufferRead);
    auto construct = find_op(f, ir::Op::Construct);
    ASSERT_NE(read, ir::kNoValue);
    ASSERT_NE(construct, ir::kNoValue);
    EXPECT_EQ(int(f.inst(read).loc.line()), read_line);
    // make_float3 cannot take a defaulted location after its parameter pack; it attaches the latest recorded
    // line, which is in the user's file rather than in the DSL's header.
    EXPECT_NE(std::string(f.inst(construct).loc.file_name()).find("recording_test.cpp"), std::string::npos)
        << f.inst(construct).loc.file_name();
    EXPECT_GE(int(f.inst(construct).loc.line()), read_line);
    EXPECT_LE(int(f.inst(construct).loc.line()), make_line);
}

TEST(Recording, KernelRecordsParametersAndDimension) {
    Kernel2D k = [](ImageFloat img, BufferVar<float4> buf, Float4x4 m, UInt n) noexcept {
        auto p = dispatch_id().xy();
        img.write(p, m * buf.read(n));
    };
    const ir::Function& f = *k.function();
    EXPECT_TRUE(f.is_kernel());
    EXPECT_EQ(f.dimension, 2u);
    EXPECT_EQ(f.block_size, (std::array<uint32_t, 3>{16, 16, 1}));
    ASSERT_EQ(f.params.size(), 4u);
    EXPECT_EQ(f.params[0], ir::Type::image());
    EXPECT_EQ(f.params[1], ir::Type::buffer(ir::Type::vector(ir::ScalarKind::Float, 4)));
    EXPECT_EQ(f.params[2], ir::Type::matrix(4));
    EXPECT_EQ(f.params[3], ir::Type::u32());
    EXPECT_NE(find_op(f, ir::Op::MatMul), ir::kNoValue);
    EXPECT_NE(find_op(f, ir::Op::ImageWrite), ir::kNoValue);
    EXPECT_EQ(ir::verify(f), "");
}

} // namespace adjoint::test
