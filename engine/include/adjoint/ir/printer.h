// Deterministic text form of a function: one instruction per line, regions indented.
#pragma once
#include <adjoint/ir/function.h>

#include <string>

namespace adjoint::ir {

std::string print(const Function& f);
std::string print_value(const Function& f, ValueId v);   // "%12"

} // namespace adjoint::ir
