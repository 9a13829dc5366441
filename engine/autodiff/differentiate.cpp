// The entry point of reverse-mode differentiation: each $autodiff region becomes its forward code, its reverse
// code and the statements after backward with grad() read from the adjoints (see differentiator.h).
#include "differentiator.h"

#include <adjoint/core/error.h>
#include <adjoint/ir/passes.h>
#include <adjoint/ir/walk.h>

#include <algorithm>

namespace adjoint::autodiff {

using namespace ir;

std::string where(const Inst& in) {
    std::string s = format_location(in.loc);
    return s.empty() ? std::string("an unknown line") : s;
}

void Differentiator::run() {
    ValueId scope = parent_.insts[index_];
    Block& region = *f_.inst(scope).regions[0];
    size_t bw = region.insts.size();
    for (size_t i = 0; i < region.insts.size(); ++i)
        if (f_.inst(region.insts[i]).op == Op::Backward) bw = i;
    if (bw == region.insts.size()) fail("$autodiff block at ", where(f_.inst(scope)), " has no backward");
    // The recorder refuses a block written inside another; one recorded in a callable reaches here inlined.
    // The reverse pass has no rule for it (its grad() would be a constant), so refuse it too.
    walk(f_, region, [&](ValueId id) {
        if (f_.inst(id).op == Op::Autodiff)
            fail("nested $autodiff: the block at ", where(f_.inst(id)), " (in a callable) is called inside the ",
                 "$autodiff block at ", where(f_.inst(scope)), " in kernel '", f_.name(),
                 "'; one block cannot contain another (its grad() would be taken as a constant)");
    });
    forward_.insts.assign(region.insts.begin(), region.insts.begin() + long(bw));
    backward_ = region.insts[bw];
    std::vector<ValueId> after(region.insts.begin() + long(bw) + 1, region.insts.end());

    scan_side_effects();
    prepare_loops(forward_);
    find_active();
    classify();

    // Reverse code goes into its own block, spliced after the forward statements.
    Block reverse;
    b_.push(reverse);
    declare_adjoints();
    const Inst& bwi = f_.inst(backward_);
    ValueId y = bwi.operands[0];
    Frame top;
    frames_.push_back(&top);
    if (active_[y]) contribute(y, bwi.operands[1]);
    reverse_block(forward_, true);
    frames_.pop_back();
    b_.pop();

    // Grad(marker) reads the marker's adjoint; the markers themselves become plain values.
    for (ValueId id : after) rewrite_grads(id);
    splice_pending(after);
    auto unmark = [&](ValueId id) {
        if (f_.inst(id).op == Op::RequiresGrad) f_.inst(id).op = Op::Detach;
    };
    walk(f_, forward_, unmark);
    walk(f_, reverse, unmark);   // recomputed loop bodies hold copies of marks inside loops

    std::vector<ValueId> spliced = forward_.insts;
    spliced.insert(spliced.end(), reverse.insts.begin(), reverse.insts.end());
    spliced.insert(spliced.end(), after.begin(), after.end());
    f_.inst(scope).dead = true;
    f_.inst(backward_).dead = true;
    parent_.insts.erase(parent_.insts.begin() + long(index_));
    parent_.insts.insert(parent_.insts.begin() + long(index_), spliced.begin(), spliced.end());
}

// Places the loads made by rewrite_grads right before the instruction that now uses them.
void Differentiator::splice_pending(std::vector<ValueId>& block) {
    for (auto& [grad, insts] : pending_) {
        if (insts.empty()) continue;
        if (!insert_before(block, grad, insts)) fail("internal: grad instruction not found");
    }
    pending_.clear();
}

bool Differentiator::insert_before(std::vector<ValueId>& block, ValueId target, const std::vector<ValueId>& insts) {
    for (size_t i = 0; i < block.size(); ++i) {
        if (block[i] == target) {
            block.insert(block.begin() + long(i), insts.begin(), insts.end());
            return true;
        }
        for (auto& r : f_.inst(block[i]).regions)
            if (insert_before(r->insts, target, insts)) return true;
    }
    return false;
}

void Differentiator::rewrite_grads(ValueId id) {
    Inst& in = f_.inst(id);
    for (auto& r : in.regions)
        for (ValueId c : r->insts) rewrite_grads(c);
    if (in.op != Op::Grad) return;
    ValueId marker = in.operands[0];
    ValueId source = marker < adjoint_.size() ? adjoint_[marker] : kNoValue;
    if (auto it = last_mark_.find(marker); it != last_mark_.end()) source = it->second.first;
    if (source == kNoValue) {
        // Not active: nothing reached it. The gradient is exactly zero.
        in.op = Op::Const;
        in.operands.clear();
        in.words.assign(in.type->lanes(), 0u);
        return;
    }
    // The adjoint reads through `a == 0 ? +0.0 : a`, which maps the -0.0 start value of an input that
    // nothing reached to +0.0 and leaves every other value as it is. (`a + 0.0` would do in IEEE
    // arithmetic, but shader compilers fold it to `a`.) Matrices column by column, arrays and structs element by
    // element (their unreached lanes read -0.0 before).
    Block tmp;
    b_.push(tmp);
    const ValueId value = positive_zeros(b_.load(source, {}, in.loc), in.loc);
    b_.pop();
    // The Grad instruction, which its users name, becomes the last one built (the select or construct that
    // makes the value); that one is dropped.
    const Inst& last = f_.inst(value);
    in.op = last.op;
    in.operands = last.operands;
    in.imm = last.imm;
    f_.inst(value).dead = true;
    tmp.insts.pop_back();
    pending_.emplace_back(id, tmp.insts);
}

// `v` with each float lane that is zero read as +0.0.
ValueId Differentiator::positive_zeros(ValueId v, const std::source_location& loc) {
    const Type* t = b_.type_of(v);
    if (t->is_scalar() || t->is_vector()) {
        if (!t->is_float()) return v;
        ValueId zero = b_.zero(t, loc);
        return b_.select(b_.binary(Op::Eq, v, zero, loc), zero, v, loc);
    }
    if (!t->is_matrix() && !t->is_array() && !t->is_struct()) return v;
    std::vector<ValueId> parts;
    uint32_t n = t->is_struct() ? uint32_t(t->members().size()) : t->dim();
    for (uint32_t i = 0; i < n; ++i) parts.push_back(positive_zeros(b_.extract(v, i, loc), loc));
    return b_.construct(t, parts, loc);
}

namespace {

void differentiate_block(Function& f, Block& b, Differentiation& out, ScratchBase& scratch, GradBuffers& grads) {
    for (size_t i = 0; i < b.insts.size(); ++i) {
        Inst& in = f.inst(b.insts[i]);
        if (in.op == Op::Autodiff) {
            Differentiator d(f, b, i, scratch, grads);
            d.run();
            out.tapes.insert(out.tapes.end(), d.tapes.begin(), d.tapes.end());
            out.changed = true;
            --i;   // the spliced statements may hold further blocks (they cannot nest, but stay general)
            continue;
        }
        for (auto& r : in.regions) differentiate_block(f, *r, out, scratch, grads);
    }
}

} // namespace

Differentiation differentiate(Function& f, uint32_t local_tape_bytes) {
    Differentiation out;
    ScratchBase scratch;
    scratch.local_budget = local_tape_bytes;
    GradBuffers grads;
    differentiate_block(f, f.body(), out, scratch, grads);
    auto& body = f.body().insts;
    if (scratch.base != kNoValue) {
        f.inst(scratch.words).words = {f.scratch_words_per_thread};
        body.insert(body.begin(), scratch.prelude.insts.begin(), scratch.prelude.insts.end());
    }
    body.insert(body.begin(), grads.prelude.insts.begin(), grads.prelude.insts.end());
    out.grad_params = grads.params;
    if (out.changed) scope_values(f);   // the reverse code read values of the regions it mirrors
    return out;
}

} // namespace adjoint::autodiff
