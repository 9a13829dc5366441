// Operations that are one GLSL expression: spelled from ops.def's glsl column (functions, infix and prefix
// operators, comparisons), written column by column on matrices where GLSL has no matrix form, and the special
// forms (SpecialFn, Special) written out here.
#include "codegen/emitter.h"

#include <adjoint/core/error.h>

namespace adjoint::codegen::emit {

using namespace ir;

namespace {

// Functions that act component by component: GLSL has them for scalars and vectors only, so on a
// matrix (which the type rules allow: sin(m), min(m, 0.5)) they are written column by column.
bool column_wise(Op op) {
    Form form = spelling(op).form;
    return ir::info(op).componentwise && (form == Form::Fn || form == Form::SpecialFn);
}

} // namespace

// Operand k; in column `column` of an op written column by column, a matrix operand's column.
std::string Emitter::operand(const Inst& in, size_t k, int column) const {
    ValueId v = in.operands[k];
    if (column >= 0 && f_.type_of(v)->is_matrix()) return name(v) + "[" + std::to_string(column) + "]";
    return name(v);
}

// Operand k as a function's argument: a scalar is splatted to the result's vector type where the op broadcasts
// it (GLSL functions need that); an op typed Explicit (subgroup_ballot: a bool in, a uvec4 out) takes its
// operands as they are.
std::string Emitter::fn_arg(const Inst& in, size_t k, int column) const {
    ValueId v = in.operands[k];
    if (column >= 0) return f_.type_of(v)->is_matrix() ? operand(in, k, column) : arg(v, in.type->element());
    return arg(v, ir::info(in.op).typing == Typing::Explicit ? nullptr : in.type);
}

std::string Emitter::call(const Inst& in, const std::string& fn, int column) const {
    std::string s = fn + "(";
    for (size_t k = 0; k < in.operands.size(); ++k)
        s += fn_arg(in, k, column) + (k + 1 < in.operands.size() ? ", " : "");
    return s + ")";
}

std::string Emitter::expression(const Inst& in, int column) {
    if (column < 0 && in.type->is_matrix() && column_wise(in.op)) return columns(in);
    const Spelling& sp = spelling(in.op);
    auto infix = [&](const std::string& sym) { return operand(in, 0, column) + " " + sym + " " + operand(in, 1, column); };
    switch (sp.form) {
    case Form::Fn: return call(in, sp.text, column);
    case Form::Infix:
        if ((in.op == Op::Div || in.op == Op::Mod) && !in.type->is_float()) return integer_division(in);
        return infix(sp.text);
    case Form::Prefix: return sp.text + operand(in, 0, column);
    case Form::Compare: {
        if (!in.type->is_vector()) return infix(sp.text);
        // A vector comparison takes two vectors of the operands' kind (the result is a bool vector, so
        // fn_arg would splat a scalar operand to the wrong type): x > 20.0 becomes greaterThan(x, vec3(20.0)).
        const Type* t = in.type->with_scalar(f_.type_of(in.operands[0])->scalar_kind());
        return std::string(sp.vector_text) + "(" + arg(in.operands[0], t) + ", " + arg(in.operands[1], t) + ")";
    }
    case Form::SpecialFn: case Form::Special: return special(in, column);
    case Form::Stmt: break;
    }
    fail("internal: no GLSL spelling for '", ir::name(in.op), "'");
}

// Integer division and remainder by 0 give 0, on the device as in the interpreter (ir/eval_lanes.cpp): GLSL leaves
// them undefined, and lavapipe gave all bits set for a uint's quotient and for both remainders (an index i % n with
// n = 0 was 4294967295). A signed division by -1 negates (INT_MIN / -1 wraps to INT_MIN, as the interpreter's) and its
// remainder is 0: GLSL leaves INT_MIN / -1 undefined, and a CPU's divide instruction traps on it. The divisor is
// replaced by 1 where it is 0 (or -1), so that no such division is left to the driver, and the result is chosen
// after. A constant scalar divisor other than 0 (and -1) divides as it is.
std::string Emitter::integer_division(const Inst& in) {
    const bool div = in.op == Op::Div;
    const std::string sym = div ? " / " : " % ";
    const ValueId y = in.operands[1];
    const Type* ty = f_.type_of(y);
    const std::string x = name(in.operands[0]), d = name(y);
    const ScalarKind k = ty->scalar_kind();
    const bool sign = k == ScalarKind::Int;
    if (ty->is_scalar() && is_constant(f_, y) && const_int(f_, y) != 0 && !(sign && const_int(f_, y) == -1))
        return x + sym + d;
    const std::string suffix = k == ScalarKind::UInt ? "u" : k == ScalarKind::UInt64 ? "ul" : "";
    if (ty->is_scalar()) {
        const std::string is0 = temp("bool", d + " == 0" + suffix, false);
        const std::string zero = in.type->is_vector() ? glsl_type(in.type) + "(0" + suffix + ")" : "0" + suffix;
        if (!sign) return is0 + " ? " + zero + " : " + x + sym + "(" + is0 + " ? 1" + suffix + " : " + d + ")";
        const std::string neg1 = temp("bool", d + " == -1", false);
        const std::string safe = x + sym + "(" + is0 + " || " + neg1 + " ? 1 : " + d + ")";
        return is0 + " ? " + zero + " : " + neg1 + " ? " + (div ? "-(" + x + ")" : zero) + " : " + safe;
    }
    const std::string yt = glsl_type(ty), zero = yt + "(0" + suffix + ")", one = yt + "(1" + suffix + ")";
    const std::string bt = glsl_type(ty->with_scalar(ScalarKind::Bool));
    const std::string is0 = temp(bt, "equal(" + d + ", " + zero + ")", false);
    if (!sign) return "mix(" + x + sym + "mix(" + d + ", " + one + ", " + is0 + "), " + zero + ", " + is0 + ")";
    const std::string neg1 = temp(bt, "equal(" + d + ", " + yt + "(-1))", false);
    const std::string safe = x + sym + "mix(mix(" + d + ", " + one + ", " + is0 + "), " + one + ", " + neg1 + ")";
    // (The dividend may be a scalar over a vector divisor: its negation is splat to the result's type.)
    const std::string negated = glsl_type(in.type) + "(-(" + x + "))";
    return "mix(mix(" + safe + ", " + (div ? negated : zero) + ", " + neg1 + "), " + zero + ", " + is0 + ")";
}

// A component-wise function of matrices, as the matrix of its columns.
std::string Emitter::columns(const Inst& in) {
    std::string s = glsl_type(in.type) + "(";
    for (uint32_t c = 0; c < in.type->dim(); ++c) s += expression(in, int(c)) + (c + 1 < in.type->dim() ? ", " : "");
    return s + ")";
}

// The SpecialFn and Special forms of ops.def's glsl column.
std::string Emitter::special(const Inst& in, int column) {
    auto op = [&](size_t k) { return operand(in, k, column); };
    auto a = [&](size_t k) { return fn_arg(in, k, column); };
    // The operands' type; in a column, the column's.
    const Type* t0 = column >= 0 ? in.type->element() : f_.type_of(in.operands[0]);
    const bool vec = t0->is_vector();
    switch (in.op) {
    case Op::Mul:
        if (t0->is_matrix() && f_.type_of(in.operands[1])->is_matrix()) return call(in, "matrixCompMult", column);
        return op(0) + " * " + op(1);
    case Op::And: case Op::Or: {
        if (!in.type->is_vector()) return op(0) + (in.op == Op::And ? " && " : " || ") + op(1);
        std::string u = "uvec" + std::to_string(in.type->dim());
        return glsl_type(in.type) + "(" + u + "(" + a(0) + ")" + (in.op == Op::And ? " & " : " | ") + u + "(" + a(1) + "))";
    }
    case Op::Not: return vec ? "not(" + op(0) + ")" : "!" + op(0);
    case Op::Select:
        if (vec) return "mix(" + op(2) + ", " + op(1) + ", " + op(0) + ")";
        return op(0) + " ? " + op(1) + " : " + op(2);
    case Op::Abs:   // GLSL has no abs(uint); it is the identity
        if (t0->scalar_kind() == ScalarKind::UInt || t0->scalar_kind() == ScalarKind::UInt64) return op(0);
        return call(in, "abs", column);
    case Op::Round: return round(op(0), t0);
    case Op::Log10: return "log2(" + op(0) + ") * 0.301029995663981";
    case Op::Sigmoid: case Op::Softplus: return sigmoid_softplus(in.op, op(0), t0);
    case Op::Saturate: return "clamp(" + op(0) + ", 0.0, 1.0)";
    case Op::Fmod: return a(0) + " - " + a(1) + " * trunc(" + a(0) + " / " + a(1) + ")";
    case Op::LengthSquared: return "dot(" + op(0) + ", " + op(0) + ")";
    case Op::Pow: case Op::Atan2: return defined_everywhere(in, column);
    case Op::Smoothstep: {   // GLSL's is undefined for e0 >= e1 (reversed edges, a step): its formula instead
        const std::string type = glsl_type(column >= 0 ? in.type->element() : in.type);
        std::string t =
            temp(type, "clamp((" + a(2) + " - " + a(0) + ") / (" + a(1) + " - " + a(0) + "), 0.0, 1.0)", true);
        return t + " * " + t + " * (3.0 - 2.0 * " + t + ")";
    }
    // GLSL's any/all take bool vectors only; of one bool they are that bool.
    case Op::Any: return vec ? call(in, "any", column) : op(0);
    case Op::All: return vec ? call(in, "all", column) : op(0);
    default: break;
    }
    fail("internal: no GLSL spelling for '", ir::name(in.op), "'");
}

// pow and atan2 where GLSL leaves them undefined, as the interpreter defines them (engine/ir/eval_lanes.cpp):
// pow(x, 0) = 1, NaN for x < 0, 0^y = 0 or +inf; atan2 at the origin as C's (±0, or ±pi where x is -0). A vector is
// written component by component.
std::string Emitter::defined_everywhere(const Inst& in, int column) {
    const Type* t = column >= 0 ? in.type->element() : in.type;
    auto component = [&](size_t k, int c) {   // operand k's component c (c < 0: a scalar operand as it is)
        const Type* ot = f_.type_of(in.operands[k]);
        const bool vector = ot->is_matrix() ? column >= 0 : ot->is_vector();
        std::string s = operand(in, k, column);
        return c >= 0 && vector ? s + "." + "xyzw"[c] : s;
    };
    const std::string nan = "uintBitsToFloat(0x7fc00000u)", inf = "uintBitsToFloat(0x7f800000u)";
    auto scalar = [&](int c) {
        const std::string a = component(0, c), b = component(1, c);
        if (in.op == Op::Pow)
            return "(" + b + " == 0.0 ? 1.0 : " + a + " < 0.0 ? " + nan + " : " + a + " == 0.0 ? (" + b +
                   " > 0.0 ? 0.0 : " + b + " < 0.0 ? " + inf + " : " + nan + ") : pow(" + a + ", " + b + "))";
        return "(" + a + " == 0.0 && " + b + " == 0.0 ? (floatBitsToInt(" + b + ") < 0 ? (floatBitsToInt(" + a +
               ") < 0 ? -3.14159274 : 3.14159274) : " + a + ") : atan(" + a + ", " + b + "))";
    };
    if (!t->is_vector()) return scalar(-1);
    std::string s = glsl_type(t) + "(";
    for (uint32_t c = 0; c < t->dim(); ++c) s += (c ? ", " : "") + scalar(int(c));
    return s + ")";
}

// Halves away from zero, as std::round (GLSL's round() leaves halves to the driver). Not floor(abs(x) + 0.5):
// that sum rounds 0.49999997 up to 1. x - trunc(x) is exact, and picking trunc(x) unchanged keeps -0.0 and
// -0.3 at -0.0.
std::string Emitter::round(const std::string& x, const Type* t) const {
    std::string tr = "trunc(" + x + ")";
    std::string frac = "abs(" + x + " - " + tr + ")";
    if (t->is_vector())
        return "mix(" + tr + ", " + tr + " + sign(" + x + "), greaterThanEqual(" + frac + ", " + glsl_type(t) +
               "(0.5)))";
    return "(" + frac + " >= 0.5 ? " + tr + " + sign(" + x + ") : " + tr + ")";
}

// Through e = exp(-|x|) <= 1, as engine/ir/eval.cpp computes them; vectors select with mix.
std::string Emitter::sigmoid_softplus(Op op, const std::string& x, const Type* t) {
    const bool vec = t->is_vector();
    const std::string type = glsl_type(t);
    std::string e = temp(type, "exp(-abs(" + x + "))", false);
    std::string one = vec ? type + "(1.0)" : "1.0";
    if (op == Op::Sigmoid) {
        std::string pos = "1.0 / (1.0 + " + e + ")", neg = e + " / (1.0 + " + e + ")";
        if (!vec) return "(" + x + " >= 0.0 ? " + pos + " : " + neg + ")";
        return "mix(" + neg + ", " + pos + ", greaterThanEqual(" + x + ", " + type + "(0.0)))";
    }
    // log(1 + e) = 2 atanh(s) with s = e / (2 + e) <= 1/3, summed as its odd series to s^15 (the next term is
    // 1e-9 of the sum): only + * /, so no driver's log near 1 (NVIDIA's is 0.2% off there) decides it.
    std::string sv = temp(type, e + " / (2.0 + " + e + ")", true), s2 = temp(type, sv + " * " + sv, true);
    std::string series = "2.0 / 15.0";
    for (int k = 13; k >= 1; k -= 2)
        series = (k == 1 ? "2.0" : "2.0 / " + std::to_string(k) + ".0") + (" + " + s2 + " * (" + series + ")");
    std::string log1p = sv + " * (" + series + ")";
    return "max(" + x + ", 0.0) + " + log1p;
}

// A named intermediate (t0, t1, ... within the kernel), declared on its own line before the value that
// uses it; `precise` forbids the compiler's algebraic rewrites of the expressions that compute it.
std::string Emitter::temp(const std::string& type, const std::string& expr, bool precise) {
    std::string n = "t" + std::to_string(temps_++);
    line(std::string(precise ? "precise " : "const ") + type + " " + n + " = " + expr + ";");
    return n;
}

} // namespace adjoint::codegen::emit
