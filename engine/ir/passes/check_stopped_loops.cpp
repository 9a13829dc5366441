// The loop-limit check, for devices that stop loops after a fixed number of iterations.
//
// Lavapipe (llvmpipe; measured on Mesa 22.3, see tests/runtime/loop_limit_test.cpp) gives each SIMD group
// of threads one budget of 65,535 loop iterations, shared by all the loops those threads run (the final
// iteration that only finds the exit condition true counts; loops its compiler unrolls do not). Once the
// budget is spent, a loop leaves at the end of its current iteration as if it had ended, and the kernel
// runs on with wrong values. Counting what the device counts would be fragile (unrolling, neighbouring
// threads); its stop is observable instead: an IR loop leaves only through one of its own breaks, so a
// loop left without one was stopped.
//
// So, for each loop that does not begin with exit tests (a $loop whose body does not start with one): the thread's mark
// word is cleared before it (LoopMark 0) and set by each of its breaks (LoopMark 1); after it, a mark still
// clear means the device stopped it, and the loop traps with a message naming the kernel and its C++ line.
// The mark is the thread's word of shared memory, which no compiler reasons away (a flag in a variable set by
// every break would be folded to "set": to a compiler, loops leave only through breaks). Nested loops share
// the word: an inner loop clears it after its own check, so at the end of any outer iteration it is clear
// again.
//
// A stop is harmless when the iteration it cut off would only have found an exit condition true. The
// loop's leading exit tests (`if (!(i < n)) break;` of $for and $while, with the values they compute) are
// therefore evaluated again at the end of each iteration and before each continue, leaving right there:
// an iteration the device cuts off is then always one that would have done work.
//
// A loop with leading exit tests (every $for and $while) needs no mark: where it has no break of its own, it
// ended by itself exactly where one of its tests holds after it, since the tests only read what the loop
// left. So the tests are evaluated once more after the loop into a flag (what follows a test that holds is not
// evaluated, as in the loop), and a loop after which none holds was stopped. A $break of its own sets the flag
// itself, and the tests after the loop run only where it is clear. The compilers before lavapipe's own do not
// carry a test's outcome past the loop (it left from two places, the top and the end), and lavapipe's sees its
// stop as one more exit; tests/runtime/loop_limit_test.cpp shows the check still sees every stop. The marks
// cost every iteration a load and a store of shared memory per thread at each test, which lavapipe runs under a
// mask whether or not a thread leaves: a third of a short gather loop's time (texel_gather: 0.49-0.55 -> 0.32-0.33
// ms with the marks taken out).
#include <adjoint/ir/clone.h>
#include <adjoint/ir/passes.h>
#include <adjoint/ir/trap.h>

#include <adjoint/core/error.h>

#include <algorithm>
#include <vector>

namespace adjoint::ir {

namespace {

// No side effect, no control flow and no local of its own: evaluating it once more is exact.
bool harmless(const Inst& in) { return is_harmless(in); }

// `if (c) break;` (either side; only harmless values computed before the break): an exit test.
bool is_exit_test(const Function& f, const Inst& in) {
    if (in.op != Op::If) return false;
    bool breaks = false;
    for (auto& r : in.regions) {
        for (size_t k = 0; k < r->insts.size(); ++k) {
            const Inst& x = f.inst(r->insts[k]);
            if (x.op == Op::Break && k + 1 == r->insts.size()) breaks = true;
            else if (!harmless(x)) return false;
        }
    }
    return breaks;
}

// The breaks in b from `from` on (and in its ifs and switches, not nested loops) that leave the loop b belongs to.
void loop_breaks(const Function& f, const Block& b, std::vector<ValueId>& out, size_t from = 0,
                 bool in_switch = false) {
    for (size_t k = from; k < b.insts.size(); ++k) {
        const Inst& in = f.inst(b.insts[k]);
        if (in.op == Op::Break && !in_switch) out.push_back(b.insts[k]);
        else if (in.op == Op::If || in.op == Op::Switch)
            for (auto& r : in.regions) loop_breaks(f, *r, out, 0, in_switch || in.op == Op::Switch);
    }
}

struct Checker {
    Function& f;
    const LoopLimit& limit;
    bool changed = false;
    size_t breaks = 0;    // of the loop being rewritten
    bool marking = true;  // whether its breaks set the mark (not where it has leading exit tests)
    std::vector<ValueId> own{};   // without marks: its breaks other than its tests', which set `left`
    ValueId left = kNoValue;

