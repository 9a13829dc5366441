// Algebraic simplification limited to identities that hold for every IEEE value (x + 0 is not one of
// them for x = -0, so only x - 0 and x + 0 with a +0 constant on an integer are rewritten; x * 1, x / 1,
// -(-x), !!x, select(c, a, a) are exact, and so is x + (-0.0)).
#include <adjoint/ir/passes.h>

namespace adjoint::ir {

namespace {

struct Simplifier {
    Function& f;
    std::vector<ValueId> repl;
    bool changed = false;

    bool is(ValueId v, double x) { return const_is(f, v, x); }
    bool is_plus_zero(ValueId v) {
        for (uint32_t w : f.inst(v).words)
            if (w != 0) return false;
        return true;
    }
    // Every float lane is -0.0 (the exact additive identity: -0 + x == x for all IEEE x).
    bool is_negative_zero(ValueId v) {
        const Inst& in = f.inst(v);
        if (in.op != Op::Const || !in.type->is_float()) return false;
        for (uint32_t w : in.words)
            if (w != 0x80000000u) return false;
        return true;
    }

    ValueId rewrite(const Inst& in) {
        auto a = [&](size_t k) { return in.operands[k]; };
        auto same_type = [&](ValueId v) { return f.type_of(v) == in.type ? v : kNoValue; };
        bool is_int = in.type->is_int_like();
        switch (in.op) {
        case Op::Add:
            if (is_negative_zero(a(1))) return same_type(a(0));
            if (is_negative_zero(a(0))) return same_type(a(1));
            if (is(a(1), 0) && (is_int || f.type_of(a(1))->is_float())) {
                // x + (+0) is exact for every x except -0 (which becomes +0); floats are kept unless integer.
                if (is_int) return same_type(a(0));
            }
            if (is_int && is(a(0), 0)) return same_type(a(1));
            break;
        case Op::Sub:
            // x - (+0) == x for every IEEE x, -0 included; but x - (-0) is x + 0, which turns -0 into +0, and
            // const_is compares values (-0 == 0), so the bits must be checked too.
            if (is(a(1), 0) && is_plus_zero(a(1))) return same_type(a(0));
            break;
        case Op::Mul:
            if (is(a(1), 1)) return same_type(a(0));
            if (is(a(0), 1)) return same_type(a(1));
            break;
        case Op::Div:
            if (is(a(1), 1)) return same_type(a(0));
            break;
        case Op::Neg: case Op::Not: case Op::BitNot: {
            const Inst& inner = f.inst(a(0));
            if (inner.op == in.op) return inner.operands[0];
            break;
        }
        case Op::Select:
            if (a(1) == a(2)) return a(1);
            break;
        case Op::Or:   // x || false, x && true
            if (is(a(1), 0)) return same_type(a(0));
            if (is(a(0), 0)) return same_type(a(1));
            break;
        case Op::And:
            if (is(a(1), 1)) return same_type(a(0));
            if (is(a(0), 1)) return same_type(a(1));
            break;
        case Op::Cast:
            if (f.type_of(a(0)) == in.type) return a(0);
            break;
        default: break;
        }
        return kNoValue;
    }

    void block(Block& b) {
        for (ValueId id : b.insts) {
            Inst& in = f.inst(id);
            for (auto& r : in.regions) block(*r);
            if (info(in.op).effect != Effect::Pure || in.operands.empty()) continue;
            ValueId r = rewrite(in);
            if (r != kNoValue && r != id) {
                repl[id] = r;
                changed = true;
            }
        }
    }
};

} // namespace

bool simplify(Function& f) {
    Simplifier s{f, std::vector<ValueId>(f.inst_count(), kNoValue)};
    s.block(f.body());
    if (s.changed) replace_uses(f, s.repl);
    return s.changed;
}

} // namespace adjoint::ir
