// Host semantics of every pure op in float32 as GLSL computes them: structure, casts, linear algebra; the
// scalar lanes and uint64 in eval_lanes.cpp.
#include <adjoint/ir/eval.h>

#include "eval_lanes.h"

#include <adjoint/core/error.h>
#include <adjoint/ir/builder.h>

#include <algorithm>
#include <cmath>

namespace adjoint::ir {

using namespace eval_detail;

namespace {

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

namespace {

// The geometric, vector-reduction and matrix ops; false for any other op.
bool eval_vector_matrix(const Function& f, const Inst& in, std::span<const Lanes* const> ops, Lanes& out) {
    const Type* t = in.type;
    switch (in.op) {
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
    default: return false;
    }
}

} // namespace

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
            case ScalarKind::Int:   // from a uint the same bits, as GLSL's int(uint)
                if (from->scalar_kind() == ScalarKind::UInt) {
                    out[i] = w;
                    break;
                }
                out[i] = uint32_t(int32_t(std::isnan(v) ? 0 : std::clamp(std::trunc(v), -2147483648.0, 2147483647.0)));
                break;
            case ScalarKind::UInt:
                out[i] = from->scalar_kind() == ScalarKind::Int ? w
                         : uint32_t(std::isnan(v) ? 0 : std::clamp(std::trunc(v), 0.0, 4294967295.0));
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
    default: break;
    }
    if (eval_vector_matrix(f, in, ops, out)) return true;
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
