// Reverse-mode differentiation of $autodiff regions, as an IR-to-IR transform: the state shared by its files.
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
//  - the primal map: reverse code reads primal values through it. Outside loops it is the identity (reverse
//    code may then read values of the regions it mirrors; ir::scope_values turns those reads into locals).
//    Inside a loop, iteration k is recomputed from the tape before its reverse runs, and the map points at
//    the recomputed copies.
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
//
// The files, in the order the transform runs: differentiate.cpp (the entry point and the splice),
// loop_exits.cpp (loops lose their breaks and continues), activity.cpp (what carries a gradient, where
// adjoints live), loop_tapes.cpp (which carried state is taped, the tape writes and the reverse loop),
// forward_loops.cpp (loops in forward mode), side_tape.cpp (values recomputation replays), reverse.cpp (the
// reverse walk and the per-op rules' glue).
#pragma once
#include <adjoint/autodiff/autodiff.h>

#include "rules.h"

#include <adjoint/ir/builder.h>
#include <adjoint/ir/clone.h>

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace adjoint::autodiff {

inline constexpr uint32_t kDefaultTapeCapacity = 1024;
// Per kernel: where a thread's scratch words start. Built once, placed at the top of the kernel at the end.
struct ScratchBase {
    ir::Block prelude;
    ir::ValueId base = ir::kNoValue;        // linear thread id * words per thread
    ir::ValueId words = ir::kNoValue;       // a constant patched once every loop has its offset
    // Private tape bytes a thread may hold in all (the device's choice), and how many the tapes placed so
    // far hold. A tape goes to the scratch buffer when it would go over and can (`movable`); else it is
    // private and counts.
    uint64_t local_budget = 0;
    uint64_t local_bytes = 0;
    bool to_scratch(uint64_t bytes, bool movable = true) {
        if (movable && local_bytes + bytes > local_budget) return true;
        local_bytes += bytes;
        return false;
    }
};

// Per kernel: the gradient buffers of differentiable buffer parameters, added as hidden parameters after
// the user's (the runtime binds each to the gradient half of the argument it belongs to).
struct GradBuffers {
    ir::Block prelude;                          // their Arg instructions, placed at the top of the kernel
    std::map<int64_t, ir::ValueId> arg_of;      // value parameter index -> the gradient buffer's Arg
    std::vector<GradParam> params;
};

// "file.cpp:42", or "an unknown line".
std::string where(const ir::Inst& in);

struct LoopInfo {
    using ValueId = ir::ValueId;
    static constexpr ValueId kNoValue = ir::kNoValue;
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

// A read of a differentiable buffer: a source of gradient, whose adjoint goes to the paired gradient buffer.
inline bool differentiable_read(const ir::Function& f, const ir::Inst& in) {
    return in.op == ir::Op::BufferRead && f.type_of(in.operands[0])->is_diff_buffer();
}

// One $autodiff region (parent.insts[index]) and everything its differentiation needs.
class Differentiator {
public:
    using ValueId = ir::ValueId;
    using Block = ir::Block;
    using Inst = ir::Inst;
    using Type = ir::Type;

    Differentiator(ir::Function& f, Block& parent, size_t index, ScratchBase& scratch, GradBuffers& grads)
        : f_(f), b_(f), parent_(parent), index_(index), scratch_(scratch), grads_(grads) {}

    void run();               // differentiates the region and splices the result into the parent block
    std::vector<TapeUse> tapes;

private:
    struct Frame {
        std::unordered_map<ValueId, ValueId> ssa;   // value -> accumulated adjoint (SSA)
    };

    // loop_exits.cpp: exits lowered, carried and invariant locals found.
    ValueId top_test(const Block& body);
    bool exits(const Inst& in);
    void prepare_loops(Block& block);

    // activity.cpp
    void find_active();
    bool propagate_activity(ValueId id);
    void instrument_loops(Block& b);
    bool is_active(ValueId v) const { return v < active_.size() && active_[v]; }   // later instructions: never
    bool contains_active(const Block& b);
    void classify();
    void declare_adjoints();

    // loop_tapes.cpp: which carried locals need a tape; the tape writes; the reverse loop; scratch words.
    void classify_carried(LoopInfo& info);
    void insert_at_top(LoopInfo& info, const Block& top);
    void instrument(Block& block, size_t index, LoopInfo& info);
    void reverse_loop(LoopInfo& info);
    ValueId thread_base();
    static bool has_words(const Type* t);
    std::vector<ValueId> to_words(ValueId v);
    ValueId from_words(const Type* t, const std::vector<ValueId>& words, size_t& next);
    ValueId word_address(const LoopInfo& info, ValueId slot, uint32_t lane_offset, ValueId base);

    // forward_loops.cpp: a loop of scalar code with few active inputs carries tangents instead of a tape.
    static constexpr size_t kMaxForwardDirections = 4;
    bool forward_mode_eligible(LoopInfo& info);
    void instrument_forward_mode(Block& parent, size_t index, LoopInfo& info);
    using Tangents = std::map<std::pair<ValueId, size_t>, ValueId>;   // (value, direction) -> tangent value
    ValueId tangent_of(ValueId v, size_t d, const LoopInfo& info, const Tangents& tangent);
    void rewrite_tangents(Block& b, LoopInfo& info, Tangents& tangent);
    void add_tangents(ValueId id, LoopInfo& info, Tangents& tangent);
    void reverse_forward_mode(LoopInfo& info);

    // side_tape.cpp: values that recomputation of a taped loop cannot reproduce are replayed from a side tape.
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
        ValueId counter = ir::kNoValue;    // u32 local: the next free word
        ValueId array = ir::kNoValue;      // private u32 array, or kNoValue when the tape is in scratch
        uint32_t capacity = 0;         // words
        bool exact = false;            // no run can exceed the capacity
        bool scratch = false;
        uint32_t scratch_offset = 0;
        ValueId report_loop = ir::kNoValue;   // the loop whose tape report includes the side tape's bytes
        std::set<ValueId> replayed;    // values recomputation reads back
        std::set<ValueId> writes;      // the forward tape writes, which recomputation skips
    };
    static constexpr uint64_t kMaxSideWords = 1u << 16;
    void scan_side_effects();
    bool replayed_kind(ValueId id) const;
    void prepare_side_tape();
    ValueId side_slot(ValueId k, uint32_t lane);
    ValueId side_address(ValueId slot);
    bool replay(ValueId id, ir::ValueMap& m);

    // reverse.cpp: adjoint accumulation and the reverse walk.
    // Adjoints start at -0.0, IEEE's exact additive identity (-0 + x == x for every x, -0 and +0 included),
    // so that simplify can drop the first `0 + contribution` of every accumulation without changing a bit.
    ValueId additive_zero(const Type* t) { return b_.splat(t, -0.0); }
    ValueId P(ValueId v) const {   // the primal value reverse code reads for v
        ValueId m = map_(v);
        return m == ir::kNoValue ? v : m;
    }
    ValueId sum(ValueId a, ValueId c);
    void contribute(ValueId v, ValueId c);
    ValueId take_adjoint(ValueId v);
    void zero_block_adjoints(const Block& b);
    void reverse_block(const Block& b, bool top);
    void reverse_inst(ValueId id);
    bool any_region_active(const Inst& in);
    ValueId grad_buffer(ValueId buffer);
    void scatter(const Inst& read, ValueId g);

    // differentiate.cpp: statements after backward read the adjoints.
    void splice_pending(std::vector<ValueId>& block);
    bool insert_before(std::vector<ValueId>& block, ValueId target, const std::vector<ValueId>& insts);
    void rewrite_grads(ValueId id);
    ValueId positive_zeros(ValueId v, const std::source_location& loc);

    ir::Function& f_;
    ir::Builder b_;
    Block& parent_;
    size_t index_;
    Block forward_;
    ValueId backward_ = ir::kNoValue;
    std::vector<uint8_t> active_, needs_local_;
    std::vector<ValueId> adjoint_;
    std::map<ValueId, LoopInfo> loops_;
    std::map<ValueId, std::pair<ValueId, ValueId>> last_mark_;   // marker in a loop -> (its grad, taken flag)
    std::vector<Frame*> frames_;
    ir::ValueMap map_;
    std::vector<std::pair<ValueId, std::vector<ValueId>>> pending_;
    SideTape side_;
    ScratchBase& scratch_;
    GradBuffers& grads_;
};

} // namespace adjoint::autodiff
