// The IR verifier: structural and type invariants, run after every pass in debug builds and in tests.
#pragma once
#include <adjoint/ir/function.h>

#include <string>

namespace adjoint::ir {

// Returns an empty string when f is well formed, else a description of the first problem found.
// Checked: every instruction sits in exactly one block; operands are defined earlier in an enclosing block
// (a Grad's marker need only be placed earlier); types follow the op table; break/continue sit inside a
// loop or switch; return sits only in callables; regions have the count their op requires.
std::string verify(const Function& f);

// Throws adjoint::Error with the verifier's message and the pass name when f is malformed.
void verify_or_throw(const Function& f, const char* after_pass);

} // namespace adjoint::ir
