// Out-of-line helpers of the expression front end.
#include <adjoint/dsl/expr.h>

namespace adjoint::detail {

ir::ValueId extract_const(ir::ValueId v, int64_t index) {
    auto& r = Recorder::current();
    ir::ValueId idx = r.b.i32(int32_t(index), r.last_loc);
    return r.b.extract(v, std::span<const ir::ValueId>(&idx, 1), r.last_loc);
}

MemberRef MemberRef::child(uint32_t index) const {
    MemberRef m = *this;
    if (depth == kMaxDepth) {   // deeper than a path holds: extract the parent now, start from it
        const ir::Block* unused = nullptr;
        m = MemberRef{resolve_member(*this, ir::kNoValue, unused)};
    }
    m.path[m.depth++] = uint8_t(index);
    return m;
}

ir::ValueId resolve_member(const MemberRef& m, ir::ValueId cached, const ir::Block*& block) {
    auto& r = Recorder::current();
    // Reuse the extract only where it is visible: recorded in the current block or one enclosing it
    // (not in an $if branch the insertion point has left).
    if (cached != ir::kNoValue && r.b.is_open(block)) return cached;
    // Placed where the parent is visible, outside any branch or loop entered since: a member of a value
    // from before a loop is extracted once, before it (as autodiff's forward mode for loops needs).
    return r.b.hoisted(m.root, [&] {
        std::vector<ir::ValueId> path;
        for (uint8_t d = 0; d < m.depth; ++d) path.push_back(r.b.i32(m.path[d], r.last_loc));
        return r.b.extract(m.root, path, r.last_loc);
    }, &block);
}

} // namespace adjoint::detail
