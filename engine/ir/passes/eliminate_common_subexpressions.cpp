// Common-subexpression elimination over structured scopes: a pure value equal to one already computed
// in the same or an enclosing block (earlier) is replaced by it.
#include <adjoint/ir/passes.h>

#include <map>
#include <tuple>

namespace adjoint::ir {

namespace {

using Key = std::tuple<Op, const Type*, std::vector<ValueId>, int64_t, std::vector<uint32_t>>;

struct Cse {
    Function& f;
    std::vector<ValueId> repl;
    std::vector<std::map<Key, ValueId>> scopes;
    bool changed = false;

    ValueId resolve(ValueId v) { return repl[v] != kNoValue ? repl[v] : v; }

    void block(Block& b) {
        scopes.emplace_back();
        for (ValueId id : b.insts) {
            Inst& in = f.inst(id);
            for (ValueId& o : in.operands) o = resolve(o);
            if (info(in.op).effect == Effect::Pure && in.regions.empty() && in.op != Op::Arg && in.op != Op::Param) {
                Key key{in.op, in.type, in.operands, in.imm, in.words};
                ValueId found = kNoValue;
                for (auto it = scopes.rbegin(); it != scopes.rend() && found == kNoValue; ++it) {
                    auto hit = it->find(key);
                    if (hit != it->end()) found = hit->second;
                }
                if (found != kNoValue) {
                    repl[id] = found;
                    changed = true;
                } else {
                    scopes.back().emplace(std::move(key), id);
                }
            }
            for (auto& r : in.regions) block(*r);
        }
        scopes.pop_back();
    }
};

} // namespace

bool eliminate_common_subexpressions(Function& f) {
    Cse cse{f, std::vector<ValueId>(f.inst_count(), kNoValue), {}};
    cse.block(f.body());
    if (cse.changed) replace_uses(f, cse.repl);
    return cse.changed;
}

} // namespace adjoint::ir
