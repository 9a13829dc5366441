// Store-to-load forwarding for whole-variable accesses: within straight-line code (and into nested
// branches) a load of a local is replaced by the value last stored to it. Loops forget what their body
// stores, since a later iteration may see another value.
#include <adjoint/ir/passes.h>

#include <unordered_map>

namespace adjoint::ir {

namespace {

using Known = std::unordered_map<ValueId, ValueId>;   // local -> value stored last

struct Forwarder {
    Function& f;
    std::vector<ValueId> repl;
    bool changed = false;

    void forget_stored(const Block& b, Known& known) {
        std::vector<uint8_t> stored(f.inst_count(), 0);
        collect_stored_locals(f, b, stored);
        for (auto it = known.begin(); it != known.end();) it = stored[it->first] ? known.erase(it) : std::next(it);
    }

    void block(Block& b, Known known) {
        for (ValueId id : b.insts) {
            Inst& in = f.inst(id);
            switch (in.op) {
            case Op::Store:
                if (in.operands.size() == 2) known[in.operands[0]] = in.operands[1];
                else known.erase(in.operands[0]);
                break;
            case Op::Load:
                if (in.operands.size() == 1) {
                    auto it = known.find(in.operands[0]);
                    if (it != known.end()) {
                        repl[id] = it->second;
                        changed = true;
                    }
                }
                break;
            case Op::Loop: {
                Known inner = known;
                forget_stored(*in.regions[0], inner);
                block(*in.regions[0], inner);
                forget_stored(*in.regions[0], known);
                break;
            }
            default:
                if (!in.regions.empty()) {
                    for (auto& r : in.regions) block(*r, known);
                    for (auto& r : in.regions) forget_stored(*r, known);
                }
                break;
            }
        }
    }
};

} // namespace

bool forward_locals(Function& f) {
    Forwarder fw{f, std::vector<ValueId>(f.inst_count(), kNoValue)};
    fw.block(f.body(), {});
    if (fw.changed) replace_uses(f, fw.repl);
    return fw.changed;
}

} // namespace adjoint::ir
