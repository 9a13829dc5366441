// The IR passes, one per file under engine/ir/passes/, listed in the order the pipeline runs them.
// Each is a free function that returns whether it changed the function.
#pragma once
#include <adjoint/ir/function.h>

#include <string>
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
// Reads from outside the blocks that enclose a value's definition (autodiff's reverse code makes them) go
// through a local instead, so that every pass after autodiff sees strictly scoped IR (passes/scope_values.cpp).
bool scope_values(Function& f);

// Devices that stop loops after a fixed number of iterations (lavapipe: 65,535 per group of threads, all
// their loops together) leave such a loop as if it had ended and run on with wrong values. This pass makes
// every loop note when it leaves through one of its own breaks; a loop left otherwise was stopped by the
// device, and traps with a message naming the kernel and the loop's C++ line (unless the iteration it
// lost would only have found the loop's exit condition true). `iterations` 0: the device stops no loops,
// and the pass does nothing.
struct LoopLimit {
    uint32_t iterations = 0;     // named in the message
    std::string device;          // likewise ("lavapipe")
};
bool check_stopped_loops(Function& f, const LoopLimit& limit);   // after autodiff and cleanup

// For lavapipe, which miscompiles some loops whose body ends with a test that leaves (a vector they carry took a
// later iteration's value in threads that left early): that test's outcome is taken at the top of the next
// iteration instead (passes/rotate_trailing_exits.cpp). Runs last.
bool rotate_trailing_exits(Function& f);

// Runs the cleanup passes to a fixed point, verifying after each pass when `verify_each` is set (the
// default in debug builds and tests).
void optimize(Function& f, bool verify_each = kVerifyByDefault);


// Helpers shared by passes.
void replace_uses(Function& f, const std::vector<ValueId>& replacement);   // kNoValue = keep
bool is_harmless(const Inst& in);   // no side effect (pure, or a read): evaluating it again or not is exact
std::vector<uint32_t> count_uses(const Function& f);                       // over placed instructions
void collect_stored_locals(const Function& f, const Block& b, std::vector<uint8_t>& stored);

} // namespace adjoint::ir