    void block(Block& b) {
        for (size_t i = 0; i < b.insts.size(); ++i) {
            ValueId id = b.insts[i];
            for (auto& r : f.inst(id).regions) block(*r);
            if (f.inst(id).op == Op::Loop) i += instrument(b, i);
        }
    }

    // Instructions that exchange the thread's mark with `value`.
    Block mark(uint32_t value, const std::source_location& loc) {
        Block out;
        Builder b(f);
        b.push(out);
        b.emit(Op::LoopMark, {b.u32(value, loc)}, Type::u32(), 0, loc);
        b.pop();
        return out;
    }

    // `left` = true, before a break of the loop's own.
    Block set_left(const std::source_location& loc) {
        Block out;
        Builder b(f);
        b.push(out);
        b.store(left, b.boolean(true, loc), {}, loc);
        b.pop();
        return out;
    }

    // A copy of the leading exit tests, leaving the loop when one holds.
    Block exit_tests(const Block& leading) {
        Block out;
        Builder b(f);
        b.push(out);
        ValueMap map(f.inst_count());
        clone_block(f, leading, b, map, {}, true);
        b.pop();
        return out;
    }

    // Walks b and its ifs and switches (not nested loops): marks each break that leaves the loop (not those
    // of switches, which leave the switch), and puts the exit tests before each continue outside switches
    // and, when `at_end`, at the end of b.
    void rewrite(Block& b, const Block& leading, bool at_end, const std::source_location& loc,
                 bool in_switch = false) {
        for (size_t k = 0; k < b.insts.size(); ++k) {
            Inst& in = f.inst(b.insts[k]);
            Block extra;
            if (in.op == Op::Break && !in_switch) {
                if (marking) extra = mark(1, loc);
                else if (std::find(own.begin(), own.end(), b.insts[k]) != own.end()) extra = set_left(loc);
                ++breaks;
            } else if (in.op == Op::Continue && !in_switch) {   // in a switch, the tests' breaks would leave it
                extra = exit_tests(leading);
                rewrite(extra, leading, false, loc);
            } else if (in.op == Op::If || in.op == Op::Switch) {
                for (auto& r : in.regions) rewrite(*r, leading, false, loc, in_switch || in.op == Op::Switch);
            }
            b.insts.insert(b.insts.begin() + long(k), extra.insts.begin(), extra.insts.end());
            k += extra.insts.size();
        }
        if (at_end && !leading.insts.empty()) {
            Block tail = exit_tests(leading);
            rewrite(tail, leading, false, loc);
            b.insts.insert(b.insts.end(), tail.insts.begin(), tail.insts.end());
        }
    }

    // After the loop: a copy of the leading tests from lead.insts[k] on that stores true into `flag` where one
    // holds, evaluating nothing after it (what follows a test may rely on its failing, as a read's index does).
    void tests_after(const Block& lead, size_t k, Builder& b, ValueMap& map, ValueId flag,
                     const std::source_location& loc) {
        for (; k < lead.insts.size(); ++k) {
            const ValueId id = lead.insts[k];
            if (!is_exit_test(f, f.inst(id))) {
                clone_inst(f, id, b, map, {}, true);
                continue;
            }
            const ValueId cond = map(f.inst(id).operands[0]) != kNoValue ? map(f.inst(id).operands[0])
                                                                         : f.inst(id).operands[0];
            const Block* sides[2] = {f.inst(id).regions[0].get(), f.inst(id).regions[1].get()};
            const ValueId branch = b.if_(cond, loc);
            for (size_t r = 0; r < 2; ++r) {
                b.push(*f.inst(branch).regions[r]);
                const std::vector<ValueId> insts = sides[r]->insts;   // copied: cloning adds instructions
                const bool leaves = !insts.empty() && f.inst(insts.back()).op == Op::Break;
                for (size_t j = 0; j + (leaves ? 1 : 0) < insts.size(); ++j) clone_inst(f, insts[j], b, map, {}, true);
                if (leaves) b.store(flag, b.boolean(true, loc), {}, loc);
                else tests_after(lead, k + 1, b, map, flag, loc);
                b.pop();
            }
            return;
        }
    }

    void discard(Block& b) {
        for (ValueId id : b.insts) {
            for (auto& r : f.inst(id).regions) discard(*r);
            f.inst(id).dead = true;
        }
    }

