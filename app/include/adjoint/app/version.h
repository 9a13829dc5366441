// The renderer library's version.
#pragma once

namespace adjoint::app {
const char* version();
} // namespace adjoint::app
