// Host-side value types with the device layout (std430): float2..4, int2..4, uint2..4, bool2..4, float2x2..4x4.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace adjoint {

template <typename T, size_t N>
struct Vector;

// float3 is 16 bytes (aligned like float4), as in std430 arrays, so std::vector<float3> copies as is.
template <typename T>
struct alignas(2 * sizeof(T)) Vector<T, 2> {
    T x{}, y{};
    constexpr Vector() = default;
    constexpr explicit Vector(T s) : x(s), y(s) {}
    constexpr Vector(T x_, T y_) : x(x_), y(y_) {}
    constexpr T& operator[](size_t i) { return (&x)[i]; }
    constexpr const T& operator[](size_t i) const { return (&x)[i]; }
    friend constexpr bool operator==(const Vector&, const Vector&) = default;
};

template <typename T>
struct alignas(4 * sizeof(T)) Vector<T, 3> {
    T x{}, y{}, z{};
    constexpr Vector() = default;
    constexpr explicit Vector(T s) : x(s), y(s), z(s) {}
    constexpr Vector(T x_, T y_, T z_) : x(x_), y(y_), z(z_) {}
    constexpr T& operator[](size_t i) { return (&x)[i]; }
    constexpr const T& operator[](size_t i) const { return (&x)[i]; }
    friend constexpr bool operator==(const Vector& a, const Vector& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
};

template <typename T>
struct alignas(4 * sizeof(T)) Vector<T, 4> {
    T x{}, y{}, z{}, w{};
    constexpr Vector() = default;
    constexpr explicit Vector(T s) : x(s), y(s), z(s), w(s) {}
    constexpr Vector(T x_, T y_, T z_, T w_) : x(x_), y(y_), z(z_), w(w_) {}
    constexpr T& operator[](size_t i) { return (&x)[i]; }
    constexpr const T& operator[](size_t i) const { return (&x)[i]; }
    friend constexpr bool operator==(const Vector&, const Vector&) = default;
};

// Column-major square matrix: cols[c][r].
template <size_t N>
struct Matrix {
    std::array<Vector<float, N>, N> cols{};
    constexpr Vector<float, N>& operator[](size_t c) { return cols[c]; }
    constexpr const Vector<float, N>& operator[](size_t c) const { return cols[c]; }
    static constexpr Matrix identity() {
        Matrix m;
        for (size_t i = 0; i < N; ++i) m.cols[i][i] = 1.0f;
        return m;
    }
    friend constexpr bool operator==(const Matrix&, const Matrix&) = default;
};

using float2 = Vector<float, 2>;
using float3 = Vector<float, 3>;
using float4 = Vector<float, 4>;
using int2 = Vector<int32_t, 2>;
using int3 = Vector<int32_t, 3>;
using int4 = Vector<int32_t, 4>;
using uint = uint32_t;
using uint2 = Vector<uint32_t, 2>;
using uint3 = Vector<uint32_t, 3>;
using uint4 = Vector<uint32_t, 4>;
using bool2 = Vector<bool, 2>;
using bool3 = Vector<bool, 3>;
using bool4 = Vector<bool, 4>;
using float2x2 = Matrix<2>;
using float3x3 = Matrix<3>;
using float4x4 = Matrix<4>;

static_assert(sizeof(float3) == 16 && alignof(float3) == 16);
static_assert(sizeof(float3x3) == 48);

} // namespace adjoint
