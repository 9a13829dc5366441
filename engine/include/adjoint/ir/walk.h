// The one read-only walk over a function's structured blocks, with a visit before and after each instruction's
// regions; every pass, analysis and check that only reads the blocks walks them through it.
#pragma once
#include <adjoint/ir/function.h>

#include <type_traits>

namespace adjoint::ir {

namespace detail {
// A visit takes (id) or (id, the block that holds it); returning bool from `pre` decides whether the walk
// enters the instruction's regions.
template <typename F>
auto visit(F& fn, ValueId id, const Block& b) {
    if constexpr (std::is_invocable_v<F&, ValueId, const Block&>) return fn(id, b);
    else return fn(id);
}
struct NoVisit {
    void operator()(ValueId) const {}
};
} // namespace detail

// Visits the instructions of `b` in execution order, depth first: pre(id) before the instruction's regions,
// post(id) after them. A `pre` returning false skips the regions of that instruction (post still runs).
template <typename Pre, typename Post = detail::NoVisit>
void walk(const Function& f, const Block& b, Pre&& pre, Post&& post = Post{}) {
    for (ValueId id : b.insts) {
        bool enter = true;
        if constexpr (std::is_same_v<decltype(detail::visit(pre, id, b)), bool>) enter = detail::visit(pre, id, b);
        else detail::visit(pre, id, b);
        if (enter)
            for (auto& r : f.inst(id).regions) walk(f, *r, pre, post);
        detail::visit(post, id, b);
    }
}

// True when pred(id) holds for some instruction of `b` or of its nested regions (stops at the first).
template <typename Pred>
bool any_inst(const Function& f, const Block& b, Pred&& pred) {
    for (ValueId id : b.insts) {
        if (pred(id)) return true;
        for (auto& r : f.inst(id).regions)
            if (any_inst(f, *r, pred)) return true;
    }
    return false;
}

} // namespace adjoint::ir
