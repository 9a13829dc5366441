// Expr<T> (a recorded value) and Var<T> (a local variable or a reference into one), with the operators.
#pragma once
#include <adjoint/core/error.h>
#include <adjoint/dsl/recorder.h>
#include <adjoint/dsl/type_desc.h>

#include <cstring>
#include <source_location>
#include <type_traits>

namespace adjoint {

namespace detail {

struct FromId {};
struct RefTag {};

template <typename X>
struct ValueOf {
    using type = std::remove_cvref_t<X>;   // host literals stand for themselves
};
template <typename T>
struct ValueOf<Expr<T>> { using type = T; };
template <typename T>
struct ValueOf<Var<T>> { using type = T; };

template <typename X>
using value_t = typename ValueOf<std::remove_cvref_t<X>>::type;

template <typename X>
constexpr bool is_dsl_v = !std::is_same_v<value_t<X>, std::remove_cvref_t<X>>;

template <typename T>
void to_lanes(const T& v, std::vector<uint32_t>& out) {
    if constexpr (std::is_same_v<T, uint64_t>) {
        out.push_back(uint32_t(v));   // low word first, as in memory
        out.push_back(uint32_t(v >> 32));
    } else if constexpr (Scalar<T>) {
        uint32_t w = 0;
        if constexpr (std::is_same_v<T, bool>) w = v ? 1u : 0u;
        else std::memcpy(&w, &v, 4);
        out.push_back(w);
    } else if constexpr (TypeDesc<T>::is_vector) {
        for (size_t i = 0; i < TypeDesc<T>::dim; ++i) to_lanes(v[i], out);
    } else if constexpr (TypeDesc<T>::is_matrix) {
        for (size_t i = 0; i < TypeDesc<T>::dim; ++i) to_lanes(v.cols[i], out);
    } else {
        for (const auto& e : v) to_lanes(e, out);
    }
}

template <typename T>
ir::ValueId literal(const T& v, const std::source_location& loc = {}) {
    std::vector<uint32_t> lanes;
    to_lanes(v, lanes);
    auto& r = Recorder::current(loc);
    return r.b.constant(type_of<T>(), std::move(lanes), r.last_loc);
}

// Members of Expr<T>: vectors expose x, y, z, w; ADJOINT_STRUCT types expose their fields.
template <typename T>
struct ExprMembers {
    explicit ExprMembers(ir::ValueId) {}
};
template <typename T>
struct VarMembers {
    VarMembers(ir::ValueId, const Path&) {}
};

ir::ValueId extract_const(ir::ValueId v, int64_t index);

} // namespace detail

template <typename T>
class Expr : public detail::ExprMembers<T> {
public:
    using value_type = T;
    Expr(detail::FromId, ir::ValueId id) : detail::ExprMembers<T>(id), id_(id) {}
    // Literals: host values of the same type (scalars also from any arithmetic type). The locations name
    // the user's line if no kernel is being recorded.
    Expr(const T& v, std::source_location loc = std::source_location::current()) requires(!detail::Scalar<T>)
        : Expr(detail::FromId{}, detail::literal(v, loc)) {}
    template <typename U>
        requires(detail::Scalar<T> && std::is_arithmetic_v<U>)
    Expr(U v, std::source_location loc = std::source_location::current())
        : Expr(detail::FromId{}, detail::literal(static_cast<T>(v), loc)) {}
    Expr(const Var<T>& v, std::source_location loc = std::source_location::current()) : Expr(v.load(loc)) {}

    ir::ValueId id() const { return id_; }

    // Element / column / component access by value.
    template <typename I>
    auto operator[](const I& index) const;

