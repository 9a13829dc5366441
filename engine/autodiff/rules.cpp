// The table of derivative rules, written with the same builder the DSL uses. Conventions at non-smooth
// points follow the shared ad-conventions: abs'(0) = 0, min/max split ties, sqrt'(0) = 0, pow safe at 0,
// ite selects, clamp/saturate inclusive, fract' = 1, fmod' = (1, -trunc(x/y)). Outside an op's domain
// (sqrt, log of x < 0; asin, acos of |x| > 1; pow of x < 0), where the value is NaN, so is the derivative.
#include "rules.h"

#include <adjoint/autodiff/autodiff.h>
#include <adjoint/core/error.h>

#include <array>
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

using Vals = std::vector<ValueId>;
constexpr double ln2 = 0.693147180559945309, ln10 = 2.302585092994045684;

// What a rule writes with: the builder, the rule's arguments and small helpers.
struct R {
    Builder& b;
    RuleArgs& a;
    Op op;
    bool wants(size_t k) const { return a.wants(k); }
    // The contribution to operand k, summed down to its type (undoing a scalar broadcast).
    void give(size_t k, ValueId v) {
        if (a.wants(k)) a.give(k, reduce_to(b, b.type_of(a.x[k]), v));
    }
    // Splat a scalar operand to the result's shape where a rule needs component-wise math with it.
    ValueId full(ValueId v) {
        const Type* t = b.type_of(v);
        const Type* yt = a.inst.type;
        if (t != yt && t->is_scalar() && yt->is_vector()) return b.construct(yt, {v});
        return v;
    }
    ValueId add(ValueId x, ValueId c) { return b.binary(Op::Add, x, c); }
    ValueId sub(ValueId x, ValueId c) { return b.binary(Op::Sub, x, c); }
    ValueId mul(ValueId x, ValueId c) { return b.binary(Op::Mul, x, c); }
    ValueId div(ValueId x, ValueId c) { return b.binary(Op::Div, x, c); }
    ValueId neg(ValueId x) { return b.unary(Op::Neg, x); }
    ValueId un(Op o, ValueId x) { return b.unary(o, x); }
    ValueId k(ValueId like, double v) { return b.splat(b.type_of(like), v); }
    ValueId zero(ValueId like) { return b.zero(b.type_of(like)); }
    ValueId cmp(Op o, ValueId x, ValueId c) { return b.binary(o, x, c); }
    ValueId sel(ValueId c, ValueId x, ValueId e) { return b.select(c, x, e); }
    ValueId land(ValueId x, ValueId c) { return b.binary(Op::And, x, c); }
    // g * d with g = 0 giving exactly 0: used where d can be infinite at finite inputs (poles), so that the
    // zero adjoint an ite sends to its unchosen side never turns into NaN (0 * inf).
    ValueId guard(ValueId g, ValueId v) { return sel(cmp(Op::Eq, g, zero(g)), zero(v), v); }
    // A NaN value has a NaN derivative (PyTorch and JAX agree): v where cond does not hold, else NaN.
    ValueId nan_where(ValueId cond, ValueId v) { return sel(cond, k(v, std::nan("")), v); }
    // The derivative of a logarithm, v = g / |x| (so +inf at x = +-0, where the value is -inf), NaN for x < 0.
    ValueId log_domain(ValueId x, ValueId v) { return nan_where(cmp(Op::Lt, x, zero(x)), v); }
    // Outer product a * c^T as a matrix (columns a * c[j]).
    ValueId outer(ValueId x, ValueId c) {
        const Type* vt = b.type_of(x);
        std::vector<ValueId> cols;
        for (uint32_t j = 0; j < vt->dim(); ++j) cols.push_back(mul(x, b.extract(c, j)));
        return b.construct(Type::matrix(vt->dim()), cols);
    }
};

// A rule: x the primal operands, g the result's adjoint, y the primal result.
using Rule = void (*)(R& r, const Vals& x, ValueId g, ValueId y);
using RuleTable = std::array<Rule, op_count()>;

// Puts `rule` at `op`; a second rule for one op stops the compile (a throw is not a constant expression).
constexpr void set(RuleTable& t, Op op, Rule rule) {
    if (t[size_t(op)]) throw "two rules for one op";
    t[size_t(op)] = rule;
}

