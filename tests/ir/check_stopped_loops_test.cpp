// check_stopped_loops on hand-built loops: where the marks, the repeated exit tests and the trap go, and
// that the instrumented kernel computes what the original did (no trap when no device stops a loop).
#include "ir/ir_test_util.h"

#include <adjoint/ir/clone.h>
#include <adjoint/ir/passes.h>
#include <adjoint/ir/walk.h>
#include <adjoint/ir/trap.h>

namespace adjoint::ir::test {

namespace {

const LoopLimit kLavapipe{65535, "lavapipe"};

const Type* u32buf() { return Type::buffer(Type::u32()); }

// out[0] = number of iterations of `for (j = 0; j < n; ++j) { if (j % 3 == 1) continue; s += j; }`, out[1]
// = s, with n = out[0] on entry; the loop is written as the DSL records a $for.
// With `own_break`, the body also leaves once s exceeds 1000 (a $break: not an exit test).
struct ForLoop {
    Fn k{{u32buf()}};
    ValueId loop = kNoValue;
    ValueId out = kNoValue;

    explicit ForLoop(bool own_break = false) {
        auto& b = *k.b;
        out = k.arg(0);
        auto n = b.emit(Op::BufferRead, {out, b.u32(0)}, Type::u32());
        auto j = b.local(Type::u32());
        auto s = b.local(Type::u32());
        auto count = b.local(Type::u32());
        b.store(j, b.u32(0));
        b.store(s, b.u32(0));
        b.store(count, b.u32(0));
        loop = b.loop(std::source_location::current());
        k.in(loop, 0, [&] {
            auto exit = b.if_(b.unary(Op::Not, b.binary(Op::Lt, b.load(j), n)));
            k.in(exit, 0, [&] { b.break_(); });
            b.store(count, b.binary(Op::Add, b.load(count), b.u32(1)));
            auto skip = b.if_(b.binary(Op::Eq, b.binary(Op::Mod, b.load(j), b.u32(3)), b.u32(1)));
            k.in(skip, 0, [&] {
                b.store(j, b.binary(Op::Add, b.load(j), b.u32(1)));
                b.continue_();
            });
            b.store(s, b.binary(Op::Add, b.load(s), b.load(j)));
            b.store(j, b.binary(Op::Add, b.load(j), b.u32(1)));
            if (own_break) {
                auto enough = b.if_(b.binary(Op::Gt, b.load(s), b.u32(1000)));
                k.in(enough, 0, [&] { b.break_(); });
            }
        });
        b.emit(Op::BufferWrite, {out, b.u32(0), b.load(count)}, Type::void_type());
        b.emit(Op::BufferWrite, {out, b.u32(1), b.load(s)}, Type::void_type());
    }
};

// out[1] = s after `j = 0, s = 0; loop { if (!(j < out[0])) break; <body> }`, as the DSL records a $for over out[0];
// `body(out, j, s)` adds the rest of the loop's body (it moves j and s on).
template <typename Body>
void counting_loop(Fn& k, Body&& body) {
    auto& b = *k.b;
    auto out = k.arg(0);
    auto n = b.emit(Op::BufferRead, {out, b.u32(0)}, Type::u32());
    auto j = b.local(Type::u32());
    auto s = b.local(Type::u32());
    b.store(j, b.u32(0));
    b.store(s, b.u32(0));
    auto loop = b.loop();
    k.in(loop, 0, [&] {
        auto exit = b.if_(b.unary(Op::Not, b.binary(Op::Lt, b.load(j), n)));
        k.in(exit, 0, [&] { b.break_(); });
        body(out, j, s);
    });
    b.emit(Op::BufferWrite, {out, b.u32(1), b.load(s)}, Type::void_type());
}

// ForLoop's out[0] and out[1] for n.
std::vector<uint32_t> for_loop_result(uint32_t n, bool own_break) {
    uint32_t s = 0, count = 0;
    for (uint32_t j = 0; j < n; ++j) {
        ++count;
        if (j % 3 == 1) continue;
        s += j;
        if (own_break && s > 1000) break;
    }
    return {count, s};
}

// The trap's message in f (one trap).
std::string the_trap(const Function& f) {
    uint32_t code = 0;
    walk(f, f.body(), [&](ValueId id) {
        if (f.inst(id).op == Op::Trap) code = uint32_t(const_int(f, f.inst(id).operands[0]));
    });
    return trap_message(f.traps, code);
}

} // namespace

TEST(CheckStoppedLoops, DoesNothingWithoutALimit) {
    ForLoop l;
    std::string before = l.k.text();
    EXPECT_FALSE(check_stopped_loops(*l.k.f, LoopLimit{}));
    EXPECT_EQ(l.k.text(), before);
}

TEST(CheckStoppedLoops, ALoopLeftOnlyByItsExitTestsIsCheckedByThemAfterIt) {
    ForLoop l;
    ASSERT_TRUE(check_stopped_loops(*l.k.f, kLavapipe));
    EXPECT_EQ(l.k.verify(), "") << l.k.text();
    // No marks: the test at the top, its copy before the continue and its copy at the end leave by plain breaks.
    EXPECT_EQ(count_op(*l.k.f, Op::LoopMark), 0u) << l.k.text();
    EXPECT_EQ(count_op(*l.k.f, Op::Break), 3u) << l.k.text();
    EXPECT_EQ(count_op(*l.k.f, Op::Trap), 1u);
    const Block& body = l.k.f->body();
    const Block& loop_body = *l.k.f->inst(l.loop).regions[0];
    // The last statement of the body is the repeated exit test.
    const Inst& last = l.k.f->inst(loop_body.insts.back());
    ASSERT_EQ(last.op, Op::If);
    ASSERT_EQ(last.regions[0]->insts.size(), 1u) << l.k.text();
    EXPECT_EQ(l.k.f->inst(last.regions[0]->insts[0]).op, Op::Break);
    // A flag cleared before the loop; after it, the test once more (setting the flag where it holds), and the
    // trap where none held.
    size_t at = 0;
    while (body.insts[at] != l.loop) ++at;
    EXPECT_EQ(l.k.f->inst(body.insts[at - 1]).op, Op::Store) << l.k.text();
    size_t ifs = 0;
    for (size_t k = at + 1; k < body.insts.size() && l.k.f->inst(body.insts[k]).op != Op::BufferWrite; ++k)
        ifs += l.k.f->inst(body.insts[k]).op == Op::If;
    EXPECT_EQ(ifs, 2u) << l.k.text();
    const std::string message = the_trap(*l.k.f);
    EXPECT_NE(message.find("loop iteration limit in kernel 'k'"), std::string::npos) << message;
    EXPECT_NE(message.find("lavapipe stopped the loop at ir/check_stopped_loops_test.cpp:"), std::string::npos)
        << message;
    EXPECT_NE(message.find("65535"), std::string::npos) << message;
}

TEST(CheckStoppedLoops, ALoopWithABreakOfItsOwnSetsTheFlagThere) {
    ForLoop l(true);
    ASSERT_TRUE(check_stopped_loops(*l.k.f, kLavapipe));
    EXPECT_EQ(l.k.verify(), "") << l.k.text();
    // No marks: its own break sets the flag, the tests' breaks (top, before the continue, at the end) do not.
    EXPECT_EQ(count_op(*l.k.f, Op::LoopMark), 0u) << l.k.text();
    EXPECT_EQ(count_op(*l.k.f, Op::Break), 4u) << l.k.text();
    EXPECT_EQ(count_op(*l.k.f, Op::Trap), 1u);
    const Block& body = l.k.f->body();
    const Block& loop_body = *l.k.f->inst(l.loop).regions[0];
    // Its own break's test stores true before the break (the only break in the body that does), and the body
    // ends with the repeated exit test.
    size_t storing = 0;
    for (ValueId id : loop_body.insts) {
        const Inst& in = l.k.f->inst(id);
        if (in.op != Op::If || in.regions[0]->insts.empty()) continue;
        const Block& then = *in.regions[0];
        if (l.k.f->inst(then.insts.back()).op != Op::Break || then.insts.size() < 2) continue;
        ++storing;
        EXPECT_EQ(l.k.f->inst(then.insts[then.insts.size() - 2]).op, Op::Store) << l.k.text();
    }
    EXPECT_EQ(storing, 1u) << l.k.text();
    const Inst& last = l.k.f->inst(loop_body.insts.back());
    ASSERT_EQ(last.op, Op::If);
    ASSERT_EQ(last.regions[0]->insts.size(), 1u) << l.k.text();
    // After the loop: where the flag is clear, the test once more; then the trap where it is still clear.
    size_t at = 0;
    while (body.insts[at] != l.loop) ++at;
    size_t ifs = 0;
    for (size_t k = at + 1; k < body.insts.size() && l.k.f->inst(body.insts[k]).op != Op::BufferWrite; ++k)
        ifs += l.k.f->inst(body.insts[k]).op == Op::If;
    EXPECT_EQ(ifs, 2u) << l.k.text();   // the tests inside the first
    EXPECT_NE(the_trap(*l.k.f).find("lavapipe stopped the loop at ir/check_stopped_loops_test.cpp:"),
              std::string::npos);
}

TEST(CheckStoppedLoops, KeepsWhatTheLoopComputes) {
    for (bool own_break : {false, true}) {
        for (uint32_t n : {0u, 1u, 2u, 7u, 100u}) {
            ForLoop plain(own_break), checked(own_break);
            ASSERT_TRUE(check_stopped_loops(*checked.k.f, kLavapipe));
            auto want = run(*plain.k.f, {{n, 0}});
            auto got = run(*checked.k.f, {{n, 0}});
            EXPECT_EQ(want.buffers[0], for_loop_result(n, own_break));
            EXPECT_EQ(got.buffers[0], want.buffers[0]) << "n = " << n;
            EXPECT_EQ(got.trap, 0u) << "n = " << n;
            // After optimization, too.
            optimize(*checked.k.f);
            EXPECT_EQ(run(*checked.k.f, {{n, 0}}).buffers[0], want.buffers[0]);
        }
    }
}

// `while (j < n && data[j] != 0) s += data[j++]`: two exit tests with a read between them that only the first
// one's failing keeps in range. After the loop the tests are evaluated as in it: the read not where the first
// holds (the interpreter fails on a read out of range), and no trap whichever test ended the loop.
TEST(CheckStoppedLoops, TheTestsAfterTheLoopStopWhereOneHolds) {
    auto build = [](Fn& k) {
        auto& b = *k.b;
        counting_loop(k, [&](ValueId buf, ValueId j, ValueId s) {
            auto v = b.emit(Op::BufferRead, {buf, b.binary(Op::Add, b.load(j), b.u32(2))}, Type::u32());
            auto second = b.if_(b.binary(Op::Eq, v, b.u32(0)));
            k.in(second, 0, [&] { b.break_(); });
            b.store(s, b.binary(Op::Add, b.load(s), v));
            b.store(j, b.binary(Op::Add, b.load(j), b.u32(1)));
        });
    };
    // n data values after out[0] = n and out[1] = the sum: ended by the first test, then by the second.
    for (const auto& data : {std::vector<uint32_t>{3, 0, 5, 6, 7}, std::vector<uint32_t>{4, 0, 5, 6, 0, 9}}) {
        Fn plain({u32buf()}), checked({u32buf()});
        build(plain);
        build(checked);
        ASSERT_TRUE(check_stopped_loops(*checked.f, kLavapipe));
        EXPECT_EQ(checked.verify(), "") << checked.text();
        EXPECT_EQ(count_op(*checked.f, Op::LoopMark), 0u) << checked.text();
        auto want = run(*plain.f, {data});
        auto got = run(*checked.f, {data});
        EXPECT_EQ(want.buffers[0][1], data.size() == 5 ? 18u : 11u);
        EXPECT_EQ(got.buffers[0], want.buffers[0]);
        EXPECT_EQ(got.trap, 0u);
    }
}

// A continue and a break inside a switch inside the loop: the break leaves the switch, so it is not the
// loop's exit, and no exit test goes before the continue (its break would leave the switch too).
TEST(CheckStoppedLoops, SwitchesKeepTheirBreaks) {
    auto build = [](Fn& k) {
        auto& b = *k.b;
        counting_loop(k, [&](ValueId, ValueId j, ValueId s) {
            auto jj = b.load(j);
            b.store(j, b.binary(Op::Add, jj, b.u32(1)));
            auto sw = b.switch_(b.binary(Op::Mod, jj, b.u32(3)));
            b.push(b.add_case(sw, 0));
            b.continue_();
            b.pop();
            b.push(b.add_case(sw, 1));
            b.store(s, b.binary(Op::Add, b.load(s), b.u32(100)));
            b.break_();
            b.pop();
            b.store(s, b.binary(Op::Add, b.load(s), b.u32(1)));
        });
    };
    for (uint32_t n : {0u, 1u, 5u, 10u}) {
        Fn plain({u32buf()}), checked({u32buf()});
        build(plain);
        build(checked);
        ASSERT_TRUE(check_stopped_loops(*checked.f, kLavapipe));
        EXPECT_EQ(checked.verify(), "") << checked.text();
        uint32_t want = 0;
        for (uint32_t j = 0; j < n; ++j) want += j % 3 == 0 ? 0 : j % 3 == 1 ? 101 : 1;
        EXPECT_EQ(run(*plain.f, {{n, 0}}).buffers[0][1], want);
        auto got = run(*checked.f, {{n, 0}});
        EXPECT_EQ(got.buffers[0][1], want) << "n = " << n;
        EXPECT_EQ(got.trap, 0u);
    }
}

// A loop with no break of its own gets one that no compiler can rule out (or it would drop the check
// after the loop); nested loops and switches keep their own breaks unmarked by the outer loop.
TEST(CheckStoppedLoops, EndlessLoopsNestedLoopsAndSwitches) {
    Fn k({u32buf()});
    auto& b = *k.b;
    auto out = k.arg(0);
    auto outer = b.loop();
    k.in(outer, 0, [&] {
        auto inner = b.loop();
        k.in(inner, 0, [&] {
            auto sw = b.switch_(b.u32(1));
            b.push(b.add_case(sw, 1));
            b.break_();   // leaves the switch only
            b.pop();
        });
    });
    b.emit(Op::BufferWrite, {out, b.u32(0), b.u32(1)}, Type::void_type());
    ASSERT_TRUE(check_stopped_loops(*k.f, kLavapipe));
    EXPECT_EQ(k.verify(), "") << k.text();
    // Each loop: clear before, exchange after, and the guard's exchange at the top of the body.
    EXPECT_EQ(count_op(*k.f, Op::LoopMark), 2u * 3u) << k.text();
    EXPECT_EQ(count_op(*k.f, Op::Break), 3u) << k.text();   // the switch's, unmarked, and the two guards
    EXPECT_EQ(count_op(*k.f, Op::Trap), 2u);
}

} // namespace adjoint::ir::test
