// Host semantics of the scalar ops lane by lane, in float32 as GLSL computes them, and of uint64 scalars.
#include "eval_lanes.h"

#include <adjoint/core/error.h>
#include <adjoint/ir/builder.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace adjoint::ir::eval_detail {

namespace {


float round_half_away(float x) { return std::round(x); }
float fmod_trunc(float x, float y) { return x - y * std::trunc(x / y); }
// 1 / (1 + exp(-x)) and log(1 + exp(x)) through e = exp(-|x|) <= 1, which never overflows; log(1 + e) as
// 2 atanh(s) with s = e / (2 + e), by its odd series to s^15. The GLSL is the same.
float sigmoid(float x) {
    float e = std::exp(-std::fabs(x));
    return x >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
}
float softplus(float x) {
    float e = std::exp(-std::fabs(x));
    float s = e / (2.0f + e), s2 = s * s;
    float series = 2.0f / 15.0f;
    for (int k = 13; k >= 1; k -= 2) series = 2.0f / float(k) + s2 * series;
    return std::max(x, 0.0f) + s * series;
}
// pow where C and GLSL differ, or GLSL leaves it undefined, as the guide defines it: x^0 = 1, NaN for x < 0
// (even where C gives (-2)^2 = 4), 0^y = 0 for y > 0 and +inf for y < 0. The GLSL emitter writes the same
// (codegen/expressions.cpp), so device and interpreter agree there.
float pow_defined(float x, float y) {
    if (y == 0) return 1.0f;
    if (x < 0) return std::numeric_limits<float>::quiet_NaN();
    if (x == 0) return y > 0 ? 0.0f : y < 0 ? std::numeric_limits<float>::infinity() : std::nanf("");
    return std::pow(x, y);
}
float smooth(float e0, float e1, float x) {
    float t = std::clamp((x - e0) / (e1 - e0), 0.0f, 1.0f);
    return t * t * (3.0f - 2.0f * t);
}

} // namespace

uint32_t unary_lane(Op op, ScalarKind k, uint32_t a) {
    if (k == ScalarKind::Float) {
        float x = F(a);
        switch (op) {
        case Op::Neg: return W(-x);
        case Op::Abs: return W(std::fabs(x));
        case Op::Sign: return W(x > 0 ? 1.0f : (x < 0 ? -1.0f : 0.0f));
        case Op::Floor: return W(std::floor(x));
        case Op::Ceil: return W(std::ceil(x));
        case Op::Fract: return W(x - std::floor(x));
        case Op::Round: return W(round_half_away(x));
        case Op::Trunc: return W(std::trunc(x));
        case Op::Sqrt: return W(std::sqrt(x));
        case Op::Rsqrt: return W(1.0f / std::sqrt(x));
        case Op::Exp: return W(std::exp(x));
        case Op::Exp2: return W(std::exp2(x));
        case Op::Log: return W(std::log(x));
        case Op::Log2: return W(std::log2(x));
        case Op::Log10: return W(std::log10(x));
        case Op::Sin: return W(std::sin(x));
        case Op::Cos: return W(std::cos(x));
        case Op::Tan: return W(std::tan(x));
        case Op::Asin: return W(std::asin(x));
        case Op::Acos: return W(std::acos(x));
        case Op::Atan: return W(std::atan(x));
        case Op::Sinh: return W(std::sinh(x));
        case Op::Cosh: return W(std::cosh(x));
        case Op::Tanh: return W(std::tanh(x));
        case Op::Sigmoid: return W(sigmoid(x));
        case Op::Softplus: return W(softplus(x));
        case Op::Saturate: return W(std::clamp(x, 0.0f, 1.0f));
        case Op::Exact: return a;
        case Op::Detach: return a;
        default: break;
        }
    } else if (k == ScalarKind::Bool) {
        if (op == Op::Not) return a ? 0u : 1u;
        if (op == Op::Detach) return a;
    } else {
        bool s = k == ScalarKind::Int;
        switch (op) {
        case Op::Neg: return uint32_t(0) - a;
        case Op::Abs: return s ? uint32_t(std::abs(I(a))) : a;
        case Op::BitNot: return ~a;
        case Op::Detach: return a;
        default: break;
        }
    }
    fail("internal: no host rule for ", name(op), " on ", to_string(k));
}

