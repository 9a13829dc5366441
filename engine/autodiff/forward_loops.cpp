// Forward mode for loops: a loop whose active code is scalar and whose active inputs are few is differentiated by
// carrying, for each input, the tangents of its values through the forward loop (the Jacobian of the loop's
// outputs with respect to its inputs). The reverse pass then needs one dot product per input and no tape: the
// cost of reverse mode through a long loop is its tape, which forward mode does not have.
#include "differentiator.h"

#include <adjoint/core/error.h>
#include <adjoint/ir/walk.h>

#include <algorithm>

namespace adjoint::autodiff {

using namespace ir;

bool Differentiator::forward_mode_eligible(LoopInfo& info) {
    if (f_.inst(info.loop).imm != 0) return false;   // tape_capacity(n) asked for a tape
    const Block& body = *f_.inst(info.loop).regions[0];
    std::set<ValueId> inside;
    bool ok = true;
    walk(f_, body, [&](ValueId id) {
        inside.insert(id);
        if (f_.inst(id).op == Op::Loop || f_.inst(id).op == Op::RequiresGrad) ok = false;
    });
    if (!ok) return false;
    std::vector<ValueId> dirs;
    auto add_dir = [&](ValueId v) {
        if (std::find(dirs.begin(), dirs.end(), v) == dirs.end()) dirs.push_back(v);
    };
    // After each instruction's regions (inner values first), as the directions are numbered.
    walk(f_, body, [](ValueId) {}, [&](ValueId id) {
        const Inst& in = f_.inst(id);
        if (in.op == Op::Store || in.op == Op::Load) {
            ValueId x = in.operands[0];
            if (!active_[x]) return;
            if (f_.type_of(x) != Type::f32() || in.operands.size() != (in.op == Op::Store ? 2u : 1u)) ok = false;
            if (!inside.count(x)) add_dir(x);   // a carried or invariant local
            // A value from before the loop stored as it is (`a = c`, the load of c forwarded out of the loop by
            // the cleanup): an input too. It was not one, so its tangent read as zero and grad(c) came back 0.
            if (in.op == Op::Store && in.operands.size() == 2) {
                ValueId v = in.operands[1];
                if (v < active_.size() && active_[v] && !inside.count(v)) {
                    if (f_.type_of(v) != Type::f32()) ok = false;
                    add_dir(v);
                }
            }
            return;
        }
        if (!active_[id]) return;
        if (in.type != Type::f32()) ok = false;
        if (in.op != Op::Detach && (ir::info(in.op).ad != AdClass::D || !has_rule(in.op))) ok = false;
        for (ValueId o : in.operands)
            if (o < active_.size() && active_[o] && !inside.count(o)) {
                if (f_.type_of(o) != Type::f32()) ok = false;
                add_dir(o);              // an active value from before the loop
            }
    });
    if (!ok || dirs.empty() || dirs.size() > kMaxForwardDirections) return false;
    info.forward_mode = true;
    info.directions = dirs;
    return true;
}

void Differentiator::instrument_forward_mode(Block& parent, size_t index, LoopInfo& info) {
    Inst& loop = f_.inst(info.loop);
    auto loc = loop.loc;
    const size_t D = info.directions.size();
    // Tangent locals of the outer locals: direction d of local x starts at 1 when d is x itself.
    Block pre;
    b_.push(pre);
    for (size_t d = 0; d < D; ++d)
        for (ValueId x : info.directions) {
            if (f_.inst(x).op != Op::Local) continue;
            ValueId t = b_.local(Type::f32(), loc);
            b_.store(t, b_.f32(info.directions[d] == x ? 1.0f : 0.0f, loc), {}, loc);
            info.tangent_local[{x, d}] = t;
        }
    b_.pop();
    parent.insts.insert(parent.insts.begin() + long(index), pre.insts.begin(), pre.insts.end());
    Tangents tangent;
    rewrite_tangents(*loop.regions[0], info, tangent);
    tapes.push_back(TapeUse{where(loop), 0, 0});
}

// The tangent of v in direction d: computed in the loop, 1 for the seeded outer value, else kNoValue (zero).
ValueId Differentiator::tangent_of(ValueId v, size_t d, const LoopInfo& info, const Tangents& tangent) {
    if (v >= active_.size() || !active_[v]) return kNoValue;
    auto it = tangent.find({v, d});
    if (it != tangent.end()) return it->second;
    if (info.directions[d] == v) return b_.f32(1.0f);   // a seeded outer value
    return kNoValue;                                      // another outer value: zero
}

// Adds after each active instruction of b (regions first) the instructions that compute its tangents.
void Differentiator::rewrite_tangents(Block& b, LoopInfo& info, Tangents& tangent) {
    std::vector<ValueId> out;
    for (ValueId id : b.insts) {
        for (auto& r : f_.inst(id).regions) rewrite_tangents(*r, info, tangent);
        out.push_back(id);
        Block extra;
        b_.push(extra);
        add_tangents(id, info, tangent);
        b_.pop();
        out.insert(out.end(), extra.insts.begin(), extra.insts.end());
    }
    b.insts = std::move(out);
}

void Differentiator::add_tangents(ValueId id, LoopInfo& info, Tangents& tangent) {
    const Inst& in = f_.inst(id);
    auto loc = f_.inst(info.loop).loc;
    const size_t D = info.directions.size();
    if (in.op == Op::Local && active_[id]) {
        for (size_t d = 0; d < D; ++d) {
            ValueId t = b_.local(Type::f32(), loc);
            b_.store(t, b_.f32(0.0f, loc), {}, loc);
            info.tangent_local[{id, d}] = t;
        }
    } else if (in.op == Op::Store && active_[in.operands[0]]) {
        for (size_t d = 0; d < D; ++d) {
            ValueId t = tangent_of(in.operands[1], d, info, tangent);
            b_.store(info.tangent_local.at({in.operands[0], d}), t == kNoValue ? b_.f32(0.0f) : t);
        }
    } else if (in.op == Op::Load && active_[id]) {
        for (size_t d = 0; d < D; ++d) tangent[{id, d}] = b_.load(info.tangent_local.at({in.operands[0], d}));
    } else if (active_[id] && in.op != Op::Detach) {   // detach cuts the derivative: no tangent
        // Partials from the reverse rule with a unit adjoint (all values here are scalars).
        std::vector<ValueId> partial(in.operands.size(), kNoValue);
        RuleArgs args{b_, in, in.operands, id, b_.f32(1.0f), {}, {}};
        args.wants = [&](size_t k) { return in.operands[k] < active_.size() && active_[in.operands[k]] != 0; };
        args.give = [&](size_t k, ValueId c) {
            partial[k] = partial[k] == kNoValue ? c : b_.binary(Op::Add, partial[k], c);
        };
        apply_rule(args);
        for (size_t d = 0; d < D; ++d) {
            ValueId sum = kNoValue;
            for (size_t k = 0; k < in.operands.size(); ++k) {
                ValueId t = tangent_of(in.operands[k], d, info, tangent);
                if (t == kNoValue || partial[k] == kNoValue) continue;
                ValueId term = b_.binary(Op::Mul, partial[k], t);
                sum = sum == kNoValue ? term : b_.binary(Op::Add, sum, term);
            }
            if (sum != kNoValue) tangent[{id, d}] = sum;
        }
    }
}

// The loop's reverse: adjoint of each input = sum over outputs of adjoint(output) * d output / d input.
void Differentiator::reverse_forward_mode(LoopInfo& info) {
    const size_t D = info.directions.size();
    std::vector<ValueId> outputs;   // active outer locals the loop stores
    for (ValueId x : info.carried)
        if (x < active_.size() && active_[x]) outputs.push_back(x);
    std::vector<ValueId> contribution(D, kNoValue);
    for (size_t d = 0; d < D; ++d)
        for (ValueId out : outputs) {
            ValueId term = b_.binary(Op::Mul, b_.load(adjoint_[out]), b_.load(P(info.tangent_local.at({out, d}))));
            contribution[d] = contribution[d] == kNoValue ? term : b_.binary(Op::Add, contribution[d], term);
        }
    // All contributions are read before any adjoint changes: the outputs' adjoints now become the
    // adjoints of the locals' values at loop entry.
    std::set<ValueId> stored(info.carried.begin(), info.carried.end());
    for (ValueId out : outputs) b_.store(adjoint_[out], additive_zero(Type::f32()));
    for (size_t d = 0; d < D; ++d) {
        ValueId v = info.directions[d];
        if (contribution[d] == kNoValue) continue;
        if (f_.inst(v).op == Op::Local) {
            ValueId cur = b_.load(adjoint_[v]);
            b_.store(adjoint_[v], b_.binary(Op::Add, cur, contribution[d]));
        } else {
            contribute(v, contribution[d]);
        }
    }
}

} // namespace adjoint::autodiff
