// Expr<T> (a recorded value) and Var<T> (a local variable or a reference into one). The operators are in
// dsl/operators.h, vector members and swizzles in dsl/vector_members.h and dsl/swizzle.h (all included here).
#pragma once
#include <adjoint/core/error.h>
#include <adjoint/dsl/recorder.h>
#include <adjoint/dsl/type_desc.h>

#include <array>
#include <cstring>
#include <new>
#include <source_location>
#include <type_traits>

namespace adjoint {

namespace detail {

struct FromId {};
struct RefTag {};
struct MemberTag {};

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

// A member of a recorded value (a vector component, a struct field, nested): the value and the constant
// path to it. Members are extracted when first used, not when their parent is made, so a float3 that is
// only stored records no extracts.
struct MemberRef {
    static constexpr uint8_t kMaxDepth = 7;
    ir::ValueId root = ir::kNoValue;
    uint8_t depth = 0;                     // 0: root itself
    std::array<uint8_t, kMaxDepth> path{};
    MemberRef child(uint32_t index) const;   // past kMaxDepth the parent is extracted at once
};

// The value of `m` at the insertion point: `cached` when it was extracted in a block still open there,
// else a new Extract (and `block` records where).
ir::ValueId resolve_member(const MemberRef& m, ir::ValueId cached, const ir::Block*& block);

// Members of Expr<T>: vectors expose x, y, z, w (dsl/vector_members.h); ADJOINT_STRUCT types their fields.
template <typename T>
struct ExprMembers {
    explicit ExprMembers(const MemberRef&) {}
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
    Expr(detail::FromId, ir::ValueId id) : detail::ExprMembers<T>(detail::MemberRef{id}), id_(id) {}
    // A member of another value, extracted on first use.
    Expr(detail::MemberTag, const detail::MemberRef& m) : detail::ExprMembers<T>(m), member_(m) {}
    // Literals: host values of the same type (scalars also from any arithmetic type). The locations name
    // the user's line if no kernel is being recorded.
    Expr(const T& v, std::source_location loc = std::source_location::current()) requires(!detail::Scalar<T>)
        : Expr(detail::FromId{}, detail::literal(v, loc)) {}
    template <typename U>
        requires(detail::Scalar<T> && std::is_arithmetic_v<U>)
    Expr(U v, std::source_location loc = std::source_location::current())
        : Expr(detail::FromId{}, detail::literal(static_cast<T>(v), loc)) {}
    Expr(const Var<T>& v, std::source_location loc = std::source_location::current()) : Expr(v.load(loc)) {}
    // A copy is the value itself (a member is extracted here, once); its own members start unextracted.
    Expr(const Expr& other) : Expr(detail::FromId{}, other.id()) {}
    Expr& operator=(const Expr& other) {
        ir::ValueId v = other.id();
        this->~Expr();
        return *new (this) Expr(detail::FromId{}, v);
    }

    ir::ValueId id() const {
        if (member_.depth != 0) id_ = detail::resolve_member(member_, id_, block_);
        return id_;
    }

    // Element / column / component access by value.
    template <typename I>
    auto operator[](const I& index) const;

    // Swizzles (all of them, as v.zyx() or v.xxyy(), are in dsl/swizzle.h): components of x, y, z, w.
    template <size_t M>
    auto swz(std::array<uint32_t, M> c) const {
        using S = typename detail::TypeDesc<T>::scalar;
        auto& r = detail::Recorder::current();
        return Expr<Vector<S, M>>(detail::FromId{}, r.b.swizzle(id(), c, r.last_loc));
    }

private:
    mutable ir::ValueId id_ = ir::kNoValue;
    detail::MemberRef member_;                  // depth > 0: a member, extracted by id()
    mutable const ir::Block* block_ = nullptr;  // where a member's id_ was extracted
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

    // A bad index (a float) is refused when the recording ends: a throw here, inside the user's noexcept lambda,
    // terminated the program. A zero stands in.
    Expr<T> load(const std::source_location& where = {}) const {
        auto& r = detail::Recorder::current(where);
        const ir::ValueId v =
            detail::guarded(ir::kNoValue, [&] { return r.b.load(local_, r.indices(path_), r.last_loc); });
        return Expr<T>(detail::FromId{}, v != ir::kNoValue ? v : r.b.zero(type_of<T>(), r.last_loc));
    }
    operator Expr<T>() const { return load(); }

    template <typename I>
    auto operator[](const I& index) const;

    template <size_t M>
    auto swz(std::array<uint32_t, M> c) const { return load().swz(c); }

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
        detail::guarded_void([&] { r.b.store(local_, v, r.indices(path_), r.last_loc); });
    }

    ir::ValueId local_;
    detail::Path path_;
};

namespace detail {

template <typename T>
Expr<T> as_expr(const Expr<T>& e) { return e; }
template <typename T>
Expr<T> as_expr(const Var<T>& v) { return v.load(); }

} // namespace detail

} // namespace adjoint

#include <adjoint/dsl/operators.h>
#include <adjoint/dsl/vector_members.h>

namespace adjoint {

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
    const ir::ValueId v = detail::guarded(
        ir::kNoValue, [&] { return r.b.extract(id_, std::span<const ir::ValueId>(&idx, 1), r.last_loc); });
    return Expr<E>(detail::FromId{}, v != ir::kNoValue ? v : r.b.zero(type_of<E>(), r.last_loc));
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
