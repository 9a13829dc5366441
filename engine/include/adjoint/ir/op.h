// The Op enum and its per-operation facts, generated from ops.def.
#pragma once
#include <cstdint>
#include <string_view>

namespace adjoint::ir {

enum class Op : uint16_t {
#define ADJOINT_OP(name, arity, typing, domain, effect, ad, lanes, glsl) name,
#include <adjoint/ir/ops.def>
#undef ADJOINT_OP
};

enum class Typing : uint8_t { Unary, Binary, Ternary, Compare, Scalar, Explicit, Void };
enum class Domain : uint8_t { F, N, I, B, A };
enum class Effect : uint8_t { Pure, Read, Write, Control };
enum class AdClass : uint8_t { D, Z, S };

struct OpInfo {
    std::string_view name;   // snake_case, as printed
    int arity;
    Typing typing;
    Domain domain;
    Effect effect;
    AdClass ad;
    bool componentwise;      // ops.def's lanes column: C
};

const OpInfo& info(Op op);
inline std::string_view name(Op op) { return info(op).name; }
constexpr uint32_t op_count() {
    uint32_t n = 0;
#define ADJOINT_OP(name, arity, typing, domain, effect, ad, lanes, glsl) ++n;
#include <adjoint/ir/ops.def>
#undef ADJOINT_OP
    return n;
}

// Builtin ids (Inst::imm of Op::Builtin).
// DispatchId..BlockSize are uint3; SubgroupSize and SubgroupInvocationId are uint.
enum class BuiltinId : int32_t { DispatchId, DispatchSize, ThreadId, BlockId, BlockSize, SubgroupSize,
                                 SubgroupInvocationId };
// Atomic operations (Inst::imm of Op::BufferAtomic and Op::SharedAtomic).
enum class AtomicOp : int32_t { Add, Min, Max, Exchange, CompareExchange };

} // namespace adjoint::ir

namespace adjoint::ir {
// Subgroup operations of the op table (they need GL_KHR_shader_subgroup_* and the device's support).
inline bool is_subgroup_op(Op op) { return op >= Op::SubgroupElect && op <= Op::SubgroupBroadcastFirst; }
} // namespace adjoint::ir
