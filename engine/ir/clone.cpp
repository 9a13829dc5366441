// Instruction cloning, shared by the inliner and by autodiff's recomputation of loop bodies.
#include <adjoint/ir/clone.h>

#include <adjoint/core/error.h>

namespace adjoint::ir {

ValueId clone_inst(const Function& src, ValueId id, Builder& b, ValueMap& map, const CloneHook& hook,
                   bool fallback) {
    const Inst& in = src.inst(id);
    Inst copy = copy_header(in);
    copy.operands.reserve(in.operands.size());
    for (ValueId o : in.operands) {
        ValueId m = map(o);
        if (m == kNoValue) {
            if (!fallback) fail("internal: clone of ", name(in.op), " %", id, " meets unmapped operand %", o);
            m = o;
        }
        copy.operands.push_back(m);
    }
    ValueId nid = b.append(std::move(copy));
    map.set(id, nid);
    for (size_t r = 0; r < in.regions.size(); ++r) {
        Block* dst = b.function().inst(nid).regions[r].get();
        b.push(*dst);
        clone_block(src, *in.regions[r], b, map, hook, fallback);
        b.pop();
    }
    return nid;
}

void clone_block(const Function& src, const Block& block, Builder& b, ValueMap& map, const CloneHook& hook,
                 bool fallback) {
    for (ValueId id : block.insts) {
        if (hook && hook(src, id, b, map)) continue;
        clone_inst(src, id, b, map, hook, fallback);
    }
}

} // namespace adjoint::ir

namespace adjoint::ir {

namespace {
void copy_block(const Function& src, const Block& from, Block& to, Function& dst) {
    to.insts = from.insts;
    for (ValueId id : from.insts) {
        const Inst& in = src.inst(id);
        Inst& out = dst.inst(id);
        for (size_t r = 0; r < in.regions.size(); ++r) copy_block(src, *in.regions[r], *out.regions[r], dst);
    }
}
} // namespace

std::unique_ptr<Function> clone_function(const Function& f) {
    auto g = std::make_unique<Function>(f.kind(), f.name());
    g->dimension = f.dimension;
    g->block_size = f.block_size;
    g->return_type = f.return_type;
    g->params = f.params;
    g->bundles = f.bundles;
    g->loc = f.loc;
    g->callees = f.callees;
    g->scratch_words_per_thread = f.scratch_words_per_thread;
    g->traps = f.traps;
    for (size_t i = 0; i < f.inst_count(); ++i) {
        const Inst& in = f.inst(ValueId(i));
        Inst copy = copy_header(in);
        copy.operands = in.operands;
        copy.dead = in.dead;
        g->add(std::move(copy));
    }
    copy_block(f, f.body(), g->body(), *g);
    return g;
}

} // namespace adjoint::ir
