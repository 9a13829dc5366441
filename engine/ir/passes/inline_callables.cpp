// Inlining: every Call is replaced by a copy of the callee's body. A callee whose $return can happen
// before its end runs inside a one-trip loop; a $return sets a flag and breaks, and each loop or switch
// that holds one re-breaks when the flag is set, so the exit crosses any nesting.
#include <adjoint/core/error.h>
#include <adjoint/ir/clone.h>
#include <adjoint/ir/passes.h>
#include <adjoint/ir/walk.h>

namespace adjoint::ir {

namespace {

bool contains_return(const Function& f, const Block& b) {
    return any_inst(f, b, [&](ValueId id) { return f.inst(id).op == Op::Return; });
}

// True when the only Return is the last instruction of the top-level block.
bool returns_only_at_end(const Function& f) {
    const auto& insts = f.body().insts;
    for (size_t i = 0; i < insts.size(); ++i) {
        const Inst& in = f.inst(insts[i]);
        if (in.op == Op::Return && i + 1 != insts.size()) return false;
        for (auto& r : in.regions)
            if (contains_return(f, *r)) return false;
    }
    return true;
}

// Emits the inlined body of call `call_id` at b's insertion point; returns the value that replaces the call.
ValueId inline_call(Function& f, ValueId call_id, Builder& b) {
    const Inst call = [&] {   // a copy: inlining appends to the instruction table
        Inst copy = copy_header(f.inst(call_id));
        copy.operands = f.inst(call_id).operands;
        return copy;
    }();
    const Function& callee = *call.callee;
    for (const auto& [code, message] : callee.traps)   // (traps come from passes after inlining; stay general)
        if (!f.traps.try_emplace(code, message).second && f.traps.at(code) != message)
            fail("internal: trap code ", code, " of callable '", callee.name(), "' means another message in '", f.name(), "'");
    ValueMap map(callee.inst_count());
    bool has_value = !call.type->is_void();
    ValueId ret = has_value ? b.local(call.type, call.loc) : kNoValue;
    bool wrap = !returns_only_at_end(callee);
    ValueId flag = kNoValue;
    if (wrap) {
        flag = b.local(Type::boolean(), call.loc);
        b.store(flag, b.boolean(false, call.loc), {}, call.loc);
    }
    CloneHook hook = [&](const Function& src, ValueId id, Builder& bb, ValueMap& m) -> bool {
        const Inst& in = src.inst(id);
        if (in.op == Op::Param) {
            m.set(id, call.operands.at(size_t(in.imm)));
            return true;
        }
        if (in.op == Op::Return) {
            if (!in.operands.empty()) bb.store(ret, m(in.operands[0]), {}, in.loc);
            if (wrap) {
                bb.store(flag, bb.boolean(true, in.loc), {}, in.loc);
                bb.break_(in.loc);
            }
            return true;
        }
        return false;
    };
    // Loops and switches holding a return re-break after themselves when the flag is set.
    CloneHook outer = [&](const Function& src, ValueId id, Builder& bb, ValueMap& m) -> bool {
        const Inst& in = src.inst(id);
        bool holds_return = false;
        for (auto& r : in.regions) holds_return = holds_return || contains_return(src, *r);
        if (wrap && holds_return && (in.op == Op::Loop || in.op == Op::Switch)) {
            clone_inst(src, id, bb, m, outer, false);
            ValueId set = bb.load(flag, {}, in.loc);
            ValueId br = bb.if_(set, in.loc);
            bb.push(*bb.function().inst(br).regions[0]);
            bb.break_(in.loc);
            bb.pop();
            return true;
        }
        if (in.op == Op::Param || in.op == Op::Return) return hook(src, id, bb, m);
        return false;
    };
    if (wrap) {
        ValueId loop = b.loop(call.loc);
        b.push(*f.inst(loop).regions[0]);
        clone_block(callee, callee.body(), b, map, outer);
        b.break_(call.loc);
        b.pop();
    } else {
        clone_block(callee, callee.body(), b, map, outer);
    }
    return has_value ? b.load(ret, {}, call.loc) : kNoValue;
}

bool inline_block(Function& f, Block& block, std::vector<ValueId>& repl) {
    bool changed = false;
    for (size_t i = 0; i < block.insts.size(); ++i) {
        ValueId id = block.insts[i];
        if (f.inst(id).op == Op::Call) {
            Block tmp;
            Builder b(f);
            b.push(tmp);
            ValueId result = inline_call(f, id, b);
            b.pop();
            if (result != kNoValue) {
                if (repl.size() < f.inst_count()) repl.resize(f.inst_count(), kNoValue);
                repl[id] = result;
            }
            f.inst(id).dead = true;
            block.insts.erase(block.insts.begin() + long(i));
            block.insts.insert(block.insts.begin() + long(i), tmp.insts.begin(), tmp.insts.end());
            changed = true;
            --i;   // revisit: the inlined body may itself hold calls
            continue;
        }
        // Regions are visited after the splice above so that cloned regions are processed too.
        size_t nregions = f.inst(id).regions.size();
        for (size_t r = 0; r < nregions; ++r) changed |= inline_block(f, *f.inst(id).regions[r], repl);
    }
    return changed;
}

} // namespace

bool inline_callables(Function& f) {
    std::vector<ValueId> repl;
    bool changed = inline_block(f, f.body(), repl);
    if (changed) {
        repl.resize(f.inst_count(), kNoValue);
        replace_uses(f, repl);
    }
    return changed;
}

} // namespace adjoint::ir
