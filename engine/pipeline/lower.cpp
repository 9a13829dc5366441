// The lowering pipeline from a recorded kernel to the IR that codegen takes.
#include <adjoint/pipeline/lower.h>

#include <adjoint/ir/clone.h>
#include <adjoint/ir/verify.h>

namespace adjoint::pipeline {

Lowered lower(const ir::Function& kernel, const std::string& name, const LowerOptions& options) {
    Lowered out;
    out.function = ir::clone_function(kernel);
    if (!name.empty()) out.function->set_name(name);   // error messages name the shader as the user does
    ir::Function& f = *out.function;
    // Each step leaves strictly scoped, well-typed IR; the verifier checks it after every step (and after
    // each cleanup pass within optimize in debug builds).
    ir::inline_callables(f);
    ir::verify_or_throw(f, "inline_callables");
    ir::optimize(f);
    ir::verify_or_throw(f, "optimize");
    // Strictly scoped again when it returns (scope_values).
    auto differentiation = autodiff::differentiate(f, options.local_tape_bytes);
    ir::verify_or_throw(f, "differentiate");
    out.tapes = std::move(differentiation.tapes);
    out.grad_params = std::move(differentiation.grad_params);
    ir::optimize(f);
    ir::verify_or_throw(f, "optimize");
    if (ir::check_stopped_loops(f, options.loop_limit)) ir::verify_or_throw(f, "check_stopped_loops");
    if (options.rotate_trailing_exits && ir::rotate_trailing_exits(f)) ir::verify_or_throw(f, "rotate_trailing_exits");
    return out;
}

} // namespace adjoint::pipeline
