// The IR passes, one per file under engine/ir/passes/, listed in the order the pipeline runs them.
// Each is a free function that returns whether it changed the function.
#pragma once
#include <adjoint/ir/function.h>

#include <vector>

namespace adjoint::ir {

#ifdef NDEBUG
inline constexpr bool kVerifyByDefault = false;
#else
inline constexpr bool kVerifyByDefault = true;
#endif

bool inline_callables(Function& f);        // replaces Call with the callee's body (early $return via a flag)
bool forward_locals(Function& f);          // a load of a local reads the value stored last, where known
bool fold_constants(Function& f);          // evaluates pure ops of constants on the host; prunes constant ifs
bool simplify(Function& f);                // algebraic identities that are exact in IEEE arithmetic
bool eliminate_common_subexpressions(Function& f);   // one copy of each pure value per dominating scope
bool eliminate_dead_code(Function& f);     // unused pure values, locals never read, empty branches

// Runs the cleanup passes to a fixed point, verifying after each pass when `verify_each` is set (the
// default in debug builds and tests). `strict_scopes` as ir::verify.
void optimize(Function& f, bool strict_scopes = true, bool verify_each = kVerifyByDefault);


// Helpers shared by passes.
void replace_uses(Function& f, const std::vector<ValueId>& replacement);   // kNoValue = keep
std::vector<uint32_t> count_uses(const Function& f);                       // over placed instructions
void collect_stored_locals(const Function& f, const Block& b, std::vector<uint8_t>& stored);

} // namespace adjoint::ir
