// Out-of-line helpers of the expression front end.
#include <adjoint/dsl/expr.h>

namespace adjoint::detail {

ir::ValueId extract_const(ir::ValueId v, int64_t index) {
    auto& r = Recorder::current();
    ir::ValueId idx = r.b.i32(int32_t(index), r.last_loc);
    return r.b.extract(v, std::span<const ir::ValueId>(&idx, 1), r.last_loc);
}

} // namespace adjoint::detail
