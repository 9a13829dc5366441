// Run-time error reports from kernels: a Trap op writes a code; the host turns it back into a message.
#pragma once
#include <cstdint>
#include <string>

namespace adjoint::ir {

uint32_t register_trap(const std::string& message);   // codes start at 1; equal messages share a code
std::string trap_message(uint32_t code);

} // namespace adjoint::ir
