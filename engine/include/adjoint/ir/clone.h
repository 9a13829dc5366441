// Copying instructions between (or within) functions with operands renamed through a value map.
#pragma once
#include <adjoint/ir/builder.h>

#include <functional>
#include <vector>

namespace adjoint::ir {

// map[src id] = dst id, or kNoValue for values not yet cloned.
struct ValueMap {
    std::vector<ValueId> to;
    explicit ValueMap(size_t n = 0) : to(n, kNoValue) {}
    ValueId operator()(ValueId v) const { return v < to.size() && to[v] != kNoValue ? to[v] : kNoValue; }
    void set(ValueId from, ValueId dst) {
        if (from >= to.size()) to.resize(from + 1, kNoValue);
        to[from] = dst;
    }
};

// Called for each source instruction before it is cloned; returns true when it handled the instruction
// itself (emitting whatever replaces it through the builder and updating the map).
using CloneHook = std::function<bool(const Function& src, ValueId id, Builder& b, ValueMap& map)>;

// Clones the instructions of `block` (from `src`) at b's insertion point, recursively with regions.
// Operands missing from the map are an internal error, unless `src` is the builder's own function and
// `same_function_fallback` is on, in which case they keep their id (values from outside the block).
void clone_block(const Function& src, const Block& block, Builder& b, ValueMap& map, const CloneHook& hook = {},
                 bool same_function_fallback = false);

// Clones one instruction (regions included). Returns the new id.
ValueId clone_inst(const Function& src, ValueId id, Builder& b, ValueMap& map, const CloneHook& hook = {},
                   bool same_function_fallback = false);

} // namespace adjoint::ir

namespace adjoint::ir {
// A deep copy of a whole function (same ids), so passes can run without touching the recorded original.
std::unique_ptr<Function> clone_function(const Function& f);
} // namespace adjoint::ir
