// Reverse-mode differentiation of $autodiff regions, as an IR-to-IR transform.
//
// Where to start reading. A region recorded by `$autodiff { ... backward(y); ... }` holds the forward
// statements, one Backward, and statements after it that read Grad(marker). `differentiate` splices the
// region into its parent block as: the forward statements (loops instrumented with a tape), the reverse
// code, then the statements after backward with each Grad turned into a load of the marker's adjoint.
//
// The data structures:
//  - `active`: values that depend on a requires_grad marker (found by a fixed point over the forward
//    statements, since loops carry values around through locals).
//  - adjoints: every local variable has an adjoint local; an SSA value has an adjoint local when some use
//    sits in a nested region, else its adjoint is accumulated as SSA values in the reverse of its own block.
//  - the primal map: reverse code reads primal values through it. Outside loops it is the identity (the
//    GLSL emitter hoists values that reverse code reads across blocks). Inside a loop, iteration k is
//    recomputed from the tape before its reverse runs, and the map points at the recomputed copies.
//
// Loops are first rewritten so that their body has no break or continue (flags and guards), ending in
// one `if (brk) break;`. The forward loop then stores, at the top of each iteration, the locals it
// carries (those declared outside and stored inside) into a per-loop tape; the reverse loop runs the
// iterations backwards: restore the carried locals into shadows, recompute the body, reverse the body.
// Nested loops need nothing special: the recomputed body refills the inner loop's tape. Within reverse
// mode, loop flags, $for counters and pure accumulators are rebuilt instead of taped. A loop of scalar
// code with few active inputs skips all of that: it runs in forward mode, carrying tangents (one per
// input) through the forward loop, and its reverse is one dot product per input.
// Large tapes go to a scratch buffer the runtime binds; each thread owns a contiguous range of words.
// Recomputation repeats no side effect: it drops writes and atomics, and reads the values it cannot
// recompute (atomics' results, reads of written resources) back from a per-block side tape. Values that
// come from other threads (shared-memory reads and atomics, subgroup operations) are replayed the same
// way, and recomputation drops sync_block(): it never touches shared memory, so the reverse loops, which
// threads run for their own trip counts, need no barrier.
#include <adjoint/autodiff/autodiff.h>

#include "rules.h"

#include <adjoint/core/error.h>
#include <adjoint/ir/builder.h>
#include <adjoint/ir/clone.h>
#include <adjoint/ir/passes.h>
#include <adjoint/ir/printer.h>
#include <adjoint/ir/trap.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace adjoint::autodiff {

using namespace ir;

namespace {

constexpr uint32_t kDefaultTapeCapacity = 1024;
// Tapes larger than this (per thread) go to the runtime's scratch buffer instead of private arrays.
constexpr uint32_t kLocalTapeBytes = 16 * 1024;

// Per kernel: where a thread's scratch words start. Built once, placed at the top of the kernel at the end.
struct ScratchBase {
    Block prelude;
    ValueId base = kNoValue;        // linear thread id * words per thread
    ValueId words = kNoValue;       // a constant patched once every loop has its offset
};

// Per kernel: the gradient buffers of differentiable buffer parameters, added as hidden parameters after
// the user's (the runtime binds each to the gradient half of the argument it belongs to).
struct GradBuffers {
    Block prelude;                          // their Arg instructions, placed at the top of the kernel
    std::map<int64_t, ValueId> arg_of;      // value parameter index -> the gradient buffer's Arg
    std::vector<GradParam> params;
};

std::string where(const Inst& in) {
    std::string s = format_location(in.loc);
    return s.empty() ? std::string("an unknown line") : s;
}

// ---- loop exits --------------------------------------------------------------------------------------

struct LoopInfo {
    ValueId loop = kNoValue;
    ValueId brk = kNoValue, cnt = kNoValue;       // flags (locals declared before the loop)
    uint32_t capacity = 0;                        // tape entries
    ValueId counter = kNoValue;                   // n: iterations started (uint local)
    std::vector<ValueId> carried;                 // locals declared outside, stored inside
    // Carried locals that need no tape: the flags (false at the top of every iteration that runs),
    // $for counters (begin + k * step at iteration k), and accumulators (x = x + ..., whose value no
    // other computation reads). The rest are `taped`.
    std::map<ValueId, ValueId> counter_step;      // counter -> its loop-invariant step
    std::map<ValueId, ValueId> counter_begin;     // counter -> its value at loop entry
    std::set<ValueId> accumulators;
    std::vector<ValueId> taped;
    std::vector<ValueId> invariant;               // locals declared outside, only loaded inside
    std::map<ValueId, ValueId> tape;              // carried local -> tape array local
    std::map<ValueId, ValueId> snapshot;          // invariant local -> its value at loop entry
    std::set<ValueId> instrumentation;            // the tape writes at the top of the body
    ValueId exit_if = kNoValue;                   // the final `if (brk) break;`
    bool exact = false;                           // the capacity is the exact trip count (+1)
    bool top_test = false;                        // `test; if (!c) break; body` with no other exit
    // Forward mode: a loop of scalar code with few active inputs carries tangents instead of a tape.
    bool forward_mode = false;
    std::vector<ValueId> directions;              // active inputs: carried/invariant locals, outer values
    std::map<std::pair<ValueId, size_t>, ValueId> tangent_local;   // (local, direction) -> tangent local
    bool scratch = false;                         // the tape lives in the scratch buffer
    uint32_t scratch_offset = 0;                  // first word of this loop's tape within a thread's words
    uint32_t entry_words = 0;                     // words per tape entry
    bool active = false;
};

bool is_break_only(const Function& f, const Block& b) {
    return b.insts.size() == 1 && f.inst(b.insts[0]).op == Op::Break;
}

bool continues_to(const Function& f, const Block& b) {
    for (ValueId id : b.insts) {
        const Inst& in = f.inst(id);
        if (in.op == Op::Continue) return true;
        if (in.op == Op::Loop) continue;   // its continues are its own
        for (auto& r : in.regions)
            if (continues_to(f, *r)) return true;
    }
    return false;
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
        std::function<void(const Block&)> stores = [&](const Block& b) {
            for (ValueId sid : b.insts) {
                const Inst& s = f.inst(sid);
                if (s.op == Op::Store && s.operands[0] == var) {
                    const Inst& add = f.inst(s.operands[1]);
                    bool good = s.operands.size() == 2 && add.op == Op::Add && is_constant(f, add.operands[1]) &&
                                f.inst(add.operands[0]).op == Op::Load && f.inst(add.operands[0]).operands[0] == var;
                    int64_t st = good ? const_int(f, add.operands[1]) : 0;
                    if (!good || st <= 0 || (step != 0 && st != step)) ok = false;
                    step = st;
                }
                for (auto& r : s.regions) stores(*r);
            }
        };
        stores(body);
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
    // statements run under `if (!(brk || cnt))`, and the body ends with `if (brk) break;`.
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
        std::function<void(const Block&)> scan = [&](const Block& b) {
            for (ValueId id : b.insts) {
                const Inst& in = f_.inst(id);
                if (in.op == Op::Break)
                    fail("$break inside a $switch case within $autodiff at ", where(in),
                         " is not supported; restructure the case with $if");
                if (in.op != Op::Loop && in.op != Op::Switch)
                    for (auto& r : in.regions) scan(*r);
            }
        };
        Block tmp;
        tmp.insts = inner;
        scan(tmp);
    }

    Function& f_;
    Builder b_;
    LoopInfo& info_;
};

// ---- the transform ------------------------------------------------------------------------------------

class Differentiator {
public:
    Differentiator(Function& f, Block& parent, size_t index, ScratchBase& scratch, GradBuffers& grads)
        : f_(f), b_(f), parent_(parent), index_(index), scratch_(scratch), grads_(grads) {}

