// The IR passes one at a time on hand-built IR: what each changed, that it verifies, and same results after.
#include "ir/ir_test_util.h"

#include <adjoint/ir/clone.h>
#include <adjoint/ir/passes.h>

namespace adjoint::ir::test {

namespace {
const Type* f32buf() { return Type::buffer(Type::f32()); }
const Type* i32buf() { return Type::buffer(Type::i32()); }
} // namespace

// ---- fold_constants ---------------------------------------------------------------------------------------

TEST(FoldConstants, EvaluatesPureOpsOfConstants) {
    Fn k({f32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto sum = b.binary(Op::Add, b.f32(2), b.f32(3));
    auto prod = b.binary(Op::Mul, sum, b.f32(4));          // folds once sum is a constant
    auto s = b.unary(Op::Sqrt, prod);                       // sqrt(20)
    auto v = b.construct(Type::vector(ScalarKind::Float, 2), {s, b.f32(1)});
    auto x = b.extract(v, 0);
    b.emit(Op::BufferWrite, {out, b.u32(0), x}, Type::void_type());
    ASSERT_TRUE(fold_constants(*k.f));
    EXPECT_EQ(k.verify(), "");
    EXPECT_EQ(k.f->inst(x).op, Op::Const);
    EXPECT_EQ(float_of(k.f->inst(x).words[0]), std::sqrt(20.0f));
    EXPECT_EQ(k.f->inst(prod).op, Op::Const);
    auto r = run(*k.f, {{0}});
    EXPECT_EQ(r.buffers[0][0], fbits(std::sqrt(20.0f)));
    EXPECT_FALSE(fold_constants(*k.f)) << "a second run has nothing left to fold";
}

TEST(FoldConstants, LeavesNonConstantOperandsAndReads) {
    Fn k({f32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto read = b.emit(Op::BufferRead, {out, b.u32(1)}, Type::f32());
    auto sum = b.binary(Op::Add, read, b.f32(3));
    b.emit(Op::BufferWrite, {out, b.u32(0), sum}, Type::void_type());
    // Only the constants' trivial "folds" are candidates: nothing changes.
    EXPECT_FALSE(fold_constants(*k.f));
    EXPECT_EQ(k.f->inst(sum).op, Op::Add);
    EXPECT_EQ(k.f->inst(read).op, Op::BufferRead);
}

TEST(FoldConstants, PrunesIfWithConstantConditionAndSelect) {
    Fn k({i32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto cond = b.binary(Op::Lt, b.i32(1), b.i32(2));       // true after folding
    auto br = b.if_(cond);
    k.in(br, 0, [&] { b.emit(Op::BufferWrite, {out, b.u32(0), b.i32(10)}, Type::void_type()); });
    k.in(br, 1, [&] { b.emit(Op::BufferWrite, {out, b.u32(0), b.i32(20)}, Type::void_type()); });
    auto read = b.emit(Op::BufferRead, {out, b.u32(1)}, Type::i32());
    auto sel = b.select(b.boolean(false), b.i32(5), read);
    b.emit(Op::BufferWrite, {out, b.u32(2), sel}, Type::void_type());
    // The condition folds in one run and the if is pruned in the next (it is visited after its operand).
    while (fold_constants(*k.f)) {}
    EXPECT_EQ(k.verify(), "");
    EXPECT_EQ(count_op(*k.f, Op::If), 0u) << k.text();
    EXPECT_EQ(count_op(*k.f, Op::BufferWrite), 2u) << "the then-branch's write was spliced in, the else one dropped";
    auto r = run(*k.f, {{0, 77, 0}});
    EXPECT_EQ(r.buffers[0], (std::vector<uint32_t>{10, 77, 77}));
}

TEST(FoldConstants, IntegerDivisionByZeroFoldsToZeroLikeTheInterpreter) {
    Fn k({i32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto q = b.binary(Op::Div, b.i32(7), b.i32(0));
    auto m = b.binary(Op::Mod, b.i32(-7), b.i32(-1));
    b.emit(Op::BufferWrite, {out, b.u32(0), b.binary(Op::Add, q, m)}, Type::void_type());
    while (fold_constants(*k.f)) {}
    EXPECT_EQ(k.f->inst(q).op, Op::Const);
    EXPECT_EQ(k.f->inst(q).words[0], 0u);
    EXPECT_EQ(k.f->inst(m).words[0], 0u);
}

// ---- simplify -------------------------------------------------------------------------------------------

TEST(Simplify, RemovesExactIdentities) {
    Fn k({f32buf(), i32buf()});
    auto out = k.arg(0);
    auto iout = k.arg(1);
    auto& b = *k.b;
    auto x = b.emit(Op::BufferRead, {out, b.u32(0)}, Type::f32());
    auto times_one = b.binary(Op::Mul, x, b.f32(1));
    auto over_one = b.binary(Op::Div, times_one, b.f32(1));
    auto minus_zero = b.binary(Op::Sub, over_one, b.f32(0));
    auto neg_neg = b.unary(Op::Neg, b.unary(Op::Neg, minus_zero));
    auto sel = b.select(b.boolean(true), neg_neg, neg_neg);
    b.emit(Op::BufferWrite, {out, b.u32(1), sel}, Type::void_type());
    auto n = b.emit(Op::BufferRead, {iout, b.u32(0)}, Type::i32());
    auto plus_zero = b.binary(Op::Add, b.i32(0), b.binary(Op::Add, n, b.i32(0)));
    b.emit(Op::BufferWrite, {iout, b.u32(1), plus_zero}, Type::void_type());
    ASSERT_TRUE(simplify(*k.f));
    EXPECT_EQ(k.verify(), "");
    // Both writes now store the read values directly.
    for (ValueId id = 0; id < k.f->inst_count(); ++id) {
        const Inst& in = k.f->inst(id);
        if (in.op != Op::BufferWrite) continue;
        EXPECT_EQ(k.f->inst(in.operands[2]).op, Op::BufferRead) << k.text();
    }
}

TEST(Simplify, KeepsFloatAdditionOfZeroBecauseOfNegativeZero) {
    // -0 + 0 is +0, so x + 0 is not x for floats; x - (+0) is x for every x.
    Fn k({f32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto x = b.emit(Op::BufferRead, {out, b.u32(0)}, Type::f32());
    auto plus = b.binary(Op::Add, x, b.f32(0));
    b.emit(Op::BufferWrite, {out, b.u32(1), plus}, Type::void_type());
    EXPECT_FALSE(simplify(*k.f));
    auto r = run(*k.f, {{fbits(-0.0f), 0}});
    EXPECT_EQ(r.buffers[0][1], fbits(0.0f));
}

TEST(Simplify, KeepsSubtractionOfNegativeZero) {
    // x - (-0) is x + 0: +0 for x = -0, so it must not be rewritten to x.
    Fn k({f32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto x = b.emit(Op::BufferRead, {out, b.u32(0)}, Type::f32());
    auto minus = b.binary(Op::Sub, x, b.f32(-0.0f));
    b.emit(Op::BufferWrite, {out, b.u32(1), minus}, Type::void_type());
    auto before = run(*k.f, {{fbits(-0.0f), 7}});
    EXPECT_EQ(before.buffers[0][1], fbits(0.0f));
    simplify(*k.f);
    auto after = run(*k.f, {{fbits(-0.0f), 7}});
    EXPECT_EQ(after.buffers[0][1], fbits(0.0f)) << k.text();
}

// ---- eliminate_common_subexpressions -----------------------------------------------------------------------

TEST(Cse, MergesEqualPureValuesInScopeOnly) {
    Fn k({f32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto x = b.emit(Op::BufferRead, {out, b.u32(0)}, Type::f32());
    auto s1 = b.unary(Op::Sin, x);
    auto s2 = b.unary(Op::Sin, x);                // same as s1
    auto sum = b.binary(Op::Add, s1, s2);
    auto br = b.if_(b.binary(Op::Gt, x, b.f32(0)));
    ValueId inner_sin = kNoValue, then_cos = kNoValue, else_cos = kNoValue;
    k.in(br, 0, [&] {
        inner_sin = b.unary(Op::Sin, x);          // dominated by s1: merged
        then_cos = b.unary(Op::Cos, x);
        b.emit(Op::BufferWrite, {out, b.u32(1), b.binary(Op::Add, inner_sin, then_cos)}, Type::void_type());
    });
    k.in(br, 1, [&] {
        else_cos = b.unary(Op::Cos, x);           // a sibling of then_cos: not merged
        b.emit(Op::BufferWrite, {out, b.u32(1), else_cos}, Type::void_type());
    });
    b.emit(Op::BufferWrite, {out, b.u32(2), sum}, Type::void_type());
    auto before = run(*k.f, {{fbits(0.5f), 0, 0}});
    ASSERT_TRUE(eliminate_common_subexpressions(*k.f));
    EXPECT_EQ(k.verify(), "");
    EXPECT_EQ(k.f->inst(sum).operands[0], s1);
    EXPECT_EQ(k.f->inst(sum).operands[1], s1);
    eliminate_dead_code(*k.f);
    EXPECT_EQ(count_op(*k.f, Op::Sin), 1u) << k.text();
    EXPECT_EQ(count_op(*k.f, Op::Cos), 2u) << k.text();
    auto after = run(*k.f, {{fbits(0.5f), 0, 0}});
    EXPECT_EQ(before.buffers, after.buffers);
}

TEST(Cse, DoesNotMergeReadsOrAtomics) {
    Fn k({i32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto r1 = b.emit(Op::BufferRead, {out, b.u32(0)}, Type::i32());
    b.emit(Op::BufferWrite, {out, b.u32(0), b.i32(5)}, Type::void_type());
    auto r2 = b.emit(Op::BufferRead, {out, b.u32(0)}, Type::i32());   // sees the write: not r1
    auto a1 = b.emit(Op::BufferAtomic, {out, b.u32(1), b.i32(1)}, Type::i32(), int64_t(AtomicOp::Add));
    auto a2 = b.emit(Op::BufferAtomic, {out, b.u32(1), b.i32(1)}, Type::i32(), int64_t(AtomicOp::Add));
    b.emit(Op::BufferWrite, {out, b.u32(2), b.binary(Op::Add, b.binary(Op::Add, r1, r2), b.binary(Op::Add, a1, a2))}, Type::void_type());
    eliminate_common_subexpressions(*k.f);
    EXPECT_EQ(count_op(*k.f, Op::BufferRead), 2u);
    EXPECT_EQ(count_op(*k.f, Op::BufferAtomic), 2u);
    auto r = run(*k.f, {{3, 10, 0}});
    // r1 = 3, r2 = 5, a1 = 10, a2 = 11.
    EXPECT_EQ(r.buffers[0], (std::vector<uint32_t>{5, 12, 29}));
}

// ---- eliminate_dead_code ----------------------------------------------------------------------------------

TEST(Dce, RemovesUnusedValuesDeadLocalsAndEmptyBranches) {
    Fn k({f32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto x = b.emit(Op::BufferRead, {out, b.u32(0)}, Type::f32());
    b.unary(Op::Exp, b.unary(Op::Sin, x));                       // unused chain
    auto never_read = b.local(Type::f32());
    b.store(never_read, x);                                        // a store to a local nobody loads
    auto br = b.if_(b.binary(Op::Gt, x, b.f32(0)));
    k.in(br, 0, [&] { b.unary(Op::Cos, x); });                     // becomes empty
    auto used = b.local(Type::f32());
    b.store(used, b.binary(Op::Mul, x, b.f32(2)));
    b.emit(Op::BufferWrite, {out, b.u32(1), b.load(used)}, Type::void_type());
    b.emit(Op::BufferAtomic, {out, b.u32(2), b.f32(1)}, Type::f32(), int64_t(AtomicOp::Add));   // result unused
    ASSERT_TRUE(eliminate_dead_code(*k.f));
    EXPECT_EQ(k.verify(), "");
    EXPECT_EQ(count_op(*k.f, Op::Sin), 0u);
    EXPECT_EQ(count_op(*k.f, Op::Exp), 0u);
    EXPECT_EQ(count_op(*k.f, Op::If), 0u) << k.text();
    EXPECT_EQ(count_op(*k.f, Op::Local), 1u) << k.text();
    EXPECT_EQ(count_op(*k.f, Op::Store), 1u);
    EXPECT_EQ(count_op(*k.f, Op::BufferAtomic), 1u) << "an atomic has a side effect even when its result is unused";
    EXPECT_TRUE(k.f->inst(never_read).dead);
    auto r = run(*k.f, {{fbits(1.5f), 0, fbits(1.0f)}});
    EXPECT_EQ(r.buffers[0][1], fbits(3.0f));
    EXPECT_EQ(r.buffers[0][2], fbits(2.0f));
}

// ---- forward_locals ---------------------------------------------------------------------------------------

TEST(ForwardLocals, ForwardsStoresToLoadsButNotAcrossLoopIterations) {
    Fn k({i32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto v = b.local(Type::i32());
    b.store(v, b.i32(3));
    auto l1 = b.load(v);                         // = 3
    auto counter = b.local(Type::i32());
    b.store(counter, b.i32(0));
    auto loop = b.loop();
    ValueId in_loop = kNoValue;
    k.in(loop, 0, [&] {
        in_loop = b.load(counter);               // differs per iteration: must stay a load
        auto next = b.binary(Op::Add, in_loop, b.i32(1));
        b.store(counter, next);
        auto done = b.if_(b.binary(Op::Ge, next, b.i32(4)));
        k.in(done, 0, [&] { b.break_(); });
    });
    auto after = b.load(counter);
    b.emit(Op::BufferWrite, {out, b.u32(0), b.binary(Op::Add, l1, after)}, Type::void_type());
    auto before = run(*k.f, {{0}});
    EXPECT_EQ(before.buffers[0][0], 7u);
    ASSERT_TRUE(forward_locals(*k.f));
    EXPECT_EQ(k.verify(), "");
    const Inst& sum = k.f->inst(k.f->body().insts.back());
    const Inst& add = k.f->inst(sum.operands[2]);
    EXPECT_EQ(k.f->inst(add.operands[0]).op, Op::Const) << "the load of v became the stored constant";
    EXPECT_EQ(add.operands[1], after) << "the load after the loop stays: the loop stored to the counter";
    EXPECT_EQ(k.f->inst(k.f->inst(in_loop).operands[0]).op, Op::Local);
    auto r = run(*k.f, {{0}});
    EXPECT_EQ(r.buffers[0][0], 7u);
}

TEST(ForwardLocals, PartialStoresAndBranchesForget) {
    Fn k({f32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto t2 = Type::vector(ScalarKind::Float, 2);
    auto v = b.local(t2);
    b.store(v, b.splat(t2, 1.0));
    ValueId idx = b.i32(1);
    b.store(v, b.f32(5), std::span<const ValueId>(&idx, 1));   // partial: v is now (1, 5)
    auto whole = b.load(v);
    auto x = b.emit(Op::BufferRead, {out, b.u32(0)}, Type::f32());
    auto br = b.if_(b.binary(Op::Gt, x, b.f32(0)));
    k.in(br, 0, [&] { b.store(v, b.splat(t2, 9.0)); });
    auto after_if = b.load(v);
    auto sum = b.binary(Op::Add, whole, after_if);
    b.emit(Op::BufferWrite, {out, b.u32(1), b.extract(sum, 0)}, Type::void_type());
    b.emit(Op::BufferWrite, {out, b.u32(2), b.extract(sum, 1)}, Type::void_type());
    forward_locals(*k.f);
    EXPECT_EQ(k.verify(), "");
    EXPECT_EQ(k.f->inst(k.f->inst(sum).operands[0]).op, Op::Load) << k.text();
    EXPECT_EQ(k.f->inst(k.f->inst(sum).operands[1]).op, Op::Load) << k.text();
    auto pos = run(*k.f, {{fbits(1.0f), 0, 0}});
    EXPECT_EQ(pos.buffers[0][1], fbits(10.0f));
    EXPECT_EQ(pos.buffers[0][2], fbits(14.0f));
    auto neg = run(*k.f, {{fbits(-1.0f), 0, 0}});
    EXPECT_EQ(neg.buffers[0][1], fbits(2.0f));
    EXPECT_EQ(neg.buffers[0][2], fbits(10.0f));
}

// ---- inline_callables -------------------------------------------------------------------------------------

namespace {
// callable first_at_least(n): for j in 0..: if j*j >= n return j; (an early return from inside a loop)
std::shared_ptr<Function> first_square_at_least() {
    auto c = std::make_shared<Function>(Function::Kind::Callable, "first_square_at_least");
    c->params = {Type::i32()};
    c->return_type = Type::i32();
    Builder b(*c);
    auto n = b.emit(Op::Param, {}, Type::i32(), 0);
    auto j = b.local(Type::i32());
    b.store(j, b.i32(0));
    auto loop = b.loop();
    b.push(*c->inst(loop).regions[0]);
    auto jv = b.load(j);
    auto hit = b.if_(b.binary(Op::Ge, b.binary(Op::Mul, jv, jv), n));
    b.push(*c->inst(hit).regions[0]);
    b.emit(Op::Return, {jv}, Type::void_type());
    b.pop();
    b.store(j, b.binary(Op::Add, jv, b.i32(1)));
    b.pop();
    b.emit(Op::Return, {b.i32(-1)}, Type::void_type());
    return c;
}

ValueId call(Builder& b, Function& f, const std::shared_ptr<Function>& callee, std::vector<ValueId> args) {
    Inst in;
    in.op = Op::Call;
    in.type = callee->return_type;
    in.operands = std::move(args);
    in.callee = callee.get();
    f.callees.push_back(callee);
    return b.append(std::move(in));
}
} // namespace

TEST(InlineCallables, EarlyReturnFromALoopMatchesTheCall) {
    auto callee = first_square_at_least();
    ASSERT_EQ(verify(*callee), "");
    Fn k({i32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto n = b.emit(Op::BufferRead, {out, b.u32(0)}, Type::i32());
    // Called inside a kernel loop, twice: the callee's exit must not leave the kernel's loop.
    auto acc = b.local(Type::i32());
    b.store(acc, b.i32(0));
    auto i = b.local(Type::i32());
    b.store(i, b.i32(0));
    auto loop = b.loop();
    k.in(loop, 0, [&] {
        auto iv = b.load(i);
        auto stop = b.if_(b.binary(Op::Ge, iv, b.i32(3)));
        k.in(stop, 0, [&] { b.break_(); });
        auto r = call(b, *k.f, callee, {b.binary(Op::Add, n, iv)});
        b.store(acc, b.binary(Op::Add, b.load(acc), r));
        b.store(i, b.binary(Op::Add, iv, b.i32(1)));
    });
    b.emit(Op::BufferWrite, {out, b.u32(1), b.load(acc)}, Type::void_type());
    ASSERT_EQ(k.verify(), "");
    for (uint32_t input : {0u, 5u, 16u, 17u, 99u}) {
        auto with_call = run(*k.f, {{input, 0}});
        auto copy = clone_function(*k.f);
        ASSERT_TRUE(inline_callables(*copy));
        EXPECT_EQ(verify(*copy), "") << print(*copy);
        EXPECT_EQ(count_op(*copy, Op::Call), 0u);
        EXPECT_EQ(count_op(*copy, Op::Return), 0u);
        auto inlined = run(*copy, {{input, 0}});
        uint32_t want = 0;
        for (uint32_t d = 0; d < 3; ++d) {
            uint32_t j = 0;
            while (j * j < input + d) ++j;
            want += j;
        }
        EXPECT_EQ(with_call.buffers[0][1], want) << "interpreting the call, input " << input;
        EXPECT_EQ(inlined.buffers[0][1], want) << "after inlining, input " << input << "\n" << print(*copy);
        optimize(*copy, true);
        EXPECT_EQ(run(*copy, {{input, 0}}).buffers[0][1], want) << "after optimize, input " << input;
    }
}

TEST(InlineCallables, ReturnOnlyAtTheEndNeedsNoWrapperLoop) {
    auto c = std::make_shared<Function>(Function::Kind::Callable, "twice");
    c->params = {Type::f32()};
    c->return_type = Type::f32();
    {
        Builder cb(*c);
        auto p = cb.emit(Op::Param, {}, Type::f32(), 0);
        cb.emit(Op::Return, {cb.binary(Op::Mul, p, cb.f32(2))}, Type::void_type());
    }
    Fn k({f32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto x = b.emit(Op::BufferRead, {out, b.u32(0)}, Type::f32());
    auto r = call(b, *k.f, c, {x});
    b.emit(Op::BufferWrite, {out, b.u32(1), r}, Type::void_type());
    ASSERT_TRUE(inline_callables(*k.f));
    EXPECT_EQ(k.verify(), "");
    EXPECT_EQ(count_op(*k.f, Op::Loop), 0u) << k.text();
    EXPECT_EQ(count_op(*k.f, Op::Call), 0u);
    optimize(*k.f);
    EXPECT_EQ(count_op(*k.f, Op::Local), 0u) << "the result local is forwarded away\n" << k.text();
    auto res = run(*k.f, {{fbits(1.25f), 0}});
    EXPECT_EQ(res.buffers[0][1], fbits(2.5f));
}

// ---- the pipeline -----------------------------------------------------------------------------------------

TEST(Optimize, ReachesAFixedPointThatVerifies) {
    Fn k({f32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto v = b.local(Type::f32());
    b.store(v, b.binary(Op::Add, b.f32(1), b.f32(2)));
    auto x = b.binary(Op::Mul, b.load(v), b.f32(1));
    auto y = b.binary(Op::Mul, b.load(v), b.f32(1));
    b.emit(Op::BufferWrite, {out, b.u32(0), b.binary(Op::Add, x, y)}, Type::void_type());
    optimize(*k.f, true);
    EXPECT_EQ(k.verify(), "");
    // Everything folds to one constant write.
    EXPECT_EQ(count_placed(*k.f), 4u) << k.text();   // arg, index, value, write
    auto r = run(*k.f, {{0}});
    EXPECT_EQ(r.buffers[0][0], fbits(6.0f));
}

} // namespace adjoint::ir::test
