// The kernel's memory in GLSL: buffers, images and push constants declared from the binding layout, the status
// and scratch buffers, shared arrays and loop marks; and the instructions that read and write them, atomics
// included (compare-and-swap loops where the device has no float atomics).
#include "codegen/emitter.h"

#include <adjoint/core/error.h>

namespace adjoint::codegen::emit {

using namespace ir;

void Emitter::declare_resources() {
    std::ostringstream push;
    push << "layout(push_constant, std430) uniform Push {\n    layout(offset = " << kDispatchSizeOffset
         << ") uvec3 dispatch_size;\n";
    for (size_t k = 0; k < f_.params.size(); ++k) declare_parameter(k, result_.args[k], push);
    push << "} pc;\n";
    if (result_.uses_status)
        resources_ << "layout(std430, set = 0, binding = " << result_.status_binding
                   << ") buffer Status { uint adjoint_status[]; };\n";
    if (result_.uses_scratch)
        resources_ << "layout(std430, set = 0, binding = " << result_.scratch_binding
                   << ") buffer Scratch { uint adjoint_scratch[]; };\n";
    if (uses_loop_mark_) {
        // One word per thread of the work group; atomics, so that no compiler reasons it away.
        uint32_t threads = f_.block_size[0] * f_.block_size[1] * f_.block_size[2];
        resources_ << "shared uint adjoint_loop_mark[" << threads << "];\n";
        result_.shared_bytes += 4 * threads;
    }
    // The kernel's shared arrays (wherever they were declared, callables included): one per block.
    // Float arrays that take compare-and-swap atomics hold the floats' bits as uints.
    for (ValueId s : shared_) {
        const Type* t = f_.type_of(s);
        const Type* e = cas_shared_.count(s) ? Type::u32() : t->element();
        resources_ << "shared " << declare(Type::array(e, t->dim()), name(s)) << ";\n";
    }
    resources_ << push.str();
}

// Parameter k as its slot says: a buffer b<k> (of uints where it takes compare-and-swap atomics), an image
// img<k>, or a push constant pc.a<k>.
void Emitter::declare_parameter(size_t k, const ArgSlot& slot, std::ostream& push) {
    const std::string index = std::to_string(k);
    switch (slot.kind) {
    case ArgSlot::Kind::Buffer: {
        const Type* e = cas_buffers_.count(int64_t(k)) ? Type::u32() : slot.type->element();
        resources_ << "layout(std430, set = 0, binding = " << slot.binding << ") buffer Buffer" << k << " { "
                   << declare(e, "b" + index + "[]") << "; };\n";
        return;
    }
    case ArgSlot::Kind::Image:
        resources_ << "layout(set = 0, binding = " << slot.binding << ", rgba32f) uniform image2D img" << k << ";\n";
        return;
    case ArgSlot::Kind::Push:
        push << "    layout(offset = " << slot.offset << ") " << declare(slot.type, "a" + index) << ";\n";
        return;
    }
}

std::string Emitter::buffer(const Inst& in) const { return "b" + std::to_string(f_.inst(in.operands[0]).imm); }

void Emitter::memory(ValueId id, const Inst& in) {
    auto op = [&](size_t k) { return name(in.operands[k]); };
    auto image = [&] { return "img" + std::to_string(f_.inst(in.operands[0]).imm); };
    const bool shared = in.op == Op::SharedRead || in.op == Op::SharedWrite;
    // Arrays of compare-and-swap atomics hold the floats' bits.
    const bool cas = shared ? cas_shared_.count(in.operands[0]) > 0
                            : (in.op == Op::BufferRead || in.op == Op::BufferWrite) &&
                                  cas_buffers_.count(f_.inst(in.operands[0]).imm) > 0;
    switch (in.op) {
    case Op::SharedRead: case Op::BufferRead: {
        std::string e = (shared ? op(0) : buffer(in)) + "[" + op(1) + "]";
        define(id, cas ? "uintBitsToFloat(" + e + ")" : e);
        return;
    }
    case Op::SharedWrite: case Op::BufferWrite: {
        std::string v = cas ? "floatBitsToUint(" + op(2) + ")" : op(2);
        line((shared ? op(0) : buffer(in)) + "[" + op(1) + "] = " + v + ";");
        return;
    }
    case Op::SharedAtomic: case Op::BufferAtomic: atomic(id, in); return;
    case Op::BufferSize: define(id, "uint(" + buffer(in) + ".length())"); return;
    case Op::ImageRead: define(id, "imageLoad(" + image() + ", ivec2(" + op(1) + "))"); return;
    case Op::ImageWrite: line("imageStore(" + image() + ", ivec2(" + op(1) + "), " + op(2) + ");"); return;
    case Op::ImageSize: define(id, "uvec2(imageSize(" + image() + "))"); return;
    case Op::Trap: line("atomicCompSwap(adjoint_status[0], 0u, " + op(0) + ");"); return;
    case Op::ScratchRead: define(id, "adjoint_scratch[" + op(0) + "]"); return;
    case Op::ScratchWrite: line("adjoint_scratch[" + op(0) + "] = " + op(1) + ";"); return;
    case Op::LoopMark: define(id, "atomicExchange(adjoint_loop_mark[gl_LocalInvocationIndex], " + op(0) + ")"); return;
    default: fail("internal: '", ir::name(in.op), "' is not a memory access");
    }
}

void Emitter::atomic(ValueId id, const Inst& in) {
    const bool shared = in.op == Op::SharedAtomic;
    std::string target = (shared ? name(in.operands[0]) : buffer(in)) + "[" + name(in.operands[1]) + "]";
    if (shared ? cas_shared_.count(in.operands[0]) > 0 : cas_buffers_.count(f_.inst(in.operands[0]).imm) > 0)
        return cas_loop(id, in, target);
    const std::string value = name(in.operands[2]);
    switch (AtomicOp(in.imm)) {
    case AtomicOp::Add: define(id, "atomicAdd(" + target + ", " + value + ")"); return;
    case AtomicOp::Min: define(id, "atomicMin(" + target + ", " + value + ")"); return;
    case AtomicOp::Max: define(id, "atomicMax(" + target + ", " + value + ")"); return;
    case AtomicOp::Exchange: define(id, "atomicExchange(" + target + ", " + value + ")"); return;
    case AtomicOp::CompareExchange:
        define(id, "atomicCompSwap(" + target + ", " + value + ", " + name(in.operands[3]) + ")");
        return;
    }
}

// Compare-and-swap loop on the float's bits, for devices without native float atomics.
void Emitter::cas_loop(ValueId id, const Inst& in, const std::string& target) {
    auto op = AtomicOp(in.imm);
    std::string v = name(id), old = v + "_old", prev = v + "_prev", x = name(in.operands[2]);
    std::string next = op == AtomicOp::Add ? "uintBitsToFloat(" + old + ") + " + x
                       : op == AtomicOp::Min ? "min(uintBitsToFloat(" + old + "), " + x + ")"
                                             : "max(uintBitsToFloat(" + old + "), " + x + ")";
    line("uint " + old + " = " + target + ";");
    line("while (true) {");
    ++indent_;
    line("uint " + prev + " = atomicCompSwap(" + target + ", " + old + ", floatBitsToUint(" + next + "));");
    line("if (" + prev + " == " + old + ") break;");
    line(old + " = " + prev + ";");
    --indent_;
    line("}");
    define(id, "uintBitsToFloat(" + old + ")");
}

} // namespace adjoint::codegen::emit
