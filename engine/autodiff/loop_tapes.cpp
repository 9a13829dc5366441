// Loop tapes: which carried locals a taped loop must store, the tape writes at the top of each forward
// iteration, and the reverse loop that restores, recomputes and reverses each iteration backwards.
#include "differentiator.h"

#include <adjoint/core/error.h>
#include <adjoint/ir/trap.h>
#include <adjoint/ir/walk.h>

#include <algorithm>

namespace adjoint::autodiff {

using namespace ir;

// Which carried locals can be rebuilt without a tape (see LoopInfo).
void Differentiator::classify_carried(LoopInfo& info) {
    const Block& body = *f_.inst(info.loop).regions[0];
    std::set<ValueId> inside;
    std::map<ValueId, std::vector<ValueId>> users;
    walk(f_, body, [&](ValueId id) {
        inside.insert(id);
        for (ValueId o : f_.inst(id).operands) users[o].push_back(id);
    });
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
void Differentiator::insert_at_top(LoopInfo& info, const Block& top) {
    auto& body = f_.inst(info.loop).regions[0]->insts;
    size_t at = 0;
    if (info.top_test) at = size_t(std::find(body.begin(), body.end(), info.exit_if) - body.begin()) + 1;
    body.insert(body.begin() + long(at), top.insts.begin(), top.insts.end());
}

// Instruments a loop once activity is known: tapes for carried locals, snapshots of invariant ones.
void Differentiator::instrument(Block& block, size_t index, LoopInfo& info) {
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
    bool words = true;
    for (ValueId x : info.taped) {
        info.entry_words += f_.type_of(x)->lanes();
        words = words && has_words(f_.type_of(x));
    }
    // Private while the kernel's tapes fit the device's budget, else in scratch; one without a word layout
    // stays private.
    info.scratch = tape && scratch_.to_scratch(uint64_t(info.entry_words) * 4 * info.capacity, words);
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
        tapes.push_back(TapeUse{where(loop), 0, 0});
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
        b_.emit(Op::Trap, {b_.u32(add_trap(f_, msg), loc)}, Type::void_type(), 0, loc);
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

    tapes.push_back(TapeUse{where(loop), info.entry_words * 4 * info.capacity, info.capacity, info.scratch});
    if (info.loop == side_.report_loop) tapes.back().bytes_per_thread += side_.capacity * 4;
}

void Differentiator::reverse_loop(LoopInfo& info) {
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

// -- scratch tapes: lanes stored as 32-bit words at base + offset + slot * entry_words ----------------
ValueId Differentiator::thread_base() {
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

// Whether to_words and from_words take the type: scalars, vectors, matrices and structs of them.
bool Differentiator::has_words(const Type* t) {
    if (t->is_basic()) return true;
    if (!t->is_struct()) return false;
    for (const Type* m : t->members())
        if (!has_words(m)) return false;
    return true;
}

// A value as 32-bit words, lane by lane in order (matrices column by column, structs member by member).
std::vector<ValueId> Differentiator::to_words(ValueId v) {
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

ValueId Differentiator::from_words(const Type* t, const std::vector<ValueId>& words, size_t& next) {
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

ValueId Differentiator::word_address(const LoopInfo& info, ValueId slot, uint32_t lane_offset, ValueId base) {
    ValueId entry = b_.binary(Op::Mul, slot, b_.u32(info.entry_words));
    return b_.binary(Op::Add, base, b_.binary(Op::Add, entry, b_.u32(info.scratch_offset + lane_offset)));
}

} // namespace adjoint::autodiff
