// Dead-code elimination by marking: what writes memory, traps or steers control flow is live; so are the
// operands of live instructions, and the stores to locals that a live load reads. Everything else goes,
// including locals whose loads only feed their own stores, and branches left empty.
#include <adjoint/ir/passes.h>
#include <adjoint/ir/walk.h>

namespace adjoint::ir {

namespace {

struct Dce {
    Function& f;
    std::vector<uint8_t> live;
    std::vector<std::vector<ValueId>> stores_of;   // local -> its stores
    std::vector<ValueId> work;
    bool changed = false;

    bool is_root(const Inst& in) {
        switch (in.op) {
        case Op::BufferWrite: case Op::BufferAtomic: case Op::ImageWrite: case Op::Trap: case Op::ScratchWrite: case Op::LoopMark:
        case Op::SharedWrite: case Op::SharedAtomic: case Op::Barrier:
        case Op::Break: case Op::Continue: case Op::Return: case Op::If: case Op::Switch: case Op::Loop:
        case Op::Autodiff: case Op::RequiresGrad: case Op::Backward: case Op::Grad: case Op::Call:
            return true;
        default: return false;
        }
    }

    void mark(ValueId id) {
        if (live[id]) return;
        live[id] = 1;
        work.push_back(id);
    }

    void collect(const Block& b) {
        walk(f, b, [&](ValueId id) {
            const Inst& in = f.inst(id);
            if (in.op == Op::Store) stores_of[in.operands[0]].push_back(id);
            if (is_root(in)) mark(id);
        });
    }

    void propagate() {
        while (!work.empty()) {
            ValueId id = work.back();
            work.pop_back();
            const Inst& in = f.inst(id);
            for (size_t k = 0; k < in.operands.size(); ++k) {
                // A store keeps its value and indices alive, not the local itself (the local's loads do).
                if (in.op == Op::Store && k == 0) continue;
                mark(in.operands[k]);
            }
            if (in.op == Op::Load) {
                ValueId local = in.operands[0];
                mark(local);
                for (ValueId st : stores_of[local]) mark(st);
            }
        }
    }

    void sweep(Block& b) {
        std::vector<ValueId> kept;
        for (ValueId id : b.insts) {
            Inst& in = f.inst(id);
            for (auto& r : in.regions) sweep(*r);
            bool empty_branch = (in.op == Op::If || in.op == Op::Switch);
            for (auto& r : in.regions) empty_branch = empty_branch && r->insts.empty();
            if (!live[id] || empty_branch) {
                in.dead = true;
                changed = true;
                continue;
            }
            kept.push_back(id);
        }
        b.insts = std::move(kept);
    }
};

} // namespace

bool eliminate_dead_code(Function& f) {
    Dce dce{f, std::vector<uint8_t>(f.inst_count(), 0), std::vector<std::vector<ValueId>>(f.inst_count()), {}};
    dce.collect(f.body());
    dce.propagate();
    dce.sweep(f.body());
    return dce.changed;
}

} // namespace adjoint::ir
