// The members of vector values: x, y, z, w of an Expr (extracted when first used) and of a Var (references
// into the variable), and the swizzles.
#pragma once
#include <adjoint/dsl/expr.h>
#include <adjoint/dsl/swizzle.h>

namespace adjoint::detail {

template <Scalar S>
struct ExprMembers<Vector<S, 2>> : Swizzles<Expr<Vector<S, 2>>, 2> {
    Expr<S> x, y;
    explicit ExprMembers(const MemberRef& v) : x(MemberTag{}, v.child(0)), y(MemberTag{}, v.child(1)) {}
};
template <Scalar S>
struct ExprMembers<Vector<S, 3>> : Swizzles<Expr<Vector<S, 3>>, 3> {
    Expr<S> x, y, z;
    explicit ExprMembers(const MemberRef& v)
        : x(MemberTag{}, v.child(0)), y(MemberTag{}, v.child(1)), z(MemberTag{}, v.child(2)) {}
};
template <Scalar S>
struct ExprMembers<Vector<S, 4>> : Swizzles<Expr<Vector<S, 4>>, 4> {
    Expr<S> x, y, z, w;
    explicit ExprMembers(const MemberRef& v)
        : x(MemberTag{}, v.child(0)), y(MemberTag{}, v.child(1)), z(MemberTag{}, v.child(2)),
          w(MemberTag{}, v.child(3)) {}
};

inline Path extend(const Path& p, int64_t i) {
    Path q = p;
    q.push_back(PathElem{ir::kNoValue, i});
    return q;
}

template <Scalar S>
struct VarMembers<Vector<S, 2>> : Swizzles<Var<Vector<S, 2>>, 2> {
    Var<S> x, y;
    VarMembers(ir::ValueId l, const Path& p) : x(RefTag{}, l, extend(p, 0)), y(RefTag{}, l, extend(p, 1)) {}
};
template <Scalar S>
struct VarMembers<Vector<S, 3>> : Swizzles<Var<Vector<S, 3>>, 3> {
    Var<S> x, y, z;
    VarMembers(ir::ValueId l, const Path& p)
        : x(RefTag{}, l, extend(p, 0)), y(RefTag{}, l, extend(p, 1)), z(RefTag{}, l, extend(p, 2)) {}
};
template <Scalar S>
struct VarMembers<Vector<S, 4>> : Swizzles<Var<Vector<S, 4>>, 4> {
    Var<S> x, y, z, w;
    VarMembers(ir::ValueId l, const Path& p)
        : x(RefTag{}, l, extend(p, 0)), y(RefTag{}, l, extend(p, 1)), z(RefTag{}, l, extend(p, 2)),
          w(RefTag{}, l, extend(p, 3)) {}
};

} // namespace adjoint::detail