uint32_t binary_lane(Op op, ScalarKind k, uint32_t a, uint32_t b) {
    if (k == ScalarKind::Float) {
        float x = F(a), y = F(b);
        switch (op) {
        case Op::Add: return W(x + y);
        case Op::Sub: return W(x - y);
        case Op::Mul: return W(x * y);
        case Op::Div: return W(x / y);
        // GLSL leaves a NaN operand undefined; IEEE 754's minNum / maxNum give the number, as lavapipe does.
        case Op::Min: return W(std::fmin(x, y));
        case Op::Max: return W(std::fmax(x, y));
        case Op::Pow: return W(pow_defined(x, y));
        case Op::Atan2: return W(std::atan2(x, y));
        case Op::Fmod: return W(fmod_trunc(x, y));
        case Op::Step: return W(y < x ? 0.0f : 1.0f);
        case Op::Lt: return x < y; case Op::Le: return x <= y;
        case Op::Gt: return x > y; case Op::Ge: return x >= y;
        case Op::Eq: return x == y; case Op::Ne: return x != y;
        default: break;
        }
    } else if (k == ScalarKind::Bool) {
        switch (op) {
        case Op::And: return a && b;
        case Op::Or: return a || b;
        case Op::Eq: return a == b;
        case Op::Ne: return a != b;
        default: break;
        }
    } else {
        bool s = k == ScalarKind::Int;
        switch (op) {
        case Op::Add: return a + b;
        case Op::Sub: return a - b;
        case Op::Mul: return a * b;
        case Op::Div:
            if (b == 0) return 0;   // undefined in GLSL; the host picks 0 rather than crash
            return s ? uint32_t(I(b) == -1 ? uint32_t(0) - a : uint32_t(I(a) / I(b))) : a / b;
        case Op::Mod:
            if (b == 0) return 0;
            return s ? uint32_t(I(b) == -1 ? 0 : I(a) % I(b)) : a % b;
        case Op::Min: return s ? uint32_t(std::min(I(a), I(b))) : std::min(a, b);
        case Op::Max: return s ? uint32_t(std::max(I(a), I(b))) : std::max(a, b);
        case Op::BitAnd: return a & b;
        case Op::BitOr: return a | b;
        case Op::BitXor: return a ^ b;
        case Op::Shl: return a << (b & 31);
        case Op::Shr: return s ? uint32_t(I(a) >> (b & 31)) : a >> (b & 31);
        case Op::Lt: return s ? I(a) < I(b) : a < b;
        case Op::Le: return s ? I(a) <= I(b) : a <= b;
        case Op::Gt: return s ? I(a) > I(b) : a > b;
        case Op::Ge: return s ? I(a) >= I(b) : a >= b;
        case Op::Eq: return a == b;
        case Op::Ne: return a != b;
        default: break;
        }
    }
    fail("internal: no host rule for ", name(op), " on ", to_string(k));
}

uint32_t ternary_lane(Op op, ScalarKind k, uint32_t a, uint32_t b, uint32_t c) {
    if (k == ScalarKind::Float) {
        float x = F(a), y = F(b), z = F(c);
        switch (op) {
        case Op::Clamp: return W(std::fmin(std::fmax(x, y), z));   // as min(max(x, lo), hi) on the device
        case Op::Lerp: return W(x * (1.0f - z) + y * z);
        case Op::Smoothstep: return W(smooth(x, y, z));
        case Op::Fma: return W(std::fma(x, y, z));
        default: break;
        }
    } else if (op == Op::Clamp) {
        return binary_lane(Op::Min, k, binary_lane(Op::Max, k, a, b), c);
    }
    fail("internal: no host rule for ", name(op), " on ", to_string(k));
}

