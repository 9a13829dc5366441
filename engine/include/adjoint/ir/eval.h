// Host evaluation of pure operations on flattened 32-bit lanes: shared by the interpreter and constant folding,
// so that both agree with each other and, through the tests, with the GPU.
#pragma once
#include <adjoint/ir/function.h>

#include <span>
#include <vector>

namespace adjoint::ir {

using Lanes = std::vector<uint32_t>;

// Evaluates a pure, non-structural instruction (arithmetic, math, compare, logic, select, construct,
// extract/insert with the given index values, swizzle, cast, linear algebra). Returns false for ops
// that are not pure values (loads, calls, control flow, resources).
bool eval_pure(const Function& f, const Inst& inst, std::span<const Lanes* const> operands, Lanes& out);

// Lane range [first, first+count) of the element reached by `path` (index values given as integers).
std::pair<uint32_t, uint32_t> lane_range(const Type* base, std::span<const int64_t> path);

} // namespace adjoint::ir
