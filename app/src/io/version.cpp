// The renderer library's version string (the project's), reported by the programs.
#include <adjoint/app/version.h>

namespace adjoint::app {
const char* version() { return "0.1.0"; }
} // namespace adjoint::app
