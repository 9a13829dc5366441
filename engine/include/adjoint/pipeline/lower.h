// The lowering pipeline, in one place: from a recorded kernel to the IR that codegen takes.
#pragma once
#include <adjoint/autodiff/autodiff.h>
#include <adjoint/ir/function.h>
#include <adjoint/ir/passes.h>

#include <memory>
#include <string>
#include <vector>

namespace adjoint::pipeline {

// A lowered kernel: the function (a copy; the recording is untouched) and what differentiation added.
struct Lowered {
    std::unique_ptr<ir::Function> function;
    std::vector<TapeUse> tapes;
    std::vector<autodiff::GradParam> grad_params;
};

struct LowerOptions {
    ir::LoopLimit loop_limit;     // the device's loop iteration limit (0: none; see check_stopped_loops)
    uint32_t local_tape_bytes = autodiff::kDefaultLocalTapeBytes;   // private tape memory a thread may take
    bool rotate_trailing_exits = false;   // lavapipe: a test that leaves at a loop's end is taken at the top
};

// Clone, inline callables, clean up, differentiate, make strictly scoped, clean up, and, for a device that
// stops loops after a fixed number of iterations, the loop-limit check; for lavapipe, trailing exit tests taken at
// the top. The IR is verified after every pass.
Lowered lower(const ir::Function& kernel, const std::string& name = {},   // name: overrides the kernel's
              const LowerOptions& options = {});

} // namespace adjoint::pipeline
