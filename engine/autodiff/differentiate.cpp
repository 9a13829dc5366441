// Placeholder until the reverse pass lands: refuses autodiff blocks rather than producing wrong code.
#include <adjoint/autodiff/autodiff.h>

#include <adjoint/core/error.h>

namespace adjoint::autodiff {

bool differentiate(ir::Function& f) {
    for (size_t i = 0; i < f.inst_count(); ++i)
        if (f.inst(ir::ValueId(i)).op == ir::Op::Autodiff && !f.inst(ir::ValueId(i)).dead)
            fail("$autodiff is not implemented yet (kernel ", f.name(), ")");
    return false;
}

bool has_rule(ir::Op) { return false; }

} // namespace adjoint::autodiff
