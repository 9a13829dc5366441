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
    ir::inline_callables(f);
    ir::verify_or_throw(f, "inline_callables");
    ir::optimize(f);
    auto differentiation = autodiff::differentiate(f);
    out.tapes = std::move(differentiation.tapes);
    out.grad_params = std::move(differentiation.grad_params);
    ir::optimize(f, false);
    if (ir::check_stopped_loops(f, options.loop_limit)) ir::verify_or_throw(f, "check_stopped_loops", false);
    return out;
}

} // namespace adjoint::pipeline
