// Dead-code elimination: unused pure values and reads, locals that are never loaded (with their stores),
// and branches left empty.
#include <adjoint/ir/passes.h>

namespace adjoint::ir {

namespace {

struct Dce {
    Function& f;
    std::vector<uint32_t> uses;
    std::vector<uint8_t> loaded;
    bool changed = false;

    void find_loaded(const Block& b) {
        for (ValueId id : b.insts) {
            const Inst& in = f.inst(id);
            if (in.op == Op::Load) loaded[in.operands[0]] = 1;
            for (auto& r : in.regions) find_loaded(*r);
        }
    }

    bool removable(ValueId id) {
        const Inst& in = f.inst(id);
        switch (in.op) {
        case Op::Local: return !loaded[id];
        case Op::Store: return !loaded[in.operands[0]];
        case Op::If: return in.regions[0]->insts.empty() && in.regions[1]->insts.empty();
        case Op::Switch: {
            for (auto& r : in.regions)
                if (!r->insts.empty()) return false;
            return true;
        }
        case Op::Load: case Op::BufferRead: case Op::ImageRead: return uses[id] == 0;
        default: return info(in.op).effect == Effect::Pure && uses[id] == 0;
        }
    }

    void block(Block& b) {
        // Walk backwards so that a removal frees its operands for removal in the same sweep.
        std::vector<ValueId> kept;
        for (auto it = b.insts.rbegin(); it != b.insts.rend(); ++it) {
            ValueId id = *it;
            Inst& in = f.inst(id);
            for (auto& r : in.regions) block(*r);
            if (removable(id)) {
                for (ValueId o : in.operands) --uses[o];
                in.dead = true;
                changed = true;
                continue;
            }
            kept.push_back(id);
        }
        b.insts.assign(kept.rbegin(), kept.rend());
    }
};

} // namespace

bool eliminate_dead_code(Function& f) {
    Dce dce{f, count_uses(f), std::vector<uint8_t>(f.inst_count(), 0)};
    dce.find_loaded(f.body());
    dce.block(f.body());
    return dce.changed;
}

} // namespace adjoint::ir
