// Loops inside $autodiff lose their breaks and continues (flags and guards), and their carried and invariant
// locals are found: what the tapes and the reverse loops are built from.
#include "differentiator.h"

#include <adjoint/core/error.h>
#include <adjoint/ir/walk.h>

#include <algorithm>

namespace adjoint::autodiff {

using namespace ir;

namespace {

bool is_break_only(const Function& f, const Block& b) {
    return b.insts.size() == 1 && f.inst(b.insts[0]).op == Op::Break;
}

bool continues_to(const Function& f, const Block& b) {
    bool found = false;
    walk(f, b, [&](ValueId id) {
        found = found || f.inst(id).op == Op::Continue;
        return f.inst(id).op != Op::Loop;   // a nested loop's continues are its own
    });
    return found;
}

// A $break in the middle of a $switch case (a Callable's $return inside a case is one too, once inlined) leaves
// the case early, which the reverse pass has no flag for: refused, wherever the switch stands. `insts`: a case's,
// less its final break (which only ends the case).
void refuse_mid_case_breaks(const Function& f, const std::vector<ValueId>& insts) {
    Block tmp;
    tmp.insts = insts;
    walk(f, tmp, [&](ValueId id) {
        const Inst& in = f.inst(id);
        if (in.op == Op::Break)
            fail("a $break, or a Callable's $return, in the middle of a $switch case within $autodiff at ",
                 where(in), " is not supported (at a case's end it is); restructure the case with $if");
        return in.op != Op::Loop && in.op != Op::Switch;   // their breaks are their own
    });
}

void refuse_mid_case_breaks(const Function& f, const Inst& sw) {
    for (auto& r : sw.regions) {
        std::vector<ValueId> insts = r->insts;
        if (!insts.empty() && f.inst(insts.back()).op == Op::Break) insts.pop_back();
        refuse_mid_case_breaks(f, insts);
    }
}

// Tape entries a loop needs when its trip count is a compile-time constant; 0 when unknown.
uint32_t static_entries(Function& f, const Block& parent, size_t index) {
    const Inst& loop = f.inst(parent.insts[index]);
    const Block& body = *loop.regions[0];
    if (!body.insts.empty() && f.inst(body.insts.back()).op == Op::Break && !continues_to(f, body)) return 1;
    // The $for pattern: i = BEGIN before the loop; `if (!(i < END)) break;` at the top; i = i + STEP.
    for (ValueId id : body.insts) {
        const Inst& in = f.inst(id);
        if (in.op != Op::If) continue;
        if (!is_break_only(f, *in.regions[0]) || !in.regions[1]->insts.empty()) return 0;
        const Inst& neg = f.inst(in.operands[0]);
        if (neg.op != Op::Not) return 0;
        const Inst& lt = f.inst(neg.operands[0]);
        if (lt.op != Op::Lt || !is_constant(f, lt.operands[1])) return 0;
        const Inst& ld = f.inst(lt.operands[0]);
        if (ld.op != Op::Load || ld.operands.size() != 1) return 0;
        ValueId var = ld.operands[0];
        int64_t end = const_int(f, lt.operands[1]);
        int64_t begin = 0;
        bool found = false;
        for (size_t k = 0; k < index; ++k) {
            const Inst& s = f.inst(parent.insts[k]);
            if (s.op == Op::Store && s.operands[0] == var) {
                found = s.operands.size() == 2 && is_constant(f, s.operands[1]);
                if (found) begin = const_int(f, s.operands[1]);
            }
        }
        if (!found) return 0;
        int64_t step = 0;
        bool ok = true;
        walk(f, body, [&](ValueId sid) {
            const Inst& s = f.inst(sid);
            if (s.op != Op::Store || s.operands[0] != var) return;
            const Inst& add = f.inst(s.operands[1]);
            bool good = s.operands.size() == 2 && add.op == Op::Add && is_constant(f, add.operands[1]) &&
                        f.inst(add.operands[0]).op == Op::Load && f.inst(add.operands[0]).operands[0] == var;
            int64_t st = good ? const_int(f, add.operands[1]) : 0;
            if (!good || st <= 0 || (step != 0 && st != step)) ok = false;
            step = st;
        });
        if (!ok || step <= 0) return 0;
        int64_t trips = end > begin ? (end - begin + step - 1) / step : 0;
        if (trips > 1 << 20) return 0;
        return uint32_t(trips + 1);   // the last entry is the iteration that only tests and leaves
    }
    return 0;
}

class ExitLowering {
public:
    ExitLowering(Function& f, LoopInfo& info) : f_(f), b_(f), info_(info) {}

