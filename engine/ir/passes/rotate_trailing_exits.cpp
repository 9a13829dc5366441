// Loops whose body ends with a test that leaves, and that do not begin with one, get that test's outcome taken
// at the top instead, for lavapipe, which miscompiles them.
//
// Mesa 22.3's llvmpipe gives wrong values to a vector carried through a loop like
//     while (true) { v = v * 0.5 + c; it = it + 1u; if (it >= n + 1u) break; }
// in the threads of a SIMD group that leave before the others: 56 of 64 threads of this do-while carrying a
// vec2 were one iteration off (engine/GUIDE.md, "A loop lavapipe miscompiles"; the GLSL and SPIR-V are right, as
// is the interpreter). The same loop with its exit at the top is right in every case measured, so the final
// `if (c) { ...; break; } [else { ... }]` becomes `if (c) { ...; rotated = true; } [else { ... }]`, and the body
// begins with `if (rotated) break;`. Runs after check_stopped_loops: the marks it put before a break stay where
// the decision to leave is made, so that a loop the device stops right after that iteration is not reported; the
// loop spends one more iteration of the device's budget, the test alone, each time it runs.
#include <adjoint/ir/builder.h>
#include <adjoint/ir/passes.h>

namespace adjoint::ir {

namespace {

// Whether region `side` of `if` `in` ends with a break (which leaves the loop the if is in).
bool leaves(const Function& f, const Inst& in, size_t side) {
    if (in.op != Op::If) return false;
    const Block& r = *in.regions[side];
    return !r.insts.empty() && f.inst(r.insts.back()).op == Op::Break;
}

// Whether the body begins with an exit test (after values without side effects): a $for's or $while's, which
// check_stopped_loops repeats at the end of the body so that no iteration of lavapipe's budget goes to the test
// alone. Rotating those spent one a run again (a loop check's test of a loop that ends on the budget's last
// iteration failed), so they are left as they are.
bool begins_with_exit(const Function& f, const Block& body) {
    for (ValueId id : body.insts) {
        const Inst& in = f.inst(id);
        if (leaves(f, in, 0) || leaves(f, in, 1)) return true;
        if (!is_harmless(in)) return false;
    }
    return false;
}

struct Rotator {
    Function& f;
    bool changed = false;

    void block(Block& b) {
        for (size_t i = 0; i < b.insts.size(); ++i) {
            for (auto& r : f.inst(b.insts[i]).regions) block(*r);
            if (f.inst(b.insts[i]).op == Op::Loop) i += rotate(b, i);
        }
    }

    // Rotates the loop at b.insts[index] where it qualifies; returns how many instructions went before it.
    size_t rotate(Block& b, size_t index) {
        Inst& loop = f.inst(b.insts[index]);
        const std::source_location loc = loop.loc;
        Block& body = *loop.regions[0];
        if (body.insts.empty() || begins_with_exit(f, body)) return 0;
        const ValueId last = body.insts.back();
        if (!leaves(f, f.inst(last), 0) && !leaves(f, f.inst(last), 1)) return 0;
        Builder builder(f);
        Block before;
        builder.push(before);
        const ValueId rotated = builder.local(Type::boolean(), loc);
        builder.store(rotated, builder.boolean(false, loc), {}, loc);
        builder.pop();
        // The trailing test notes its outcome where it broke (on either side).
        for (size_t side = 0; side < 2; ++side) {
            if (!leaves(f, f.inst(last), side)) continue;
            Block& leaving = *f.inst(last).regions[side];
            f.inst(leaving.insts.back()).dead = true;
            leaving.insts.pop_back();
            builder.push(leaving);
            builder.store(rotated, builder.boolean(true, loc), {}, loc);
            builder.pop();
        }
        // The top leaves on it.
        Block top;
        builder.push(top);
        const ValueId test = builder.if_(builder.load(rotated, {}, loc), loc);
        builder.push(*f.inst(test).regions[0]);
        builder.break_(loc);
        builder.pop();
        builder.pop();
        body.insts.insert(body.insts.begin(), top.insts.begin(), top.insts.end());
        b.insts.insert(b.insts.begin() + long(index), before.insts.begin(), before.insts.end());
        changed = true;
        return before.insts.size();
    }
};

} // namespace

bool rotate_trailing_exits(Function& f) {
    Rotator r{f};
    r.block(f.body());
    return r.changed;
}

} // namespace adjoint::ir
