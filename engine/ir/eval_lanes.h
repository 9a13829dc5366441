// What eval.cpp shares with eval_lanes.cpp: lanes as floats and ints, and the per-lane and uint64 semantics.
#pragma once
#include <adjoint/ir/builder.h>
#include <adjoint/ir/eval.h>

namespace adjoint::ir::eval_detail {

inline float F(uint32_t w) { return float_of(w); }
inline uint32_t W(float v) { return bits_of(v); }
inline int32_t I(uint32_t w) { return int32_t(w); }

// Lane i of an operand, broadcasting scalars.
inline uint32_t lane(const Lanes& v, uint32_t i) { return v.size() == 1 ? v[0] : v[i]; }

uint32_t unary_lane(Op op, ScalarKind k, uint32_t a);
uint32_t binary_lane(Op op, ScalarKind k, uint32_t a, uint32_t b);
uint32_t ternary_lane(Op op, ScalarKind k, uint32_t a, uint32_t b, uint32_t c);

// uint64 operations (scalars only: two lanes each, low word first); false for ops they do not have.
bool eval_u64(const Function& f, const Inst& in, std::span<const Lanes* const> ops, Lanes& out);
// Casts to and from uint64 (scalars).
void cast_u64(ScalarKind from, ScalarKind to, const Lanes& in, Lanes& out);

} // namespace adjoint::ir::eval_detail