    // Rewrites the body in place: breaks and continues that target this loop set flags, later
    // statements run under `if (!(brk || cnt))`, and the body ends with `if (brk) break;` (which lavapipe's
    // lowering takes at the top of the next iteration: ir::rotate_trailing_exits).
    void run() {
        Inst& loop = f_.inst(info_.loop);
        Block& body = *loop.regions[0];
        std::vector<ValueId> rest = body.insts;
        body.insts.clear();
        b_.push(body);
        b_.store(info_.cnt, b_.boolean(false, loop.loc), {}, loop.loc);
        emit(rest, loop.loc);
        ValueId brk = b_.load(info_.brk, {}, loop.loc);
        info_.exit_if = b_.if_(brk, loop.loc);
        b_.push(*f_.inst(info_.exit_if).regions[0]);
        b_.break_(loop.loc);
        b_.pop();
        b_.pop();
    }

private:
    // Appends `insts` to the current block, rewriting exits; returns whether control may leave early.
    bool emit(const std::vector<ValueId>& insts, const std::source_location& loc) {
        for (size_t i = 0; i < insts.size(); ++i) {
            ValueId id = insts[i];
            Inst& in = f_.inst(id);
            if (in.op == Op::Break || in.op == Op::Continue) {
                b_.store(in.op == Op::Break ? info_.brk : info_.cnt, b_.boolean(true, in.loc), {}, in.loc);
                in.dead = true;
                for (size_t j = i + 1; j < insts.size(); ++j) f_.inst(insts[j]).dead = true;   // unreachable
                return true;
            }
            bool may_exit = false;
            if (in.op == Op::If || in.op == Op::Switch) {
                for (auto& r : in.regions) {
                    std::vector<ValueId> inner = r->insts;
                    if (in.op == Op::Switch) check_switch_breaks(inner);
                    r->insts.clear();
                    b_.push(*r);
                    may_exit |= emit(inner, in.loc);
                    b_.pop();
                }
            }
            b_.block().insts.push_back(id);
            if (may_exit && i + 1 < insts.size()) {
                ValueId stop = b_.binary(Op::Or, b_.load(info_.brk, {}, loc), b_.load(info_.cnt, {}, loc), loc);
                ValueId guard = b_.if_(b_.unary(Op::Not, stop, loc), loc);
                std::vector<ValueId> tail(insts.begin() + long(i) + 1, insts.end());
                b_.push(*f_.inst(guard).regions[0]);
                emit(tail, loc);
                b_.pop();
                return true;
            }
            if (may_exit) return true;
        }
        return false;
    }

    void check_switch_breaks(std::vector<ValueId>& inner) {
        // A break that ends a case is a no-op; one in the middle of a case would need its own flag.
        if (!inner.empty() && f_.inst(inner.back()).op == Op::Break) {
            f_.inst(inner.back()).dead = true;
            inner.pop_back();
        }
        refuse_mid_case_breaks(f_, inner);
    }

