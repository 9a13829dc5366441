// scope_values: reads of values from outside their enclosing blocks (as autodiff's reverse code makes) become
// loads of a local, after which the function verifies with strict scopes and computes the same results.
#include "ir/ir_test_util.h"

#include <adjoint/ir/passes.h>

namespace adjoint::ir::test {

namespace {

Type const* i32buf() { return Type::buffer(Type::i32()); }

// The block that holds instruction `id`, searched from `b`.
const Block* block_of(const Function& f, const Block& b, ValueId id) {
    for (ValueId x : b.insts) {
        if (x == id) return &b;
        for (auto& r : f.inst(x).regions)
            if (const Block* found = block_of(f, *r, id)) return found;
    }
    return nullptr;
}

} // namespace

TEST(ScopeValues, AValueReadAfterItsBranchGoesThroughALocal) {
    Fn k({i32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto c = b.binary(Op::Lt, b.emit(Op::BufferRead, {out, b.u32(0)}, Type::i32()), b.i32(10));
    auto br = b.if_(c);
    ValueId inner = kNoValue;
    k.in(br, 0, [&] { inner = b.binary(Op::Mul, b.emit(Op::BufferRead, {out, b.u32(0)}, Type::i32()), b.i32(7)); });
    auto write = b.emit(Op::BufferWrite, {out, b.u32(1), inner}, Type::void_type());
    ASSERT_NE(k.verify(), "");
    EXPECT_TRUE(scope_values(*k.f));
    ASSERT_EQ(k.verify(), "") << k.text();
    // The write reads a load of a local declared before the branch and stored right after the value.
    const Inst& load = k.f->inst(k.f->inst(write).operands[2]);
    ASSERT_EQ(load.op, Op::Load);
    ValueId local = load.operands[0];
    EXPECT_EQ(block_of(*k.f, k.f->body(), local), &k.f->body());
    const auto& then = k.f->inst(br).regions[0]->insts;
    auto at = std::find(then.begin(), then.end(), inner);
    ASSERT_NE(at + 1, then.end());
    EXPECT_EQ(k.f->inst(*(at + 1)).op, Op::Store);
    EXPECT_EQ(k.f->inst(*(at + 1)).operands, (std::vector<ValueId>{local, inner}));
    EXPECT_EQ(run(*k.f, {{3, 0}}).buffers[0][1], 21u);
    EXPECT_FALSE(scope_values(*k.f)) << "nothing crosses any more";
}

TEST(ScopeValues, TheLocalGoesToTheInnermostBlockAroundDefinitionAndUses) {
    // In a loop body: the value of one if is read by a later if; the local is declared in the body, before the
    // first if, so each iteration has its own.
    Fn k({i32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto loop = b.loop();
    ValueId first = kNoValue, second = kNoValue, inner = kNoValue;
    k.in(loop, 0, [&] {
        first = b.if_(b.boolean(true));
        k.in(first, 0, [&] { inner = b.binary(Op::Add, b.emit(Op::BufferRead, {out, b.u32(0)}, Type::i32()), b.i32(1)); });
        second = b.if_(b.boolean(true));
        k.in(second, 0, [&] { b.emit(Op::BufferWrite, {out, b.u32(0), inner}, Type::void_type()); });
        auto done = b.if_(b.binary(Op::Ge, inner, b.i32(5)));
        k.in(done, 0, [&] { b.break_(); });
    });
    EXPECT_TRUE(scope_values(*k.f));
    ASSERT_EQ(k.verify(), "") << k.text();
    const auto& body = k.f->inst(loop).regions[0]->insts;
    auto at = std::find(body.begin(), body.end(), first);
    ASSERT_NE(at, body.begin());
    EXPECT_EQ(k.f->inst(*(at - 1)).op, Op::Local) << k.text();
    EXPECT_EQ(count_op(*k.f, Op::Local), 1u) << "one local for the value, whatever the number of reads";
    EXPECT_EQ(run(*k.f, {{0}}).buffers[0][0], 5u);
}

TEST(ScopeValues, LocalsAndConstantsMoveOut) {
    // A variable declared in a branch and read after it moves before the branch; a constant moves to the top.
    Fn k({i32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto br = b.if_(b.boolean(true));
    ValueId var = kNoValue, seven = kNoValue;
    k.in(br, 0, [&] {
        var = b.local(Type::i32());
        seven = b.i32(7);
        b.store(var, seven);
    });
    auto loaded = b.load(var);
    b.emit(Op::BufferWrite, {out, b.u32(0), b.binary(Op::Add, loaded, seven)}, Type::void_type());
    EXPECT_TRUE(scope_values(*k.f));
    ASSERT_EQ(k.verify(), "") << k.text();
    EXPECT_EQ(block_of(*k.f, k.f->body(), var), &k.f->body());
    EXPECT_EQ(k.f->body().insts.front(), seven);
    EXPECT_EQ(count_op(*k.f, Op::Local), 1u) << "the variable itself, no copy";
    EXPECT_EQ(run(*k.f, {{0}}).buffers[0][0], 14u);
}

} // namespace adjoint::ir::test
