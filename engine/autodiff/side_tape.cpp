// The side tape: values a taped loop's recomputation cannot reproduce (atomics' results, reads of written
// resources, values from other threads) are written as the forward code computes them and replayed in order.
#include "differentiator.h"

#include <adjoint/core/error.h>
#include <adjoint/ir/trap.h>
#include <adjoint/ir/walk.h>

#include <algorithm>

namespace adjoint::autodiff {

using namespace ir;

void Differentiator::scan_side_effects() {
    walk(f_, f_.body(), [&](ValueId id) {
        const Inst& in = f_.inst(id);
        if (in.op == Op::BufferWrite || in.op == Op::BufferAtomic || in.op == Op::ImageWrite)
            side_.written.insert(in.operands[0]);
    });
    walk(f_, forward_, [&](ValueId id) {
        for (ValueId o : f_.inst(id).operands) side_.used.insert(o);
    });
}

// A value that recomputation cannot reproduce and that something reads.
bool Differentiator::replayed_kind(ValueId id) const {
    const Inst& in = f_.inst(id);
    bool kind = in.op == Op::BufferAtomic || in.op == Op::SharedRead || in.op == Op::SharedAtomic ||
                is_subgroup_op(in.op) ||
                ((in.op == Op::BufferRead || in.op == Op::ImageRead) && side_.written.count(in.operands[0]));
    return kind && side_.used.count(id);
}

void Differentiator::prepare_side_tape() {
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
    int taped = 0;   // taped loops around the instruction
    auto is_taped = [&](ValueId loop) { return loops_.at(loop).active && !loops_.at(loop).forward_mode; };
    walk(f_, forward_, [&](ValueId id, const Block& b) {
        if (taped && replayed_kind(id)) {
            // The walk only reads; the sites' blocks are the function's, changed below once it is done.
            sites.push_back({id, const_cast<Block*>(&b), loops.back()});
            uint64_t entries = 1;
            for (ValueId l : loops) {
                const LoopInfo& li = loops_.at(l);
                entries = std::min<uint64_t>(entries * li.capacity, kMaxSideWords + 1);
                exact = exact && li.exact;
                if (is_taped(l)) carriers.insert(l);
                if (is_taped(l) && side_.report_loop == kNoValue) side_.report_loop = l;
            }
            total = std::min<uint64_t>(total + entries * f_.type_of(id)->lanes(), kMaxSideWords + 1);
        }
        if (f_.inst(id).op == Op::Loop) {
            loops.push_back(id);
            taped += is_taped(id);
        }
    }, [&](ValueId id) {
        if (f_.inst(id).op != Op::Loop) return;
        taped -= is_taped(id);
        loops.pop_back();
    });
    if (sites.empty()) return;
    for (const Site& site : sites) side_.replayed.insert(site.value);
    side_.exact = exact && total <= kMaxSideWords;
    side_.capacity = uint32_t(std::min<uint64_t>(total, kMaxSideWords));
    side_.scratch = scratch_.to_scratch(uint64_t(side_.capacity) * 4);
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
            b_.emit(Op::Trap, {b_.u32(add_trap(f_, msg), v.loc)}, Type::void_type(), 0, v.loc);
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
ValueId Differentiator::side_slot(ValueId k, uint32_t lane) {
    ValueId slot = lane ? b_.binary(Op::Add, k, b_.u32(lane)) : k;
    return side_.exact ? slot : b_.binary(Op::Min, slot, b_.u32(side_.capacity - 1));
}

ValueId Differentiator::side_address(ValueId slot) {
    return b_.binary(Op::Add, thread_base(), b_.binary(Op::Add, slot, b_.u32(side_.scratch_offset)));
}

// Recomputation's treatment of a forward instruction: true when it is handled here (skipped, or
// replaced by a read of the side tape), false to clone it as it is.
bool Differentiator::replay(ValueId id, ValueMap& m) {
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

} // namespace adjoint::autodiff