// uint64 operations (scalars only: two lanes each, low word first). Shift counts may be any integer type;
// like 32-bit shifts on the host, the count is taken modulo the width (GLSL leaves larger counts undefined).
bool eval_u64(const Function& f, const Inst& in, std::span<const Lanes* const> ops, Lanes& out) {
    auto value = [&](size_t k) -> uint64_t {
        const Lanes& l = *ops[k];
        return f.type_of(in.operands[k])->is_u64() ? uint64_of(l[0], l[1]) : uint64_t(l[0]);
    };
    auto put = [&](uint64_t v) { out = {uint32_t(v), uint32_t(v >> 32)}; };
    auto put_bool = [&](bool b) { out = {b ? 1u : 0u}; };
    const bool wide_result = in.type->is_u64();
    switch (in.op) {
    case Op::Neg: put(uint64_t(0) - value(0)); return true;
    case Op::Abs: case Op::Detach: put(value(0)); return true;
    case Op::BitNot: put(~value(0)); return true;
    case Op::Add: put(value(0) + value(1)); return true;
    case Op::Sub: put(value(0) - value(1)); return true;
    case Op::Mul: put(value(0) * value(1)); return true;
    case Op::Div: put(value(1) == 0 ? 0 : value(0) / value(1)); return true;   // as 32-bit: 0, not a crash
    case Op::Mod: put(value(1) == 0 ? 0 : value(0) % value(1)); return true;
    case Op::Min: put(std::min(value(0), value(1))); return true;
    case Op::Max: put(std::max(value(0), value(1))); return true;
    case Op::Clamp: put(std::min(std::max(value(0), value(1)), value(2))); return true;
    case Op::BitAnd: put(value(0) & value(1)); return true;
    case Op::BitOr: put(value(0) | value(1)); return true;
    case Op::BitXor: put(value(0) ^ value(1)); return true;
    case Op::Shl: case Op::Shr: {
        if (!wide_result) {   // a 32-bit value shifted by a uint64 count
            uint32_t a = (*ops[0])[0], c = uint32_t(value(1) & 31);
            bool s = f.type_of(in.operands[0])->scalar_kind() == ScalarKind::Int;
            out = {in.op == Op::Shl ? a << c : s ? uint32_t(int32_t(a) >> c) : a >> c};
            return true;
        }
        uint64_t c = value(1) & 63;
        put(in.op == Op::Shl ? value(0) << c : value(0) >> c);
        return true;
    }
    case Op::Lt: put_bool(value(0) < value(1)); return true;
    case Op::Le: put_bool(value(0) <= value(1)); return true;
    case Op::Gt: put_bool(value(0) > value(1)); return true;
    case Op::Ge: put_bool(value(0) >= value(1)); return true;
    case Op::Eq: put_bool(value(0) == value(1)); return true;
    case Op::Ne: put_bool(value(0) != value(1)); return true;
    default: break;
    }
    fail("internal: no host rule for ", name(in.op), " on uint64");
}

// Casts to and from uint64 (scalars): integers convert as GLSL does (an int is sign-extended, a uint64
// becomes an int or uint by keeping its low 32 bits), floats truncate towards zero and saturate (infinities
// too), NaN becomes 0 (codegen/statements.cpp's convert spells the same for GLSL).
void cast_u64(ScalarKind from, ScalarKind to, const Lanes& in, Lanes& out) {
    if (to == ScalarKind::UInt64) {
        uint64_t v = 0;
        switch (from) {
        case ScalarKind::Float: {
            double x = F(in[0]);
            v = std::isnan(x) || x <= 0 ? 0 : x >= 18446744073709551616.0 ? ~uint64_t(0) : uint64_t(x);
            break;
        }
        case ScalarKind::Int: v = uint64_t(int64_t(I(in[0]))); break;
        case ScalarKind::UInt: v = in[0]; break;
        case ScalarKind::Bool: v = in[0] ? 1 : 0; break;
        case ScalarKind::UInt64: v = uint64_of(in[0], in[1]); break;
        }
        out = {uint32_t(v), uint32_t(v >> 32)};
        return;
    }
    uint64_t v = uint64_of(in[0], in[1]);
    switch (to) {
    case ScalarKind::Float: out = {W(float(v))}; break;
    case ScalarKind::Int: case ScalarKind::UInt: out = {uint32_t(v)}; break;
    case ScalarKind::Bool: out = {v != 0 ? 1u : 0u}; break;
    case ScalarKind::UInt64: break;
    }
}

} // namespace adjoint::ir::eval_detail
