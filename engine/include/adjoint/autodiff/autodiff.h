// Reverse-mode differentiation of $autodiff blocks, and the full IR lowering that precedes codegen.
#pragma once
#include <adjoint/ir/function.h>
#include <adjoint/ir/passes.h>

#include <memory>
#include <string>
#include <vector>

namespace adjoint::autodiff {

// Replaces every Autodiff region of an inlined function by its forward code, the reverse code that
// computes the adjoints, and the statements after backward with Grad read from the adjoints.
// Throws adjoint::Error (with the C++ line) for an op on the gradient path that has no rule.
bool differentiate(ir::Function& f);

struct TapeEntry;

// Per loop of a differentiated kernel: where it was written and how many tape bytes a thread uses.
struct TapeEntry {
    std::string loop;             // "file.cpp:42"
    uint32_t bytes_per_thread = 0;
    uint32_t capacity = 0;        // iterations the tape holds (0: the loop needs no tape)
    bool in_scratch = false;      // in the runtime's scratch buffer (large tapes) rather than private arrays
};

// A parameter that differentiation added after the user's: the gradient buffer (float words, tightly
// packed) of differentiable buffer parameter `of`, which receives the adjoints of its reads.
struct GradParam {
    uint32_t param = 0;
    uint32_t of = 0;
};

// The standard lowering of a recorded kernel: clone, inline callables, clean up, differentiate, clean up,
// and, for a device that stops loops after a fixed number of iterations, the loop-limit check.
struct Lowered {
    std::unique_ptr<ir::Function> function;
    std::vector<TapeEntry> tape_report;
    std::vector<GradParam> grad_params;
};
struct LowerOptions {
    ir::LoopLimit loop_limit;     // the device's loop iteration limit (0: none; see check_stopped_loops)
};
Lowered lower(const ir::Function& kernel, const std::string& name = {},   // name: overrides the kernel's
              const LowerOptions& options = {});

// differentiate(), returning the tape report (and the gradient-buffer parameters it added).
std::vector<TapeEntry> differentiate_with_report(ir::Function& f, std::vector<GradParam>* grad_params = nullptr);

// True when the op has a derivative rule (ops marked D in ops.def must all have one).
bool has_rule(ir::Op op);

} // namespace adjoint::autodiff
