// Constant folding with the host evaluator (the interpreter's own semantics), and pruning of branches
// whose condition is constant (a grad() of a value marked in a pruned branch becomes 0).
#include <adjoint/ir/eval.h>
#include <adjoint/ir/passes.h>

#include <functional>

namespace adjoint::ir {

namespace {

struct Folder {
    Function& f;
    std::vector<ValueId> repl;
    bool changed = false;
    std::vector<bool> pruned_marks;   // requires_grad markers of branches that never run

    // The markers in a branch that is dropped: a grad() of one is exactly 0 (its branch never ran).
    void note_marks(const Block& b) {
        for (ValueId id : b.insts) {
            const Inst& in = f.inst(id);
            if (in.op == Op::RequiresGrad) pruned_marks[id] = true;
            for (const auto& r : in.regions) note_marks(*r);
        }
    }
    void zero_pruned_grads(Block& b) {
        for (ValueId id : b.insts) {
            Inst& in = f.inst(id);
            for (auto& r : in.regions) zero_pruned_grads(*r);
            if (in.op == Op::Grad && pruned_marks[in.operands[0]]) {
                in.op = Op::Const;
                in.operands.clear();
                in.words.assign(in.type->lanes(), 0u);
                in.imm = 0;
                changed = true;
            }
        }
    }

    bool foldable(const Inst& in) {
        if (in.operands.empty() || info(in.op).effect != Effect::Pure) return false;
        if (in.op == Op::Detach || in.op == Op::Arg || in.op == Op::Param || in.op == Op::Builtin) return false;
        for (ValueId o : in.operands)
            if (f.inst(o).op != Op::Const) return false;
        return true;
    }

    void block(Block& b) {
        std::vector<ValueId> out;
        out.reserve(b.insts.size());
        for (ValueId id : b.insts) {
            Inst& in = f.inst(id);
            if (foldable(in)) {
                std::vector<const Lanes*> ops;
                for (ValueId o : in.operands) ops.push_back(&f.inst(o).words);
                Lanes result;
                if (eval_pure(f, in, ops, result)) {
                    in.op = Op::Const;
                    in.operands.clear();
                    in.words = std::move(result);
                    in.imm = 0;
                    changed = true;
                }
            } else if (in.op == Op::Select && f.inst(in.operands[0]).op == Op::Const &&
                       f.type_of(in.operands[0])->is_scalar()) {
                repl[id] = in.operands[f.inst(in.operands[0]).words[0] ? 1 : 2];
                changed = true;
                // Its uses are all redirected below, so it goes now: left in place it would be "folded"
                // again by every later run, which then never reports a fixed point.
                in.dead = true;
                continue;
            }
            if (in.op == Op::If && f.inst(in.operands[0]).op == Op::Const) {
                // Splice the chosen branch in place of the if; its instructions keep their ids.
                const bool then = f.inst(in.operands[0]).words[0] != 0;
                Block& chosen = *in.regions[then ? 0 : 1];
                note_marks(*in.regions[then ? 1 : 0]);
                block(chosen);
                out.insert(out.end(), chosen.insts.begin(), chosen.insts.end());
                chosen.insts.clear();
                in.dead = true;
                changed = true;
                continue;
            }
            for (auto& r : in.regions) block(*r);
            out.push_back(id);
        }
        b.insts = std::move(out);
    }
};

} // namespace

namespace {
// Constants depend on nothing, so they move to the top of the function: CSE then shares them across
// scopes, and no branch is kept alive only by a constant that code elsewhere reads.
bool hoist_constants(Function& f) {
    std::vector<ValueId> hoisted;
    std::function<void(Block&)> walk = [&](Block& b) {
        for (ValueId id : b.insts)
            for (auto& r : f.inst(id).regions) {
                std::vector<ValueId> kept;
                for (ValueId c : r->insts) (f.inst(c).op == Op::Const ? hoisted : kept).push_back(c);
                r->insts = std::move(kept);
                walk(*r);
            }
    };
    walk(f.body());
    auto& top = f.body().insts;
    top.insert(top.begin(), hoisted.begin(), hoisted.end());
    return !hoisted.empty();
}
} // namespace

bool fold_constants(Function& f) {
    Folder folder{f, std::vector<ValueId>(f.inst_count(), kNoValue), false, std::vector<bool>(f.inst_count(), false)};
    folder.block(f.body());
    folder.zero_pruned_grads(f.body());
    replace_uses(f, folder.repl);
    bool hoisted = hoist_constants(f);
    return folder.changed || hoisted;
}

} // namespace adjoint::ir
