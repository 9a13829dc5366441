// The contract's built-in functions, each recording one IR op (or a small composition of them).
#pragma once
#include <adjoint/dsl/expr.h>

namespace adjoint {

namespace detail {

template <typename R, typename... X>
Expr<R> call_op(ir::Op op, const std::source_location& loc, const X&... xs) {
    auto& r = Recorder::current(loc);
    r.at(loc);
    return Expr<R>(FromId{}, record_or_zero<R>([&] { return r.b.emit(op, {xs.id()...}, nullptr, 0, r.last_loc); }));
}

template <typename H, typename... X>
using common_t = typename FirstDsl<X...>::type;

} // namespace detail

#define ADJOINT_UNARY_BUILTIN(fname, OP)                                                                     \
    template <typename X>                                                                                    \
        requires detail::is_dsl_v<X>                                                                         \
    auto fname(const X& x, std::source_location loc = std::source_location::current()) {                     \
        return detail::call_op<detail::value_t<X>>(ir::Op::OP, loc, detail::as_expr(x));                    \
    }
ADJOINT_UNARY_BUILTIN(abs, Abs)
// x as written: the device neither fuses the multiplications and additions it depends on into fma nor reorders
// them (GLSL precise), so that two kernels, or two orders of the same operands, round alike.
ADJOINT_UNARY_BUILTIN(exact, Exact)
ADJOINT_UNARY_BUILTIN(sign, Sign)
ADJOINT_UNARY_BUILTIN(floor, Floor)
ADJOINT_UNARY_BUILTIN(ceil, Ceil)
ADJOINT_UNARY_BUILTIN(fract, Fract)
ADJOINT_UNARY_BUILTIN(round, Round)
ADJOINT_UNARY_BUILTIN(trunc, Trunc)
ADJOINT_UNARY_BUILTIN(sqrt, Sqrt)
ADJOINT_UNARY_BUILTIN(rsqrt, Rsqrt)
ADJOINT_UNARY_BUILTIN(exp, Exp)
ADJOINT_UNARY_BUILTIN(exp2, Exp2)
ADJOINT_UNARY_BUILTIN(log, Log)
ADJOINT_UNARY_BUILTIN(log2, Log2)
ADJOINT_UNARY_BUILTIN(log10, Log10)
ADJOINT_UNARY_BUILTIN(sin, Sin)
ADJOINT_UNARY_BUILTIN(cos, Cos)
ADJOINT_UNARY_BUILTIN(tan, Tan)
ADJOINT_UNARY_BUILTIN(asin, Asin)
ADJOINT_UNARY_BUILTIN(acos, Acos)
ADJOINT_UNARY_BUILTIN(atan, Atan)
ADJOINT_UNARY_BUILTIN(sinh, Sinh)
ADJOINT_UNARY_BUILTIN(cosh, Cosh)
ADJOINT_UNARY_BUILTIN(tanh, Tanh)
// 1 / (1 + exp(-x)) and log(1 + exp(x)), computed so that value and derivative are finite and right at
// any x (the plain formulas overflow below -88: NaN derivatives).
ADJOINT_UNARY_BUILTIN(sigmoid, Sigmoid)
ADJOINT_UNARY_BUILTIN(softplus, Softplus)
ADJOINT_UNARY_BUILTIN(saturate, Saturate)
ADJOINT_UNARY_BUILTIN(normalize, Normalize)
ADJOINT_UNARY_BUILTIN(transpose, Transpose)
ADJOINT_UNARY_BUILTIN(inverse, Inverse)
#undef ADJOINT_UNARY_BUILTIN

#define ADJOINT_BINARY_BUILTIN(fname, OP)                                                                    \
    template <typename A, typename B>                                                                        \
        requires detail::operands_v<A, B>                                                                    \
    auto fname(const A& a, const B& b, std::source_location loc = std::source_location::current()) {         \
        ADJOINT_AT(loc);                                                                                    \
        return detail::arith<false>(ir::Op::OP, a, b);                                                       \
    }
#define ADJOINT_AT(loc) detail::Recorder::current(loc).at(loc)
ADJOINT_BINARY_BUILTIN(min, Min)
ADJOINT_BINARY_BUILTIN(max, Max)
ADJOINT_BINARY_BUILTIN(pow, Pow)
ADJOINT_BINARY_BUILTIN(atan2, Atan2)
ADJOINT_BINARY_BUILTIN(fmod, Fmod)
ADJOINT_BINARY_BUILTIN(step, Step)
ADJOINT_BINARY_BUILTIN(cross, Cross)
ADJOINT_BINARY_BUILTIN(reflect, Reflect)
#undef ADJOINT_BINARY_BUILTIN

#define ADJOINT_TERNARY_BUILTIN(fname, OP)                                                                   \
    template <typename A, typename B, typename C>                                                            \
        requires(detail::is_dsl_v<A> || detail::is_dsl_v<B> || detail::is_dsl_v<C>)                         \
    auto fname(const A& a, const B& b, const C& c, std::source_location loc = std::source_location::current()) { \
        ADJOINT_AT(loc);                                                                                    \
        using H = typename detail::FirstDsl<A, B, C>::type;                                                  \
        auto ea = detail::lift<H>(a);                                                                        \
        auto eb = detail::lift<H>(b);                                                                        \
        auto ec = detail::lift<H>(c);                                                                        \
        using TA = typename decltype(ea)::value_type;                                                        \
        using TB = typename decltype(eb)::value_type;                                                        \
        using TC = typename decltype(ec)::value_type;                                                        \
        using R = detail::broadcast_t<detail::broadcast_t<TA, TB>, TC>;                                      \
        return detail::emit<R>(ir::Op::OP, ea, eb, ec);                                                      \
    }
ADJOINT_TERNARY_BUILTIN(clamp, Clamp)
ADJOINT_TERNARY_BUILTIN(lerp, Lerp)
ADJOINT_TERNARY_BUILTIN(smoothstep, Smoothstep)
ADJOINT_TERNARY_BUILTIN(fma, Fma)
#undef ADJOINT_TERNARY_BUILTIN

#define ADJOINT_REDUCE_BUILTIN(fname, OP, R)                                                                 \
    template <typename X>                                                                                    \
        requires detail::is_dsl_v<X>                                                                         \
    auto fname(const X& x, std::source_location loc = std::source_location::current()) {                     \
        return detail::call_op<R>(ir::Op::OP, loc, detail::as_expr(x));                                      \
    }
ADJOINT_REDUCE_BUILTIN(length, Length, float)
ADJOINT_REDUCE_BUILTIN(length_squared, LengthSquared, float)
ADJOINT_REDUCE_BUILTIN(determinant, Determinant, float)
ADJOINT_REDUCE_BUILTIN(any, Any, bool)
ADJOINT_REDUCE_BUILTIN(all, All, bool)
#undef ADJOINT_REDUCE_BUILTIN

template <typename A, typename B>
    requires detail::operands_v<A, B>
auto dot(const A& a, const B& b, std::source_location loc = std::source_location::current()) {
    ADJOINT_AT(loc);
    auto ea = detail::lift<detail::value_t<B>>(a);
    auto eb = detail::lift<detail::value_t<A>>(b);
    return detail::emit<float>(ir::Op::Dot, ea, eb);
}

template <typename A, typename B>
    requires detail::operands_v<A, B>
auto distance(const A& a, const B& b, std::source_location loc = std::source_location::current()) {
    ADJOINT_AT(loc);
    auto ea = detail::lift<detail::value_t<B>>(a);
    auto eb = detail::lift<detail::value_t<A>>(b);
    return detail::emit<float>(ir::Op::Distance, ea, eb);
}

namespace detail {
// The DSL scalar that two plain C++ numbers stand for when neither side is a DSL value: ite(c, 1, 2) is an
// int (FirstDsl's default, float, made it a float, which an int buffer then refused).
template <typename A, typename B>
struct LiteralPair { using type = typename FirstDsl<A, B>::type; };
template <typename A, typename B>
    requires(std::is_arithmetic_v<A> && std::is_arithmetic_v<B>)
struct LiteralPair<A, B> {
    using C = std::common_type_t<A, B>;
    using type = std::conditional_t<std::is_floating_point_v<C>, float,
                 std::conditional_t<std::is_same_v<C, bool>, bool,
                 std::conditional_t<std::is_unsigned_v<C>, uint32_t, int32_t>>>;
};
} // namespace detail

// ite(cond, a, b): a where cond holds, else b; the gradient goes to the chosen side only.
template <typename C, typename A, typename B>
auto ite(const C& cond, const A& a, const B& b, std::source_location loc = std::source_location::current()) {
    ADJOINT_AT(loc);
    using H = typename detail::LiteralPair<A, B>::type;
    auto ea = detail::lift<H>(a);
    auto eb = detail::lift<H>(b);
    auto ec = detail::lift<bool>(cond);
    using T = typename decltype(ea)::value_type;
    auto& r = detail::Recorder::current();
    return Expr<T>(detail::FromId{},
                   detail::record_or_zero<T>([&] { return r.b.select(ec.id(), ea.id(), eb.id(), r.last_loc); }));
}

// cast<float>(i), cast<int>(v3) (component-wise for vectors).
template <typename To, typename X>
    requires detail::is_dsl_v<X>
auto cast(const X& x, std::source_location loc = std::source_location::current()) {
    using From = detail::value_t<X>;
    using To32 = std::conditional_t<std::is_same_v<To, int>, int32_t, std::conditional_t<std::is_same_v<To, unsigned>, uint32_t,
                 std::conditional_t<std::is_same_v<To, unsigned long long>, uint64_t, To>>>;
    using R = std::conditional_t<detail::TypeDesc<From>::is_vector, Vector<To32, detail::TypeDesc<From>::dim>, To32>;
    auto& r = detail::Recorder::current(loc);
    r.at(loc);
    return Expr<R>(detail::FromId{},
                   detail::record_or_zero<R>([&] { return r.b.cast(type_of<R>(), detail::as_expr(x).id(), loc); }));
}

// bit_cast<uint>(x): the same 32 bits as another kind (float, int, uint; vectors component-wise). A
// non-negative float's bits order like the float: as a uint key, fetch_min keeps the nearest depth.
template <typename To, typename X>
    requires detail::is_dsl_v<X>
auto bit_cast(const X& x, std::source_location loc = std::source_location::current()) {
    using From = detail::value_t<X>;
    using To32 = std::conditional_t<std::is_same_v<To, int>, int32_t, std::conditional_t<std::is_same_v<To, unsigned>, uint32_t, To>>;
    static_assert(std::is_same_v<To32, float> || std::is_same_v<To32, int32_t> || std::is_same_v<To32, uint32_t>,
                  "bit_cast<float>, bit_cast<int> or bit_cast<uint>");
    using R = std::conditional_t<detail::TypeDesc<From>::is_vector, Vector<To32, detail::TypeDesc<From>::dim>, To32>;
    auto& r = detail::Recorder::current(loc);
    r.at(loc);
    return Expr<R>(detail::FromId{}, detail::record_or_zero<R>([&] {
                       return r.b.emit(ir::Op::Bitcast, {detail::as_expr(x).id()}, type_of<R>(), 0, r.last_loc);
                   }));
}

namespace detail {

// Gathers the scalar components of each argument (scalars as they are, vectors component by component).
template <typename S, typename X>
void gather(std::vector<ir::ValueId>& out, const X& x) {
    auto e = lift<S>(x);
    using T = typename decltype(e)::value_type;
    auto& r = Recorder::current();
    if constexpr (TypeDesc<T>::is_vector) {
        for (size_t i = 0; i < TypeDesc<T>::dim; ++i) out.push_back(extract_const(e.id(), int64_t(i)));
    } else {
        out.push_back(r.b.cast(type_of<S>(), e.id(), r.last_loc));
    }
}

// Scalar components an argument of make_floatN & co. contributes (known at compile time, so a wrong count
// is a compile error rather than a run-time one: make_float3(a, b) does not compile).
template <typename X>
constexpr size_t component_count() {
    using T = value_t<X>;
    if constexpr (TypeDesc<T>::valid && TypeDesc<T>::is_vector) return TypeDesc<T>::dim;
    else return 1;
}

// The make_floatN & co. below take 1 to 4 arguments and the caller's line after them (a defaulted location
// cannot follow a parameter pack, hence one overload per count); make_floatNxN's is unknown (line 0), and
// its instructions carry the latest recorded line instead of one in this header.
template <typename S, size_t N, typename... X>
Expr<Vector<S, N>> make_vector(const std::source_location& loc, const X&... xs) {
    constexpr size_t count = (component_count<X>() + ... + 0);
    static_assert(count == 1 || count == N, "make_<type>N takes 1 or N components in all");
    auto& r = Recorder::current(loc);
    std::source_location where = r.at(loc);
    std::vector<ir::ValueId> parts;
    (gather<S>(parts, xs), ...);
    return Expr<Vector<S, N>>(FromId{}, r.b.construct(type_of<Vector<S, N>>(), std::move(parts), where));
}

template <size_t N, typename... X>
Expr<Matrix<N>> make_matrix(const std::source_location& loc, const X&... xs) {
    constexpr size_t n = sizeof...(X);
    static_assert(n == 1 || n == N || n == N * N,
                  "make_floatNxN takes one scalar (its diagonal, as LuisaCompute's), N columns or N*N scalars");
    if constexpr (n == N) static_assert(((component_count<X>() == N) && ...), "each column is a floatN");
    else static_assert(((component_count<X>() == 1) && ...), "N*N scalars, column by column");
    auto& r = Recorder::current(loc);
    std::source_location where = r.at(loc);
    std::vector<ir::ValueId> parts{lift<Vector<float, N>>(xs).id()...};
    const ir::Type* t = type_of<Matrix<N>>();
    if constexpr (n == 1) {   // s on the diagonal, 0 elsewhere: make_float4x4(1.0f) is the identity
        std::vector<ir::ValueId> cols;
        const ir::ValueId zero = r.b.zero(t->element()->element(), where);
        for (size_t c = 0; c < N; ++c) {
            std::vector<ir::ValueId> column(N, zero);
            column[c] = parts[0];
            cols.push_back(r.b.construct(t->element(), std::move(column), where));
        }
        return Expr<Matrix<N>>(FromId{}, r.b.construct(t, std::move(cols), where));
    }
    if (parts.size() == N * N) {   // from scalars, column by column
        std::vector<ir::ValueId> cols;
        for (size_t c = 0; c < N; ++c)
            cols.push_back(r.b.construct(t->element(), {parts.begin() + long(c * N), parts.begin() + long(c * N + N)}, where));
        parts = std::move(cols);
    }
    return Expr<Matrix<N>>(FromId{}, r.b.construct(t, std::move(parts), where));
}

} // namespace detail

#define ADJOINT_MAKE_VECTOR(fname, S, N)                                                                     \
    template <typename A>                                                                                    \
    auto fname(const A& a, std::source_location loc = std::source_location::current()) {                    \
        return detail::make_vector<S, N>(loc, a);                                                            \
    }                                                                                                        \
    template <typename A, typename B>                                                                        \
    auto fname(const A& a, const B& b, std::source_location loc = std::source_location::current()) {        \
        return detail::make_vector<S, N>(loc, a, b);                                                         \
    }                                                                                                        \
    template <typename A, typename B, typename C>                                                            \
    auto fname(const A& a, const B& b, const C& c, std::source_location loc = std::source_location::current()) { \
        return detail::make_vector<S, N>(loc, a, b, c);                                                      \
    }                                                                                                        \
    template <typename A, typename B, typename C, typename D>                                                 \
    auto fname(const A& a, const B& b, const C& c, const D& d,                                               \
               std::source_location loc = std::source_location::current()) {                                 \
        return detail::make_vector<S, N>(loc, a, b, c, d);                                                   \
    }
ADJOINT_MAKE_VECTOR(make_float2, float, 2)
ADJOINT_MAKE_VECTOR(make_float3, float, 3)
ADJOINT_MAKE_VECTOR(make_float4, float, 4)
ADJOINT_MAKE_VECTOR(make_int2, int32_t, 2)
ADJOINT_MAKE_VECTOR(make_int3, int32_t, 3)
ADJOINT_MAKE_VECTOR(make_int4, int32_t, 4)
ADJOINT_MAKE_VECTOR(make_uint2, uint32_t, 2)
ADJOINT_MAKE_VECTOR(make_uint3, uint32_t, 3)
ADJOINT_MAKE_VECTOR(make_uint4, uint32_t, 4)
#undef ADJOINT_MAKE_VECTOR

template <typename... X>
auto make_float2x2(const X&... xs) { return detail::make_matrix<2>(std::source_location{}, xs...); }
template <typename... X>
auto make_float3x3(const X&... xs) { return detail::make_matrix<3>(std::source_location{}, xs...); }
template <typename... X>
auto make_float4x4(const X&... xs) { return detail::make_matrix<4>(std::source_location{}, xs...); }

// Thread indices: dispatch_id in [0, dispatch_size), thread_id within the work group, block_id of the group.
namespace detail {
inline Expr<uint3> builtin(ir::BuiltinId which, const std::source_location& loc) {
    auto& r = Recorder::current(loc);
    return Expr<uint3>(FromId{}, r.b.emit(ir::Op::Builtin, {}, type_of<uint3>(), int64_t(which), r.at(loc)));
}
} // namespace detail
inline Expr<uint3> dispatch_id(std::source_location loc = std::source_location::current()) {
    return detail::builtin(ir::BuiltinId::DispatchId, loc);
}
inline Expr<uint3> dispatch_size(std::source_location loc = std::source_location::current()) {
    return detail::builtin(ir::BuiltinId::DispatchSize, loc);
}
inline Expr<uint3> thread_id(std::source_location loc = std::source_location::current()) {
    return detail::builtin(ir::BuiltinId::ThreadId, loc);
}
inline Expr<uint3> block_id(std::source_location loc = std::source_location::current()) {
    return detail::builtin(ir::BuiltinId::BlockId, loc);
}
// The kernel's block (work-group) size, as set_block_size() or the compile option chose it.
inline Expr<uint3> block_size(std::source_location loc = std::source_location::current()) {
    return detail::builtin(ir::BuiltinId::BlockSize, loc);
}

// ---- blocks: size, synchronization ----------------------------------------------------------------------
namespace detail {
void record_block_size(std::array<uint32_t, 3> size, const std::source_location& loc);
void record_sync_block(const std::source_location& loc);
Expr<uint32_t> subgroup_builtin(ir::BuiltinId which, const std::source_location& loc);
Expr<bool> subgroup_elect_at(const std::source_location& loc);
} // namespace detail

// Sets the kernel's block (work-group) size, in threads; called once, anywhere in a kernel (not in a
// Callable). 1D kernels take set_block_size(x), 2D kernels (x, y). The device's limits are checked when
// the kernel is compiled (maxComputeWorkGroupSize, maxComputeWorkGroupInvocations: 1024 on lavapipe).
inline void set_block_size(uint32_t x, uint32_t y = 1, uint32_t z = 1,
                           std::source_location loc = std::source_location::current()) {
    detail::record_block_size({x, y, z}, loc);
}

// Waits until every thread of the block has reached this call; shared-memory writes made before it are
// visible to all the block's threads after it. Every thread of the block must reach it, so a kernel that
// calls it is dispatched in whole blocks (the dispatch size a multiple of the block size).
inline void sync_block(std::source_location loc = std::source_location::current()) {
    detail::record_sync_block(loc);
}

// ---- subgroups: the threads that run together (GL_KHR_shader_subgroup) ----------------------------------
// The device's subgroup size (8 on lavapipe with 256-bit vectors, 32 or 64 on GPUs; the interpreter
// emulates 32 by default) and the thread's index within its subgroup. Operations below act on the
// subgroup's active threads: those that reached the call together.
inline Expr<uint32_t> subgroup_size(std::source_location loc = std::source_location::current()) {
    return detail::subgroup_builtin(ir::BuiltinId::SubgroupSize, loc);
}
inline Expr<uint32_t> subgroup_invocation_id(std::source_location loc = std::source_location::current()) {
    return detail::subgroup_builtin(ir::BuiltinId::SubgroupInvocationId, loc);
}
// True in exactly one active thread of the subgroup (the lowest-numbered one).
inline Expr<bool> subgroup_elect(std::source_location loc = std::source_location::current()) {
    return detail::subgroup_elect_at(loc);
}

#define ADJOINT_SUBGROUP_BUILTIN(fname, OP, R)                                                               \
    template <typename X>                                                                                    \
        requires detail::is_dsl_v<X>                                                                         \
    auto fname(const X& x, std::source_location loc = std::source_location::current()) {                     \
        return detail::call_op<R>(ir::Op::OP, loc, detail::as_expr(x));                                      \
    }
// Whether a Bool holds in all / any of the active threads; whether x is equal in all of them.
ADJOINT_SUBGROUP_BUILTIN(subgroup_all, SubgroupAll, bool)
ADJOINT_SUBGROUP_BUILTIN(subgroup_any, SubgroupAny, bool)
ADJOINT_SUBGROUP_BUILTIN(subgroup_all_equal, SubgroupAllEqual, bool)
// Bit i of the result (of 128: x holds bits 0-31) is set where active thread i's Bool holds.
ADJOINT_SUBGROUP_BUILTIN(subgroup_ballot, SubgroupBallot, uint4)
// Sum, minimum, maximum over the active threads (float, int, uint, and their vectors, component-wise);
// exclusive_add gives each thread the sum over the active threads numbered below it (0 for the first).
ADJOINT_SUBGROUP_BUILTIN(subgroup_add, SubgroupAdd, detail::value_t<X>)
ADJOINT_SUBGROUP_BUILTIN(subgroup_min, SubgroupMin, detail::value_t<X>)
ADJOINT_SUBGROUP_BUILTIN(subgroup_max, SubgroupMax, detail::value_t<X>)
ADJOINT_SUBGROUP_BUILTIN(subgroup_exclusive_add, SubgroupExclusiveAdd, detail::value_t<X>)
// x of the lowest-numbered active thread, in every active thread.
ADJOINT_SUBGROUP_BUILTIN(subgroup_broadcast_first, SubgroupBroadcastFirst, detail::value_t<X>)
#undef ADJOINT_SUBGROUP_BUILTIN

} // namespace adjoint
