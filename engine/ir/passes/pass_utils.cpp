// Helpers shared by the passes: use counts, use replacement, the pipeline driver.
#include <adjoint/ir/passes.h>
#include <adjoint/ir/verify.h>
#include <adjoint/ir/walk.h>

namespace adjoint::ir {

bool is_harmless(const Inst& in) {
    const Effect e = info(in.op).effect;
    return e == Effect::Pure || e == Effect::Read;
}

void replace_uses(Function& f, const std::vector<ValueId>& repl) {
    auto resolve = [&](ValueId v) {
        // Follow chains (a replaced by b, b replaced by c).
        for (int guard = 0; v < repl.size() && repl[v] != kNoValue && guard < 64; ++guard) v = repl[v];
        return v;
    };
    for (size_t i = 0; i < f.inst_count(); ++i)
        for (ValueId& o : f.inst(ValueId(i)).operands) o = resolve(o);
}

std::vector<uint32_t> count_uses(const Function& f) {
    std::vector<uint32_t> uses(f.inst_count(), 0);
    walk(f, f.body(), [&](ValueId id) {
        for (ValueId o : f.inst(id).operands) ++uses[o];
    });
    return uses;
}

void collect_stored_locals(const Function& f, const Block& b, std::vector<uint8_t>& stored) {
    walk(f, b, [&](ValueId id) {
        if (f.inst(id).op == Op::Store) stored[f.inst(id).operands[0]] = 1;
    });
}

void optimize(Function& f, bool verify_each) {
    struct Step { const char* name; bool (*run)(Function&); };
    static const Step steps[] = {
        {"forward_locals", forward_locals},
        {"fold_constants", fold_constants},
        {"simplify", simplify},
        {"eliminate_common_subexpressions", eliminate_common_subexpressions},
        {"eliminate_dead_code", eliminate_dead_code},
    };
    for (int round = 0; round < 8; ++round) {
        bool changed = false;
        for (const Step& s : steps) {
            changed |= s.run(f);
            if (verify_each) verify_or_throw(f, s.name);
        }
        if (!changed) break;
    }
}

} // namespace adjoint::ir
