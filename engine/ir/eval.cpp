// Host semantics of every pure op, lane by lane, in float32 as GLSL computes them.
#include <adjoint/ir/eval.h>

#include <adjoint/core/error.h>
#include <adjoint/ir/builder.h>

#include <algorithm>
#include <cmath>

namespace adjoint::ir {

namespace {

float F(uint32_t w) { return float_of(w); }
uint32_t W(float v) { return bits_of(v); }
int32_t I(uint32_t w) { return int32_t(w); }

// Lane i of an operand, broadcasting scalars.
uint32_t lane(const Lanes& v, uint32_t i) { return v.size() == 1 ? v[0] : v[i]; }

float round_half_away(float x) { return std::round(x); }
float fmod_trunc(float x, float y) { return x - y * std::trunc(x / y); }
// 1 / (1 + exp(-x)) and log(1 + exp(x)) through e = exp(-|x|) <= 1, which never overflows; log(1 + e) as
// e log(u) / (u - 1) with u = 1 + e (exact where u rounds to 1, accurate for tiny e). The GLSL is the same.
float sigmoid(float x) {
    float e = std::exp(-std::fabs(x));
    return x >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
}
float softplus(float x) {
    float e = std::exp(-std::fabs(x));
    float u = 1.0f + e;
    return std::max(x, 0.0f) + (u == 1.0f ? e : e * std::log(u) / (u - 1.0f));
}
float smooth(float e0, float e1, float x) {
    float t = std::clamp((x - e0) / (e1 - e0), 0.0f, 1.0f);
    return t * t * (3.0f - 2.0f * t);
}

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
        case Op::Min: return W(y < x ? y : x);
        case Op::Max: return W(x < y ? y : x);
        case Op::Pow: return W(std::pow(x, y));
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
        case Op::Clamp: { float lo = x < y ? y : x; return W(z < lo ? z : lo); }
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

float dotf(const Lanes& a, const Lanes& b) {
    float s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += F(a[i]) * F(b[i]);
    return s;
}

// Column-major n x n matrix element (row r, column c).
float m_at(const Lanes& m, uint32_t n, uint32_t r, uint32_t c) { return F(m[c * n + r]); }

float det(const Lanes& m, uint32_t n) {
    if (n == 2) return m_at(m, 2, 0, 0) * m_at(m, 2, 1, 1) - m_at(m, 2, 0, 1) * m_at(m, 2, 1, 0);
    float d = 0;
    for (uint32_t c = 0; c < n; ++c) {
        Lanes minor;
        for (uint32_t cc = 0; cc < n; ++cc) {
            if (cc == c) continue;
            for (uint32_t r = 1; r < n; ++r) minor.push_back(W(m_at(m, n, r, cc)));
        }
        float sign = (c % 2) ? -1.0f : 1.0f;
        d += sign * m_at(m, n, 0, c) * det(minor, n - 1);
    }
    return d;
}

Lanes inverse(const Lanes& m, uint32_t n) {
    // Adjugate over determinant, as the GLSL built-in computes it.
    float d = det(m, n);
    Lanes out(n * n);
    for (uint32_t r = 0; r < n; ++r)
        for (uint32_t c = 0; c < n; ++c) {
            Lanes minor;
            for (uint32_t cc = 0; cc < n; ++cc) {
                if (cc == r) continue;
                for (uint32_t rr = 0; rr < n; ++rr) {
                    if (rr == c) continue;
                    minor.push_back(W(m_at(m, n, rr, cc)));
                }
            }
            float cof = (n == 2) ? F(minor[0]) : det(minor, n - 1);
            if ((r + c) % 2) cof = -cof;
            out[c * n + r] = W(cof / d);   // inverse(r, c) = cofactor(c, r) / det
        }
    return out;
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
// becomes an int or uint by keeping its low 32 bits), floats truncate towards zero and saturate.
void cast_u64(ScalarKind from, ScalarKind to, const Lanes& in, Lanes& out) {
    if (to == ScalarKind::UInt64) {
        uint64_t v = 0;
        switch (from) {
        case ScalarKind::Float: {
            double x = F(in[0]);
            v = std::isfinite(x) && x > 0 ? (x >= 18446744073709551616.0 ? ~uint64_t(0) : uint64_t(x)) : 0;
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

} // namespace

std::pair<uint32_t, uint32_t> lane_range(const Type* t, std::span<const int64_t> path) {
    uint32_t first = 0;
    for (int64_t idx : path) {
        switch (t->kind()) {
        case Type::Kind::Vector: first += uint32_t(idx); t = t->element(); break;
        case Type::Kind::Matrix: first += uint32_t(idx) * t->dim(); t = t->element(); break;
        case Type::Kind::Array: first += uint32_t(idx) * t->element()->lanes(); t = t->element(); break;
        case Type::Kind::Struct:
            for (int64_t m = 0; m < idx; ++m) first += t->members()[size_t(m)]->lanes();
            t = t->members()[size_t(idx)];
            break;
        default: fail("internal: bad access path");
        }
    }
    return {first, t->lanes()};
}

bool eval_pure(const Function& f, const Inst& in, std::span<const Lanes* const> ops, Lanes& out) {
    const Type* t = in.type;
    auto index_of = [&](size_t k) -> int64_t {
        const Type* it = f.type_of(in.operands[k]);
        return it->scalar_kind() == ScalarKind::Int ? int64_t(I((*ops[k])[0])) : int64_t((*ops[k])[0]);
    };
    switch (in.op) {
    case Op::Const: out = in.words; return true;
    case Op::Construct: {
        out.clear();
        if (ops.size() == 1 && ops[0]->size() == 1 && t->lanes() > 1) {
            out.assign(t->lanes(), (*ops[0])[0]);
            return true;
        }
        for (auto* o : ops) out.insert(out.end(), o->begin(), o->end());
        return true;
    }
    case Op::Extract: case Op::Insert: {
        size_t first_index = in.op == Op::Extract ? 1 : 2;
        std::vector<int64_t> path;
        for (size_t k = first_index; k < in.operands.size(); ++k) path.push_back(index_of(k));
        const Type* base = f.type_of(in.operands[0]);
        // Out-of-range dynamic indices are clamped, as robust buffer access would do on the GPU.
        const Type* walk = base;
        for (auto& idx : path) {
            uint32_t n = walk->is_struct() ? uint32_t(walk->members().size()) : walk->dim();
            if (idx < 0 || idx >= int64_t(n)) idx = std::clamp<int64_t>(idx, 0, n - 1);
            walk = walk->is_struct() ? walk->members()[size_t(idx)] : walk->element();
        }
        auto [first, count] = lane_range(base, path);
        if (in.op == Op::Extract) {
            out.assign(ops[0]->begin() + first, ops[0]->begin() + first + count);
        } else {
            out = *ops[0];
            std::copy(ops[1]->begin(), ops[1]->end(), out.begin() + first);
        }
        return true;
    }
    case Op::Swizzle: {
        int n = int(in.imm >> 16);
        out.resize(size_t(n));
        for (int i = 0; i < n; ++i) out[size_t(i)] = (*ops[0])[(in.imm >> (2 * i)) & 3];
        return true;
    }
    case Op::Cast: {
        const Type* from = f.type_of(in.operands[0]);
        if (from->is_u64() || t->is_u64()) {
            cast_u64(from->scalar_kind(), t->scalar_kind(), *ops[0], out);
            return true;
        }
        out.resize(t->lanes());
        for (uint32_t i = 0; i < t->lanes(); ++i) {
            uint32_t w = (*ops[0])[i];
            double v = 0;
            switch (from->scalar_kind()) {
            case ScalarKind::Float: v = F(w); break;
            case ScalarKind::Int: v = I(w); break;
            case ScalarKind::UInt: v = w; break;
            case ScalarKind::Bool: v = w ? 1 : 0; break;
            case ScalarKind::UInt64: break;   // handled above
            }
            switch (t->scalar_kind()) {
            case ScalarKind::Float: out[i] = W(float(v)); break;
            case ScalarKind::Int:
                out[i] = uint32_t(int32_t(std::isfinite(v) ? std::clamp(std::trunc(v), -2147483648.0, 2147483647.0) : 0));
                break;
            case ScalarKind::UInt:
                out[i] = from->scalar_kind() == ScalarKind::Int ? w
                         : uint32_t(std::isfinite(v) ? std::clamp(std::trunc(v), 0.0, 4294967295.0) : 0);
                break;
            case ScalarKind::Bool: out[i] = v != 0; break;
            case ScalarKind::UInt64: break;   // handled above
            }
        }
        return true;
    }
    case Op::Bitcast: {
        // Same bits, another scalar kind (bools become 0 or 1).
        out = *ops[0];
        if (t->scalar_kind() == ScalarKind::Bool)
            for (auto& w : out) w = w != 0;
        return true;
    }
    case Op::Select: {
        const Lanes& c = *ops[0];
        out.resize(t->lanes());
        for (uint32_t i = 0; i < t->lanes(); ++i) out[i] = lane(c, i) ? (*ops[1])[i] : (*ops[2])[i];
        return true;
    }
    case Op::Dot: out = {W(dotf(*ops[0], *ops[1]))}; return true;
    case Op::LengthSquared: out = {W(dotf(*ops[0], *ops[0]))}; return true;
    case Op::Length: out = {W(std::sqrt(dotf(*ops[0], *ops[0])))}; return true;
    case Op::Distance: {
        float s = 0;
        for (size_t i = 0; i < ops[0]->size(); ++i) {
            float d = F((*ops[0])[i]) - F((*ops[1])[i]);
            s += d * d;
        }
        out = {W(std::sqrt(s))};
        return true;
    }
    case Op::Normalize: {
        float inv = 1.0f / std::sqrt(dotf(*ops[0], *ops[0]));
        out.resize(ops[0]->size());
        for (size_t i = 0; i < out.size(); ++i) out[i] = W(F((*ops[0])[i]) * inv);
        return true;
    }
    case Op::Reflect: {
        // The normal may be a scalar, broadcast as the Binary typing allows and as GLSL is given it.
        const Lanes& i = *ops[0];
        const Lanes& n = *ops[1];
        float d = 0;
        for (uint32_t k = 0; k < i.size(); ++k) d += F(lane(n, k)) * F(i[k]);
        out.resize(i.size());
        for (uint32_t k = 0; k < i.size(); ++k) out[k] = W(F(i[k]) - 2.0f * d * F(lane(n, k)));
        return true;
    }
    case Op::Cross: {
        auto& a = *ops[0]; auto& b = *ops[1];
        out = {W(F(a[1]) * F(b[2]) - F(a[2]) * F(b[1])), W(F(a[2]) * F(b[0]) - F(a[0]) * F(b[2])),
               W(F(a[0]) * F(b[1]) - F(a[1]) * F(b[0]))};
        return true;
    }
    case Op::Any: case Op::All: {
        bool any = false, all = true;
        for (uint32_t w : *ops[0]) { any = any || w; all = all && w; }
        out = {in.op == Op::Any ? uint32_t(any) : uint32_t(all)};
        return true;
    }
    case Op::Transpose: {
        uint32_t n = t->dim();
        out.resize(n * n);
        for (uint32_t r = 0; r < n; ++r)
            for (uint32_t c = 0; c < n; ++c) out[c * n + r] = (*ops[0])[r * n + c];
        return true;
    }
    case Op::Determinant: out = {W(det(*ops[0], f.type_of(in.operands[0])->dim()))}; return true;
    case Op::Inverse: out = inverse(*ops[0], t->dim()); return true;
    case Op::MatMul: {
        const Type* a = f.type_of(in.operands[0]);
        const Type* b = f.type_of(in.operands[1]);
        uint32_t n = a->is_matrix() ? a->dim() : b->dim();
        auto& x = *ops[0]; auto& y = *ops[1];
        if (a->is_matrix() && b->is_matrix()) {
            out.resize(n * n);
            for (uint32_t c = 0; c < n; ++c)
                for (uint32_t r = 0; r < n; ++r) {
                    float s = 0;
                    for (uint32_t k = 0; k < n; ++k) s += m_at(x, n, r, k) * m_at(y, n, k, c);
                    out[c * n + r] = W(s);
                }
        } else if (a->is_matrix()) {
            out.resize(n);
            for (uint32_t r = 0; r < n; ++r) {
                float s = 0;
                for (uint32_t k = 0; k < n; ++k) s += m_at(x, n, r, k) * F(y[k]);
                out[r] = W(s);
            }
        } else {
            out.resize(n);
            for (uint32_t c = 0; c < n; ++c) {
                float s = 0;
                for (uint32_t k = 0; k < n; ++k) s += F(x[k]) * m_at(y, n, k, c);
                out[c] = W(s);
            }
        }
        return true;
    }
    default: break;
    }
    const OpInfo& oi = info(in.op);
    if (oi.effect != Effect::Pure && in.op != Op::RequiresGrad) return false;
    bool wide = t->is_u64();
    for (ValueId o : in.operands) wide = wide || f.type_of(o)->is_u64();
    if (wide) return eval_u64(f, in, ops, out);
    ScalarKind k = f.type_of(in.operands.empty() ? 0 : in.operands[0])->scalar_kind();
    uint32_t n = 1;
    for (auto* o : ops) n = std::max<uint32_t>(n, uint32_t(o->size()));
    out.resize(n);
    switch (in.operands.size()) {
    case 1:
        if (in.op == Op::RequiresGrad) { out = *ops[0]; return true; }
        for (uint32_t i = 0; i < n; ++i) out[i] = unary_lane(in.op, k, lane(*ops[0], i));
        return true;
    case 2:
        for (uint32_t i = 0; i < n; ++i) out[i] = binary_lane(in.op, k, lane(*ops[0], i), lane(*ops[1], i));
        return true;
    case 3:
        for (uint32_t i = 0; i < n; ++i)
            out[i] = ternary_lane(in.op, k, lane(*ops[0], i), lane(*ops[1], i), lane(*ops[2], i));
        return true;
    default: return false;
    }
}

} // namespace adjoint::ir
