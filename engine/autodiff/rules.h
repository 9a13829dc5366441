// Derivative rules: for each differentiable op, the contributions of a result adjoint to its operands.
#pragma once
#include <adjoint/ir/builder.h>

#include <functional>

namespace adjoint::autodiff {

// What a rule sees: the primal operands and result (as values usable at the emission point), the
// adjoint of the result, and a sink that takes the adjoint contribution for operand k.
struct RuleArgs {
    ir::Builder& b;
    const ir::Inst& inst;                   // the original instruction (op, types, imm)
    std::vector<ir::ValueId> x;             // primal operands
    ir::ValueId y;                          // primal result
    ir::ValueId g;                          // adjoint of the result
    std::function<void(size_t, ir::ValueId)> give;   // give(k, contribution of operand k's type)
    std::function<bool(size_t)> wants;      // is operand k active (worth a contribution)
};

// Emits the rule for args.inst.op; returns false when the op has no rule.
bool apply_rule(RuleArgs& args);

// Sums `v` down to type `t` (undoing a scalar broadcast); returns v when the types already agree.
ir::ValueId reduce_to(ir::Builder& b, const ir::Type* t, ir::ValueId v);

} // namespace adjoint::autodiff
