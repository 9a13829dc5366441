// Every pure op on every operand type the builder accepts: its GLSL compiles and the host evaluator has a rule.
//
// The builder's type rules decide what is legal IR; anything they accept can reach codegen from the DSL
// or from autodiff, so each accepted (op, operand types) pair is emitted into one kernel per op.
#include "compile/glsl_compiler.h"

#include <adjoint/codegen/glsl.h>
#include <adjoint/core/error.h>
#include <adjoint/ir/builder.h>
#include <adjoint/ir/eval.h>
#include <adjoint/ir/printer.h>
#include <adjoint/ir/verify.h>

#include <gtest/gtest.h>

#include <functional>

namespace adjoint::test {

namespace {

using namespace ir;

std::vector<const Type*> basic_types() {
    std::vector<const Type*> out;
    for (ScalarKind k : {ScalarKind::Float, ScalarKind::Int, ScalarKind::UInt, ScalarKind::Bool})
        for (uint32_t n = 1; n <= 4; ++n) out.push_back(Type::vector(k, n));
    out.push_back(Type::u64());   // a scalar only
    for (uint32_t n = 2; n <= 4; ++n) out.push_back(Type::matrix(n));
    return out;
}

// Operand type lists to try for an op of `arity` operands: all the same type, and for vectors and matrices
// with scalars mixed in (which the type rules broadcast).
std::vector<std::vector<const Type*>> operand_shapes(int arity) {
    std::vector<std::vector<const Type*>> out;
    for (const Type* t : basic_types()) {
        const Type* s = Type::scalar(t->scalar_kind());
        if (arity == 1) out.push_back({t});
        if (arity == 2) {
            out.push_back({t, t});
            if (!t->is_scalar()) {
                out.push_back({t, s});
                out.push_back({s, t});
            }
        }
        if (arity == 3) {
            out.push_back({t, t, t});
            if (!t->is_scalar()) {
                out.push_back({t, s, s});
                out.push_back({t, t, s});
                out.push_back({s, s, t});
            }
        }
    }
    return out;
}

// Lanes of a value of type t with every component 1 (1.0f, 1, 1u, true).
Lanes ones(const Type* t) {
    Lanes l(t->lanes());
    for (uint32_t i = 0; i < l.size(); ++i) {
        l[i] = t->lane_kind(i) == ScalarKind::Float ? bits_of(1.0f) : 1u;
        if (t->lane_kind(i) == ScalarKind::UInt64) l[++i] = 0u;   // 1 as a uint64: low word 1, high word 0
    }
    return l;
}

std::string describe(Op op, const std::vector<const Type*>& types) {
    std::string s = std::string(name(op)) + "(";
    for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + types[i]->to_string();
    return s + ")";
}

struct Case {
    Function f{Function::Kind::Kernel, "op_coverage"};
    Builder b{f};
    std::vector<std::string> accepted;

    // A non-constant value of type t (a load of a local), so that glslang cannot fold the expression.
    ValueId operand(const Type* t) {
        ValueId local = b.local(t);
        b.store(local, b.constant(t, ones(t)));
        return b.load(local);
    }

    // Tries to emit `make(operands)`; the builder throws for operand types its rules refuse.
    void attempt(Op op, const std::vector<const Type*>& types,
                 const std::function<ValueId(Builder&, std::vector<ValueId>)>& make) {
        std::vector<ValueId> ops;
        for (auto* t : types) ops.push_back(operand(t));
        ValueId v;
        try {
            v = make(b, ops);
        } catch (const Error&) {
            return;   // not legal IR
        }
        accepted.push_back(describe(op, types));
        if (info(op).effect != Effect::Pure) return;   // evaluated by the interpreter, not eval_pure
        // The host evaluator must have a rule for everything the builder accepts.
        std::vector<Lanes> values;
        for (auto* t : types) values.push_back(ones(t));
        std::vector<const Lanes*> ptrs;
        for (auto& l : values) ptrs.push_back(&l);
        Lanes out;
        try {
            EXPECT_TRUE(eval_pure(f, f.inst(v), ptrs, out)) << describe(op, types);
            EXPECT_EQ(out.size(), f.type_of(v)->lanes()) << describe(op, types);
        } catch (const Error& e) {
            ADD_FAILURE() << describe(op, types) << ": " << e.what();
        }
    }

