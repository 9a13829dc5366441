// Builder: appends typed instructions to a function at an insertion point; used by the DSL, the passes
// and autodiff alike, so that every instruction is type-checked by one set of rules.
#pragma once
#include <adjoint/ir/function.h>

#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <source_location>
#include <span>
#include <vector>

namespace adjoint::ir {

// The result type of `op` applied to operands of the given types, by the op table's typing rule.
// Throws adjoint::Error (naming the op, the types and `loc`) when the operands do not fit.
const Type* infer_type(Op op, std::span<const Type* const> operand_types, const std::source_location& loc);

// The type reached by following an access path (constant member indices for structs, any integer index
// for vectors, matrices and arrays) from `base`. Throws for a path that does not fit.
const Type* access_type(const Function& f, const Type* base, std::span<const ValueId> path,
                        const std::source_location& loc);

class Builder {
public:
    explicit Builder(Function& f) : f_(&f) { push(f.body()); }

    Function& function() { return *f_; }
    Block& block() { return *blocks_.back().first; }
    void push(Block& b) {
        blocks_.push_back({&b, npos});
        constants_.emplace_back();
    }
    void pop() {
        blocks_.pop_back();
        constants_.pop_back();
    }
    // Is `b` on the insertion stack (the current block or one that encloses it)? A value placed in such a
    // block before now may be used at the insertion point.
    bool is_open(const Block* b) const;
    // Constant sharing: constant() returns a constant of the same type and lanes already placed in the
    // current block or an enclosing one (before the insertion point) instead of placing another. On for the
    // DSL, whose blocks are only ever appended to in order; off for passes, which insert and move code.
    void share_constants(bool on) { share_constants_ = on; }
    // Runs `record` with the insertion point moved as early as a value computed from `after` alone may go:
    // into the deepest open block entered before `after` was placed, just before the statement open in it
    // (or at the current point when that is the current block). Where blocks are only appended to in
    // order (the DSL), ids grow with the recording, which is what places `after`. `placed` gets the block.
    ValueId hoisted(ValueId after, const std::function<ValueId()>& record, const Block** placed);
    size_t depth() const { return blocks_.size(); }
    // Where the next instruction goes in the current block: appended (default) or before position `index`.
    void set_insert_index(size_t index) { blocks_.back().second = index; }
    void clear_insert_index() { blocks_.back().second = npos; }

    // Appends an instruction whose type follows from the op table; `type` is required for Explicit ops.
    ValueId emit(Op op, std::vector<ValueId> operands, const Type* type = nullptr, int64_t imm = 0,
                 std::source_location loc = std::source_location::current());
    // Appends an already built instruction (used by cloning); no checks.
    ValueId append(Inst inst);

    ValueId constant(const Type* type, std::vector<uint32_t> lanes, std::source_location loc = {});
    ValueId f32(float v, std::source_location loc = {});
    ValueId i32(int32_t v, std::source_location loc = {});
    ValueId u32(uint32_t v, std::source_location loc = {});
    ValueId boolean(bool v, std::source_location loc = {});
    ValueId u64(uint64_t v, std::source_location loc = {});
    ValueId zero(const Type* type, std::source_location loc = {});     // all lanes 0 (false, 0, 0.0)
    ValueId splat(const Type* type, double value, std::source_location loc = {});

    ValueId local(const Type* type, std::source_location loc = {});
    ValueId load(ValueId var, std::span<const ValueId> path = {}, std::source_location loc = {});
    void store(ValueId var, ValueId value, std::span<const ValueId> path = {}, std::source_location loc = {});
    ValueId extract(ValueId value, std::span<const ValueId> path, std::source_location loc = {});
    ValueId extract(ValueId value, uint32_t index, std::source_location loc = {});
    ValueId insert(ValueId value, ValueId element, std::span<const ValueId> path, std::source_location loc = {});
    ValueId construct(const Type* type, std::vector<ValueId> parts, std::source_location loc = {});
    ValueId cast(const Type* type, ValueId value, std::source_location loc = {});
    // Swizzle code: component indices packed 2 bits each, low bits first; `count` components.
    ValueId swizzle(ValueId value, std::span<const uint32_t> components, std::source_location loc = {});
    ValueId unary(Op op, ValueId a, std::source_location loc = {});
    ValueId binary(Op op, ValueId a, ValueId b, std::source_location loc = {});
    ValueId ternary(Op op, ValueId a, ValueId b, ValueId c, std::source_location loc = {});
    ValueId select(ValueId cond, ValueId a, ValueId b, std::source_location loc = {});

    // Structured control flow: the instruction is appended with empty regions, then filled by push/pop.
    ValueId if_(ValueId cond, std::source_location loc = {});           // regions: then, else
    ValueId loop(std::source_location loc = {});                        // region: body
    ValueId switch_(ValueId value, std::source_location loc = {});      // regions added by add_case
    Block& add_case(ValueId sw, std::optional<int64_t> value);          // nullopt = default (must be last)
    void break_(std::source_location loc = {});
    void continue_(std::source_location loc = {});

    const Type* type_of(ValueId v) const { return f_->type_of(v); }

private:
    static constexpr size_t npos = ~size_t(0);
    ValueId place(Inst&& inst);
    Function* f_;
    std::vector<std::pair<Block*, size_t>> blocks_;   // insertion stack: block and insert position
    // Per level of the insertion stack: the constants placed there, by type and lanes (sharing on).
    std::vector<std::map<std::pair<const Type*, std::vector<uint32_t>>, ValueId>> constants_;
    bool share_constants_ = false;
};

// Bit pattern helpers for constants.
uint32_t bits_of(float v);
float float_of(uint32_t bits);
// A uint64 from its two lanes (low word first).
inline uint64_t uint64_of(uint32_t lo, uint32_t hi) { return uint64_t(lo) | uint64_t(hi) << 32; }

} // namespace adjoint::ir