    void run() {
        ValueId scope = parent_.insts[index_];
        Block& region = *f_.inst(scope).regions[0];
        size_t bw = region.insts.size();
        for (size_t i = 0; i < region.insts.size(); ++i)
            if (f_.inst(region.insts[i]).op == Op::Backward) bw = i;
        if (bw == region.insts.size()) fail("$autodiff block at ", where(f_.inst(scope)), " has no backward");
        forward_.insts.assign(region.insts.begin(), region.insts.begin() + long(bw));
        backward_ = region.insts[bw];
        std::vector<ValueId> after(region.insts.begin() + long(bw) + 1, region.insts.end());

        scan_side_effects();
        prepare_loops(forward_);
        find_active();
        classify();

        // Reverse code goes into its own block, spliced after the forward statements.
        Block reverse;
        b_.push(reverse);
        declare_adjoints();
        const Inst& bwi = f_.inst(backward_);
        ValueId y = bwi.operands[0];
        Frame top;
        frames_.push_back(&top);
        if (active_[y]) contribute(y, bwi.operands[1]);
        reverse_block(forward_, true);
        frames_.pop_back();
        b_.pop();

        // Grad(marker) reads the marker's adjoint; the markers themselves become plain values.
        for (ValueId id : after) rewrite_grads(id);
        splice_pending(after);
        std::function<void(const Block&)> unmark = [&](const Block& b) {
            for (ValueId id : b.insts) {
                Inst& in = f_.inst(id);
                if (in.op == Op::RequiresGrad) in.op = Op::Detach;
                for (auto& r : in.regions) unmark(*r);
            }
        };
        unmark(forward_);
        unmark(reverse);   // recomputed loop bodies hold copies of marks inside loops

        std::vector<ValueId> spliced = forward_.insts;
        spliced.insert(spliced.end(), reverse.insts.begin(), reverse.insts.end());
        spliced.insert(spliced.end(), after.begin(), after.end());
        f_.inst(scope).dead = true;
        f_.inst(backward_).dead = true;
        parent_.insts.erase(parent_.insts.begin() + long(index_));
        parent_.insts.insert(parent_.insts.begin() + long(index_), spliced.begin(), spliced.end());
    }

    std::vector<TapeEntry> report;

private:
    struct Frame {
        std::unordered_map<ValueId, ValueId> ssa;   // value -> accumulated adjoint (SSA)
    };