    Function& f_;
    Builder b_;
    LoopInfo& info_;
};

} // namespace


// The exit `if` of a loop whose only exit is a test at the top of its body (straight-line code that writes
// nothing, then `if (c) break;`), or kNoValue.
ValueId Differentiator::top_test(const Block& body) {
    std::set<ValueId> own;   // the body's locals declared so far
    for (size_t i = 0; i < body.insts.size(); ++i) {
        const Inst& in = f_.inst(body.insts[i]);
        if (in.op == Op::If && is_break_only(f_, *in.regions[0]) && in.regions[1]->insts.empty()) {
            for (size_t j = i + 1; j < body.insts.size(); ++j)
                if (exits(f_.inst(body.insts[j]))) return kNoValue;
            return body.insts[i];
        }
        if (!in.regions.empty() || in.op == Op::Break || in.op == Op::Continue) return kNoValue;
        // Code before the test that writes what outlives the iteration (a carried local updated, then the test)
        // runs in the iteration that leaves, which a top-test loop does not tape: its reverse lost that
        // iteration's work (x * w taken once and then tested reversed to 1 for dy/dx and 0 for dy/dw). Locals
        // of the body's own, which a test may compute with, end with the iteration.
        if (in.op == Op::Local) own.insert(body.insts[i]);
        const bool own_local = in.op == Op::Local || (in.op == Op::Store && own.count(in.operands[0]));
        if (!own_local && ir::info(in.op).effect == Effect::Write) return kNoValue;
        // A value the reverse pass replays from the side tape, computed before the exit test, runs in
        // the test-only last iteration too; the flag form tapes (and so replays) that iteration.
        if (replayed_kind(body.insts[i])) return kNoValue;
    }
    return kNoValue;
}

// Does this instruction break or continue the enclosing loop?
bool Differentiator::exits(const Inst& in) {
    if (in.op == Op::Break || in.op == Op::Continue) return true;
    if (in.op == Op::Loop) return false;   // its exits are its own
    for (auto& r : in.regions)
        for (ValueId id : r->insts) {
            const Inst& c = f_.inst(id);
            if (in.op == Op::Switch && c.op == Op::Break) continue;   // ends the case
            if (exits(c)) return true;
        }
    return false;
}

// -- loops: lower exits, find carried state, instrument the forward loop with a tape --------------
void Differentiator::prepare_loops(Block& block) {
    for (size_t i = 0; i < block.insts.size(); ++i) {
        ValueId id = block.insts[i];
        Inst& in = f_.inst(id);
        // Every switch: those outside loops were not checked, and a mid-case break there silently took the
        // case's whole path in the reverse pass (d(x*x*x)/dx where the break left x*x).
        if (in.op == Op::Switch) refuse_mid_case_breaks(f_, in);
        for (auto& r : in.regions) prepare_loops(*r);
        if (in.op != Op::Loop) continue;
        LoopInfo info;
        info.loop = id;
        uint32_t entries = static_entries(f_, block, i);
        uint32_t user = uint32_t(in.imm);
        info.capacity = entries ? entries : (user ? user : kDefaultTapeCapacity);
        info.exact = entries != 0;
        Block pre;
        info.exit_if = top_test(*in.regions[0]);
        if (info.exit_if != kNoValue) {
            // The only exit is the test at the top: no flags needed, and only full iterations are taped
            // (the last, test-only iteration is not), so a constant $for needs exactly its trip count.
            info.top_test = true;
            if (info.exact && info.capacity > 1) --info.capacity;
        } else {
            // Flags are declared before the loop; the body is rewritten to exit only at its end.
            b_.push(pre);
            info.brk = b_.local(Type::boolean(), in.loc);
            b_.store(info.brk, b_.boolean(false, in.loc), {}, in.loc);
            info.cnt = b_.local(Type::boolean(), in.loc);
            b_.store(info.cnt, b_.boolean(false, in.loc), {}, in.loc);
            b_.pop();
            ExitLowering(f_, info).run();
        }
        // Carried and invariant locals (declared outside, used inside).
        std::set<ValueId> inside, stored, loaded;
        walk(f_, *in.regions[0], [&](ValueId sid) {
            const Inst& s = f_.inst(sid);
            if (s.op == Op::Local) inside.insert(sid);
            if (s.op == Op::Store) stored.insert(s.operands[0]);
            if (s.op == Op::Load) loaded.insert(s.operands[0]);
        });
        for (ValueId v : stored)
            if (!inside.count(v)) info.carried.push_back(v);
        for (ValueId v : loaded)
            if (!inside.count(v) && !stored.count(v)) info.invariant.push_back(v);
        classify_carried(info);
        block.insts.insert(block.insts.begin() + long(i), pre.insts.begin(), pre.insts.end());
        i += pre.insts.size();
        loops_[id] = std::move(info);
    }
}

} // namespace adjoint::autodiff
