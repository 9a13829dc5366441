// Activity (which values carry a gradient, found by a fixed point since loops carry values through locals),
// the choice of each loop's mode, and where each adjoint lives (a local, or SSA values in its own block).
#include "differentiator.h"

#include <adjoint/core/error.h>
#include <adjoint/ir/walk.h>

namespace adjoint::autodiff {

using namespace ir;

// -- activity --------------------------------------------------------------------------------------
// One step of the fixed point: marks the instruction (or the local it stores) active when an operand is.
bool Differentiator::propagate_activity(ValueId id) {
    const Inst& in = f_.inst(id);
    bool act = false;
    switch (in.op) {
    case Op::RequiresGrad: act = true; break;
    case Op::Store:
        if (!active_[in.operands[1]] || active_[in.operands[0]]) return false;
        active_[in.operands[0]] = 1;
        return true;
    case Op::Load: act = active_[in.operands[0]]; break;
    case Op::Local: return false;
    case Op::BufferAtomic: case Op::SharedAtomic: return false;   // the old contents: a constant
    case Op::BufferRead: act = differentiable_read(f_, in); break;   // a source, like a mark
    default:
        if (info(in.op).ad == AdClass::Z || !in.type->has_float()) return false;
        for (size_t k = 0; k < in.operands.size(); ++k) {
            // Index operands of extract/insert carry no gradient.
            if ((in.op == Op::Extract && k > 0) || (in.op == Op::Insert && k > 1)) break;
            act = act || active_[in.operands[k]];
        }
        if (act && is_subgroup_op(in.op))
            fail("autodiff: ", name(in.op), " at ", where(in), " in kernel '", f_.name(),
                 "' takes a value that depends on a requires_grad variable; gradients do not flow "
                 "between threads, so this would be wrong: detach() the value, or compute it "
                 "outside $autodiff");
        break;
    }
    if (!act || !in.type->has_float() || active_[id]) return false;
    active_[id] = 1;
    return true;
}

void Differentiator::find_active() {
    active_.assign(f_.inst_count(), 0);
    for (bool changed = true; changed;) {
        changed = false;
        walk(f_, forward_, [](ValueId) {}, [&](ValueId id) { changed |= propagate_activity(id); });
    }
    // Loops that carry or compute anything active are differentiated (forward mode or taped); others
    // are left alone. All modes are chosen before any loop is instrumented.
    walk(f_, forward_, [](ValueId) {}, [&](ValueId id) {
        const Inst& in = f_.inst(id);
        if (in.op == Op::Loop && contains_active(*in.regions[0])) {
            LoopInfo& info = loops_.at(id);
            info.active = true;
            forward_mode_eligible(info);
        }
    });
    prepare_side_tape();
    active_.resize(f_.inst_count(), 0);
    instrument_loops(forward_);
    active_.resize(f_.inst_count(), 0);
}

// Instruments the active loops of b (inner loops first): tapes, or tangents in forward mode.
void Differentiator::instrument_loops(Block& b) {
    for (size_t i = 0; i < b.insts.size(); ++i) {
        ValueId id = b.insts[i];
        for (auto& r : f_.inst(id).regions) instrument_loops(*r);
        if (f_.inst(id).op != Op::Loop || !loops_.at(id).active) continue;
        LoopInfo& info = loops_.at(id);
        size_t before = b.insts.size();
        if (info.forward_mode) instrument_forward_mode(b, i, info);
        else instrument(b, i, info);
        i += b.insts.size() - before;
    }
}

bool Differentiator::contains_active(const Block& b) {
    return any_inst(f_, b, [&](ValueId id) {
        const Inst& in = f_.inst(id);
        return is_active(id) || (in.op == Op::Store && is_active(in.operands[0]));
    });
}

// -- adjoint storage ---------------------------------------------------------------------------------
// A value used in another block than its own keeps its adjoint in a local; so do marks and locals.
void Differentiator::classify() {
    needs_local_.assign(f_.inst_count(), 0);
    std::vector<const Block*> def(f_.inst_count(), nullptr);
    walk(f_, forward_, [&](ValueId id, const Block& b) { def[id] = &b; });
    walk(f_, forward_, [&](ValueId id, const Block& b) {
        for (ValueId o : f_.inst(id).operands)
            if (o < def.size() && def[o] && def[o] != &b) needs_local_[o] = 1;
    });
    for (size_t i = 0; i < f_.inst_count(); ++i) {
        const Inst& in = f_.inst(ValueId(i));
        if (in.op == Op::RequiresGrad || in.op == Op::Local) needs_local_[i] = 1;
    }
}

void Differentiator::declare_adjoints() {
    adjoint_.assign(f_.inst_count(), kNoValue);
    for (size_t i = 0; i < active_.size(); ++i) {
        if (!active_[i] || !needs_local_[i]) continue;
        const Inst& in = f_.inst(ValueId(i));
        adjoint_[i] = b_.local(in.type, in.loc);
        b_.store(adjoint_[i], additive_zero(in.type), {}, in.loc);
    }
    // requires_grad inside a loop marks a new value in each iteration; grad() is the adjoint of the
    // value marked in the last iteration that ran the mark (earlier marks held fixed), else zero.
    int depth = 0;   // loops around the instruction
    walk(f_, forward_, [&](ValueId id) {
        const Inst& in = f_.inst(id);
        if (in.op == Op::RequiresGrad && depth > 0) {
            ValueId value = b_.local(in.type, in.loc);
            b_.store(value, additive_zero(in.type), {}, in.loc);
            ValueId taken = b_.local(Type::boolean(), in.loc);
            b_.store(taken, b_.boolean(false, in.loc), {}, in.loc);
            last_mark_[id] = {value, taken};
        }
        depth += in.op == Op::Loop;
    }, [&](ValueId id) { depth -= f_.inst(id).op == Op::Loop; });
}

} // namespace adjoint::autodiff
