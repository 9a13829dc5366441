// Maps C++ value types to IR types at compile time and at recording time; ADJOINT_STRUCT extends it.
#pragma once
#include <adjoint/dsl/host_types.h>
#include <adjoint/ir/type.h>

#include <array>
#include <type_traits>

namespace adjoint {

template <typename T>
class Expr;
template <typename T>
class Var;
template <typename T>
class BufferVar;
class ImageVar;

namespace detail {

// TypeDesc<T>: is it a DSL value type, and which IR type is it.
template <typename T>
struct TypeDesc {
    static constexpr bool valid = false;
};

template <typename T>
constexpr ir::ScalarKind scalar_kind_of() {
    if constexpr (std::is_same_v<T, bool>) return ir::ScalarKind::Bool;
    else if constexpr (std::is_same_v<T, float>) return ir::ScalarKind::Float;
    else if constexpr (std::is_same_v<T, int32_t>) return ir::ScalarKind::Int;
    else if constexpr (std::is_same_v<T, uint64_t>) return ir::ScalarKind::UInt64;
    else return ir::ScalarKind::UInt;
}

// uint64_t is a scalar of its own (no vectors of it): packed keys such as depth and triangle id.
template <typename T>
concept Scalar = std::is_same_v<T, float> || std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t> ||
                 std::is_same_v<T, bool> || std::is_same_v<T, uint64_t>;

template <Scalar T>
struct TypeDesc<T> {
    static constexpr bool valid = true;
    static constexpr bool is_scalar = true, is_vector = false, is_matrix = false;
    static constexpr size_t dim = 1;
    using scalar = T;
    static const ir::Type* type() { return ir::Type::scalar(scalar_kind_of<T>()); }
};

template <Scalar T, size_t N>
    requires(!std::is_same_v<T, uint64_t>)
struct TypeDesc<Vector<T, N>> {
    static constexpr bool valid = true;
    static constexpr bool is_scalar = false, is_vector = true, is_matrix = false;
    static constexpr size_t dim = N;
    using scalar = T;
    using element = T;
    static const ir::Type* type() { return ir::Type::vector(scalar_kind_of<T>(), uint32_t(N)); }
};

template <size_t N>
struct TypeDesc<Matrix<N>> {
    static constexpr bool valid = true;
    static constexpr bool is_scalar = false, is_vector = false, is_matrix = true;
    static constexpr size_t dim = N;
    using scalar = float;
    using element = Vector<float, N>;
    static const ir::Type* type() { return ir::Type::matrix(uint32_t(N)); }
};

template <typename T, size_t N>
struct TypeDesc<std::array<T, N>> {
    static constexpr bool valid = TypeDesc<T>::valid;
    static constexpr bool is_scalar = false, is_vector = false, is_matrix = false;
    static constexpr size_t dim = N;
    using element = T;
    static const ir::Type* type() { return ir::Type::array(TypeDesc<T>::type(), uint32_t(N)); }
};

} // namespace detail

template <typename T>
concept DslValue = detail::TypeDesc<std::remove_cvref_t<T>>::valid;

template <typename T>
const ir::Type* type_of() { return detail::TypeDesc<std::remove_cvref_t<T>>::type(); }

} // namespace adjoint