    // Instruments the loop at b.insts[index]; returns how many instructions went before it in b.
    size_t instrument(Block& b, size_t index) {
        ValueId loop = b.insts[index];
        std::source_location loc = f.inst(loop).loc;
        Block& body = *f.inst(loop).regions[0];

        // The leading exit tests: the harmless instructions up to the last exit test among them.
        size_t lead = 0;
        for (size_t k = 0; k < body.insts.size(); ++k) {
            const Inst& in = f.inst(body.insts[k]);
            if (is_exit_test(f, in)) lead = k + 1;
            else if (!harmless(in)) break;
        }
        Block original;
        original.insts.assign(body.insts.begin(), body.insts.begin() + long(lead));
        Block leading = exit_tests(original);   // unplaced: the rewrite below marks the originals' breaks
        breaks = 0;
        // With leading exit tests the loop is checked by them after it (top of file), without marks.
        marking = lead == 0;
        own.clear();
        Block before;
        Builder builder(f);
        if (!marking) {
            loop_breaks(f, body, own, lead);
            builder.push(before);
            left = builder.local(Type::boolean(), loc);
            builder.store(left, builder.boolean(false, loc), {}, loc);
            builder.pop();
        }
        rewrite(body, leading, true, loc);
        discard(leading);
        Block after;
        if (!marking) {
            // left: set by a break of its own, else by a test that holds after it.
            builder.push(after);
            ValueMap map(f.inst_count());
            if (own.empty()) {
                tests_after(original, 0, builder, map, left, loc);
            } else {
                const ValueId by_tests = builder.if_(builder.load(left, {}, loc), loc);
                builder.push(*f.inst(by_tests).regions[1]);
                tests_after(original, 0, builder, map, left, loc);
                builder.pop();
            }
            trap_where(builder, builder.load(left, {}, loc), 1, loc);
            builder.pop();
        } else {
            if (breaks == 0) {
                // A loop without a break never ends, so compilers drop the code after it, check included. A
                // break they cannot rule out keeps it: the mark is 0 inside the loop, never 2.
                Block exit;
                builder.push(exit);
                ValueId never = builder.emit(Op::LoopMark, {builder.u32(0, loc)}, Type::u32(), 0, loc);
                ValueId branch = builder.if_(builder.binary(Op::Eq, never, builder.u32(2, loc), loc), loc);
                builder.push(*f.inst(branch).regions[0]);
                builder.break_(loc);
                builder.pop();
                builder.pop();
                body.insts.insert(body.insts.begin(), exit.insts.begin(), exit.insts.end());
            }
            before = mark(0, loc);
            builder.push(after);
            ValueId was = builder.emit(Op::LoopMark, {builder.u32(0, loc)}, Type::u32(), 0, loc);
            trap_where(builder, builder.binary(Op::Eq, was, builder.u32(0, loc), loc), 0, loc);
            builder.pop();
        }
        b.insts.insert(b.insts.begin() + long(index) + 1, after.insts.begin(), after.insts.end());
        b.insts.insert(b.insts.begin() + long(index), before.insts.begin(), before.insts.end());
        changed = true;
        return before.insts.size() + after.insts.size();
    }

    // The loop's trap, in region `side` of an if on `cond` (0: where cond holds, 1: where it does not).
    void trap_where(Builder& builder, ValueId cond, size_t side, const std::source_location& loc) {
        const ValueId branch = builder.if_(cond, loc);
        builder.push(*f.inst(branch).regions[side]);
        builder.emit(Op::Trap, {builder.u32(add_trap(f, message(loc)), loc)}, Type::void_type(), 0, loc);
        builder.pop();
    }

    std::string message(const std::source_location& loc) {
        return "loop iteration limit in kernel '" + f.name() + "': " + limit.device + " stopped the loop at " +
               format_location(loc) + " before its end: it runs at most " + std::to_string(limit.iterations) +
               " loop iterations per group of neighbouring threads (the iterations of all their loops count "
               "together, and inside $autodiff the reverse pass runs a loop again); split the work over more "
               "threads or dispatches";
    }
};

} // namespace

bool check_stopped_loops(Function& f, const LoopLimit& limit) {
    if (limit.iterations == 0) return false;
    Checker c{f, limit};
    c.block(f.body());
    return c.changed;
}

} // namespace adjoint::ir
