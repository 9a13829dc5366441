// Swizzles, as in GLSL and LuisaCompute: every 2-, 3- and 4-component selection of x, y, z, w within the
// vector's size (v.xy(), v.zyx(), v.xxyy(), ...), each one Swizzle instruction giving a new value.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace adjoint::detail {

constexpr uint32_t lane_of(char c) { return c == 'x' ? 0u : c == 'y' ? 1u : c == 'z' ? 2u : 3u; }

// Mixed into the members of Expr and Var of an N-component vector D (which provides swz<M>).
template <typename D, size_t N>
struct Swizzles {
#define ADJOINT_SWIZZLE2(a, b)                                                                               \
    auto a##b() const requires(lane_of(#a[0]) < N && lane_of(#b[0]) < N) {                                  \
        return static_cast<const D&>(*this).template swz<2>({lane_of(#a[0]), lane_of(#b[0])});              \
    }
#define ADJOINT_SWIZZLE3(a, b, c)                                                                            \
    auto a##b##c() const requires(lane_of(#a[0]) < N && lane_of(#b[0]) < N && lane_of(#c[0]) < N) {         \
        return static_cast<const D&>(*this).template swz<3>({lane_of(#a[0]), lane_of(#b[0]), lane_of(#c[0])}); \
    }
#define ADJOINT_SWIZZLE4(a, b, c, d)                                                                         \
    auto a##b##c##d() const                                                                                  \
        requires(lane_of(#a[0]) < N && lane_of(#b[0]) < N && lane_of(#c[0]) < N && lane_of(#d[0]) < N) {    \
        return static_cast<const D&>(*this).template swz<4>(                                                 \
            {lane_of(#a[0]), lane_of(#b[0]), lane_of(#c[0]), lane_of(#d[0])});                               \
    }
// Each level enumerates the next component over x, y, z, w (a macro cannot expand itself, hence the levels).
#define ADJOINT_SWIZZLE2_OF(a) ADJOINT_SWIZZLE2(a, x) ADJOINT_SWIZZLE2(a, y) ADJOINT_SWIZZLE2(a, z) ADJOINT_SWIZZLE2(a, w)
#define ADJOINT_SWIZZLE3_OF2(a, b)                                                                           \
    ADJOINT_SWIZZLE3(a, b, x) ADJOINT_SWIZZLE3(a, b, y) ADJOINT_SWIZZLE3(a, b, z) ADJOINT_SWIZZLE3(a, b, w)
#define ADJOINT_SWIZZLE3_OF(a)                                                                               \
    ADJOINT_SWIZZLE3_OF2(a, x) ADJOINT_SWIZZLE3_OF2(a, y) ADJOINT_SWIZZLE3_OF2(a, z) ADJOINT_SWIZZLE3_OF2(a, w)
#define ADJOINT_SWIZZLE4_OF3(a, b, c)                                                                        \
    ADJOINT_SWIZZLE4(a, b, c, x) ADJOINT_SWIZZLE4(a, b, c, y) ADJOINT_SWIZZLE4(a, b, c, z) ADJOINT_SWIZZLE4(a, b, c, w)
#define ADJOINT_SWIZZLE4_OF2(a, b)                                                                           \
    ADJOINT_SWIZZLE4_OF3(a, b, x) ADJOINT_SWIZZLE4_OF3(a, b, y) ADJOINT_SWIZZLE4_OF3(a, b, z)                \
    ADJOINT_SWIZZLE4_OF3(a, b, w)
#define ADJOINT_SWIZZLE4_OF(a)                                                                               \
    ADJOINT_SWIZZLE4_OF2(a, x) ADJOINT_SWIZZLE4_OF2(a, y) ADJOINT_SWIZZLE4_OF2(a, z) ADJOINT_SWIZZLE4_OF2(a, w)
#define ADJOINT_SWIZZLE_EACH(M) M(x) M(y) M(z) M(w)
    ADJOINT_SWIZZLE_EACH(ADJOINT_SWIZZLE2_OF)
    ADJOINT_SWIZZLE_EACH(ADJOINT_SWIZZLE3_OF)
    ADJOINT_SWIZZLE_EACH(ADJOINT_SWIZZLE4_OF)
#undef ADJOINT_SWIZZLE_EACH
#undef ADJOINT_SWIZZLE4_OF
#undef ADJOINT_SWIZZLE4_OF2
#undef ADJOINT_SWIZZLE4_OF3
#undef ADJOINT_SWIZZLE3_OF
#undef ADJOINT_SWIZZLE3_OF2
#undef ADJOINT_SWIZZLE2_OF
#undef ADJOINT_SWIZZLE4
#undef ADJOINT_SWIZZLE3
#undef ADJOINT_SWIZZLE2
};

} // namespace adjoint::detail