// + - * / and fma.
constexpr void arithmetic_rules(RuleTable& table) {
    set(table, Op::Neg, [](R& r, const Vals& x, ValueId g, ValueId y) { r.give(0, r.neg(g)); });
    set(table, Op::Exact, [](R& r, const Vals& x, ValueId g, ValueId y) { r.give(0, g); });
    set(table, Op::Add, [](R& r, const Vals& x, ValueId g, ValueId y) { r.give(0, g); r.give(1, g); });
    set(table, Op::Sub, [](R& r, const Vals& x, ValueId g, ValueId y) { r.give(0, g); r.give(1, r.neg(g)); });
    set(table, Op::Mul, [](R& r, const Vals& x, ValueId g, ValueId y) {
        r.give(0, r.mul(g, x[1])); r.give(1, r.mul(g, x[0]));
    });
    set(table, Op::Div, [](R& r, const Vals& x, ValueId g, ValueId y) {
        const Type* t = r.a.inst.type;
        if (t->is_matrix()) {
            // `/` takes a matrix component-wise: the vector rule, column by column (a matrix `*` would not be
            // component-wise, and guard's compare takes no matrix).
            std::vector<ValueId> d0, d1;
            for (uint32_t j = 0; j < t->dim(); ++j) {
                ValueId gj = r.b.extract(g, j);
                ValueId dj = r.b.type_of(x[1])->is_matrix() ? r.b.extract(x[1], j)
                                                            : r.b.construct(t->element(), {x[1]});
                d0.push_back(r.guard(gj, r.div(gj, dj)));
                d1.push_back(r.guard(gj, r.neg(r.div(r.mul(gj, r.b.extract(y, j)), dj))));
            }
            if (r.wants(0)) r.give(0, r.b.construct(t, d0));
            if (r.wants(1)) r.give(1, r.b.construct(t, d1));
            return;
        }
        ValueId gg = r.full(g);
        if (r.wants(0)) r.give(0, r.guard(gg, r.div(gg, r.full(x[1]))));
        if (r.wants(1)) r.give(1, r.guard(gg, r.neg(r.div(r.mul(gg, y), r.full(x[1])))));
    });
    set(table, Op::Fma, [](R& r, const Vals& x, ValueId g, ValueId y) {
        r.give(0, r.mul(g, x[1])); r.give(1, r.mul(g, x[0])); r.give(2, g);
    });
}

