// The DSL's operators on Expr and Var: arithmetic with scalar broadcasting and literal adoption,
// comparisons, logic and bits, shifts, the matrix product and the compound assignments.
#pragma once
#include <adjoint/dsl/expr.h>

namespace adjoint {

namespace detail {

// A literal on one side of an operator takes the scalar type of the DSL side (Float * 2 is float).
template <typename Lit, typename Other>
struct Adopt { using type = std::remove_cvref_t<Lit>; };
template <typename Lit, typename Other>
    requires(std::is_arithmetic_v<std::remove_cvref_t<Lit>> && TypeDesc<Other>::valid && !TypeDesc<Other>::is_matrix &&
             requires { typename TypeDesc<Other>::scalar; })
struct Adopt<Lit, Other> { using type = typename TypeDesc<Other>::scalar; };
template <typename Lit, size_t N>
    requires std::is_arithmetic_v<std::remove_cvref_t<Lit>>
struct Adopt<Lit, Matrix<N>> { using type = float; };
template <typename Lit, typename E, size_t N>
    requires std::is_arithmetic_v<std::remove_cvref_t<Lit>>
struct Adopt<Lit, std::array<E, N>> { using type = std::remove_cvref_t<Lit>; };

// Converts an operand to Expr, adopting `Hint`'s scalar type for plain literals.
template <typename Hint, typename X>
auto lift(const X& x) {
    if constexpr (is_dsl_v<X>) {
        return as_expr(x);
    } else {
        using L = typename Adopt<X, Hint>::type;
        return Expr<L>(static_cast<L>(x));
    }
}

// The value type that the first DSL operand among Xs has (for adopting literals).
template <typename... Xs>
struct FirstDsl;
template <typename X, typename... Xs>
struct FirstDsl<X, Xs...> {
    using type = std::conditional_t<is_dsl_v<X>, value_t<X>, typename FirstDsl<Xs...>::type>;
};
template <>
struct FirstDsl<> { using type = float; };

// Result of a component-wise op on A and B, with scalar broadcasting.
template <typename A, typename B>
struct Broadcast {};
template <typename A>
struct Broadcast<A, A> { using type = A; };
template <Scalar S, size_t N>
struct Broadcast<S, Vector<S, N>> { using type = Vector<S, N>; };
template <Scalar S, size_t N>
struct Broadcast<Vector<S, N>, S> { using type = Vector<S, N>; };
template <size_t N>
struct Broadcast<float, Matrix<N>> { using type = Matrix<N>; };
template <size_t N>
struct Broadcast<Matrix<N>, float> { using type = Matrix<N>; };
template <typename A, typename B>
using broadcast_t = typename Broadcast<A, B>::type;

template <typename T>
struct BoolOf { using type = bool; };
template <Scalar S, size_t N>
struct BoolOf<Vector<S, N>> { using type = Vector<bool, N>; };
template <typename T>
using bool_of_t = typename BoolOf<T>::type;

// Records one value through `make`. The builder's type errors (x % 2.0f on a float, any(...) of a float) are
// deferred like the statements' errors: operators run inside noexcept lambdas, where a throw terminates the
// program. A zero of the expected type stands in so that recording can go on to the end.
template <typename R, typename F>
ir::ValueId record_or_zero(F&& make) {
    auto& r = Recorder::current();
    ir::ValueId v = guarded(ir::kNoValue, std::forward<F>(make));
    return v != ir::kNoValue ? v : r.b.zero(type_of<R>(), r.last_loc);
}

template <typename R, typename... E>
Expr<R> emit(ir::Op op, const E&... operands) {
    auto& r = Recorder::current();
    return Expr<R>(FromId{}, record_or_zero<R>([&] { return r.b.emit(op, {operands.id()...}, nullptr, 0, r.last_loc); }));
}

// An operator's record: C++ operators take no source location, so a type error names the last line recorded
// before it as where it is at or after (it said "at" the line of an earlier call). Builtins, which set their own
// line first, take emit.
template <typename R, typename... E>
Expr<R> emit_operator(ir::Op op, const E&... operands) {
    auto& r = Recorder::current();
    ir::ValueId v = ir::kNoValue;
    try {
        v = r.b.emit(op, {operands.id()...}, nullptr, 0, r.last_loc);
    } catch (const Error& e) {
        defer_error(operator_error(e.what(), r.last_loc));
    }
    return Expr<R>(FromId{}, v != ir::kNoValue ? v : r.b.zero(type_of<R>(), r.last_loc));
}

// `a op b` with broadcasting: an operator's (emit_operator), or a builtin's that has set its own line (emit).
template <bool Operator = true, typename A, typename B>
auto arith(ir::Op op, const A& a, const B& b) {
    auto ea = lift<value_t<B>>(a);
    auto eb = lift<value_t<A>>(b);
    using TA = typename decltype(ea)::value_type;
    using TB = typename decltype(eb)::value_type;
    using R = broadcast_t<TA, TB>;
    if constexpr (Operator) return emit_operator<R>(op, ea, eb);
    else return emit<R>(op, ea, eb);
}

template <typename A, typename B>
auto compare(ir::Op op, const A& a, const B& b) {
    auto ea = lift<value_t<B>>(a);
    auto eb = lift<value_t<A>>(b);
    using TA = typename decltype(ea)::value_type;
    using TB = typename decltype(eb)::value_type;
    return emit_operator<bool_of_t<broadcast_t<TA, TB>>>(op, ea, eb);
}

template <typename A, typename B>
constexpr bool operands_v = (is_dsl_v<A> || is_dsl_v<B>);

} // namespace detail

// ---- operators ------------------------------------------------------------------------------------------
#define ADJOINT_BINARY_OPERATOR(sym, OP)                                                                     \
    template <typename A, typename B>                                                                        \
        requires detail::operands_v<A, B>                                                                    \
    auto operator sym(const A& a, const B& b) { return detail::arith(ir::Op::OP, a, b); }
ADJOINT_BINARY_OPERATOR(+, Add)
ADJOINT_BINARY_OPERATOR(-, Sub)
ADJOINT_BINARY_OPERATOR(/, Div)
ADJOINT_BINARY_OPERATOR(%, Mod)
ADJOINT_BINARY_OPERATOR(^, BitXor)
ADJOINT_BINARY_OPERATOR(&&, And)
ADJOINT_BINARY_OPERATOR(||, Or)
#undef ADJOINT_BINARY_OPERATOR

// Shifts keep the left operand's type; the count may be any integer type (a uint64 shifted by a uint, say).
namespace detail {
template <typename A, typename B>
auto shift(ir::Op op, const A& a, const B& b) {
    auto ea = lift<value_t<B>>(a);
    using TA = typename decltype(ea)::value_type;
    if constexpr (is_dsl_v<B>) {
        return emit_operator<TA>(op, ea, as_expr(b));
    } else {
        // A literal count is a uint (or int, when negative literals are written), not the left side's type.
        using L = std::conditional_t<std::is_signed_v<std::remove_cvref_t<B>>, int32_t, uint32_t>;
        return emit_operator<TA>(op, ea, Expr<L>(static_cast<L>(b)));
    }
}
} // namespace detail
template <typename A, typename B>
    requires detail::operands_v<A, B>
auto operator<<(const A& a, const B& b) { return detail::shift(ir::Op::Shl, a, b); }
template <typename A, typename B>
    requires detail::operands_v<A, B>
auto operator>>(const A& a, const B& b) { return detail::shift(ir::Op::Shr, a, b); }

// & and | are logical on Bool values (as the contract allows) and bitwise on integers.
namespace detail {
template <typename A, typename B>
auto logic_or_bits(ir::Op logical, ir::Op bitwise, const A& a, const B& b) {
    auto ea = lift<value_t<B>>(a);
    using TA = typename decltype(ea)::value_type;
    using S = std::conditional_t<TypeDesc<TA>::is_scalar, TA, typename TypeDesc<TA>::scalar>;
    return arith(std::is_same_v<S, bool> ? logical : bitwise, a, b);
}
} // namespace detail
template <typename A, typename B>
    requires detail::operands_v<A, B>
auto operator&(const A& a, const B& b) { return detail::logic_or_bits(ir::Op::And, ir::Op::BitAnd, a, b); }
template <typename A, typename B>
    requires detail::operands_v<A, B>
auto operator|(const A& a, const B& b) { return detail::logic_or_bits(ir::Op::Or, ir::Op::BitOr, a, b); }

// `*` is the linear-algebra product when a matrix meets a vector or matrix (as in GLSL), else component-wise.
template <typename A, typename B>
    requires detail::operands_v<A, B>
auto operator*(const A& a, const B& b) {
    auto ea = detail::lift<detail::value_t<B>>(a);
    auto eb = detail::lift<detail::value_t<A>>(b);
    using TA = typename decltype(ea)::value_type;
    using TB = typename decltype(eb)::value_type;
    constexpr bool ma = detail::TypeDesc<TA>::is_matrix, mb = detail::TypeDesc<TB>::is_matrix;
    constexpr bool sa = detail::TypeDesc<TA>::is_scalar, sb = detail::TypeDesc<TB>::is_scalar;
    if constexpr ((ma || mb) && !sa && !sb) {
        using R = std::conditional_t<ma && mb, TA, std::conditional_t<ma, TB, TA>>;
        return detail::emit_operator<R>(ir::Op::MatMul, ea, eb);
    } else {
        return detail::emit_operator<detail::broadcast_t<TA, TB>>(ir::Op::Mul, ea, eb);
    }
}

#define ADJOINT_COMPARE_OPERATOR(sym, OP)                                                                    \
    template <typename A, typename B>                                                                        \
        requires detail::operands_v<A, B>                                                                    \
    auto operator sym(const A& a, const B& b) { return detail::compare(ir::Op::OP, a, b); }
ADJOINT_COMPARE_OPERATOR(<, Lt)
ADJOINT_COMPARE_OPERATOR(<=, Le)
ADJOINT_COMPARE_OPERATOR(>, Gt)
ADJOINT_COMPARE_OPERATOR(>=, Ge)
ADJOINT_COMPARE_OPERATOR(==, Eq)
ADJOINT_COMPARE_OPERATOR(!=, Ne)
#undef ADJOINT_COMPARE_OPERATOR

template <typename A>
    requires detail::is_dsl_v<A>
auto operator-(const A& a) { return detail::emit_operator<detail::value_t<A>>(ir::Op::Neg, detail::as_expr(a)); }
template <typename A>
    requires detail::is_dsl_v<A>
auto operator+(const A& a) { return detail::as_expr(a); }
template <typename A>
    requires detail::is_dsl_v<A>
auto operator!(const A& a) { return detail::emit_operator<detail::value_t<A>>(ir::Op::Not, detail::as_expr(a)); }
template <typename A>
    requires detail::is_dsl_v<A>
auto operator~(const A& a) { return detail::emit_operator<detail::value_t<A>>(ir::Op::BitNot, detail::as_expr(a)); }

#define ADJOINT_COMPOUND(sym)                                                                                \
    template <typename T, typename B>                                                                        \
    Var<T>& operator sym##=(Var<T>& v, const B& b) {                                                         \
        v = Expr<T>(v sym b);                                                                                \
        return v;                                                                                            \
    }                                                                                                        \
    template <typename T, typename B>                                                                        \
    Var<T>&& operator sym##=(Var<T>&& v, const B& b) {                                                       \
        v = Expr<T>(v sym b);                                                                                \
        return std::move(v);                                                                                 \
    }
ADJOINT_COMPOUND(+)
ADJOINT_COMPOUND(-)
ADJOINT_COMPOUND(*)
ADJOINT_COMPOUND(/)
ADJOINT_COMPOUND(%)
ADJOINT_COMPOUND(&)
ADJOINT_COMPOUND(|)
ADJOINT_COMPOUND(^)
ADJOINT_COMPOUND(<<)
ADJOINT_COMPOUND(>>)
#undef ADJOINT_COMPOUND

} // namespace adjoint
