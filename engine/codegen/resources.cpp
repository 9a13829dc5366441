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
        // One word per thread of the work group, exchanged by a plain load and store: no other thread touches
        // it, and shared memory is memory, which no compiler reasons away across a loop the device may leave
        // on its own. (An atomicExchange costs lavapipe a per-thread loop: 12-20% of a pose iteration.)
        uint32_t threads = f_.block_size[0] * f_.block_size[1] * f_.block_size[2];
        resources_ << "shared uint adjoint_loop_mark[" << threads << "];\n"
                   << "uint adjoint_loop_mark_exchange(uint v) {\n"
                   << "    uint was = adjoint_loop_mark[gl_LocalInvocationIndex];\n"
                   << "    adjoint_loop_mark[gl_LocalInvocationIndex] = v;\n"
                   << "    return was;\n"
                   << "}\n";
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
        if (slot.texel_words) {   // read-only: texel_read()
            resources_ << "layout(set = 0, binding = " << slot.binding << ") uniform usamplerBuffer b" << k << ";\n";
            return;
        }
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

const ArgSlot& Emitter::slot(const Inst& in) const { return result_.args[size_t(f_.inst(in.operands[0]).imm)]; }

// An element of a read-only buffer bound as a uniform texel buffer of `words` 32-bit words a texel: the texels
// its host bytes span, fetched once each, and the value built from their words at its lanes' host offsets (as
// the interpreter reads a buffer element).
void Emitter::texel_read(ValueId id, const Inst& in, uint32_t words) {
    const Type* e = f_.type_of(in.operands[0])->element();
    const uint32_t per_element = e->host_size() / (4 * words);
    const std::string at = temp("int", "int(" + name(in.operands[1]) + ")" +
                                           (per_element > 1 ? " * " + std::to_string(per_element) : ""), false);
    const std::string texel_type = words == 4 ? "uvec4" : words == 2 ? "uvec2" : "uint";
    const std::string swizzle = words == 4 ? "" : words == 2 ? ".xy" : ".x";
    std::vector<std::string> texels(per_element);
    auto word = [&](size_t lane) {
        const uint32_t w = e->lane_offset(uint32_t(lane)) / 4, t = w / words;
        if (texels[t].empty())
            texels[t] = temp(texel_type, "texelFetch(" + buffer(in) + ", " + at + (t ? " + " + std::to_string(t) : "") +
                                             ")" + swizzle, false);
        return words == 1 ? texels[t] : texels[t] + "." + "xyzw"[w % words];
    };
    // Every texel a lane reads is fetched before the value is built from them.
    for (uint32_t i = 0; i < e->lanes(); ++i) word(i);
    define(id, from_words(e, word));
}

// A memory access's index operand (operand 1), as GLSL accepts it (index()): shared arrays have a length, buffers
// none (2^31 is where glslang's check starts).
std::string Emitter::index(const Inst& in) {
    const bool shared = in.op == Op::SharedRead || in.op == Op::SharedWrite || in.op == Op::SharedAtomic;
    return index(in.operands[1], shared ? int64_t(f_.type_of(in.operands[0])->dim()) : int64_t(1) << 31);
}

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
        if (!shared && slot(in).texel_words) return texel_read(id, in, slot(in).texel_words);
        std::string e = (shared ? op(0) : buffer(in)) + "[" + index(in) + "]";
        define(id, cas ? "uintBitsToFloat(" + e + ")" : e);
        return;
    }
    case Op::SharedWrite: case Op::BufferWrite: {
        std::string v = cas ? "floatBitsToUint(" + op(2) + ")" : op(2);
        line((shared ? op(0) : buffer(in)) + "[" + index(in) + "] = " + v + ";");
        return;
    }
    case Op::SharedAtomic: case Op::BufferAtomic: atomic(id, in); return;
    case Op::BufferSize: {
        const uint32_t words = slot(in).texel_words;
        if (!words) return define(id, "uint(" + buffer(in) + ".length())");
        const uint32_t per_element = f_.type_of(in.operands[0])->element()->host_size() / (4 * words);
        return define(id, "uint(textureSize(" + buffer(in) + "))" +
                              (per_element > 1 ? " / " + std::to_string(per_element) + "u" : ""));
    }
    case Op::ImageRead: define(id, "imageLoad(" + image() + ", ivec2(" + op(1) + "))"); return;
    case Op::ImageWrite: line("imageStore(" + image() + ", ivec2(" + op(1) + "), " + op(2) + ");"); return;
    case Op::ImageSize: define(id, "uvec2(imageSize(" + image() + "))"); return;
    case Op::Trap: line("atomicCompSwap(adjoint_status[0], 0u, " + op(0) + ");"); return;
    case Op::ScratchRead: define(id, "adjoint_scratch[" + op(0) + "]"); return;
    case Op::ScratchWrite: line("adjoint_scratch[" + op(0) + "] = " + op(1) + ";"); return;
    case Op::LoopMark: define(id, "adjoint_loop_mark_exchange(" + op(0) + ")"); return;
    default: fail("internal: '", ir::name(in.op), "' is not a memory access");
    }
}

void Emitter::atomic(ValueId id, const Inst& in) {
    const bool shared = in.op == Op::SharedAtomic;
    std::string target = (shared ? name(in.operands[0]) : buffer(in)) + "[" + index(in) + "]";
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
