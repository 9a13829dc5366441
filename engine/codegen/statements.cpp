// The emitter's walk over the kernel's blocks: each instruction becomes a line, an expression (expressions.cpp
// spells those, ops.def's glsl column says which) or a memory access (resources.cpp); values are named, locals
// and aggregates written, control flow nested.
#include "codegen/emitter.h"

#include <adjoint/core/error.h>

namespace adjoint::codegen::emit {

using namespace ir;

void Emitter::line(const std::string& s) { *out_ << std::string(size_t(indent_) * 4, ' ') << s << "\n"; }

std::string Emitter::name(ValueId v) const {
    const Inst& in = f_.inst(v);
    switch (in.op) {
    case Op::Const: return constant(in.type, in.words);
    case Op::Arg: return "pc.a" + std::to_string(in.imm);
    case Op::Local: return "l" + std::to_string(v);
    case Op::Shared: return "s" + std::to_string(v);
    default: return "v" + std::to_string(v);
    }
}

std::string Emitter::decl(ValueId id) const { return declare(f_.type_of(id), name(id)); }

// "const T vN = expr;": the IR is strictly scoped (ir::scope_values), so each value is declared where it is made.
void Emitter::define(ValueId id, const std::string& expr) { line("const " + decl(id) + " = " + expr + ";"); }

// An operand, splatted to `want` when it is a scalar feeding a vector op (GLSL functions need that).
std::string Emitter::arg(ValueId v, const Type* want) const {
    const Type* t = f_.type_of(v);
    if (want && t != want && t->is_scalar() && want->is_vector()) return glsl_type(want) + "(" + name(v) + ")";
    return name(v);
}

// The access path path[first..] into a value of type t: struct members, constant vector lanes, indices.
std::string Emitter::access(const Type* t, const std::vector<ValueId>& path, size_t first) {
    std::string s;
    for (size_t k = first; k < path.size(); ++k) {
        ValueId idx = path[k];
        if (t->is_struct()) {
            auto m = size_t(const_int(f_, idx));
            s += "." + member_name(t, m);
            t = t->members()[m];
        } else if (t->is_vector() && is_constant(f_, idx) && const_int(f_, idx) >= 0 &&
                   const_int(f_, idx) < int64_t(t->dim())) {
            s += std::string(".") + "xyzw"[const_int(f_, idx)];
            t = t->element();
        } else {
            s += "[" + index(idx, t->dim()) + "]";
            t = t->element();
        }
    }
    return s;
}

// An index operand. GLSL checks a constant index at compile time and refuses one out of range (glslang reads a
// uint of 2^31 or more as negative), where the access can sit in code that never runs: a branch on a run-time
// value, `$if (n > 0u) { b.write(n - 1u, v); }`, with n a constant 0 after folding. Such a constant goes through a
// variable; where the access runs, it is out of range as any other index would be.
std::string Emitter::index(ValueId idx, int64_t limit) {
    if (!is_constant(f_, idx)) return name(idx);
    const int64_t v = const_int(f_, idx);
    if (v >= 0 && v < limit) return name(idx);
    std::string n = "t" + std::to_string(temps_++);
    line(glsl_type(f_.type_of(idx)) + " " + n + " = " + name(idx) + ";");
    return n;
}

void Emitter::block(const Block& b) {
    for (ValueId id : b.insts) inst(id);
}

void Emitter::nested(const Block& b) {
    ++indent_;
    block(b);
    --indent_;
}

void Emitter::inst(ValueId id) {
    const Inst& in = f_.inst(id);
    if (spelling(in.op).form != Form::Stmt) return define(id, expression(in));
    switch (in.op) {
    case Op::Const: case Op::Arg: return;   // written where they are used
    case Op::Shared: return;                // declared at module scope
    case Op::Param: case Op::Call: case Op::Return:
        fail("internal: '", ir::name(in.op), "' reached GLSL emission; callables must be inlined first");
    case Op::Autodiff: case Op::RequiresGrad: case Op::Backward: case Op::Grad:
        fail("internal: '", ir::name(in.op), "' reached GLSL emission; run the autodiff pass first");
    case Op::If: case Op::Loop: case Op::Switch: case Op::Break: case Op::Continue: case Op::Barrier:
        return control(in);
    case Op::BufferRead: case Op::BufferWrite: case Op::BufferAtomic: case Op::BufferSize: case Op::ImageRead:
    case Op::ImageWrite: case Op::ImageSize: case Op::SharedRead: case Op::SharedWrite: case Op::SharedAtomic:
    case Op::Trap: case Op::ScratchRead: case Op::ScratchWrite: case Op::LoopMark:
        return memory(id, in);
    default: return value(id, in);
    }
}

// Builtins, locals, aggregates and conversions.
void Emitter::value(ValueId id, const Inst& in) {
    auto op = [&](size_t k) { return name(in.operands[k]); };
    const Type* t0 = in.operands.empty() ? nullptr : f_.type_of(in.operands[0]);
    switch (in.op) {
    case Op::Builtin: {
        static const char* names[] = {"gl_GlobalInvocationID", "pc.dispatch_size", "gl_LocalInvocationID",
                                      "gl_WorkGroupID", "gl_WorkGroupSize", "gl_SubgroupSize",
                                      "gl_SubgroupInvocationID"};
        // A 1D kernel's index and group are formed from the rows of groups (dispatch_prologue).
        static const char* names_1d[] = {"adjoint_id", "pc.dispatch_size", "gl_LocalInvocationID",
                                         "uvec3(adjoint_group, 0u, 0u)", "gl_WorkGroupSize", "gl_SubgroupSize",
                                         "gl_SubgroupInvocationID"};
        return define(id, (f_.dimension == 1 ? names_1d : names)[in.imm]);
    }
    case Op::Local: return line(decl(id) + ";");
    case Op::Load: case Op::Extract: return define(id, op(0) + access(t0, in.operands, 1));
    case Op::Store: return line(op(0) + access(t0, in.operands, 2) + " = " + op(1) + ";");
    case Op::Insert:
        // The copy is modified in place, so it cannot be const.
        line(decl(id) + " = " + op(0) + ";");
        return line(name(id) + access(t0, in.operands, 2) + " = " + op(1) + ";");
    case Op::Swizzle: {
        std::string s;
        for (int i = 0; i < int(in.imm >> 16); ++i) s += "xyzw"[(in.imm >> (2 * i)) & 3];
        return define(id, op(0) + "." + s);
    }
    case Op::Construct: {
        std::string s = glsl_type(in.type) + "(";
        auto pads = in.type->is_struct() ? struct_pads(in.type) : std::vector<uint32_t>{};
        for (size_t k = 0; k < in.operands.size(); ++k) {
            if (!pads.empty())
                for (uint32_t p = 0; p < pads[k]; ++p) s += "0.0, ";
            s += op(k) + (k + 1 < in.operands.size() ? ", " : "");
        }
        return define(id, s + ")");
    }
    case Op::Cast: return define(id, convert(in));
    case Op::Bitcast: return define(id, bitcast(in));
    case Op::Detach: return define(id, op(0));
    // glslang marks every operation the value depends on NoContraction (precise propagation).
    case Op::Exact: return line("precise " + decl(id) + " = " + op(0) + ";");
    default: fail("internal: no GLSL spelling for '", ir::name(in.op), "'");
    }
}

// A conversion. Float to an integer type is defined for every float, as the interpreter defines it (ir/eval.cpp):
// truncated towards zero, saturated at the type's range (infinities too), NaN to 0. GLSL leaves a float outside the
// type's range undefined, and lavapipe gave uint(-1.0) = 4294967295 and int(NaN) = -2147483648: a texel index from
// a NaN coordinate, or a count from a negative float, was whatever the driver made of it. One max, two compares and
// two selects, outside the renderer's inner loops.
std::string Emitter::convert(const Inst& in) const {
    const Type* from = f_.type_of(in.operands[0]);
    const ScalarKind to = in.type->scalar_kind();
    const std::string type = glsl_type(in.type), x = name(in.operands[0]);
    const bool integer = to == ScalarKind::Int || to == ScalarKind::UInt || to == ScalarKind::UInt64;
    if (from->scalar_kind() != ScalarKind::Float || !integer) return type + "(" + x + ")";
    // The type's least value (as a float, exact), the first float above its range and the largest value.
    const char* lo = to == ScalarKind::Int ? "-2147483648.0" : "0.0";
    const char* above = to == ScalarKind::Int ? "2147483648.0" : to == ScalarKind::UInt ? "4294967296.0"
                                                                                        : "18446744073709551616.0";
    const char* top = to == ScalarKind::Int ? "2147483647" : to == ScalarKind::UInt ? "4294967295u"
                                                                                    : "18446744073709551615ul";
    const char* zero = to == ScalarKind::Int ? "0" : to == ScalarKind::UInt ? "0u" : "0ul";
    const std::string in_range = type + "(max(" + x + ", " + lo + "))";
    if (!in.type->is_vector())
        return "(isnan(" + x + ") ? " + zero + " : " + x + " >= " + above + " ? " + top + " : " + in_range + ")";
    const std::string fv = glsl_type(from);
    return "mix(mix(" + in_range + ", " + type + "(" + top + "), greaterThanEqual(" + x + ", " + fv + "(" + above +
           "))), " + type + "(" + zero + "), isnan(" + x + "))";
}

// Through uint (or uvecN: vectors need the vector constructors and comparisons).
std::string Emitter::bitcast(const Inst& in) const {
    ScalarKind from = f_.type_of(in.operands[0])->scalar_kind(), to = in.type->scalar_kind();
    const std::string u = glsl_type(in.type->with_scalar(ScalarKind::UInt));
    std::string e = name(in.operands[0]);
    if (from == ScalarKind::Float) e = "floatBitsToUint(" + e + ")";
    else if (from == ScalarKind::Bool) e = u + "(" + e + ")";
    else if (from == ScalarKind::Int) e = u + "(" + e + ")";
    // e is now a uint
    if (to == ScalarKind::Float) e = "uintBitsToFloat(" + e + ")";
    else if (to == ScalarKind::Bool) e = in.type->is_vector() ? "notEqual(" + e + ", " + u + "(0u))" : "(" + e + " != 0u)";
    else if (to == ScalarKind::Int) e = glsl_type(in.type) + "(" + e + ")";
    return e;
}

void Emitter::control(const Inst& in) {
    switch (in.op) {
    case Op::If:
        line("if (" + name(in.operands[0]) + ") {");
        nested(*in.regions[0]);
        if (!in.regions[1]->insts.empty()) {
            line("} else {");
            nested(*in.regions[1]);
        }
        return line("}");
    case Op::Loop:
        line("while (true) {");
        nested(*in.regions[0]);
        return line("}");
    case Op::Switch: {
        line("switch (" + name(in.operands[0]) + ") {");
        bool is_uint = f_.type_of(in.operands[0])->scalar_kind() == ScalarKind::UInt;
        for (size_t r = 0; r < in.regions.size(); ++r) {
            bool is_default = in.has_default && r + 1 == in.regions.size();
            line(is_default ? std::string("default: {")
                            : "case " + (is_uint ? std::to_string(in.words[r]) + "u" : std::to_string(int32_t(in.words[r]))) + ": {");
            nested(*in.regions[r]);
            line("} break;");
        }
        return line("}");
    }
    case Op::Break: return line("break;");
    case Op::Continue: return line("continue;");
    case Op::Barrier:
        // sync_block(): shared-memory writes before it are visible to the block's threads after it.
        line("memoryBarrierShared();");
        return line("barrier();");
    default: fail("internal: '", ir::name(in.op), "' is not control flow");
    }
}

} // namespace adjoint::codegen::emit