// Selections and piecewise functions (their conventions at the seams: the file's header).
constexpr void piecewise_rules(RuleTable& table) {
    set(table, Op::Select, [](R& r, const Vals& x, ValueId g, ValueId y) {
        // By selection, never by a mask product: an inf or NaN on the unchosen side must not leak.
        ValueId z = r.zero(g);
        if (r.wants(1)) r.give(1, r.sel(x[0], g, z));
        if (r.wants(2)) r.give(2, r.sel(x[0], z, g));
    });
    set(table, Op::Abs, [](R& r, const Vals& x, ValueId g, ValueId y) { r.give(0, r.mul(g, r.un(Op::Sign, x[0]))); });
    set(table, Op::Fract, [](R& r, const Vals& x, ValueId g, ValueId y) { r.give(0, g); });
    set(table, Op::Saturate, [](R& r, const Vals& x, ValueId g, ValueId y) {
        ValueId in = r.land(r.cmp(Op::Ge, x[0], r.zero(x[0])), r.cmp(Op::Le, x[0], r.k(x[0], 1)));
        r.give(0, r.sel(in, g, r.zero(g)));
    });
    set(table, Op::Min, [](R& r, const Vals& x, ValueId g, ValueId y) {
        // Ties split the adjoint in half between the two sides.
        Op wins = r.op == Op::Min ? Op::Lt : Op::Gt;
        ValueId x0 = r.full(x[0]), x1 = r.full(x[1]);
        ValueId half = r.mul(g, r.k(g, 0.5));
        ValueId tie = r.cmp(Op::Eq, x0, x1);
        ValueId z = r.zero(g);
        if (r.wants(0)) r.give(0, r.sel(r.cmp(wins, x0, x1), g, r.sel(tie, half, z)));
        if (r.wants(1)) r.give(1, r.sel(r.cmp(wins, x1, x0), g, r.sel(tie, half, z)));
    });
    set(table, Op::Max, table[size_t(Op::Min)]);
    set(table, Op::Clamp, [](R& r, const Vals& x, ValueId g, ValueId y) {
        ValueId v = r.full(x[0]), lo = r.full(x[1]), hi = r.full(x[2]);
        ValueId z = r.zero(g);
        // lo > hi: the value is hi (min(max(x, lo), hi), as lavapipe computes it), and so is the adjoint's.
        ValueId ordered = r.cmp(Op::Le, lo, hi);
        if (r.wants(0)) r.give(0, r.sel(r.land(r.cmp(Op::Ge, v, lo), r.cmp(Op::Le, v, hi)), g, z));
        if (r.wants(1)) r.give(1, r.sel(r.land(r.cmp(Op::Lt, v, lo), ordered), g, z));
        if (r.wants(2)) r.give(2, r.sel(r.b.binary(Op::Or, r.cmp(Op::Gt, v, hi), r.un(Op::Not, ordered)), g, z));
    });
    set(table, Op::Fmod, [](R& r, const Vals& x, ValueId g, ValueId y) {
        r.give(0, g);
        if (r.wants(1)) r.give(1, r.neg(r.mul(g, r.un(Op::Trunc, r.div(r.full(x[0]), r.full(x[1]))))));
    });
    set(table, Op::Lerp, [](R& r, const Vals& x, ValueId g, ValueId y) {
        ValueId t = r.full(x[2]);
        if (r.wants(0)) r.give(0, r.mul(g, r.sub(r.k(t, 1), t)));
        if (r.wants(1)) r.give(1, r.mul(g, t));
        if (r.wants(2)) r.give(2, r.mul(g, r.sub(r.full(x[1]), r.full(x[0]))));
    });
    set(table, Op::Smoothstep, [](R& r, const Vals& x, ValueId g, ValueId y) {
        ValueId e0 = r.full(x[0]), e1 = r.full(x[1]), v = r.full(x[2]);
        ValueId w = r.sub(e1, e0);
        ValueId u = r.div(r.sub(v, e0), w);
        ValueId t = r.b.ternary(Op::Clamp, u, r.zero(u), r.k(u, 1));
        ValueId d = r.mul(g, r.mul(r.k(t, 6), r.mul(t, r.sub(r.k(t, 1), t))));   // g * dr/du inside [0, 1]
        // Where t is clamped the value is flat: exactly 0. So at e0 == e1 (a step), where the general rule would be
        // 0 / 0, decided by w itself: lavapipe's u = (v - e0) / 0 is not reliably the infinity that clamps.
        ValueId z = r.zero(d);
        ValueId flat = r.b.binary(Op::Or, r.cmp(Op::Eq, w, r.zero(w)),
                                  r.b.unary(Op::Not, r.land(r.cmp(Op::Gt, u, r.zero(u)), r.cmp(Op::Lt, u, r.k(u, 1)))));
        if (r.wants(2)) r.give(2, r.sel(flat, z, r.div(d, w)));
        if (r.wants(0)) r.give(0, r.sel(flat, z, r.div(r.mul(d, r.sub(v, e1)), r.mul(w, w))));
        if (r.wants(1)) r.give(1, r.sel(flat, z, r.neg(r.div(r.mul(d, r.sub(v, e0)), r.mul(w, w)))));
    });
}

