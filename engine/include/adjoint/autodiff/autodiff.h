// Reverse-mode differentiation of $autodiff blocks, as an IR-to-IR transform (engine/autodiff/differentiator.h
// opens with the essay).
#pragma once
#include <adjoint/ir/function.h>

#include <cstdint>
#include <string>
#include <vector>

namespace adjoint {

// Per loop of a differentiated kernel: where it was written and how many tape bytes a thread uses
// (Shader::tape_report()).
struct TapeUse {
    std::string loop;                      // "file.cpp:42"
    uint32_t bytes_per_thread = 0;
    uint32_t capacity = 0;                 // iterations the tape holds; 0 when the loop needs no tape
    bool in_scratch = false;               // held in a runtime-managed scratch buffer (large tapes)
};

} // namespace adjoint

namespace adjoint::autodiff {

// A parameter that differentiation added after the user's: the gradient buffer (float words, tightly
// packed) of differentiable buffer parameter `of`, which receives the adjoints of its reads.
struct GradParam {
    uint32_t param = 0;
    uint32_t of = 0;
};

// What differentiation did to a kernel: whether it held any $autodiff block, the tape of each loop it
// differentiated, and the gradient-buffer parameters it added.
struct Differentiation {
    bool changed = false;
    std::vector<TapeUse> tapes;
    std::vector<GradParam> grad_params;
};

// How much private memory a thread's tapes may take in all, per kernel: tapes are placed in private arrays
// while they fit, the rest in the runtime's scratch buffer. GPUs refuse pipelines with much private memory
// (NVIDIA's driver refused 16 KB per thread on an H200, VK_ERROR_UNKNOWN), so the device chooses.
inline constexpr uint32_t kDefaultLocalTapeBytes = 16 * 1024;

// Replaces every Autodiff region of an inlined function by its forward code, the reverse code that
// computes the adjoints, and the statements after backward with Grad read from the adjoints. The reverse
// code may read values of the forward regions it mirrors; ir::scope_values makes the function strictly
// scoped again. Throws adjoint::Error (with the C++ line) for an op on the gradient path that has no rule.
Differentiation differentiate(ir::Function& f, uint32_t local_tape_bytes = kDefaultLocalTapeBytes);

// True when the op has a derivative rule (ops marked D in ops.def must all have one).
bool has_rule(ir::Op op);

} // namespace adjoint::autodiff