    // Swizzles.
    auto xy() const { return swz<2>({0, 1}); }
    auto xz() const { return swz<2>({0, 2}); }
    auto yz() const { return swz<2>({1, 2}); }
    auto yx() const { return swz<2>({1, 0}); }
    auto xyz() const { return swz<3>({0, 1, 2}); }
    auto zyx() const { return swz<3>({2, 1, 0}); }
    auto xyzw() const { return swz<4>({0, 1, 2, 3}); }
    template <size_t M>
    auto swz(std::array<uint32_t, M> c) const {
        using S = typename detail::TypeDesc<T>::scalar;
        auto& r = detail::Recorder::current();
        return Expr<Vector<S, M>>(detail::FromId{}, r.b.swizzle(id_, c, r.last_loc));
    }

private:
    ir::ValueId id_;
};

template <typename T>
class Var : public detail::VarMembers<T> {
public:
    using value_type = T;

    // `where` (the user's line) is named if no kernel is being recorded.
    Var(std::source_location loc = std::source_location::current()) : Var(fresh(loc, loc)) {
        auto& r = detail::Recorder::current();
        r.b.store(local_, r.b.zero(type_of<T>(), loc), {}, loc);   // variables start at zero
    }
    Var(const Expr<T>& e, std::source_location where = std::source_location::current()) : Var(fresh({}, where)) {
        assign(e.id());
    }
    Var(const Var& other, std::source_location where = std::source_location::current()) : Var(fresh({}, where)) {
        assign(other.load().id());
    }
    Var(Var&& other, std::source_location where = std::source_location::current()) : Var(fresh({}, where)) {
        assign(other.load().id());
    }
    Var(const T& v, std::source_location where = std::source_location::current()) requires(!detail::Scalar<T>)
        : Var(Expr<T>(v, where), where) {}
    template <typename U>
        requires(detail::Scalar<T> && std::is_arithmetic_v<U>)
    Var(U v, std::source_location where = std::source_location::current()) : Var(Expr<T>(v, where), where) {}
    // Arrays from their elements: ArrayFloat<2>{a, b}.
    template <typename... A>
        requires(sizeof...(A) > 1 && sizeof...(A) == detail::TypeDesc<T>::dim && !detail::TypeDesc<T>::is_vector &&
                 !detail::TypeDesc<T>::is_matrix)
    Var(const A&... elems);

    // A reference into an existing variable (member, component, element).
    Var(detail::RefTag, ir::ValueId local, detail::Path path)
        : detail::VarMembers<T>(local, path), local_(local), path_(std::move(path)) {}

    Var& operator=(const Expr<T>& e) { assign(e.id()); return *this; }
    Var& operator=(const Var& other) { assign(other.load().id()); return *this; }
    Var& operator=(Var&& other) { assign(other.load().id()); return *this; }
    template <typename U>
        requires(std::is_arithmetic_v<U> || std::is_same_v<U, T>)
    Var& operator=(const U& v) { return *this = Expr<T>(v); }

    Expr<T> load(const std::source_location& where = {}) const {
        auto& r = detail::Recorder::current(where);
        auto idx = r.indices(path_);
        return Expr<T>(detail::FromId{}, r.b.load(local_, idx, r.last_loc));
    }
    operator Expr<T>() const { return load(); }

    template <typename I>
    auto operator[](const I& index) const;

    auto xy() const { return load().xy(); }
    auto xz() const { return load().xz(); }
    auto yz() const { return load().yz(); }
    auto yx() const { return load().yx(); }
    auto xyz() const { return load().xyz(); }
    auto zyx() const { return load().zyx(); }
    auto xyzw() const { return load().xyzw(); }

    ir::ValueId local() const { return local_; }
    const detail::Path& path() const { return path_; }

private:
    struct Fresh { ir::ValueId local; };
    // A new local recorded at `loc` (unknown: the latest line); `where` names the line in the error when no
    // kernel is being recorded.
    static Fresh fresh(const std::source_location& loc, const std::source_location& where) {
        auto& r = detail::Recorder::current(where);
        return {r.b.local(type_of<T>(), r.at(loc))};
    }
    explicit Var(Fresh f) : detail::VarMembers<T>(f.local, {}), local_(f.local) {}
    void assign(ir::ValueId v) {
        auto& r = detail::Recorder::current();
        auto idx = r.indices(path_);
        r.b.store(local_, v, idx, r.last_loc);
    }