// Roots, exponentials, logarithms, powers, and the logistic functions built on them.
constexpr void powers_rules(RuleTable& table) {
    set(table, Op::Sqrt, [](R& r, const Vals& x, ValueId g, ValueId y) {
        // 0 at x = 0 (by convention: length and normalize of a zero vector); NaN where the value is NaN.
        ValueId d = r.div(r.mul(g, r.k(y, 0.5)), y);
        r.give(0, r.guard(g, r.sel(r.cmp(Op::Eq, y, r.zero(y)), r.zero(g), d)));
    });
    set(table, Op::Rsqrt, [](R& r, const Vals& x, ValueId g, ValueId y) {
        r.give(0, r.guard(g, r.mul(g, r.mul(r.k(y, -0.5), r.mul(y, r.mul(y, y))))));
    });
    set(table, Op::Exp, [](R& r, const Vals& x, ValueId g, ValueId y) { r.give(0, r.mul(g, y)); });
    set(table, Op::Exp2, [](R& r, const Vals& x, ValueId g, ValueId y) { r.give(0, r.mul(g, r.mul(y, r.k(y, ln2)))); });
    set(table, Op::Log, [](R& r, const Vals& x, ValueId g, ValueId y) {
        double base = r.op == Op::Log ? 1.0 : r.op == Op::Log2 ? ln2 : ln10;
        ValueId d = r.div(g, r.mul(r.un(Op::Abs, x[0]), r.k(x[0], base)));
        r.give(0, r.guard(g, r.log_domain(x[0], d)));
    });
    set(table, Op::Log2, table[size_t(Op::Log)]);
    set(table, Op::Log10, table[size_t(Op::Log)]);
    set(table, Op::Pow, [](R& r, const Vals& x, ValueId g, ValueId y) {
        ValueId x0 = r.full(x[0]), x1 = r.full(x[1]);
        ValueId z = r.zero(g);
        // pow(x < 0, y) and NaN inputs: NaN derivatives. The domain is tested on x itself: GLSL leaves pow of a
        // negative base undefined, and a driver may fold y != y away (NVIDIA's did).
        ValueId nan = r.b.binary(Op::Or, r.cmp(Op::Lt, x0, r.zero(x0)), r.cmp(Op::Ne, y, y));
        if (r.wants(0)) {
            // x^0 is 1 for x < 0 too, flat in x: d/dx 0 there, not NaN (d/dy stays NaN, as in PyTorch: x^y is
            // not defined for x < 0 beside y = 0).
            ValueId nan_dx = r.land(nan, r.un(Op::Not, r.land(r.cmp(Op::Eq, x1, r.zero(x1)), r.cmp(Op::Eq, y, y))));
            // b * a^(b-1) where it is finite, else 0 (pow(0, b<1) would be inf); a^0 is 1 even at a = 0,
            // where GLSL leaves pow(0, 0) undefined.
            ValueId e = r.sub(x1, r.k(x1, 1));
            ValueId p = r.sel(r.cmp(Op::Eq, e, r.zero(e)), r.k(e, 1), r.b.binary(Op::Pow, x0, e));
            ValueId t = r.mul(x1, p);
            ValueId finite =
                r.land(r.cmp(Op::Eq, t, t), r.cmp(Op::Le, r.un(Op::Abs, t), r.k(t, 3.4028234663852886e38)));
            r.give(0, r.guard(g, r.nan_where(nan_dx, r.sel(finite, r.mul(g, t), z))));
        }
        if (r.wants(1)) {
            // a^b ln a for a > 0; 0 at a = 0 (no 0 * log 0 = NaN).
            ValueId pos = r.cmp(Op::Gt, x0, r.zero(x0));
            ValueId safe = r.sel(pos, x0, r.k(x0, 1));
            r.give(1, r.guard(g, r.nan_where(nan, r.sel(pos, r.mul(g, r.mul(y, r.un(Op::Log, safe))), z))));
        }
    });
    set(table, Op::Sigmoid, [](R& r, const Vals& x, ValueId g, ValueId y) {
        // y (1 - y) as e / (1 + e)^2 with e = exp(-|x|) <= 1: finite everywhere, and 1 - y loses no digits.
        ValueId e = r.un(Op::Exp, r.neg(r.un(Op::Abs, x[0])));
        ValueId u = r.add(r.k(e, 1), e);
        r.give(0, r.mul(g, r.div(e, r.mul(u, u))));
    });
    set(table, Op::Softplus, [](R& r, const Vals& x, ValueId g, ValueId y) { r.give(0, r.mul(g, r.un(Op::Sigmoid, x[0]))); });
}

