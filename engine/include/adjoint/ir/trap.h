// Run-time error reports from kernels: a Trap op writes a code; the host turns it back into a message.
#pragma once
#include <adjoint/ir/function.h>

#include <cstdint>
#include <string>

namespace adjoint::ir {

// Registers a trap message with f and returns its code: nonzero and derived from the message alone (a
// hash, moved on past codes f already gives other messages), so a kernel's code, and the GLSL that
// writes it, do not depend on what else the process compiled. Equal messages share a code.
uint32_t add_trap(Function& f, const std::string& message);

// The message of `code` among a kernel's traps (Function::traps, GlslKernel::traps).
std::string trap_message(const TrapTable& traps, uint32_t code);

} // namespace adjoint::ir
