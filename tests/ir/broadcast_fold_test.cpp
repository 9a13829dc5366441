// Ops whose typing broadcasts a scalar operand (Binary, Ternary, Select, shifts): the folded constant, the
// interpreter's value and the value worked out by hand must all be the same, lane by lane.
#include "ir/ir_test_util.h"

#include <adjoint/ir/passes.h>

#include <algorithm>

namespace adjoint::ir::test {

namespace {

const Type* f3() { return Type::vector(ScalarKind::Float, 3); }
const Type* i3() { return Type::vector(ScalarKind::Int, 3); }

struct Operand {
    const Type* type;
    Lanes lanes;
};
Operand f(float x) { return {Type::f32(), {fbits(x)}}; }
Operand f3(float x, float y, float z) { return {f3(), {fbits(x), fbits(y), fbits(z)}}; }

// The result lanes of `op` over the operands: once with constant operands, folded, and once with the
// operands passed as kernel arguments, interpreted.
struct Results {
    Lanes folded, interpreted;
};

Results evaluate(Op op, const std::vector<Operand>& operands) {
    Results out;
    for (bool constant : {true, false}) {
        std::vector<const Type*> params;
        for (auto& o : operands) params.push_back(o.type);
        std::vector<ValueId> args;
        Fn k(params);
        auto& b = *k.b;
        for (size_t i = 0; i < operands.size(); ++i)
            args.push_back(constant ? b.constant(operands[i].type, operands[i].lanes) : k.arg(uint32_t(i)));
        ValueId r = op == Op::Select ? b.select(args[0], args[1], args[2]) : b.emit(op, args);
        // The result goes out lane by lane through a uint buffer.
        k.f->params.push_back(Type::buffer(Type::u32()));
        ValueId buf = k.arg(uint32_t(operands.size()));
        const Type* t = k.f->type_of(r);
        for (uint32_t i = 0; i < t->lanes(); ++i) {
            ValueId lane = t->lanes() == 1  ? r
                           : t->is_matrix() ? b.extract(b.extract(r, i / t->dim()), i % t->dim())
                                            : b.extract(r, i);
            if (k.f->type_of(lane) != Type::u32()) lane = b.emit(Op::Bitcast, {lane}, Type::u32());
            b.emit(Op::BufferWrite, {buf, b.u32(i), lane}, Type::void_type());
        }
        EXPECT_EQ(k.verify(), "");
        if (constant) {
            fold_constants(*k.f);
            EXPECT_EQ(k.f->inst(r).op, Op::Const) << name(op) << " did not fold\n" << k.text();
        }
        std::vector<Lanes> values;
        for (auto& o : operands) values.push_back(o.lanes);
        auto run_result = run(*k.f, {std::vector<uint32_t>(t->lanes(), 0xdeadbeefu)}, values);
        (constant ? out.folded : out.interpreted) = run_result.buffers[0];
    }
    return out;
}

void expect_lanes(Op op, const std::vector<Operand>& operands, const Lanes& want) {
    Results r = evaluate(op, operands);
    EXPECT_EQ(r.folded, want) << name(op) << ": folded";
    EXPECT_EQ(r.interpreted, want) << name(op) << ": interpreted";
}

Lanes floats(std::initializer_list<float> v) {
    Lanes out;
    for (float x : v) out.push_back(fbits(x));
    return out;
}

} // namespace

// reflect(i, n) with a scalar n: n stands for (n, n, n), as GLSL is given it. Folding used to read past the
// scalar's one lane.
TEST(BroadcastFold, ReflectWithAScalarNormal) {
    // d = 0.5 * (1 + 2 + 3) = 3; i - 2 * 3 * 0.5 = i - 3.
    expect_lanes(Op::Reflect, {f3(1, 2, 3), f(0.5f)}, floats({-2, -1, 0}));
    expect_lanes(Op::Reflect, {f3(1, 2, 3), f3(0, 0, 1)}, floats({1, 2, -3}));
}

TEST(BroadcastFold, BinaryOpsWithAScalarOperand) {
    expect_lanes(Op::Pow, {f3(1, 2, 3), f(2)}, floats({1, 4, 9}));
    expect_lanes(Op::Pow, {f(2), f3(1, 2, 3)}, floats({2, 4, 8}));
    expect_lanes(Op::Step, {f3(1, 2, 3), f(2)}, floats({1, 1, 0}));
    expect_lanes(Op::Step, {f(2), f3(1, 2, 3)}, floats({0, 1, 1}));
    expect_lanes(Op::Min, {f3(1, 2, 3), f(2)}, floats({1, 2, 2}));
    expect_lanes(Op::Max, {f(2), f3(1, 2, 3)}, floats({2, 2, 3}));
    expect_lanes(Op::Fmod, {f3(5, -5, 7), f(3)}, floats({2, -2, 1}));
    expect_lanes(Op::Atan2, {f(1), f3(1, -1, 0)},
                 floats({std::atan2(1.0f, 1.0f), std::atan2(1.0f, -1.0f), std::atan2(1.0f, 0.0f)}));
    expect_lanes(Op::Sub, {f(10), f3(1, 2, 3)}, floats({9, 8, 7}));
    expect_lanes(Op::Div, {f3(1, 2, 3), f(2)}, floats({0.5f, 1, 1.5f}));
    Operand m{Type::matrix(2), floats({1, 2, 3, 4})};
    expect_lanes(Op::Mul, {m, f(2)}, floats({2, 4, 6, 8}));
    expect_lanes(Op::Add, {f(1), m}, floats({2, 3, 4, 5}));
    expect_lanes(Op::Lt, {f3(1, 2, 3), f(2)}, Lanes{1, 0, 0});
    Operand ints{i3(), Lanes{1, 2, 3}};
    expect_lanes(Op::Shl, {ints, {Type::u32(), Lanes{2}}}, Lanes{4, 8, 12});
    expect_lanes(Op::Mod, {ints, {Type::i32(), Lanes{2}}}, Lanes{1, 0, 1});
}

TEST(BroadcastFold, TernaryOpsAndSelectWithScalarOperands) {
    expect_lanes(Op::Lerp, {f3(0, 10, 20), f3(10, 20, 30), f(0.5f)}, floats({5, 15, 25}));
    expect_lanes(Op::Lerp, {f(0), f(10), f3(0, 0.5f, 1)}, floats({0, 5, 10}));
    expect_lanes(Op::Clamp, {f3(-1, 0.5f, 2), f(0), f(1)}, floats({0, 0.5f, 1}));
    expect_lanes(Op::Smoothstep, {f(0), f(1), f3(-1, 0.5f, 2)}, floats({0, 0.5f, 1}));
    expect_lanes(Op::Fma, {f3(1, 2, 3), f(2), f3(1, 1, 1)}, floats({3, 5, 7}));
    expect_lanes(Op::Clamp, {{i3(), Lanes{uint32_t(-5), 5, 50}}, {Type::i32(), Lanes{0}}, {Type::i32(), Lanes{10}}},
                 Lanes{0, 5, 10});
    expect_lanes(Op::Select, {{Type::boolean(), Lanes{1}}, f3(1, 2, 3), f3(4, 5, 6)}, floats({1, 2, 3}));
    expect_lanes(Op::Select, {{Type::vector(ScalarKind::Bool, 3), Lanes{1, 0, 1}}, f3(1, 2, 3), f3(4, 5, 6)},
                 floats({1, 5, 3}));
}

} // namespace adjoint::ir::test