// Trigonometric and hyperbolic functions.
constexpr void trigonometric_rules(RuleTable& table) {
    set(table, Op::Sin, [](R& r, const Vals& x, ValueId g, ValueId y) { r.give(0, r.mul(g, r.un(Op::Cos, x[0]))); });
    set(table, Op::Cos, [](R& r, const Vals& x, ValueId g, ValueId y) { r.give(0, r.neg(r.mul(g, r.un(Op::Sin, x[0])))); });
    set(table, Op::Tan, [](R& r, const Vals& x, ValueId g, ValueId y) {
        r.give(0, r.guard(g, r.mul(g, r.add(r.k(y, 1), r.mul(y, y)))));
    });
    set(table, Op::Asin, [](R& r, const Vals& x, ValueId g, ValueId y) {
        r.give(0, r.guard(g, r.mul(g, r.un(Op::Rsqrt, r.sub(r.k(x[0], 1), r.mul(x[0], x[0]))))));
    });
    set(table, Op::Acos, [](R& r, const Vals& x, ValueId g, ValueId y) {
        r.give(0, r.guard(g, r.neg(r.mul(g, r.un(Op::Rsqrt, r.sub(r.k(x[0], 1), r.mul(x[0], x[0])))))));
    });
    set(table, Op::Atan, [](R& r, const Vals& x, ValueId g, ValueId y) {
        r.give(0, r.div(g, r.add(r.k(x[0], 1), r.mul(x[0], x[0]))));
    });
    set(table, Op::Atan2, [](R& r, const Vals& x, ValueId g, ValueId y) {
        ValueId yy = r.full(x[0]), xx = r.full(x[1]);
        ValueId den = r.add(r.mul(xx, xx), r.mul(yy, yy));
        ValueId ok = r.cmp(Op::Gt, den, r.zero(den));
        ValueId safe = r.sel(ok, den, r.k(den, 1));
        ValueId z = r.zero(g);
        if (r.wants(0)) r.give(0, r.sel(ok, r.div(r.mul(g, xx), safe), z));
        if (r.wants(1)) r.give(1, r.sel(ok, r.neg(r.div(r.mul(g, yy), safe)), z));
    });
    set(table, Op::Sinh, [](R& r, const Vals& x, ValueId g, ValueId y) { r.give(0, r.mul(g, r.un(Op::Cosh, x[0]))); });
    set(table, Op::Cosh, [](R& r, const Vals& x, ValueId g, ValueId y) { r.give(0, r.mul(g, r.un(Op::Sinh, x[0]))); });
    set(table, Op::Tanh, [](R& r, const Vals& x, ValueId g, ValueId y) {
        r.give(0, r.mul(g, r.sub(r.k(y, 1), r.mul(y, y))));
    });
}

