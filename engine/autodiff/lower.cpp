// The lowering pipeline from a recorded kernel to the IR that codegen takes.
#include <adjoint/autodiff/autodiff.h>

#include <adjoint/ir/clone.h>
#include <adjoint/ir/passes.h>
#include <adjoint/ir/verify.h>

namespace adjoint::autodiff {

Lowered lower(const ir::Function& kernel, const std::string& name) {
    Lowered out;
    out.function = ir::clone_function(kernel);
    if (!name.empty()) out.function->set_name(name);   // error messages name the shader as the user does
    ir::Function& f = *out.function;
    ir::inline_callables(f);
    ir::verify_or_throw(f, "inline_callables");
    ir::optimize(f, true);
    out.tape_report = differentiate_with_report(f, &out.grad_params);
    ir::optimize(f, false);
    return out;
}

} // namespace adjoint::autodiff
