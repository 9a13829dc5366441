// The table of derivative rules, written with the same builder the DSL uses. Conventions at non-smooth
// points follow the shared ad-conventions: abs'(0) = 0, min/max split ties, sqrt'(0) = 0, pow safe at 0,
// ite selects, clamp/saturate inclusive, fract' = 1, fmod' = (1, -trunc(x/y)). Outside an op's domain
// (sqrt, log of x < 0; asin, acos of |x| > 1; pow of x < 0), where the value is NaN, so is the derivative.
#include "rules.h"

#include <adjoint/autodiff/autodiff.h>
#include <adjoint/core/error.h>

#include <cmath>

namespace adjoint::autodiff {

using namespace ir;

ValueId reduce_to(Builder& b, const Type* t, ValueId v) {
    const Type* vt = b.type_of(v);
    if (vt == t) return v;
    if (t->is_scalar() && vt->is_vector()) return b.binary(Op::Dot, v, b.splat(vt, 1.0));
    if (t->is_scalar() && vt->is_matrix()) {
        ValueId sum = kNoValue;
        for (uint32_t c = 0; c < vt->dim(); ++c) {
            ValueId col = b.extract(v, c);
            ValueId s = b.binary(Op::Dot, col, b.splat(b.type_of(col), 1.0));
            sum = sum == kNoValue ? s : b.binary(Op::Add, sum, s);
        }
        return sum;
    }
    fail("internal: cannot reduce ", vt->to_string(), " to ", t->to_string());
}

namespace {

struct R {
    Builder& b;
    ValueId add(ValueId a, ValueId c) { return b.binary(Op::Add, a, c); }
    ValueId sub(ValueId a, ValueId c) { return b.binary(Op::Sub, a, c); }
    ValueId mul(ValueId a, ValueId c) { return b.binary(Op::Mul, a, c); }
    ValueId div(ValueId a, ValueId c) { return b.binary(Op::Div, a, c); }
    ValueId neg(ValueId a) { return b.unary(Op::Neg, a); }
    ValueId un(Op op, ValueId a) { return b.unary(op, a); }
    ValueId k(ValueId like, double v) { return b.splat(b.type_of(like), v); }
    ValueId zero(ValueId like) { return b.zero(b.type_of(like)); }
    ValueId cmp(Op op, ValueId a, ValueId c) { return b.binary(op, a, c); }
    ValueId sel(ValueId c, ValueId a, ValueId e) { return b.select(c, a, e); }
    ValueId land(ValueId a, ValueId c) { return b.binary(Op::And, a, c); }
    // The condition's shape must match the value's: a bool vector selects per component.
    ValueId sel_like(ValueId cond, ValueId v, ValueId otherwise) {
        const Type* ct = b.type_of(cond);
        const Type* vt = b.type_of(v);
        if (ct->is_vector() && !vt->is_vector()) fail("internal: vector condition on a scalar value");
        if (ct->is_scalar() && vt->is_vector()) return sel(cond, v, otherwise);
        return sel(cond, v, otherwise);
    }
    // g * d with g = 0 giving exactly 0: used where d can be infinite at finite inputs (poles), so that the
    // zero adjoint an ite sends to its unchosen side never turns into NaN (0 * inf).
    ValueId guard(ValueId g, ValueId v) { return sel(cmp(Op::Eq, g, zero(g)), zero(v), v); }
    // A NaN value has a NaN derivative (PyTorch and JAX agree): v where cond does not hold, else NaN.
    ValueId nan_where(ValueId cond, ValueId v) { return sel(cond, k(v, std::nan("")), v); }
    // The derivative of a logarithm, v = g / |x| (so +inf at x = +-0, where the value is -inf), NaN for x < 0.
    ValueId log_domain(ValueId x, ValueId v) { return nan_where(cmp(Op::Lt, x, zero(x)), v); }
    // Outer product a * b^T as a matrix (columns a * b[j]).
    ValueId outer(ValueId a, ValueId c) {
        const Type* vt = b.type_of(a);
        std::vector<ValueId> cols;
        for (uint32_t j = 0; j < vt->dim(); ++j) cols.push_back(mul(a, b.extract(c, j)));
        return b.construct(Type::matrix(vt->dim()), cols);
    }
};

} // namespace

bool apply_rule(RuleArgs& a) {
    Builder& b = a.b;
    R r{b};
    const auto& x = a.x;
    ValueId g = a.g, y = a.y;
    auto give = [&](size_t k, ValueId v) {
        if (a.wants(k)) a.give(k, reduce_to(b, b.type_of(x[k]), v));
    };
    // Splat a scalar operand to the result's shape where a rule needs component-wise math with it.
    auto full = [&](ValueId v) {
        const Type* t = b.type_of(v);
        const Type* yt = a.inst.type;
        if (t != yt && t->is_scalar() && yt->is_vector()) return b.construct(yt, {v});
        return v;
    };
    const double ln2 = 0.693147180559945309, ln10 = 2.302585092994045684;
    switch (a.inst.op) {
    case Op::Neg: give(0, r.neg(g)); return true;
    case Op::Add: give(0, g); give(1, g); return true;
    case Op::Sub: give(0, g); give(1, r.neg(g)); return true;
    case Op::Mul: give(0, r.mul(g, x[1])); give(1, r.mul(g, x[0])); return true;
    case Op::Div: {
        ValueId gg = full(g);
        if (a.wants(0)) give(0, r.guard(gg, r.div(gg, full(x[1]))));
        if (a.wants(1)) give(1, r.guard(gg, r.neg(r.div(r.mul(gg, y), full(x[1])))));
        return true;
    }
    case Op::MatMul: {
        const Type* t0 = b.type_of(x[0]);
        const Type* t1 = b.type_of(x[1]);
        if (t0->is_matrix() && t1->is_matrix()) {
            if (a.wants(0)) give(0, b.binary(Op::MatMul, g, r.un(Op::Transpose, x[1])));
            if (a.wants(1)) give(1, b.binary(Op::MatMul, r.un(Op::Transpose, x[0]), g));
        } else if (t0->is_matrix()) {   // y = M v
            if (a.wants(0)) give(0, r.outer(g, x[1]));
            if (a.wants(1)) give(1, b.binary(Op::MatMul, r.un(Op::Transpose, x[0]), g));
        } else {                        // y = v M, y_j = sum_i v_i M_ij
            if (a.wants(0)) give(0, b.binary(Op::MatMul, x[1], g));
            if (a.wants(1)) give(1, r.outer(x[0], g));
        }
        return true;
    }
    case Op::Select: {
        // By selection, never by a mask product: an inf or NaN on the unchosen side must not leak.
        ValueId z = r.zero(g);
        if (a.wants(1)) give(1, r.sel(x[0], g, z));
        if (a.wants(2)) give(2, r.sel(x[0], z, g));
        return true;
    }
    case Op::Abs: give(0, r.mul(g, r.un(Op::Sign, x[0]))); return true;
    case Op::Fract: give(0, g); return true;
    case Op::Sqrt: {
        // 0 at x = 0 (by convention: length and normalize of a zero vector); NaN where the value is NaN.
        ValueId d = r.div(r.mul(g, r.k(y, 0.5)), y);
        give(0, r.guard(g, r.sel(r.cmp(Op::Eq, y, r.zero(y)), r.zero(g), d)));
        return true;
    }
    case Op::Rsqrt: give(0, r.guard(g, r.mul(g, r.mul(r.k(y, -0.5), r.mul(y, r.mul(y, y)))))); return true;
    case Op::Exp: give(0, r.mul(g, y)); return true;
    case Op::Exp2: give(0, r.mul(g, r.mul(y, r.k(y, ln2)))); return true;
    case Op::Log: case Op::Log2: case Op::Log10: {
        double base = a.inst.op == Op::Log ? 1.0 : a.inst.op == Op::Log2 ? ln2 : ln10;
        ValueId d = r.div(g, r.mul(r.un(Op::Abs, x[0]), r.k(x[0], base)));
        give(0, r.guard(g, r.log_domain(x[0], d)));
        return true;
    }
    case Op::Sin: give(0, r.mul(g, r.un(Op::Cos, x[0]))); return true;
    case Op::Cos: give(0, r.neg(r.mul(g, r.un(Op::Sin, x[0])))); return true;
    case Op::Tan: give(0, r.guard(g, r.mul(g, r.add(r.k(y, 1), r.mul(y, y))))); return true;
    case Op::Asin: give(0, r.guard(g, r.mul(g, r.un(Op::Rsqrt, r.sub(r.k(x[0], 1), r.mul(x[0], x[0])))))); return true;
    case Op::Acos: give(0, r.guard(g, r.neg(r.mul(g, r.un(Op::Rsqrt, r.sub(r.k(x[0], 1), r.mul(x[0], x[0]))))))); return true;
    case Op::Atan: give(0, r.div(g, r.add(r.k(x[0], 1), r.mul(x[0], x[0])))); return true;
    case Op::Sinh: give(0, r.mul(g, r.un(Op::Cosh, x[0]))); return true;
    case Op::Cosh: give(0, r.mul(g, r.un(Op::Sinh, x[0]))); return true;
    case Op::Tanh: give(0, r.mul(g, r.sub(r.k(y, 1), r.mul(y, y)))); return true;
    case Op::Sigmoid: {
        // y (1 - y) as e / (1 + e)^2 with e = exp(-|x|) <= 1: finite everywhere, and 1 - y loses no digits.
        ValueId e = r.un(Op::Exp, r.neg(r.un(Op::Abs, x[0])));
        ValueId u = r.add(r.k(e, 1), e);
        give(0, r.mul(g, r.div(e, r.mul(u, u))));
        return true;
    }
    case Op::Softplus: give(0, r.mul(g, r.un(Op::Sigmoid, x[0]))); return true;
    case Op::Saturate: {
        ValueId in = r.land(r.cmp(Op::Ge, x[0], r.zero(x[0])), r.cmp(Op::Le, x[0], r.k(x[0], 1)));
        give(0, r.sel(in, g, r.zero(g)));
        return true;
    }
    case Op::Min: case Op::Max: {
        // Ties split the adjoint in half between the two sides.
        Op wins = a.inst.op == Op::Min ? Op::Lt : Op::Gt;
        ValueId x0 = full(x[0]), x1 = full(x[1]);
        ValueId half = r.mul(g, r.k(g, 0.5));
        ValueId tie = r.cmp(Op::Eq, x0, x1);
        ValueId z = r.zero(g);
        if (a.wants(0)) give(0, r.sel(r.cmp(wins, x0, x1), g, r.sel(tie, half, z)));
        if (a.wants(1)) give(1, r.sel(r.cmp(wins, x1, x0), g, r.sel(tie, half, z)));
        return true;
    }
    case Op::Pow: {
        ValueId x0 = full(x[0]), x1 = full(x[1]);
        ValueId z = r.zero(g);
        ValueId nan = r.cmp(Op::Ne, y, y);   // pow(x < 0, y) and NaN inputs: NaN derivatives, like the value
        if (a.wants(0)) {
            // b * a^(b-1) where it is finite, else 0 (pow(0, b<1) would be inf); a^0 is 1 even at a = 0,
            // where GLSL leaves pow(0, 0) undefined.
            ValueId e = r.sub(x1, r.k(x1, 1));
            ValueId p = r.sel(r.cmp(Op::Eq, e, r.zero(e)), r.k(e, 1), b.binary(Op::Pow, x0, e));
            ValueId t = r.mul(x1, p);
            ValueId finite = r.land(r.cmp(Op::Eq, t, t), r.cmp(Op::Le, r.un(Op::Abs, t), r.k(t, 3.4028234663852886e38)));
            give(0, r.guard(g, r.nan_where(nan, r.sel(finite, r.mul(g, t), z))));
        }
        if (a.wants(1)) {
            // a^b ln a for a > 0; 0 at a = 0 (no 0 * log 0 = NaN).
            ValueId pos = r.cmp(Op::Gt, x0, r.zero(x0));
            ValueId safe = r.sel(pos, x0, r.k(x0, 1));
            give(1, r.guard(g, r.nan_where(nan, r.sel(pos, r.mul(g, r.mul(y, r.un(Op::Log, safe))), z))));
        }
        return true;
    }
    case Op::Atan2: {
        ValueId yy = full(x[0]), xx = full(x[1]);
        ValueId den = r.add(r.mul(xx, xx), r.mul(yy, yy));
        ValueId ok = r.cmp(Op::Gt, den, r.zero(den));
        ValueId safe = r.sel(ok, den, r.k(den, 1));
        ValueId z = r.zero(g);
        if (a.wants(0)) give(0, r.sel(ok, r.div(r.mul(g, xx), safe), z));
        if (a.wants(1)) give(1, r.sel(ok, r.neg(r.div(r.mul(g, yy), safe)), z));
        return true;
    }
    case Op::Fmod:
        give(0, g);
        if (a.wants(1)) give(1, r.neg(r.mul(g, r.un(Op::Trunc, r.div(full(x[0]), full(x[1]))))));
        return true;
    case Op::Clamp: {
        ValueId v = full(x[0]), lo = full(x[1]), hi = full(x[2]);
        ValueId z = r.zero(g);
        if (a.wants(0)) give(0, r.sel(r.land(r.cmp(Op::Ge, v, lo), r.cmp(Op::Le, v, hi)), g, z));
        if (a.wants(1)) give(1, r.sel(r.cmp(Op::Lt, v, lo), g, z));
        if (a.wants(2)) give(2, r.sel(r.cmp(Op::Gt, v, hi), g, z));
        return true;
    }
    case Op::Lerp: {
        ValueId t = full(x[2]);
        if (a.wants(0)) give(0, r.mul(g, r.sub(r.k(t, 1), t)));
        if (a.wants(1)) give(1, r.mul(g, t));
        if (a.wants(2)) give(2, r.mul(g, r.sub(full(x[1]), full(x[0]))));
        return true;
    }
    case Op::Smoothstep: {
        ValueId e0 = full(x[0]), e1 = full(x[1]), v = full(x[2]);
        ValueId w = r.sub(e1, e0);
        ValueId u = r.div(r.sub(v, e0), w);
        ValueId t = b.ternary(Op::Clamp, u, r.zero(u), r.k(u, 1));
        ValueId d = r.mul(g, r.mul(r.k(t, 6), r.mul(t, r.sub(r.k(t, 1), t))));   // g * dr/du inside [0, 1]
        if (a.wants(2)) give(2, r.div(d, w));
        if (a.wants(0)) give(0, r.div(r.mul(d, r.sub(v, e1)), r.mul(w, w)));
        if (a.wants(1)) give(1, r.neg(r.div(r.mul(d, r.sub(v, e0)), r.mul(w, w))));
        return true;
    }
    case Op::Fma: give(0, r.mul(g, x[1])); give(1, r.mul(g, x[0])); give(2, g); return true;
    case Op::Dot: give(0, r.mul(x[1], g)); give(1, r.mul(x[0], g)); return true;
    case Op::Cross:
        if (a.wants(0)) give(0, b.binary(Op::Cross, x[1], g));
        if (a.wants(1)) give(1, b.binary(Op::Cross, g, x[0]));
        return true;
    case Op::Length: {
        ValueId ok = r.cmp(Op::Gt, y, r.zero(y));
        ValueId safe = r.sel(ok, y, r.k(y, 1));
        give(0, r.sel(ok, r.mul(x[0], r.div(g, safe)), r.zero(x[0])));
        return true;
    }
    case Op::LengthSquared: give(0, r.mul(x[0], r.mul(g, r.k(g, 2)))); return true;
    case Op::Distance: {
        ValueId d = r.sub(x[0], x[1]);
        ValueId ok = r.cmp(Op::Gt, y, r.zero(y));
        ValueId safe = r.sel(ok, y, r.k(y, 1));
        ValueId gd = r.sel(ok, r.mul(d, r.div(g, safe)), r.zero(d));
        give(0, gd);
        if (a.wants(1)) give(1, r.neg(gd));
        return true;
    }
    case Op::Normalize: {
        // (I - y y^T) g / |x|; a zero vector gets a zero gradient.
        ValueId len = b.unary(Op::Length, x[0]);
        ValueId ok = r.cmp(Op::Gt, len, r.zero(len));
        ValueId safe = r.sel(ok, len, r.k(len, 1));
        ValueId proj = r.sub(g, r.mul(y, b.binary(Op::Dot, y, g)));
        give(0, r.sel(ok, r.div(proj, safe), r.zero(x[0])));
        return true;
    }
    case Op::Reflect: {
        // y = i - 2 (n.i) n: di = g - 2 n (n.g); dn = -2 (i (n.g) + (n.i) g). A scalar n stands for
        // (n, n, ...), as in the value; give() sums its gradient back to a scalar.
        ValueId i = x[0], n = full(x[1]);
        ValueId ng = b.binary(Op::Dot, n, g);
        ValueId ni = b.binary(Op::Dot, n, i);
        ValueId two = r.k(ng, 2);
        if (a.wants(0)) give(0, r.sub(g, r.mul(n, r.mul(two, ng))));
        if (a.wants(1)) give(1, r.neg(r.mul(r.add(r.mul(i, ng), r.mul(g, ni)), r.k(g, 2))));
        return true;
    }
    case Op::Transpose: give(0, r.un(Op::Transpose, g)); return true;
    case Op::Inverse: {
        ValueId yt = r.un(Op::Transpose, y);
        give(0, r.neg(b.binary(Op::MatMul, b.binary(Op::MatMul, yt, g), yt)));
        return true;
    }
    case Op::Determinant:
        give(0, r.mul(r.un(Op::Transpose, r.un(Op::Inverse, x[0])), r.mul(g, y)));
        return true;
    default: return false;
    }
}

bool has_rule(Op op) {
    switch (op) {
    case Op::Neg: case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::MatMul: case Op::Select:
    case Op::Abs: case Op::Fract: case Op::Sqrt: case Op::Rsqrt: case Op::Exp: case Op::Exp2: case Op::Log:
    case Op::Log2: case Op::Log10: case Op::Sin: case Op::Cos: case Op::Tan: case Op::Asin: case Op::Acos:
    case Op::Atan: case Op::Sinh: case Op::Cosh: case Op::Tanh: case Op::Sigmoid: case Op::Softplus: case Op::Saturate:
    case Op::Min: case Op::Max: case Op::Pow: case Op::Atan2: case Op::Fmod: case Op::Clamp: case Op::Lerp: case Op::Smoothstep: case Op::Fma:
    case Op::Dot: case Op::Cross: case Op::Length: case Op::LengthSquared: case Op::Distance: case Op::Normalize:
    case Op::Reflect: case Op::Transpose: case Op::Inverse: case Op::Determinant:
        return true;
    default: return false;
    }
}

} // namespace adjoint::autodiff