    ir::ValueId local_;
    detail::Path path_;
};

namespace detail {

template <typename T>
Expr<T> as_expr(const Expr<T>& e) { return e; }
template <typename T>
Expr<T> as_expr(const Var<T>& v) { return v.load(); }

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

template <typename A, typename B>
auto arith(ir::Op op, const A& a, const B& b) {
    auto ea = lift<value_t<B>>(a);
    auto eb = lift<value_t<A>>(b);
    using TA = typename decltype(ea)::value_type;
    using TB = typename decltype(eb)::value_type;
    using R = broadcast_t<TA, TB>;
    return emit<R>(op, ea, eb);
}

template <typename A, typename B>
auto compare(ir::Op op, const A& a, const B& b) {
    auto ea = lift<value_t<B>>(a);
    auto eb = lift<value_t<A>>(b);
    using TA = typename decltype(ea)::value_type;
    using TB = typename decltype(eb)::value_type;
    return emit<bool_of_t<broadcast_t<TA, TB>>>(op, ea, eb);
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
        return emit<TA>(op, ea, as_expr(b));
    } else {
        // A literal count is a uint (or int, when negative literals are written), not the left side's type.
        using L = std::conditional_t<std::is_signed_v<std::remove_cvref_t<B>>, int32_t, uint32_t>;
        return emit<TA>(op, ea, Expr<L>(static_cast<L>(b)));
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
        return detail::emit<R>(ir::Op::MatMul, ea, eb);
    } else {
        return detail::emit<detail::broadcast_t<TA, TB>>(ir::Op::Mul, ea, eb);
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
auto operator-(const A& a) { return detail::emit<detail::value_t<A>>(ir::Op::Neg, detail::as_expr(a)); }
template <typename A>
    requires detail::is_dsl_v<A>
auto operator+(const A& a) { return detail::as_expr(a); }
template <typename A>
    requires detail::is_dsl_v<A>
auto operator!(const A& a) { return detail::emit<detail::value_t<A>>(ir::Op::Not, detail::as_expr(a)); }
template <typename A>
    requires detail::is_dsl_v<A>
auto operator~(const A& a) { return detail::emit<detail::value_t<A>>(ir::Op::BitNot, detail::as_expr(a)); }

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

// ---- element access -------------------------------------------------------------------------------------
namespace detail {

template <typename T>
struct ElementOf;
template <Scalar S, size_t N>
struct ElementOf<Vector<S, N>> { using type = S; };
template <size_t N>
struct ElementOf<Matrix<N>> { using type = Vector<float, N>; };
template <typename E, size_t N>
struct ElementOf<std::array<E, N>> { using type = E; };

template <typename I>
PathElem path_elem(const I& index) {
    if constexpr (is_dsl_v<I>) {
        return PathElem{as_expr(index).id(), 0};
    } else {
        static_assert(std::is_integral_v<I>, "an index must be an integer");
        return PathElem{ir::kNoValue, int64_t(index)};
    }
}

} // namespace detail

template <typename T>
template <typename I>
auto Expr<T>::operator[](const I& index) const {
    using E = typename detail::ElementOf<T>::type;
    auto& r = detail::Recorder::current();
    auto pe = detail::path_elem(index);
    ir::ValueId idx = pe.dynamic != ir::kNoValue ? pe.dynamic : r.b.i32(int32_t(pe.index), r.last_loc);
    return Expr<E>(detail::FromId{}, r.b.extract(id_, std::span<const ir::ValueId>(&idx, 1), r.last_loc));
}

template <typename T>
template <typename I>
auto Var<T>::operator[](const I& index) const {
    using E = typename detail::ElementOf<T>::type;
    detail::Path p = path_;
    p.push_back(detail::path_elem(index));
    return Var<E>(detail::RefTag{}, local_, std::move(p));
}

template <typename T>
template <typename... A>
    requires(sizeof...(A) > 1 && sizeof...(A) == detail::TypeDesc<T>::dim && !detail::TypeDesc<T>::is_vector &&
             !detail::TypeDesc<T>::is_matrix)
Var<T>::Var(const A&... elems) : Var(fresh({}, {})) {
    using E = typename detail::ElementOf<T>::type;
    auto& r = detail::Recorder::current();
    std::vector<ir::ValueId> parts{detail::lift<E>(elems).id()...};
    assign(r.b.construct(type_of<T>(), std::move(parts), r.last_loc));
}

// ---- vector members -------------------------------------------------------------------------------------
namespace detail {

template <Scalar S>
struct ExprMembers<Vector<S, 2>> {
    Expr<S> x, y;
    explicit ExprMembers(ir::ValueId v)
        : x(FromId{}, extract_const(v, 0)), y(FromId{}, extract_const(v, 1)) {}
};
template <Scalar S>
struct ExprMembers<Vector<S, 3>> {
    Expr<S> x, y, z;
    explicit ExprMembers(ir::ValueId v)
        : x(FromId{}, extract_const(v, 0)), y(FromId{}, extract_const(v, 1)), z(FromId{}, extract_const(v, 2)) {}
};
template <Scalar S>
struct ExprMembers<Vector<S, 4>> {
    Expr<S> x, y, z, w;
    explicit ExprMembers(ir::ValueId v)
        : x(FromId{}, extract_const(v, 0)), y(FromId{}, extract_const(v, 1)), z(FromId{}, extract_const(v, 2)),
          w(FromId{}, extract_const(v, 3)) {}
};

inline Path extend(const Path& p, int64_t i) {
    Path q = p;
    q.push_back(PathElem{ir::kNoValue, i});
    return q;
}

template <Scalar S>
struct VarMembers<Vector<S, 2>> {
    Var<S> x, y;
    VarMembers(ir::ValueId l, const Path& p) : x(RefTag{}, l, extend(p, 0)), y(RefTag{}, l, extend(p, 1)) {}
};
template <Scalar S>
struct VarMembers<Vector<S, 3>> {
    Var<S> x, y, z;
    VarMembers(ir::ValueId l, const Path& p)
        : x(RefTag{}, l, extend(p, 0)), y(RefTag{}, l, extend(p, 1)), z(RefTag{}, l, extend(p, 2)) {}
};
template <Scalar S>
struct VarMembers<Vector<S, 4>> {
    Var<S> x, y, z, w;
    VarMembers(ir::ValueId l, const Path& p)
        : x(RefTag{}, l, extend(p, 0)), y(RefTag{}, l, extend(p, 1)), z(RefTag{}, l, extend(p, 2)),
          w(RefTag{}, l, extend(p, 3)) {}
};

} // namespace detail

// ---- the contract's type names --------------------------------------------------------------------------
using Float = Var<float>;
using Int = Var<int32_t>;
using UInt = Var<uint32_t>;
using UInt64 = Var<uint64_t>;
using Bool = Var<bool>;
using Float2 = Var<float2>;
using Float3 = Var<float3>;
using Float4 = Var<float4>;
using Int2 = Var<int2>;
using Int3 = Var<int3>;
using Int4 = Var<int4>;
using UInt2 = Var<uint2>;
using UInt3 = Var<uint3>;
using UInt4 = Var<uint4>;
using Bool2 = Var<bool2>;
using Bool3 = Var<bool3>;
using Bool4 = Var<bool4>;
using Float2x2 = Var<float2x2>;
using Float3x3 = Var<float3x3>;
using Float4x4 = Var<float4x4>;
template <typename T, size_t N>
using Array = Var<std::array<T, N>>;
template <size_t N>
using ArrayFloat = Var<std::array<float, N>>;
template <size_t N>
using ArrayInt = Var<std::array<int32_t, N>>;
template <size_t N>
using ArrayUInt = Var<std::array<uint32_t, N>>;

} // namespace adjoint
