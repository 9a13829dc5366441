// What a kernel uses that GLSL must enable or the device must have (atomics, uint64, subgroups), the shared
// memory it takes, and the structs it declares; what the device lacks is refused naming the C++ line.
#include "codegen/emitter.h"

#include <adjoint/core/error.h>
#include <adjoint/ir/walk.h>

#include <algorithm>

namespace adjoint::codegen::emit {

using namespace ir;

namespace {

uint32_t subgroup_feature(Op op) {
    switch (op) {
    case Op::SubgroupElect: return kSubgroupBasic;
    case Op::SubgroupAll: case Op::SubgroupAny: case Op::SubgroupAllEqual: return kSubgroupVote;
    case Op::SubgroupBallot: case Op::SubgroupBroadcastFirst: return kSubgroupBallot;
    default: return kSubgroupArithmetic;
    }
}

} // namespace

// Structs are declared in the order the kernel first uses them.
void Emitter::note_types(const Block& root) {
    walk(f_, root, [&](ValueId id) { note_type(f_.type_of(id)); });
}

void Emitter::note_type(const Type* t) {
    if (t->is_array() || t->kind() == Type::Kind::Buffer) note_type(t->element());
    if (t->is_struct()) {
        for (auto* m : t->members()) note_type(m);
        if (std::find(structs_.begin(), structs_.end(), t) == structs_.end()) structs_.push_back(t);
    }
}

void Emitter::scan_features() {
    walk(f_, f_.body(), [&](ValueId id) {
        const Inst& in = f_.inst(id);
        use_atomic(in);
        if (holds_u64(in.type)) use_int64(in);
        if (in.op == Op::Shared) {
            shared_.push_back(id);
            const Type* e = in.type->element();
            uint32_t stride = (e->host_size() + e->host_align() - 1) / e->host_align() * e->host_align();
            result_.shared_bytes += stride * in.type->dim();
        }
        if (in.op == Op::Barrier && result_.barrier_at.empty()) {
            result_.barrier_at = format_location(in.loc);
            if (result_.barrier_at.empty()) result_.barrier_at = "an unknown line";
        }
        if (is_subgroup_op(in.op)) use_subgroup(in, subgroup_feature(in.op), std::string(ir::name(in.op)));
        if (in.op == Op::Builtin && BuiltinId(in.imm) == BuiltinId::SubgroupSize)
            use_subgroup(in, kSubgroupBasic, "subgroup_size");
        if (in.op == Op::Builtin && BuiltinId(in.imm) == BuiltinId::SubgroupInvocationId)
            use_subgroup(in, kSubgroupBasic, "subgroup_invocation_id");
        if (in.op == Op::LoopMark) uses_loop_mark_ = true;
    });
    std::sort(shared_.begin(), shared_.end());
    for (const Type* t : f_.params) {
        const Type* value = t->kind() == Type::Kind::Buffer ? t->element() : t;
        note_type(value);
        if (holds_u64(value)) use_int64(t);
    }
}

// Float atomics without the device's support become compare-and-swap loops on the float's bits (the buffer
// or shared array is then declared as uint); uint64 atomics have no such fallback.
void Emitter::use_atomic(const Inst& in) {
    if (in.op != Op::BufferAtomic && in.op != Op::SharedAtomic) return;
    const bool shared = in.op == Op::SharedAtomic;
    if (in.type->is_float()) {
        auto op = AtomicOp(in.imm);
        bool native = op == AtomicOp::Add ? (shared ? opt_.shared_float_atomic_add : opt_.float_atomic_add)
                                          : (shared ? opt_.shared_float_atomic_min_max : opt_.float_atomic_min_max);
        if (!native && shared) cas_shared_.insert(in.operands[0]);
        else if (!native) cas_buffers_.insert(f_.inst(in.operands[0]).imm);
        else if (op == AtomicOp::Add) need_atomic_float_ = true;
        else need_atomic_float2_ = true;
    }
    if (in.type->is_u64()) {
        if (!(shared ? opt_.shared_int64_atomics : opt_.int64_atomics))
            refuse(in, shared ? "a uint64 atomic on shared memory" : "a uint64 atomic on a buffer",
                   shared ? "shaderSharedInt64Atomics" : "shaderBufferInt64Atomics");
        need_atomic_int64_ = true;
    }
}

[[noreturn]] void Emitter::refuse(const Inst& in, const std::string& what, const std::string& feature) const {
    std::string at = format_location(in.loc);
    fail("kernel '", f_.name(), "': ", what, " at ", at.empty() ? std::string("an unknown line") : at,
         " needs the device feature ", feature, ", which this device does not have");
}

void Emitter::use_int64(const Inst& in) {
    if (!opt_.int64) refuse(in, "a uint64 value", "shaderInt64");
    need_int64_ = true;
}

void Emitter::use_int64(const Type* param) {
    if (!opt_.int64)
        fail("kernel '", f_.name(), "': a ", param->to_string(), " argument needs the device feature shaderInt64, ",
             "which this device does not have");
    need_int64_ = true;
}

void Emitter::use_subgroup(const Inst& in, uint32_t feature, const std::string& what) {
    static const char* names[] = {"basic", "vote", "arithmetic", "ballot"};
    const char* kind = names[feature == kSubgroupBasic ? 0 : feature == kSubgroupVote ? 1
                             : feature == kSubgroupArithmetic ? 2 : 3];
    if (!(opt_.subgroup_features & feature))
        refuse(in, what, std::string("subgroup ") + kind + " operations in compute shaders " +
                             "(VkPhysicalDeviceSubgroupProperties)");
    subgroup_features_ |= feature;
    // Every subgroup extension builds on the basic one.
    subgroup_features_ |= kSubgroupBasic;
}

void Emitter::write_extensions(std::ostream& os) const {
    if (need_atomic_float_) os << "#extension GL_EXT_shader_atomic_float : require\n";
    if (need_atomic_float2_) os << "#extension GL_EXT_shader_atomic_float2 : require\n";
    if (need_int64_) os << "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n";
    if (need_atomic_int64_) os << "#extension GL_EXT_shader_atomic_int64 : require\n";
    if (subgroup_features_ & kSubgroupBasic) os << "#extension GL_KHR_shader_subgroup_basic : require\n";
    if (subgroup_features_ & kSubgroupVote) os << "#extension GL_KHR_shader_subgroup_vote : require\n";
    if (subgroup_features_ & kSubgroupArithmetic) os << "#extension GL_KHR_shader_subgroup_arithmetic : require\n";
    if (subgroup_features_ & kSubgroupBallot) os << "#extension GL_KHR_shader_subgroup_ballot : require\n";
}

} // namespace adjoint::codegen::emit