    void compile() {
        ASSERT_EQ(verify(f), "") << print(f);
        std::string glsl;
        try {
            glsl = codegen::emit_glsl(f).source;
            compile::compile_glsl(glsl, f.name(), false);
        } catch (const Error& e) {
            std::string all;
            for (auto& a : accepted) all += "  " + a + "\n";
            ADD_FAILURE() << e.what() << "\naccepted combinations:\n" << all << "\n" << glsl;
        }
    }
};

} // namespace

class OpCoverage : public ::testing::TestWithParam<Op> {};

TEST_P(OpCoverage, EveryAcceptedOperandTypeCompiles) {
    Op op = GetParam();
    const OpInfo& oi = info(op);
    Case c;
    c.f.set_name("op_coverage_" + std::string(oi.name));
    switch (op) {
    case Op::Select:
        for (const Type* t : basic_types()) {
            c.attempt(op, {Type::boolean(), t, t}, [](Builder& b, auto o) { return b.select(o[0], o[1], o[2]); });
            if (t->is_vector())
                c.attempt(op, {t->with_scalar(ScalarKind::Bool), t, t},
                          [](Builder& b, auto o) { return b.select(o[0], o[1], o[2]); });
        }
        break;
    case Op::MatMul:
        for (uint32_t n = 2; n <= 4; ++n) {
            const Type* m = Type::matrix(n);
            const Type* v = Type::vector(ScalarKind::Float, n);
            for (auto types : std::vector<std::vector<const Type*>>{{m, m}, {m, v}, {v, m}})
                c.attempt(op, types, [](Builder& b, auto o) { return b.emit(Op::MatMul, o); });
        }
        break;
    case Op::Bitcast:
        // Same bits as another scalar kind, for scalars and vectors of equal width.
        for (const Type* from : basic_types())
            for (const Type* to : basic_types())
                if (from != to && !from->is_matrix() && !to->is_matrix() && from->dim() == to->dim())
                    c.attempt(op, {from}, [to](Builder& b, auto o) { return b.emit(Op::Bitcast, o, to); });
        break;
    case Op::Cast:
        for (const Type* from : basic_types())
            for (const Type* to : basic_types())
                if (from != to)
                    c.attempt(op, {from}, [to](Builder& b, auto o) { return b.cast(to, o[0]); });
        break;
    case Op::Shl: case Op::Shr:
        // The count may be of another integer type than the value (a uint64 shifted by a uint, say).
        for (auto& types : operand_shapes(oi.arity))
            c.attempt(op, types, [op](Builder& b, auto o) { return b.emit(op, o); });
        for (const Type* a : {Type::i32(), Type::u32(), Type::u64()})
            for (const Type* n : {Type::i32(), Type::u32(), Type::u64()})
                if (a != n) c.attempt(op, {a, n}, [op](Builder& b, auto o) { return b.emit(op, o); });
        break;
    default:
        for (auto& types : operand_shapes(oi.arity))
            c.attempt(op, types, [op](Builder& b, auto o) { return b.emit(op, o); });
    }
    EXPECT_FALSE(c.accepted.empty()) << "no operand type is accepted for " << oi.name;
    c.compile();
}

// Subgroup operations read other threads' values, so they are not pure values; each accepted operand type
// must still compile (the interpreter's rules are checked against the device in tests/runtime).
TEST(OpCoverage, SubgroupOpsCompileForEveryAcceptedType) {
    for (uint32_t i = 0; i < op_count(); ++i) {
        Op op = Op(i);
        if (!is_subgroup_op(op)) continue;
        Case c;
        c.f.set_name("op_coverage_" + std::string(name(op)));
        if (info(op).arity == 0) {
            c.attempt(op, {}, [op](Builder& b, auto) { return b.emit(op, {}); });
        } else {
            for (const Type* t : basic_types()) c.attempt(op, {t}, [op](Builder& b, auto o) { return b.emit(op, o); });
        }
        EXPECT_FALSE(c.accepted.empty()) << "no operand type is accepted for " << name(op);
        c.compile();
    }
}

namespace {
std::vector<Op> pure_value_ops() {
    std::vector<Op> out;
    for (uint32_t i = 0; i < op_count(); ++i) {
        Op op = Op(i);
        const OpInfo& oi = info(op);
        if (oi.effect != Effect::Pure) continue;
        // Structural values built by their own builder calls (covered by the DSL and runtime tests).
        if (op == Op::Const || op == Op::Arg || op == Op::Param || op == Op::Builtin || op == Op::Extract ||
            op == Op::Insert || op == Op::Swizzle || op == Op::Construct || op == Op::BufferSize ||
            op == Op::ImageSize)
            continue;
        out.push_back(op);
    }
    return out;
}
} // namespace

INSTANTIATE_TEST_SUITE_P(AllOps, OpCoverage, ::testing::ValuesIn(pure_value_ops()),
                         [](const ::testing::TestParamInfo<Op>& p) {
                             std::string n(name(p.param));
                             std::string out;
                             bool up = true;
                             for (char ch : n) {
                                 if (ch == '_') { up = true; continue; }
                                 out += up ? char(std::toupper(static_cast<unsigned char>(ch))) : ch;
                                 up = false;
                             }
                             return out;
                         });

} // namespace adjoint::test