// Vector and matrix operations.
constexpr void vector_matrix_rules(RuleTable& table) {
    set(table, Op::MatMul, [](R& r, const Vals& x, ValueId g, ValueId y) {
        const Type* t0 = r.b.type_of(x[0]);
        const Type* t1 = r.b.type_of(x[1]);
        if (t0->is_matrix() && t1->is_matrix()) {
            if (r.wants(0)) r.give(0, r.b.binary(Op::MatMul, g, r.un(Op::Transpose, x[1])));
            if (r.wants(1)) r.give(1, r.b.binary(Op::MatMul, r.un(Op::Transpose, x[0]), g));
        } else if (t0->is_matrix()) {   // y = M v
            if (r.wants(0)) r.give(0, r.outer(g, x[1]));
            if (r.wants(1)) r.give(1, r.b.binary(Op::MatMul, r.un(Op::Transpose, x[0]), g));
        } else {                        // y = v M, y_j = sum_i v_i M_ij
            if (r.wants(0)) r.give(0, r.b.binary(Op::MatMul, x[1], g));
            if (r.wants(1)) r.give(1, r.outer(x[0], g));
        }
    });
    set(table, Op::Dot, [](R& r, const Vals& x, ValueId g, ValueId y) {
        r.give(0, r.mul(x[1], g)); r.give(1, r.mul(x[0], g));
    });
    set(table, Op::Cross, [](R& r, const Vals& x, ValueId g, ValueId y) {
        if (r.wants(0)) r.give(0, r.b.binary(Op::Cross, x[1], g));
        if (r.wants(1)) r.give(1, r.b.binary(Op::Cross, g, x[0]));
    });
    set(table, Op::Length, [](R& r, const Vals& x, ValueId g, ValueId y) {
        ValueId ok = r.cmp(Op::Gt, y, r.zero(y));
        ValueId safe = r.sel(ok, y, r.k(y, 1));
        r.give(0, r.sel(ok, r.mul(x[0], r.div(g, safe)), r.zero(x[0])));
    });
    set(table, Op::LengthSquared, [](R& r, const Vals& x, ValueId g, ValueId y) {
        r.give(0, r.mul(x[0], r.mul(g, r.k(g, 2))));
    });
    set(table, Op::Distance, [](R& r, const Vals& x, ValueId g, ValueId y) {
        ValueId d = r.sub(x[0], x[1]);
        ValueId ok = r.cmp(Op::Gt, y, r.zero(y));
        ValueId safe = r.sel(ok, y, r.k(y, 1));
        ValueId gd = r.sel(ok, r.mul(d, r.div(g, safe)), r.zero(d));
        r.give(0, gd);
        if (r.wants(1)) r.give(1, r.neg(gd));
    });
    set(table, Op::Normalize, [](R& r, const Vals& x, ValueId g, ValueId y) {
        // (I - y y^T) g / |x|; a zero vector gets a zero gradient.
        ValueId len = r.b.unary(Op::Length, x[0]);
        ValueId ok = r.cmp(Op::Gt, len, r.zero(len));
        ValueId safe = r.sel(ok, len, r.k(len, 1));
        ValueId proj = r.sub(g, r.mul(y, r.b.binary(Op::Dot, y, g)));
        r.give(0, r.sel(ok, r.div(proj, safe), r.zero(x[0])));
    });
    set(table, Op::Reflect, [](R& r, const Vals& x, ValueId g, ValueId y) {
        // y = i - 2 (n.i) n: di = g - 2 n (n.g); dn = -2 (i (n.g) + (n.i) g). A scalar n stands for
        // (n, n, ...), as in the value; r.give() sums its gradient back to a scalar.
        ValueId i = x[0], n = r.full(x[1]);
        ValueId ng = r.b.binary(Op::Dot, n, g);
        ValueId ni = r.b.binary(Op::Dot, n, i);
        ValueId two = r.k(ng, 2);
        if (r.wants(0)) r.give(0, r.sub(g, r.mul(n, r.mul(two, ng))));
        if (r.wants(1)) r.give(1, r.neg(r.mul(r.add(r.mul(i, ng), r.mul(g, ni)), r.k(g, 2))));
    });
    set(table, Op::Transpose, [](R& r, const Vals& x, ValueId g, ValueId y) { r.give(0, r.un(Op::Transpose, g)); });
    set(table, Op::Inverse, [](R& r, const Vals& x, ValueId g, ValueId y) {
        ValueId yt = r.un(Op::Transpose, y);
        r.give(0, r.neg(r.b.binary(Op::MatMul, r.b.binary(Op::MatMul, yt, g), yt)));
    });
    set(table, Op::Determinant, [](R& r, const Vals& x, ValueId g, ValueId y) {
        r.give(0, r.mul(r.un(Op::Transpose, r.un(Op::Inverse, x[0])), r.mul(g, y)));
    });
}

// The rule table, indexed by op; null where an op has no rule.
constexpr RuleTable make_rules() {
    RuleTable t{};
    arithmetic_rules(t);
    piecewise_rules(t);
    powers_rules(t);
    trigonometric_rules(t);
    vector_matrix_rules(t);
    return t;
}

constexpr RuleTable kRules = make_rules();

// Every op marked D in ops.def has a rule, and only those.
constexpr bool kDifferentiable[] = {
#define ADJOINT_OP(name, arity, typing, domain, effect, ad, lanes, glsl) AdClass::ad == AdClass::D,
#include <adjoint/ir/ops.def>
#undef ADJOINT_OP
};
constexpr bool rules_match_table() {
    for (size_t i = 0; i < op_count(); ++i)
        if (kDifferentiable[i] != (kRules[i] != nullptr)) return false;
    return true;
}
static_assert(rules_match_table(), "ops.def marks D exactly the ops with a rule in kRules");

} // namespace

bool apply_rule(RuleArgs& a) {
    Rule rule = kRules[size_t(a.inst.op)];
    if (!rule) return false;
    R r{a.b, a, a.inst.op};
    rule(r, a.x, a.g, a.y);
    return true;
}

bool has_rule(Op op) { return kRules[size_t(op)] != nullptr; }

} // namespace adjoint::autodiff
