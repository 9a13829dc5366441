// Loops that leave only by a test at the end of their body get that test's outcome taken at the top instead, for
// lavapipe, which miscompiles them.
//
// Mesa 22.3's llvmpipe gives wrong values to a vector carried through a loop like
//     while (true) { v = v * 0.5 + c; it = it + 1u; if (it >= n + 1u) break; }
// in the threads of a SIMD group that leave before the others: 56 of 64 threads of this do-while carrying a
// vec2 were one iteration off (engine/GUIDE.md, "A loop lavapipe miscompiles"; the GLSL and SPIR-V are right, as
// is the interpreter). The same loop with its exit at the top is right in every case measured, so the final
// `if (c) { ...; break; }` becomes `if (c) { ...; rotated = true; }`, and the body begins with
// `if (rotated) break;`. Runs after check_stopped_loops: the marks it put before the break stay where the
// decision to leave is made, so that a loop the device stops right after that iteration is not reported; the
// loop spends one more iteration of the device's budget, the test alone, each time it runs. A loop that begins
// with exit tests (every $for and $while, whose tests check_stopped_loops also repeats at the end) is left as
// it is: those were right.
#include <adjoint/ir/builder.h>
#include <adjoint/ir/passes.h>

namespace adjoint::ir {

namespace {

// The side of `if` `in` that ends with a break, the other being empty; -1 where there is none.
int leaving_side(const Function& f, const Inst& in) {
    if (in.op != Op::If) return -1;
    for (int side = 0; side < 2; ++side) {
        const Block& r = *in.regions[size_t(side)];
        const Block& other = *in.regions[size_t(1 - side)];
        if (!r.insts.empty() && f.inst(r.insts.back()).op == Op::Break && other.insts.empty()) return side;
    }
    return -1;
}

// Whether the body begins with an exit test (after harmless values): a $for's or $while's.
bool begins_with_exit(const Function& f, const Block& body) {
    for (ValueId id : body.insts) {
        const Inst& in = f.inst(id);
        if (leaving_side(f, in) >= 0) return true;
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
        const int side = leaving_side(f, f.inst(body.insts.back()));
        if (side < 0) return 0;
        Builder builder(f);
        Block before;
        builder.push(before);
        const ValueId rotated = builder.local(Type::boolean(), loc);
        builder.store(rotated, builder.boolean(false, loc), {}, loc);
        builder.pop();
        // The trailing test notes its outcome where it broke.
        Block& leaving = *f.inst(body.insts.back()).regions[size_t(side)];
        f.inst(leaving.insts.back()).dead = true;
        leaving.insts.pop_back();
        builder.push(leaving);
        builder.store(rotated, builder.boolean(true, loc), {}, loc);
        builder.pop();
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
