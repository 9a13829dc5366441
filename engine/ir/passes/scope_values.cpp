// Strict scoping: a value read outside the blocks that enclose its definition travels through a local.
//
// Reverse code reads primal values of the regions it mirrors (the forward `if` computed x; the reverse
// `if` reads it), which structured code cannot express. For each such value v, a local is declared in the
// innermost block that encloses v's definition and all its uses (before the statement that holds the
// definition), v is stored into it right after its definition, and each read from outside is a load placed
// right before the reading instruction. A local variable read that way is itself moved to that enclosing
// block; a constant, an argument or a shared-array declaration (which depend on nothing) moves to the top of
// the function. Afterwards every operand is defined earlier in an enclosing block, as ir::verify requires.
#include <adjoint/ir/builder.h>
#include <adjoint/ir/passes.h>
#include <adjoint/ir/walk.h>

#include <algorithm>
#include <map>

namespace adjoint::ir {

namespace {

struct Scopes {
    const Function& f;
    std::map<const Block*, const Block*> parent;   // a region's enclosing block (the body: none)
    std::map<const Block*, ValueId> owner;         // the instruction a region belongs to
    std::vector<const Block*> block_of;            // where each placed instruction sits

    explicit Scopes(const Function& fn) : f(fn), block_of(fn.inst_count(), nullptr) {
        walk(f, f.body(), [&](ValueId id, const Block& b) {
            block_of[id] = &b;
            for (auto& r : f.inst(id).regions) {
                parent[r.get()] = &b;
                owner[r.get()] = id;
            }
        });
    }

    bool encloses(const Block* outer, const Block* b) const {
        for (; b; b = parent.count(b) ? parent.at(b) : nullptr)
            if (b == outer) return true;
        return false;
    }

    const Block* common(const Block* a, const Block* b) const {
        while (!encloses(a, b)) a = parent.at(a);
        return a;
    }

    // The instruction of `outer` that holds (or is) id.
    ValueId holder(const Block* outer, ValueId id) const {
        for (const Block* b = block_of[id]; b != outer; b = parent.at(b)) id = owner.at(b);
        return id;
    }
};

void insert_at(Block& b, ValueId before, const std::vector<ValueId>& insts, bool after = false) {
    auto at = std::find(b.insts.begin(), b.insts.end(), before) + (after ? 1 : 0);
    b.insts.insert(at, insts.begin(), insts.end());
}

} // namespace

bool scope_values(Function& f) {
    Scopes scopes(f);
    // Uses out of scope: value -> (user, operand index), in walk order.
    std::map<ValueId, std::vector<std::pair<ValueId, size_t>>> crossing;
    walk(f, f.body(), [&](ValueId id, const Block& b) {
        const auto& ops = f.inst(id).operands;
        for (size_t k = 0; k < ops.size(); ++k)
            if (scopes.block_of[ops[k]] && !scopes.encloses(scopes.block_of[ops[k]], &b)) crossing[ops[k]].push_back({id, k});
    });
    if (crossing.empty()) return false;
    auto mutable_block = [](const Block* b) { return const_cast<Block*>(b); };   // the blocks are f's own
    Builder builder(f);
    for (auto& [v, uses] : crossing) {
        Inst& def = f.inst(v);
        Block* home = mutable_block(scopes.block_of[v]);
        if (def.op == Op::Const || def.op == Op::Arg || def.op == Op::Shared) {   // they depend on nothing
            home->insts.erase(std::find(home->insts.begin(), home->insts.end(), v));
            f.body().insts.insert(f.body().insts.begin(), v);
            continue;
        }
        const Block* outer = home;
        for (auto& [user, k] : uses) outer = scopes.common(outer, scopes.block_of[user]);
        ValueId holder = scopes.holder(outer, v);
        if (def.op == Op::Local) {
            home->insts.erase(std::find(home->insts.begin(), home->insts.end(), v));
            insert_at(*mutable_block(outer), holder == v ? v : holder, {v});
            continue;
        }
        Block decl, store;
        builder.push(decl);
        ValueId local = builder.local(def.type, def.loc);
        builder.pop();
        builder.push(store);
        builder.store(local, v, {}, def.loc);
        builder.pop();
        insert_at(*mutable_block(outer), holder, decl.insts);
        insert_at(*home, v, store.insts, true);
        for (auto& [user, k] : uses) {
            Block load;
            builder.push(load);
            ValueId value = builder.load(local, {}, f.inst(user).loc);
            builder.pop();
            insert_at(*mutable_block(scopes.block_of[user]), user, load.insts);
            f.inst(user).operands[k] = value;
        }
    }
    return true;
}

} // namespace adjoint::ir
