// The studio's one clock for its panels' cadences: milliseconds of a steady clock.
#pragma once
#include <chrono>

namespace adjoint::studio {

inline double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

} // namespace adjoint::studio