    // The exit `if` of a loop whose only exit is a test at the top of its body (straight-line code, then
    // `if (c) break;`), or kNoValue.
    ValueId top_test(const Block& body) {
        for (size_t i = 0; i < body.insts.size(); ++i) {
            const Inst& in = f_.inst(body.insts[i]);
            if (in.op == Op::If && is_break_only(f_, *in.regions[0]) && in.regions[1]->insts.empty()) {
                for (size_t j = i + 1; j < body.insts.size(); ++j)
                    if (exits(f_.inst(body.insts[j]))) return kNoValue;
                return body.insts[i];
            }
            if (!in.regions.empty() || in.op == Op::Break || in.op == Op::Continue) return kNoValue;
            // A value the reverse pass replays from the side tape, computed before the exit test, runs in
            // the test-only last iteration too; the flag form tapes (and so replays) that iteration.
            if (replayed_kind(body.insts[i])) return kNoValue;
        }
        return kNoValue;
    }
    // Does this instruction break or continue the enclosing loop?
    bool exits(const Inst& in) {
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
    void prepare_loops(Block& block) {
        for (size_t i = 0; i < block.insts.size(); ++i) {
            ValueId id = block.insts[i];
            Inst& in = f_.inst(id);
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
            std::function<void(const Block&)> scan = [&](const Block& b) {
                for (ValueId sid : b.insts) {
                    const Inst& s = f_.inst(sid);
                    if (s.op == Op::Local) inside.insert(sid);
                    if (s.op == Op::Store) stored.insert(s.operands[0]);
                    if (s.op == Op::Load) loaded.insert(s.operands[0]);
                    for (auto& r : s.regions) scan(*r);
                }
            };
            scan(*in.regions[0]);
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

    // Which carried locals can be rebuilt without a tape (see LoopInfo).
    void classify_carried(LoopInfo& info) {
        const Block& body = *f_.inst(info.loop).regions[0];
        std::set<ValueId> inside;
        std::map<ValueId, std::vector<ValueId>> users;
        std::function<void(const Block&)> scan = [&](const Block& b) {
            for (ValueId id : b.insts) {
                inside.insert(id);
                for (ValueId o : f_.inst(id).operands) users[o].push_back(id);
                for (auto& r : f_.inst(id).regions) scan(*r);
            }
        };
        scan(body);
        auto stores_of = [&](ValueId x) {
            std::vector<ValueId> out;
            for (ValueId u : users[x])
                if (f_.inst(u).op == Op::Store && f_.inst(u).operands[0] == x) out.push_back(u);
            return out;
        };
        for (ValueId x : info.carried) {
            if (x == info.brk || x == info.cnt) continue;
            const Inst& local = f_.inst(x);
            auto stores = stores_of(x);
            if (local.imm == kForCounter) {
                // Every store is x = load(x) + step with one loop-invariant step.
                ValueId step = kNoValue;
                bool ok = !stores.empty();
                for (ValueId st : stores) {
                    const Inst& s = f_.inst(st);
                    const Inst& add = f_.inst(s.operands[1]);
                    bool good = s.operands.size() == 2 && add.op == Op::Add && f_.inst(add.operands[0]).op == Op::Load &&
                                f_.inst(add.operands[0]).operands[0] == x && !inside.count(add.operands[1]);
                    if (!good || (step != kNoValue && add.operands[1] != step)) ok = false;
                    if (good) step = add.operands[1];
                }
                if (ok) {
                    info.counter_step[x] = step;
                    continue;
                }
            }
            if (f_.type_of(x)->is_float()) {
                // Every load feeds only additions that are only stored back into x.
                bool ok = true;
                for (ValueId u : users[x]) {
                    const Inst& in = f_.inst(u);
                    if (in.op == Op::Store) {
                        ok = ok && in.operands.size() == 2 && in.operands[1] != x;
                        continue;
                    }
                    if (in.op != Op::Load || in.operands.size() != 1) { ok = false; continue; }
                    for (ValueId a : users[u]) {
                        const Inst& add = f_.inst(a);
                        if (add.op != Op::Add || add.type != local.type) { ok = false; continue; }
                        for (ValueId st : users[a]) {
                            const Inst& s = f_.inst(st);
                            ok = ok && s.op == Op::Store && s.operands[0] == x && s.operands.size() == 2;
                        }
                    }
                }
                for (ValueId st : stores) {
                    const Inst& v = f_.inst(f_.inst(st).operands[1]);
                    if (v.op != Op::Add) ok = false;
                }
                if (ok) {
                    info.accumulators.insert(x);
                    continue;
                }
            }
            info.taped.push_back(x);
        }
    }

    // The per-iteration bookkeeping goes where an iteration is known to run in full: the top of the body,
    // or right after the exit test of a top-test loop.
    void insert_at_top(LoopInfo& info, const Block& top) {
        auto& body = f_.inst(info.loop).regions[0]->insts;
        size_t at = 0;
        if (info.top_test) at = size_t(std::find(body.begin(), body.end(), info.exit_if) - body.begin()) + 1;
        body.insert(body.begin() + long(at), top.insts.begin(), top.insts.end());
    }

    // Instruments a loop once activity is known: tapes for carried locals, snapshots of invariant ones.
    void instrument(Block& block, size_t index, LoopInfo& info) {
        Inst& loop = f_.inst(info.loop);
        auto loc = loop.loc;
        Block pre;
        b_.push(pre);
        info.counter = b_.local(Type::u32(), loc);
        b_.store(info.counter, b_.u32(0, loc), {}, loc);
        for (ValueId x : info.invariant) info.snapshot[x] = b_.load(x, {}, loc);
        for (auto& [x, step] : info.counter_step) info.counter_begin[x] = b_.load(x, {}, loc);
        bool tape = !info.taped.empty();
        if (!tape) info.capacity = 0;
        bool basic = true;
        for (ValueId x : info.taped) {
            info.entry_words += f_.type_of(x)->lanes();
            basic = basic && f_.type_of(x)->is_basic();
        }
        info.scratch = tape && basic && uint64_t(info.entry_words) * 4 * info.capacity > kLocalTapeBytes;
        if (info.scratch) {
            info.scratch_offset = f_.scratch_words_per_thread;
            f_.scratch_words_per_thread += info.entry_words * info.capacity;
        } else {
            for (ValueId x : info.taped) info.tape[x] = b_.local(Type::array(f_.type_of(x), info.capacity), loc);
        }
        b_.pop();
        block.insts.insert(block.insts.begin() + long(index), pre.insts.begin(), pre.insts.end());
        if (!tape) {
            // Only the iteration count is kept: one uint, no tape and no capacity to overflow.
            Block top;
            b_.push(top);
            b_.store(info.counter, b_.binary(Op::Add, b_.load(info.counter, {}, loc), b_.u32(1, loc), loc), {}, loc);
            b_.pop();
            for (ValueId t : top.insts) info.instrumentation.insert(t);
            insert_at_top(info, top);
            report.push_back(TapeEntry{where(loop), 0, 0});
            return;
        }

        // At the top of each iteration: check the capacity, write the carried state, count.
        Block top;
        b_.push(top);
        ValueId k = b_.load(info.counter, {}, loc);
        if (!info.exact) {   // a loop with constant bounds cannot run past its exact tape
            ValueId cap = b_.u32(info.capacity, loc);
            ValueId over = b_.binary(Op::Ge, k, cap, loc);
            ValueId trap_if = b_.if_(over, loc);
            b_.push(*f_.inst(trap_if).regions[0]);
            std::string msg = "autodiff tape overflow in kernel '" + f_.name() + "': the loop at " + where(loop) +
                              " ran more than " + std::to_string(info.capacity) +
                              " iterations; call tape_capacity(n) before the loop to allow more";
            b_.emit(Op::Trap, {b_.u32(register_trap(msg), loc)}, Type::void_type(), 0, loc);
            b_.pop();
        }
        // Exact tapes cannot be indexed out of range; others clamp (the overflow is reported by the trap).
        ValueId slot = info.exact ? k : b_.binary(Op::Min, k, b_.u32(info.capacity - 1, loc), loc);
        if (info.scratch) {
            ValueId base = thread_base();
            uint32_t lane = 0;
            for (ValueId x : info.taped)
                for (ValueId word : to_words(b_.load(x, {}, loc)))
                    b_.emit(Op::ScratchWrite, {word_address(info, slot, lane++, base), word}, Type::void_type());
        } else {
            for (ValueId x : info.taped) b_.store(info.tape[x], b_.load(x, {}, loc), std::vector<ValueId>{slot}, loc);
        }
        b_.store(info.counter, b_.binary(Op::Add, k, b_.u32(1, loc), loc), {}, loc);
        b_.pop();
        for (ValueId t : top.insts) info.instrumentation.insert(t);
        insert_at_top(info, top);

        report.push_back(TapeEntry{where(loop), info.entry_words * 4 * info.capacity, info.capacity, info.scratch});
        if (info.loop == side_.report_loop) report.back().bytes_per_thread += side_.capacity * 4;
    }

    // -- forward mode for loops -------------------------------------------------------------------------
    // A loop whose active code is scalar and whose active inputs are few is differentiated by carrying, for
    // each input, the tangents of its values through the forward loop (the Jacobian of the loop's outputs
    // with respect to its inputs). The reverse pass then needs one dot product per input and no tape: the
    // cost of reverse mode through a long loop is its tape, which forward mode does not have.
    static constexpr size_t kMaxForwardDirections = 4;

    bool forward_mode_eligible(LoopInfo& info) {
        if (f_.inst(info.loop).imm != 0) return false;   // tape_capacity(n) asked for a tape
        const Block& body = *f_.inst(info.loop).regions[0];
        std::set<ValueId> inside;
        bool ok = true;
        std::function<void(const Block&)> scan = [&](const Block& b) {
            for (ValueId id : b.insts) {
                inside.insert(id);
                const Inst& in = f_.inst(id);
                if (in.op == Op::Loop || in.op == Op::RequiresGrad) ok = false;
                for (auto& r : in.regions) scan(*r);
            }
        };
        scan(body);
        if (!ok) return false;
        std::vector<ValueId> dirs;
        auto add_dir = [&](ValueId v) {
            if (std::find(dirs.begin(), dirs.end(), v) == dirs.end()) dirs.push_back(v);
        };
        std::function<void(const Block&)> check = [&](const Block& b) {
            for (ValueId id : b.insts) {
                const Inst& in = f_.inst(id);
                for (auto& r : in.regions) check(*r);
                if (in.op == Op::Store || in.op == Op::Load) {
                    ValueId x = in.operands[0];
                    if (!active_[x]) continue;
                    if (f_.type_of(x) != Type::f32() || in.operands.size() != (in.op == Op::Store ? 2u : 1u)) ok = false;
                    if (!inside.count(x)) add_dir(x);   // a carried or invariant local
                    continue;
                }
                if (!active_[id]) continue;
                if (in.type != Type::f32()) ok = false;
                if (in.op != Op::Detach && (ir::info(in.op).ad != AdClass::D || !has_rule(in.op))) ok = false;
                for (ValueId o : in.operands)
                    if (o < active_.size() && active_[o] && !inside.count(o)) {
                        if (f_.type_of(o) != Type::f32()) ok = false;
                        add_dir(o);              // an active value from before the loop
                    }
            }
        };
        check(body);
        if (!ok || dirs.empty() || dirs.size() > kMaxForwardDirections) return false;
        info.forward_mode = true;
        info.directions = dirs;
        return true;
    }

    void instrument_forward_mode(Block& parent, size_t index, LoopInfo& info) {
        Inst& loop = f_.inst(info.loop);
        auto loc = loop.loc;
        const size_t D = info.directions.size();
        // Tangent locals of the outer locals: direction d of local x starts at 1 when d is x itself.
        Block pre;
        b_.push(pre);
        for (size_t d = 0; d < D; ++d)
            for (ValueId x : info.directions) {
                if (f_.inst(x).op != Op::Local) continue;
                ValueId t = b_.local(Type::f32(), loc);
                b_.store(t, b_.f32(info.directions[d] == x ? 1.0f : 0.0f, loc), {}, loc);
                info.tangent_local[{x, d}] = t;
            }
        b_.pop();
        parent.insts.insert(parent.insts.begin() + long(index), pre.insts.begin(), pre.insts.end());
        std::map<std::pair<ValueId, size_t>, ValueId> tangent;   // (value, direction) -> tangent value
        auto tan = [&](ValueId v, size_t d) -> ValueId {
            if (v >= active_.size() || !active_[v]) return kNoValue;
            auto it = tangent.find({v, d});
            if (it != tangent.end()) return it->second;
            if (info.directions[d] == v) return b_.f32(1.0f);   // a seeded outer value
            return kNoValue;                                      // another outer value: zero
        };
        std::function<void(Block&)> rewrite = [&](Block& b) {
            std::vector<ValueId> out;
            for (ValueId id : b.insts) {
                Inst& in = f_.inst(id);
                for (auto& r : in.regions) rewrite(*r);
                out.push_back(id);
                Block extra;
                b_.push(extra);
                if (in.op == Op::Local && active_[id]) {
                    for (size_t d = 0; d < D; ++d) {
                        ValueId t = b_.local(Type::f32(), loc);
                        b_.store(t, b_.f32(0.0f, loc), {}, loc);
                        info.tangent_local[{id, d}] = t;
                    }
                } else if (in.op == Op::Store && active_[in.operands[0]]) {
                    for (size_t d = 0; d < D; ++d) {
                        ValueId t = tan(in.operands[1], d);
                        b_.store(info.tangent_local.at({in.operands[0], d}), t == kNoValue ? b_.f32(0.0f) : t);
                    }
                } else if (in.op == Op::Load && active_[id]) {
                    for (size_t d = 0; d < D; ++d) tangent[{id, d}] = b_.load(info.tangent_local.at({in.operands[0], d}));
                } else if (active_[id] && in.op == Op::Detach) {
                    // no tangent: detach cuts the derivative
                } else if (active_[id]) {
                    // Partials from the reverse rule with a unit adjoint (all values here are scalars).
                    std::vector<ValueId> partial(in.operands.size(), kNoValue);
                    RuleArgs args{b_, in, in.operands, id, b_.f32(1.0f), {}, {}};
                    args.wants = [&](size_t k) { return in.operands[k] < active_.size() && active_[in.operands[k]] != 0; };
                    args.give = [&](size_t k, ValueId c) {
                        partial[k] = partial[k] == kNoValue ? c : b_.binary(Op::Add, partial[k], c);
                    };
                    apply_rule(args);
                    for (size_t d = 0; d < D; ++d) {
                        ValueId sum = kNoValue;
                        for (size_t k = 0; k < in.operands.size(); ++k) {
                            ValueId t = tan(in.operands[k], d);
                            if (t == kNoValue || partial[k] == kNoValue) continue;
                            ValueId term = b_.binary(Op::Mul, partial[k], t);
                            sum = sum == kNoValue ? term : b_.binary(Op::Add, sum, term);
                        }
                        if (sum != kNoValue) tangent[{id, d}] = sum;
                    }
                }
                b_.pop();
                out.insert(out.end(), extra.insts.begin(), extra.insts.end());
            }
            b.insts = std::move(out);
        };
        rewrite(*loop.regions[0]);
        report.push_back(TapeEntry{where(loop), 0, 0});
    }

    // The loop's reverse: adjoint of each input = sum over outputs of adjoint(output) * d output / d input.
    void reverse_forward_mode(LoopInfo& info) {
        const size_t D = info.directions.size();
        std::vector<ValueId> outputs;   // active outer locals the loop stores
        for (ValueId x : info.carried)
            if (x < active_.size() && active_[x]) outputs.push_back(x);
        std::vector<ValueId> contribution(D, kNoValue);
        for (size_t d = 0; d < D; ++d)
            for (ValueId out : outputs) {
                ValueId term = b_.binary(Op::Mul, b_.load(adjoint_[out]), b_.load(P(info.tangent_local.at({out, d}))));
                contribution[d] = contribution[d] == kNoValue ? term : b_.binary(Op::Add, contribution[d], term);
            }
        // All contributions are read before any adjoint changes: the outputs' adjoints now become the
        // adjoints of the locals' values at loop entry.
        std::set<ValueId> stored(info.carried.begin(), info.carried.end());
        for (ValueId out : outputs) b_.store(adjoint_[out], additive_zero(Type::f32()));
        for (size_t d = 0; d < D; ++d) {
            ValueId v = info.directions[d];
            if (contribution[d] == kNoValue) continue;
            if (f_.inst(v).op == Op::Local) {
                ValueId cur = b_.load(adjoint_[v]);
                b_.store(adjoint_[v], b_.binary(Op::Add, cur, contribution[d]));
            } else {
                contribute(v, contribution[d]);
            }
        }
    }

    // -- side effects in recomputed iterations ---------------------------------------------------------
    // A taped loop's reverse pass recomputes each iteration, which must neither repeat the iteration's side
    // effects nor see memory that the forward pass has changed since. So the recomputed copy drops buffer
    // writes, image writes and atomics, and the values it cannot recompute (atomics' results, reads of
    // buffers and images the kernel writes) come from a side tape: one per block, 32-bit words, written by
    // the forward code right where each such value is computed. The write position is a local that every
    // taped loop around such a value carries (so it is on the loop's tape): recomputing iteration k starts
    // from the position iteration k started at and reads the values back in the order they were written,
    // nested loops (taped, forward-mode or inactive) included.
    struct SideTape {
        std::set<ValueId> written;     // resources (arguments) the kernel writes
        std::set<ValueId> used;        // values some instruction of the block reads
        ValueId counter = kNoValue;    // u32 local: the next free word
        ValueId array = kNoValue;      // private u32 array, or kNoValue when the tape is in scratch
        uint32_t capacity = 0;         // words
        bool exact = false;            // no run can exceed the capacity
        bool scratch = false;
        uint32_t scratch_offset = 0;
        ValueId report_loop = kNoValue;   // the loop whose tape report includes the side tape's bytes
        std::set<ValueId> replayed;    // values recomputation reads back
        std::set<ValueId> writes;      // the forward tape writes, which recomputation skips
    };
    SideTape side_;
    static constexpr uint64_t kMaxSideWords = 1u << 16;

    void scan_side_effects() {
        std::function<void(const Block&)> resources = [&](const Block& b) {
            for (ValueId id : b.insts) {
                const Inst& in = f_.inst(id);
                if (in.op == Op::BufferWrite || in.op == Op::BufferAtomic || in.op == Op::ImageWrite)
                    side_.written.insert(in.operands[0]);
                for (auto& r : in.regions) resources(*r);
            }
        };
        resources(f_.body());
        std::function<void(const Block&)> uses = [&](const Block& b) {
            for (ValueId id : b.insts) {
                for (ValueId o : f_.inst(id).operands) side_.used.insert(o);
                for (auto& r : f_.inst(id).regions) uses(*r);
            }
        };
        uses(forward_);
    }

    // A value that recomputation cannot reproduce and that something reads.
    bool replayed_kind(ValueId id) const {
        const Inst& in = f_.inst(id);
        bool kind = in.op == Op::BufferAtomic || in.op == Op::SharedRead || in.op == Op::SharedAtomic ||
                    is_subgroup_op(in.op) ||
                    ((in.op == Op::BufferRead || in.op == Op::ImageRead) && side_.written.count(in.operands[0]));
        return kind && side_.used.count(id);
    }

    void prepare_side_tape() {
        struct Site {
            ValueId value;
            Block* block;
            ValueId loop;   // the innermost loop around it
        };
        std::vector<Site> sites;
        std::set<ValueId> carriers;   // taped loops around some site
        uint64_t total = 0;
        bool exact = true;
        std::vector<ValueId> loops;
        std::function<void(Block&, bool)> walk = [&](Block& b, bool taped) {
            for (ValueId id : b.insts) {
                const Inst& in = f_.inst(id);
                if (taped && replayed_kind(id)) {
                    sites.push_back({id, &b, loops.back()});
                    uint64_t entries = 1;
                    for (ValueId l : loops) {
                        const LoopInfo& li = loops_.at(l);
                        entries = std::min<uint64_t>(entries * li.capacity, kMaxSideWords + 1);
                        exact = exact && li.exact;
                        if (li.active && !li.forward_mode) carriers.insert(l);
                        if (li.active && !li.forward_mode && side_.report_loop == kNoValue) side_.report_loop = l;
                    }
                    total = std::min<uint64_t>(total + entries * f_.type_of(id)->lanes(), kMaxSideWords + 1);
                }
                if (in.op == Op::Loop) {
                    const LoopInfo& li = loops_.at(id);
                    loops.push_back(id);
                    walk(*in.regions[0], taped || (li.active && !li.forward_mode));
                    loops.pop_back();
                    continue;
                }
                for (auto& r : in.regions) walk(*r, taped);
            }
        };
        walk(forward_, false);
        if (sites.empty()) return;
        for (const Site& site : sites) side_.replayed.insert(site.value);
        side_.exact = exact && total <= kMaxSideWords;
        side_.capacity = uint32_t(std::min<uint64_t>(total, kMaxSideWords));
        side_.scratch = uint64_t(side_.capacity) * 4 > kLocalTapeBytes;
        auto loc = f_.inst(sites.front().loop).loc;
        Block pre;
        b_.push(pre);
        side_.counter = b_.local(Type::u32(), loc);
        b_.store(side_.counter, b_.u32(0, loc), {}, loc);
        if (side_.scratch) {
            side_.scratch_offset = f_.scratch_words_per_thread;
            f_.scratch_words_per_thread += side_.capacity;
        } else {
            side_.array = b_.local(Type::array(Type::u32(), side_.capacity), loc);
        }
        b_.pop();
        forward_.insts.insert(forward_.insts.begin(), pre.insts.begin(), pre.insts.end());
        // The position is carried state of every taped loop around a site.
        for (ValueId l : carriers) {
            loops_.at(l).carried.push_back(side_.counter);
            loops_.at(l).taped.push_back(side_.counter);
        }
        for (const Site& site : sites) {
            const Inst& v = f_.inst(site.value);
            Block w;
            b_.push(w);
            ValueId k = b_.load(side_.counter, {}, v.loc);
            std::vector<ValueId> words = to_words(site.value);
            ValueId next = b_.binary(Op::Add, k, b_.u32(uint32_t(words.size()), v.loc), v.loc);
            // Recomputation skips the trap and the writes (their pure inputs, cloned, are dropped as dead)
            // and keeps the position update, which then advances the recomputation's own position.
            if (!side_.exact) {
                ValueId over = b_.binary(Op::Gt, next, b_.u32(side_.capacity, v.loc), v.loc);
                ValueId trap_if = b_.if_(over, v.loc);
                b_.push(*f_.inst(trap_if).regions[0]);
                std::string msg = "autodiff tape overflow in kernel '" + f_.name() + "': the loop at " +
                                  where(f_.inst(site.loop)) + " stores more than " + std::to_string(side_.capacity) +
                                  " words of atomic results and reads of written buffers (the value at " + where(v) +
                                  ") for the reverse pass; call tape_capacity(n) before the loop to bound it";
                b_.emit(Op::Trap, {b_.u32(register_trap(msg), v.loc)}, Type::void_type(), 0, v.loc);
                b_.pop();
                side_.writes.insert(trap_if);
            }
            for (size_t l = 0; l < words.size(); ++l) {
                ValueId slot = side_slot(k, uint32_t(l));
                if (side_.scratch) b_.emit(Op::ScratchWrite, {side_address(slot), words[l]}, Type::void_type());
                else b_.store(side_.array, words[l], std::vector<ValueId>{slot}, v.loc);
                side_.writes.insert(w.insts.back());
            }
            b_.store(side_.counter, next, {}, v.loc);
            b_.pop();
            auto& insts = site.block->insts;
            auto at = std::find(insts.begin(), insts.end(), site.value) + 1;
            insts.insert(at, w.insts.begin(), w.insts.end());
        }
    }

    // Tape word `k + lane`, clamped when a run could pass the capacity (the trap reports that run).
    ValueId side_slot(ValueId k, uint32_t lane) {
        ValueId slot = lane ? b_.binary(Op::Add, k, b_.u32(lane)) : k;
        return side_.exact ? slot : b_.binary(Op::Min, slot, b_.u32(side_.capacity - 1));
    }
    ValueId side_address(ValueId slot) {
        return b_.binary(Op::Add, thread_base(), b_.binary(Op::Add, slot, b_.u32(side_.scratch_offset)));
    }

    // Recomputation's treatment of a forward instruction: true when it is handled here (skipped, or
    // replaced by a read of the side tape), false to clone it as it is.
    bool replay(ValueId id, ValueMap& m) {
        if (side_.writes.count(id)) return true;
        const Inst& in = f_.inst(id);
        if (side_.replayed.count(id)) {
            ValueId pos = m(side_.counter);
            ValueId k = b_.load(pos == kNoValue ? side_.counter : pos, {}, in.loc);
            std::vector<ValueId> words;
            for (uint32_t l = 0; l < in.type->lanes(); ++l) {
                ValueId slot = side_slot(k, l);
                words.push_back(side_.scratch ? b_.emit(Op::ScratchRead, {side_address(slot)}, Type::u32())
                                              : b_.load(side_.array, std::vector<ValueId>{slot}, in.loc));
            }
            size_t next = 0;
            m.set(id, from_words(in.type, words, next));
            return true;
        }
        return in.op == Op::BufferWrite || in.op == Op::ImageWrite || in.op == Op::BufferAtomic ||
               in.op == Op::SharedWrite || in.op == Op::SharedAtomic || in.op == Op::Barrier;
    }

    // -- activity --------------------------------------------------------------------------------------
    void find_active() {
        active_.assign(f_.inst_count(), 0);
        bool changed = true;
        while (changed) {
            changed = false;
            std::function<void(const Block&)> walk = [&](const Block& b) {
                for (ValueId id : b.insts) {
                    const Inst& in = f_.inst(id);
                    for (auto& r : in.regions) walk(*r);
                    bool act = false;
                    switch (in.op) {
                    case Op::RequiresGrad: act = true; break;
                    case Op::Store:
                        if (active_[in.operands[1]] && !active_[in.operands[0]]) {
                            active_[in.operands[0]] = 1;
                            changed = true;
                        }
                        continue;
                    case Op::Load: act = active_[in.operands[0]]; break;
                    case Op::Local: continue;
                    case Op::BufferAtomic: case Op::SharedAtomic: continue;   // the old contents: a constant
                    case Op::BufferRead: act = differentiable_read(f_, in); break;   // a source, like a mark
                    default:
                        if (info(in.op).ad == AdClass::Z || !in.type->has_float()) continue;
                        for (size_t k = 0; k < in.operands.size(); ++k) {
                            // Index operands of extract/insert carry no gradient.
                            if ((in.op == Op::Extract && k > 0) || (in.op == Op::Insert && k > 1)) break;
                            act = act || active_[in.operands[k]];
                        }
                        if (act && is_subgroup_op(in.op))
                            fail("autodiff: ", name(in.op), " at ", where(in), " in kernel '", f_.name(),
                                 "' takes a value that depends on a requires_grad variable; gradients do not flow "
                                 "between threads, so this would be wrong: detach() the value, or compute it "
                                 "outside $autodiff");
                        break;
                    }
                    if (act && in.type->has_float() && !active_[id]) {
                        active_[id] = 1;
                        changed = true;
                    }
                }
            };
            walk(forward_);
        }
        // Loops that carry or compute anything active are differentiated (forward mode or taped); others
        // are left alone. All modes are chosen before any loop is instrumented.
        std::function<void(Block&)> decide = [&](Block& b) {
            for (ValueId id : b.insts) {
                Inst& in = f_.inst(id);
                for (auto& r : in.regions) decide(*r);
                if (in.op == Op::Loop && contains_active(*in.regions[0])) {
                    LoopInfo& info = loops_.at(id);
                    info.active = true;
                    forward_mode_eligible(info);
                }
            }
        };
        decide(forward_);
        prepare_side_tape();
        active_.resize(f_.inst_count(), 0);
        std::function<void(Block&)> mark = [&](Block& b) {
            for (size_t i = 0; i < b.insts.size(); ++i) {
                ValueId id = b.insts[i];
                Inst& in = f_.inst(id);
                for (auto& r : in.regions) mark(*r);
                if (in.op == Op::Loop && loops_.at(id).active) {
                    LoopInfo& info = loops_.at(id);
                    size_t before = b.insts.size();
                    if (info.forward_mode) instrument_forward_mode(b, i, info);
                    else instrument(b, i, info);
                    i += b.insts.size() - before;
                }
            }
        };
        mark(forward_);
        active_.resize(f_.inst_count(), 0);
    }

    // Instrumentation adds instructions after the activity table was sized: those are never active.
    bool is_active(ValueId v) const { return v < active_.size() && active_[v]; }

    bool contains_active(const Block& b) {
        for (ValueId id : b.insts) {
            const Inst& in = f_.inst(id);
            if (is_active(id)) return true;
            if (in.op == Op::Store && is_active(in.operands[0])) return true;
            for (auto& r : in.regions)
                if (contains_active(*r)) return true;
        }
        return false;
    }

    // -- adjoint storage ---------------------------------------------------------------------------------
    void classify() {
        needs_local_.assign(f_.inst_count(), 0);
        std::vector<const Block*> def(f_.inst_count(), nullptr);
        std::function<void(const Block&)> defs = [&](const Block& b) {
            for (ValueId id : b.insts) {
                def[id] = &b;
                for (auto& r : f_.inst(id).regions) defs(*r);
            }
        };
        defs(forward_);
        std::function<void(const Block&)> uses = [&](const Block& b) {
            for (ValueId id : b.insts) {
                const Inst& in = f_.inst(id);
                for (ValueId o : in.operands)
                    if (o < def.size() && def[o] && def[o] != &b) needs_local_[o] = 1;
                for (auto& r : in.regions) uses(*r);
            }
        };
        uses(forward_);
        for (size_t i = 0; i < f_.inst_count(); ++i) {
            const Inst& in = f_.inst(ValueId(i));
            if (in.op == Op::RequiresGrad || in.op == Op::Local) needs_local_[i] = 1;
        }
    }

    void declare_adjoints() {
        adjoint_.assign(f_.inst_count(), kNoValue);
        for (size_t i = 0; i < active_.size(); ++i) {
            if (!active_[i] || !needs_local_[i]) continue;
            const Inst& in = f_.inst(ValueId(i));
            adjoint_[i] = b_.local(in.type, in.loc);
            b_.store(adjoint_[i], additive_zero(in.type), {}, in.loc);
        }
        // requires_grad inside a loop marks a new value in each iteration; grad() is the adjoint of the
        // value marked in the last iteration that ran the mark (earlier marks held fixed), else zero.
        std::function<void(const Block&, int)> marks = [&](const Block& b, int depth) {
            for (ValueId id : b.insts) {
                const Inst& in = f_.inst(id);
                if (in.op == Op::RequiresGrad && depth > 0) {
                    ValueId value = b_.local(in.type, in.loc);
                    b_.store(value, additive_zero(in.type), {}, in.loc);
                    ValueId taken = b_.local(Type::boolean(), in.loc);
                    b_.store(taken, b_.boolean(false, in.loc), {}, in.loc);
                    last_mark_[id] = {value, taken};
                }
                for (auto& r : in.regions) marks(*r, depth + (in.op == Op::Loop ? 1 : 0));
            }
        };
        marks(forward_, 0);
    }

    // Adjoints start at -0.0, IEEE's exact additive identity (-0 + x == x for every x, -0 and +0 included),
    // so that simplify can drop the first `0 + contribution` of every accumulation without changing a bit.
    ValueId additive_zero(const Type* t) { return b_.splat(t, -0.0); }

    ValueId P(ValueId v) const {
        ValueId m = map_(v);
        return m == kNoValue ? v : m;
    }

    // a + b for adjoints of any type: arrays and structs add member by member (integer members keep a).
    ValueId sum(ValueId a, ValueId c) {
        const Type* t = b_.type_of(a);
        if (t->is_basic()) return t->is_float() ? b_.binary(Op::Add, a, c) : a;
        std::vector<ValueId> parts;
        uint32_t n = t->is_struct() ? uint32_t(t->members().size()) : t->dim();
        for (uint32_t i = 0; i < n; ++i) parts.push_back(sum(b_.extract(a, i), b_.extract(c, i)));
        return b_.construct(t, parts);
    }

    void contribute(ValueId v, ValueId c) {
        if (v >= active_.size() || !active_[v]) return;
        if (needs_local_[v]) {
            ValueId cur = b_.load(adjoint_[v]);
            b_.store(adjoint_[v], sum(cur, c));
        } else {
            auto& ssa = frames_.back()->ssa;
            auto it = ssa.find(v);
            if (it == ssa.end()) ssa.emplace(v, c);
            else it->second = sum(it->second, c);
        }
    }

    // The adjoint of a value at its definition, or kNoValue when nothing reached it.
    ValueId take_adjoint(ValueId v) {
        if (needs_local_[v]) return b_.load(adjoint_[v]);
        auto& ssa = frames_.back()->ssa;
        auto it = ssa.find(v);
        return it == ssa.end() ? kNoValue : it->second;
    }

    // Adjoint locals of values defined in `b` start each reverse visit at zero (loops revisit blocks).
    void zero_block_adjoints(const Block& b) {
        for (ValueId id : b.insts)
            if (id < active_.size() && active_[id] && needs_local_[id] && adjoint_[id] != kNoValue)
                b_.store(adjoint_[id], additive_zero(f_.type_of(id)));
    }

    // -- the reverse walk --------------------------------------------------------------------------------
    void reverse_block(const Block& b, bool top) {
        if (!top) zero_block_adjoints(b);
        for (auto it = b.insts.rbegin(); it != b.insts.rend(); ++it) reverse_inst(*it);
    }

    void reverse_inst(ValueId id) {
        const Inst& in = f_.inst(id);
        switch (in.op) {
        case Op::If: case Op::Switch: {
            if (!contains_active(*in.regions[0]) && (in.regions.size() < 2 || !any_region_active(in))) return;
            Inst copy;
            copy.op = in.op;
            copy.type = in.type;
            copy.operands = {P(in.operands[0])};
            copy.words = in.words;
            copy.has_default = in.has_default;
            copy.loc = in.loc;
            for (size_t r = 0; r < in.regions.size(); ++r) copy.regions.push_back(std::make_unique<Block>());
            ValueId rid = b_.append(std::move(copy));
            for (size_t r = 0; r < in.regions.size(); ++r) {
                b_.push(*f_.inst(rid).regions[r]);
                Frame frame;
                frames_.push_back(&frame);
                reverse_block(*in.regions[r], false);
                frames_.pop_back();
                b_.pop();
            }
            return;
        }
        case Op::Loop: {
            auto it = loops_.find(id);
            if (it == loops_.end() || !it->second.active) return;
            if (it->second.forward_mode) reverse_forward_mode(it->second);
            else reverse_loop(it->second);
            return;
        }
        case Op::Store: {
            ValueId var = in.operands[0];
            if (!active_[var]) return;
            std::vector<ValueId> path;
            for (size_t k = 2; k < in.operands.size(); ++k) path.push_back(P(in.operands[k]));
            ValueId a = b_.load(adjoint_[var], path, in.loc);
            b_.store(adjoint_[var], additive_zero(b_.type_of(a)), path, in.loc);
            contribute(in.operands[1], a);
            return;
        }
        default: break;
        }
        if (id >= active_.size() || !active_[id]) return;
        ValueId g = take_adjoint(id);
        if (g == kNoValue) return;
        switch (in.op) {
        case Op::RequiresGrad: {   // a leaf: grad() reads its adjoint
            auto it = last_mark_.find(id);
            if (it == last_mark_.end()) return;
            // Inside a loop: keep the adjoint of the first reverse visit, which is the last forward one.
            ValueId taken = b_.load(it->second.second, {}, in.loc);
            ValueId first = b_.if_(b_.unary(Op::Not, taken, in.loc), in.loc);
            b_.push(*f_.inst(first).regions[0]);
            b_.store(it->second.first, g, {}, in.loc);
            b_.store(it->second.second, b_.boolean(true, in.loc), {}, in.loc);
            b_.pop();
            return;
        }
        case Op::Load: {
            std::vector<ValueId> path;
            for (size_t k = 1; k < in.operands.size(); ++k) path.push_back(P(in.operands[k]));
            ValueId var = in.operands[0];
            ValueId cur = b_.load(adjoint_[var], path, in.loc);
            b_.store(adjoint_[var], sum(cur, g), path, in.loc);
            return;
        }
        case Op::Extract: {
            std::vector<ValueId> path;
            for (size_t k = 1; k < in.operands.size(); ++k) path.push_back(P(in.operands[k]));
            ValueId base = in.operands[0];
            contribute(base, b_.insert(b_.zero(f_.type_of(base), in.loc), g, path, in.loc));
            return;
        }
        case Op::Insert: {
            std::vector<ValueId> path;
            for (size_t k = 2; k < in.operands.size(); ++k) path.push_back(P(in.operands[k]));
            contribute(in.operands[1], b_.extract(g, path, in.loc));
            contribute(in.operands[0], b_.insert(g, b_.zero(f_.type_of(in.operands[1]), in.loc), path, in.loc));
            return;
        }
        case Op::Swizzle: {
            const Type* src = f_.type_of(in.operands[0]);
            int n = int(in.imm >> 16);
            std::vector<ValueId> parts(src->dim(), kNoValue);
            for (int i = 0; i < n; ++i) {
                uint32_t c = uint32_t((in.imm >> (2 * i)) & 3);
                ValueId gi = b_.extract(g, uint32_t(i), in.loc);
                parts[c] = parts[c] == kNoValue ? gi : b_.binary(Op::Add, parts[c], gi, in.loc);
            }
            for (auto& p : parts)
                if (p == kNoValue) p = b_.f32(0.0f, in.loc);
            contribute(in.operands[0], b_.construct(src, parts, in.loc));
            return;
        }
        case Op::Construct: {
            if (in.operands.size() == 1 && f_.type_of(in.operands[0])->is_scalar() && in.type->lanes() > 1) {
                contribute(in.operands[0], reduce_to(b_, f_.type_of(in.operands[0]), g));
                return;
            }
            for (size_t k = 0; k < in.operands.size(); ++k)
                if (active_[in.operands[k]]) contribute(in.operands[k], b_.extract(g, uint32_t(k), in.loc));
            return;
        }
        case Op::Cast: return;   // float-to-float casts are removed; others carry no gradient
        case Op::BufferRead: scatter(in, g); return;             // only differentiable reads are active
        default: break;
        }
        if (info(in.op).ad != AdClass::D) return;
        RuleArgs args{b_, in, {}, P(id), g, {}, {}};
        for (ValueId o : in.operands) args.x.push_back(P(o));
        args.wants = [&](size_t k) { return in.operands[k] < active_.size() && active_[in.operands[k]] != 0; };
        args.give = [&](size_t k, ValueId c) { contribute(in.operands[k], c); };
        if (!apply_rule(args))
            fail("autodiff: '", name(in.op), "' at ", where(in), " is on the gradient path but has no derivative rule");
    }

    bool any_region_active(const Inst& in) {
        for (auto& r : in.regions)
            if (contains_active(*r)) return true;
        return false;
    }

    void reverse_loop(LoopInfo& info) {
        const Inst& loop = f_.inst(info.loop);
        auto loc = loop.loc;
        // Shadows stand in for outer locals while an iteration is recomputed, so the forward values
        // that statements after backward read stay untouched.
        std::map<ValueId, ValueId> shadow;
        for (ValueId x : info.carried) shadow[x] = b_.local(f_.type_of(x), loc);
        for (ValueId x : info.invariant) shadow[x] = b_.local(f_.type_of(x), loc);
        ValueId k = b_.local(Type::u32(), loc);
        b_.store(k, b_.load(P(info.counter), {}, loc), {}, loc);
        ValueId rl = b_.loop(loc);
        b_.push(*f_.inst(rl).regions[0]);
        {
            ValueId kv = b_.load(k, {}, loc);
            ValueId done = b_.if_(b_.binary(Op::Eq, kv, b_.u32(0, loc), loc), loc);
            b_.push(*f_.inst(done).regions[0]);
            b_.break_(loc);
            b_.pop();
            ValueId km = b_.binary(Op::Sub, kv, b_.u32(1, loc), loc);
            b_.store(k, km, {}, loc);
            if (!info.taped.empty()) {
                ValueId slot = info.exact ? km : b_.binary(Op::Min, km, b_.u32(info.capacity - 1, loc), loc);
                uint32_t lane = 0;
                for (ValueId x : info.taped) {
                    if (!info.scratch) {
                        b_.store(shadow[x], b_.load(P(info.tape.at(x)), std::vector<ValueId>{slot}, loc), {}, loc);
                        continue;
                    }
                    const Type* t = f_.type_of(x);
                    std::vector<ValueId> words;
                    for (uint32_t i = 0; i < t->lanes(); ++i)
                        words.push_back(b_.emit(Op::ScratchRead, {word_address(info, slot, lane++, thread_base())}, Type::u32()));
                    size_t next = 0;
                    b_.store(shadow[x], from_words(t, words, next), {}, loc);
                }
            }
            for (auto& [x, step] : info.counter_step) {
                const Type* t = f_.type_of(x);
                ValueId kk = t == Type::u32() ? km : b_.cast(t, km, loc);
                ValueId value = b_.binary(Op::Add, P(info.counter_begin.at(x)), b_.binary(Op::Mul, kk, P(step), loc), loc);
                b_.store(shadow[x], value, {}, loc);
            }
            for (ValueId x : {info.brk, info.cnt})
                if (shadow.count(x)) b_.store(shadow[x], b_.boolean(false, loc), {}, loc);
            for (ValueId x : info.accumulators) b_.store(shadow[x], b_.zero(f_.type_of(x), loc), {}, loc);
            for (ValueId x : info.invariant) b_.store(shadow[x], P(info.snapshot.at(x)), {}, loc);
            // Recompute iteration k.
            ValueMap saved = map_;
            for (auto& [x, s] : shadow) map_.set(x, s);
            CloneHook skip = [&](const Function&, ValueId id, Builder&, ValueMap& m) {
                return info.instrumentation.count(id) > 0 || id == info.exit_if || replay(id, m);
            };
            clone_block(f_, *loop.regions[0], b_, map_, skip, true);
            // Reverse iteration k.
            Frame frame;
            frames_.push_back(&frame);
            reverse_block(*loop.regions[0], false);
            frames_.pop_back();
            map_ = std::move(saved);
        }
        b_.pop();
    }

    // Places the loads made by rewrite_grads right before the instruction that now uses them.
    void splice_pending(std::vector<ValueId>& block) {
        for (auto& [grad, insts] : pending_) {
            if (insts.empty()) continue;
            if (!insert_before(block, grad, insts)) fail("internal: grad instruction not found");
        }
        pending_.clear();
    }
    bool insert_before(std::vector<ValueId>& block, ValueId target, const std::vector<ValueId>& insts) {
        for (size_t i = 0; i < block.size(); ++i) {
            if (block[i] == target) {
                block.insert(block.begin() + long(i), insts.begin(), insts.end());
                return true;
            }
            for (auto& r : f_.inst(block[i]).regions)
                if (insert_before(r->insts, target, insts)) return true;
        }
        return false;
    }

    void rewrite_grads(ValueId id) {
        Inst& in = f_.inst(id);
        for (auto& r : in.regions)
            for (ValueId c : r->insts) rewrite_grads(c);
        if (in.op != Op::Grad) return;
        ValueId marker = in.operands[0];
        ValueId source = marker < adjoint_.size() ? adjoint_[marker] : kNoValue;
        if (auto it = last_mark_.find(marker); it != last_mark_.end()) source = it->second.first;
        if (source == kNoValue) {
            // Not active: nothing reached it. The gradient is exactly zero.
            in.op = Op::Const;
            in.operands.clear();
            in.words.assign(in.type->lanes(), 0u);
            return;
        }
        // The adjoint reads through `a == 0 ? +0.0 : a`, which maps the -0.0 start value of an input that
        // nothing reached to +0.0 and leaves every other value as it is. (`a + 0.0` would do in IEEE
        // arithmetic, but shader compilers fold it to `a`.) Matrices keep the `+ 0.0`; aggregates are loaded as they are.
        Block tmp;
        b_.push(tmp);
        ValueId load = b_.load(source, {}, in.loc);
        ValueId zero = b_.zero(in.type, in.loc);
        ValueId is_zero = in.type->is_scalar() || in.type->is_vector() ? b_.binary(Op::Eq, load, zero, in.loc) : kNoValue;
        b_.pop();
        pending_.emplace_back(id, tmp.insts);
        in.op = Op::Add;
        in.operands = {load, zero};
        if (is_zero != kNoValue) {
            in.op = Op::Select;
            in.operands = {is_zero, zero, load};
        }
        if (!in.type->is_basic()) {   // aggregates: no add; the load alone (-0.0 lanes stay -0.0)
            in.op = Op::Load;
            in.operands = {source};
            pending_.back().second = {};
        }
    }

    Function& f_;
    Builder b_;
    Block& parent_;
    size_t index_;
    Block forward_;
    ValueId backward_ = kNoValue;
    std::vector<uint8_t> active_, needs_local_;
    std::vector<ValueId> adjoint_;
    std::map<ValueId, LoopInfo> loops_;
    std::map<ValueId, std::pair<ValueId, ValueId>> last_mark_;   // marker in a loop -> (its grad, taken flag)
    std::vector<Frame*> frames_;
    ValueMap map_;
    std::vector<std::pair<ValueId, std::vector<ValueId>>> pending_;
    ScratchBase& scratch_;
    GradBuffers& grads_;

    // -- differentiable buffers: a read's adjoint goes to the paired gradient buffer -------------------------
    static bool differentiable_read(const Function& f, const Inst& in) {
        return in.op == Op::BufferRead && f.type_of(in.operands[0])->is_diff_buffer();
    }

    ValueId grad_buffer(ValueId buffer) {
        const Inst& arg = f_.inst(buffer);
        if (arg.op != Op::Arg) fail("internal: a differentiable buffer read of a non-argument");
        auto it = grads_.arg_of.find(arg.imm);
        if (it != grads_.arg_of.end()) return it->second;
        uint32_t index = uint32_t(f_.params.size());
        f_.params.push_back(Type::buffer(Type::f32()));
        b_.push(grads_.prelude);
        ValueId id = b_.emit(Op::Arg, {}, f_.params.back(), int64_t(index), arg.loc);
        b_.pop();
        grads_.arg_of[arg.imm] = id;
        grads_.params.push_back(GradParam{index, uint32_t(arg.imm)});
        return id;
    }

    // Component c of element i's adjoint goes to gradient word i * components + c, by float atomic add.
    void scatter(const Inst& read, ValueId g) {
        ValueId grads = grad_buffer(read.operands[0]);
        ValueId index = P(read.operands[1]);
        if (b_.type_of(index) != Type::u32()) index = b_.cast(Type::u32(), index, read.loc);
        uint32_t n = read.type->lanes();
        ValueId base = n == 1 ? index : b_.binary(Op::Mul, index, b_.u32(n, read.loc), read.loc);
        for (uint32_t c = 0; c < n; ++c) {
            ValueId gc = n == 1 ? g : b_.extract(g, c, read.loc);
            if (is_constant(f_, gc) && const_is(f_, gc, 0.0)) continue;   // provably nothing to add
            ValueId at = c == 0 ? base : b_.binary(Op::Add, base, b_.u32(c, read.loc), read.loc);
            b_.emit(Op::BufferAtomic, {grads, at, gc}, Type::f32(), int64_t(AtomicOp::Add), read.loc);
        }
    }

    // -- scratch tapes: lanes stored as 32-bit words at base + offset + slot * entry_words ----------------
    ValueId thread_base() {
        if (scratch_.base != kNoValue) return scratch_.base;
        b_.push(scratch_.prelude);
        ValueId id = b_.emit(Op::Builtin, {}, Type::vector(ScalarKind::UInt, 3), int64_t(BuiltinId::DispatchId));
        ValueId size = b_.emit(Op::Builtin, {}, Type::vector(ScalarKind::UInt, 3), int64_t(BuiltinId::DispatchSize));
        auto c = [&](ValueId v, uint32_t k) { return b_.extract(v, k); };
        ValueId linear = b_.binary(Op::Add, c(id, 0),
                                   b_.binary(Op::Mul, c(size, 0), b_.binary(Op::Add, c(id, 1), b_.binary(Op::Mul, c(size, 1), c(id, 2)))));
        scratch_.words = b_.u32(0);
        scratch_.base = b_.binary(Op::Mul, linear, scratch_.words);
        b_.pop();
        return scratch_.base;
    }

    // A value as 32-bit words, lane by lane in order (matrices column by column, structs member by member).
    std::vector<ValueId> to_words(ValueId v) {
        const Type* t = b_.type_of(v);
        if (t->is_u64())   // low word first
            return {b_.cast(Type::u32(), v), b_.cast(Type::u32(), b_.binary(Op::Shr, v, b_.u32(32)))};
        if (t->is_scalar()) return {t == Type::u32() ? v : b_.emit(Op::Bitcast, {v}, Type::u32())};
        std::vector<ValueId> out;
        uint32_t n = t->is_struct() ? uint32_t(t->members().size()) : t->dim();
        for (uint32_t i = 0; i < n; ++i)
            for (ValueId w : to_words(b_.extract(v, i))) out.push_back(w);
        return out;
    }

    ValueId from_words(const Type* t, const std::vector<ValueId>& words, size_t& next) {
        if (t->is_u64()) {
            ValueId lo = b_.cast(t, words[next++]), hi = b_.cast(t, words[next++]);
            return b_.binary(Op::BitOr, lo, b_.binary(Op::Shl, hi, b_.u32(32)));
        }
        if (t->is_scalar()) {
            ValueId w = words[next++];
            return t == Type::u32() ? w : b_.emit(Op::Bitcast, {w}, t);
        }
        std::vector<ValueId> parts;
        uint32_t n = t->is_struct() ? uint32_t(t->members().size()) : t->dim();
        for (uint32_t i = 0; i < n; ++i) parts.push_back(from_words(t->is_struct() ? t->members()[i] : t->element(), words, next));
        return b_.construct(t, parts);
    }

    ValueId word_address(const LoopInfo& info, ValueId slot, uint32_t lane_offset, ValueId base) {
        ValueId entry = b_.binary(Op::Mul, slot, b_.u32(info.entry_words));
        return b_.binary(Op::Add, base, b_.binary(Op::Add, entry, b_.u32(info.scratch_offset + lane_offset)));
    }
};

bool differentiate_block(Function& f, Block& b, std::vector<TapeEntry>& report, ScratchBase& scratch,
                         GradBuffers& grads) {
    bool changed = false;
    for (size_t i = 0; i < b.insts.size(); ++i) {
        Inst& in = f.inst(b.insts[i]);
        if (in.op == Op::Autodiff) {
            Differentiator d(f, b, i, scratch, grads);
            d.run();
            report.insert(report.end(), d.report.begin(), d.report.end());
            changed = true;
            --i;   // the spliced statements may hold further blocks (they cannot nest, but stay general)
            continue;
        }
        for (auto& r : in.regions) changed |= differentiate_block(f, *r, report, scratch, grads);
    }
    return changed;
}

} // namespace

std::vector<TapeEntry> differentiate_with_report(Function& f, std::vector<GradParam>* grad_params) {
    std::vector<TapeEntry> report;
    ScratchBase scratch;
    GradBuffers grads;
    differentiate_block(f, f.body(), report, scratch, grads);
    auto& body = f.body().insts;
    if (scratch.base != kNoValue) {
        f.inst(scratch.words).words = {f.scratch_words_per_thread};
        body.insert(body.begin(), scratch.prelude.insts.begin(), scratch.prelude.insts.end());
    }
    body.insert(body.begin(), grads.prelude.insts.begin(), grads.prelude.insts.end());
    if (grad_params) *grad_params = grads.params;
    return report;
}

bool differentiate(Function& f) {
    bool any = false;
    for_each_block(f, f.body(), [&](Block& b) {
        for (ValueId id : b.insts) any = any || f.inst(id).op == Op::Autodiff;
    });
    differentiate_with_report(f);
    return any;
}

} // namespace adjoint::autodiff
