// The IR verifier's rejections of malformed IR, the printer's text, and the host interpreter's semantics.
#include "ir/ir_test_util.h"

#include <adjoint/ir/passes.h>

#include <adjoint/ir/trap.h>

namespace adjoint::ir::test {

namespace {
const Type* i32buf() { return Type::buffer(Type::i32()); }
const Type* u32buf() { return Type::buffer(Type::u32()); }

// Appends an instruction to the current block without any check (to build malformed IR).
ValueId raw(Builder& b, Op op, const Type* type, std::vector<ValueId> operands) {
    Inst in;
    in.op = op;
    in.type = type;
    in.operands = std::move(operands);
    return b.append(std::move(in));
}
} // namespace

// ---- verifier -------------------------------------------------------------------------------------------

TEST(Verify, AcceptsWellFormedIr) {
    Fn k({i32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto loop = b.loop();
    k.in(loop, 0, [&] {
        auto sw = b.switch_(b.i32(1));
        b.push(b.add_case(sw, 1));
        b.break_();   // leaves the switch
        b.pop();
        b.push(b.add_case(sw, std::nullopt));
        b.pop();
        b.break_();
    });
    b.emit(Op::BufferWrite, {out, b.u32(0), b.i32(1)}, Type::void_type());
    EXPECT_EQ(k.verify(), "");
}

TEST(Verify, UseBeforeDefinition) {
    Fn k({i32buf()});
    auto& b = *k.b;
    auto x = b.i32(1);
    // An add whose second operand is defined after it (the id exists, but later in the block).
    auto add = raw(b, Op::Add, Type::i32(), {x, x});
    auto later = b.i32(2);
    k.f->inst(add).operands[1] = later;
    auto msg = k.verify();
    EXPECT_NE(msg.find("%" + std::to_string(add) + " (add): operand %" + std::to_string(later) +
                       " is not defined before this use"), std::string::npos) << msg;
}

TEST(Verify, ValueUsedOutsideItsBlock) {
    Fn k({i32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto br = b.if_(b.boolean(true));
    ValueId inner = kNoValue;
    k.in(br, 0, [&] { inner = b.binary(Op::Add, b.i32(1), b.i32(2)); });
    raw(b, Op::BufferWrite, Type::void_type(), {out, b.u32(0), inner});
    auto msg = k.verify();
    EXPECT_NE(msg.find("operand %" + std::to_string(inner) + " is not defined before this use"), std::string::npos) << msg;
    // Autodiff's reverse code reads such values; scope_values turns the read into a load of a local.
    EXPECT_TRUE(scope_values(*k.f));
    EXPECT_EQ(k.verify(), "") << k.text();
}

TEST(Verify, BreakAndContinueOutsideALoop) {
    {
        Fn k;
        k.b->break_();
        auto msg = k.verify();
        EXPECT_NE(msg.find("(break): break outside a loop or switch"), std::string::npos) << msg;
    }
    {
        // continue is for loops only, even inside a switch.
        Fn k;
        auto& b = *k.b;
        auto sw = b.switch_(b.i32(0));
        b.push(b.add_case(sw, 0));
        b.continue_();
        b.pop();
        auto msg = k.verify();
        EXPECT_NE(msg.find("(continue): continue outside a loop"), std::string::npos) << msg;
    }
}

TEST(Verify, ReturnInAKernelAndWrongTypes) {
    {
        Fn k;
        raw(*k.b, Op::Return, Type::void_type(), {});
        EXPECT_NE(k.verify().find("return in a kernel"), std::string::npos) << k.verify();
    }
    {
        Fn k;
        auto& b = *k.b;
        raw(b, Op::Add, Type::f32(), {b.i32(1), b.i32(2)});
        auto msg = k.verify();
        EXPECT_NE(msg.find("has type float, the rules give int"), std::string::npos) << msg;
    }
    {
        Fn k;
        auto& b = *k.b;
        raw(b, Op::Sin, Type::i32(), {b.i32(1)});
        auto msg = k.verify();
        EXPECT_NE(msg.find("type error: sin(int): expects float operands"), std::string::npos) << msg;
    }
}

TEST(Verify, StructuralProblems) {
    {
        // One instruction placed twice.
        Fn k;
        auto& b = *k.b;
        auto c = b.i32(1);
        k.f->body().insts.push_back(c);
        EXPECT_NE(k.verify().find("appears in more than one place"), std::string::npos) << k.verify();
    }
    {
        // A switch whose case values and regions disagree.
        Fn k;
        auto& b = *k.b;
        auto sw = b.switch_(b.i32(1));
        b.add_case(sw, 1);
        k.f->inst(sw).words.push_back(2);
        EXPECT_NE(k.verify().find("case count mismatch"), std::string::npos) << k.verify();
    }
    {
        // A load from something that is not a local variable.
        Fn k;
        auto& b = *k.b;
        raw(b, Op::Load, Type::i32(), {b.i32(1)});
        EXPECT_NE(k.verify().find("does not access a local variable"), std::string::npos) << k.verify();
    }
    {
        // A constant with the wrong number of lanes.
        Fn k;
        k.b->constant(Type::vector(ScalarKind::Float, 3), {0, 0});
        EXPECT_NE(k.verify().find("constant lane count mismatch"), std::string::npos) << k.verify();
    }
}

TEST(Verify, VerifyOrThrowNamesThePass) {
    Fn k;
    k.b->break_();
    try {
        verify_or_throw(*k.f, "my_pass");
        FAIL() << "no error";
    } catch (const Error& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("internal error after pass 'my_pass' in 'k'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("break outside a loop or switch"), std::string::npos) << msg;
    }
}

TEST(Builder, RejectsIllTypedOperations) {
    Fn k;
    auto& b = *k.b;
    auto f3 = b.splat(Type::vector(ScalarKind::Float, 3), 1.0);
    auto f2 = b.splat(Type::vector(ScalarKind::Float, 2), 1.0);
    auto expect_error = [](const std::function<void()>& fn, const std::string& part) {
        try {
            fn();
            ADD_FAILURE() << "no error for " << part;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
        }
    };
    expect_error([&] { b.binary(Op::Add, f3, f2); }, "type error: add(float3, float2): operand types differ");
    expect_error([&] { b.binary(Op::BitAnd, f3, f3); }, "expects integer operands");
    expect_error([&] { b.binary(Op::Cross, f2, f2); }, "expects two float3");
    expect_error([&] { b.if_(b.i32(1)); }, "an if condition must be a bool, not int");
    expect_error([&] { b.store(b.local(Type::i32()), f3); }, "cannot assign float3 to a variable of type int");
    expect_error([&] { b.construct(Type::vector(ScalarKind::Float, 3), {f2}); }, "cannot construct float3 from (float2)");
    expect_error([&] { b.cast(Type::matrix(2), f2); }, "cannot cast float2 to float2x2");
}

// ---- printer --------------------------------------------------------------------------------------------

TEST(Printer, DeterministicText) {
    Fn k({i32buf(), Type::f32()});
    auto out = k.arg(0);
    auto scale = k.arg(1);
    auto& b = *k.b;
    auto id = b.emit(Op::Builtin, {}, Type::vector(ScalarKind::UInt, 3), int64_t(BuiltinId::DispatchId));
    std::array<uint32_t, 1> x{0};
    auto i = b.swizzle(id, x);
    auto v = b.local(Type::f32());
    b.store(v, b.binary(Op::Mul, scale, b.f32(0.5f)));
    // One builder call per statement: the order of evaluation of function arguments, hence the ids, is
    // unspecified in C++.
    auto loaded = b.load(v);
    auto one = b.f32(1);
    auto br = b.if_(b.binary(Op::Gt, loaded, one));
    k.in(br, 0, [&] { b.emit(Op::BufferWrite, {out, i, b.cast(Type::i32(), b.load(v))}, Type::void_type()); });
    k.in(br, 1, [&] { b.emit(Op::BufferAtomic, {out, b.u32(0), b.i32(1)}, Type::i32(), int64_t(AtomicOp::Add)); });
    EXPECT_EQ(k.text(),
              "kernel k(buffer<int>, float) dim=1 block=(256,1,1) {\n"
              "  %0: buffer<int> = arg 0\n"
              "  %1: float = arg 1\n"
              "  %2: uint3 = builtin dispatch_id\n"
              "  %3: uint = swizzle x, %2\n"
              "  %4: float = local\n"
              "  %5: float = const 0.5\n"
              "  %6: float = mul %1, %5\n"
              "  store %4, %6\n"
              "  %8: float = load %4\n"
              "  %9: float = const 1\n"
              "  %10: bool = gt %8, %9\n"
              "  if %10 {\n"
              "    %12: float = load %4\n"
              "    %13: int = cast %12\n"
              "    buffer_write %0, %3, %13\n"
              "  } else {\n"
              "    %15: uint = const 0u\n"
              "    %16: int = const 1\n"
              "    %17: int = buffer_atomic.add %0, %15, %16\n"
              "  }\n"
              "}\n");
}

// ---- interpreter ----------------------------------------------------------------------------------------

TEST(Interpreter, LoopsWithBreakContinueAndSwitchWithoutFallThrough) {
    // for (i = 0; ; ++i) { if (i >= 10) break; if (i % 3 == 0) continue-ish; switch (i % 4) {...} }
    Fn k({i32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto i = b.local(Type::i32());
    auto acc = b.local(Type::i32());
    b.store(i, b.i32(0));
    b.store(acc, b.i32(0));
    auto loop = b.loop();
    k.in(loop, 0, [&] {
        auto iv = b.load(i);
        b.store(i, b.binary(Op::Add, iv, b.i32(1)));
        auto stop = b.if_(b.binary(Op::Ge, iv, b.i32(10)));
        k.in(stop, 0, [&] { b.break_(); });
        auto skip = b.if_(b.binary(Op::Eq, b.binary(Op::Mod, iv, b.i32(3)), b.i32(0)));
        k.in(skip, 0, [&] { b.continue_(); });
        auto sw = b.switch_(b.binary(Op::Mod, iv, b.i32(4)));
        b.push(b.add_case(sw, 1));
        b.store(acc, b.binary(Op::Add, b.load(acc), b.i32(1)));
        b.break_();   // ends the case, not the loop
        b.pop();
        b.push(b.add_case(sw, 2));
        b.store(acc, b.binary(Op::Add, b.load(acc), b.i32(100)));   // no break: must not fall through
        b.pop();
        b.push(b.add_case(sw, std::nullopt));
        b.store(acc, b.binary(Op::Add, b.load(acc), b.i32(10000)));
        b.pop();
    });
    b.emit(Op::BufferWrite, {out, b.u32(0), b.load(acc)}, Type::void_type());
    ASSERT_EQ(k.verify(), "");
    // i = 1, 2, 4, 5, 7, 8 run the switch: i%4 = 1, 2, 0, 1, 3, 0.
    auto r = run(*k.f, {{0}});
    EXPECT_EQ(int32_t(r.buffers[0][0]), 1 + 100 + 10000 + 1 + 10000 + 10000);
}

TEST(Interpreter, ThreadIdsBlockIdsAndDispatchSize) {
    Fn k({u32buf()});
    k.f->dimension = 2;
    k.f->block_size = {4, 2, 1};
    auto out = k.arg(0);
    auto& b = *k.b;
    auto u3 = Type::vector(ScalarKind::UInt, 3);
    auto id = b.emit(Op::Builtin, {}, u3, int64_t(BuiltinId::DispatchId));
    auto size = b.emit(Op::Builtin, {}, u3, int64_t(BuiltinId::DispatchSize));
    auto tid = b.emit(Op::Builtin, {}, u3, int64_t(BuiltinId::ThreadId));
    auto bid = b.emit(Op::Builtin, {}, u3, int64_t(BuiltinId::BlockId));
    auto index = b.binary(Op::Add, b.extract(id, 0), b.binary(Op::Mul, b.extract(id, 1), b.extract(size, 0)));
    auto code = b.binary(Op::Add, b.binary(Op::Mul, b.extract(tid, 0), b.u32(1000)),
                         b.binary(Op::Add, b.binary(Op::Mul, b.extract(tid, 1), b.u32(100)),
                                  b.binary(Op::Add, b.binary(Op::Mul, b.extract(bid, 0), b.u32(10)), b.extract(bid, 1))));
    b.emit(Op::BufferWrite, {out, index, code}, Type::void_type());
    ASSERT_EQ(k.verify(), "");
    auto r = run(*k.f, {std::vector<uint32_t>(9 * 5)}, {}, {9, 5, 1});
    for (uint32_t y = 0; y < 5; ++y)
        for (uint32_t x = 0; x < 9; ++x)
            EXPECT_EQ(r.buffers[0][x + 9 * y], (x % 4) * 1000 + (y % 2) * 100 + (x / 4) * 10 + y / 2) << x << "," << y;
}

TEST(Interpreter, ErrorsNameTheProblem) {
    {
        // Buffer index out of range.
        Fn k({i32buf()});
        auto out = k.arg(0);
        auto& b = *k.b;
        b.emit(Op::BufferWrite, {out, b.u32(5), b.i32(1)}, Type::void_type());
        try {
            run(*k.f, {{0, 0}});
            FAIL() << "no error";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("interpreter: buffer index 5 out of range (2 elements)"), std::string::npos)
                << e.what();
        }
    }
    {
        // An endless loop hits the step limit.
        Fn k;
        auto loop = k.b->loop();
        k.in(loop, 0, [&] { k.b->i32(1); });
        Interpreter interp(*k.f, {}, {1, 1, 1});
        interp.step_limit = 1000;
        try {
            interp.run_all();
            FAIL() << "no error";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("step limit exceeded in 'k'"), std::string::npos) << e.what();
        }
    }
    {
        // A wrong argument count.
        Fn k({i32buf()});
        k.arg(0);
        try {
            Interpreter interp(*k.f, {}, {1, 1, 1});
            FAIL() << "no error";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("kernel 'k' takes 1 arguments, got 0"), std::string::npos) << e.what();
        }
    }
}

TEST(Interpreter, TrapsReportTheirCode) {
    Fn k({i32buf()});
    auto out = k.arg(0);
    auto& b = *k.b;
    uint32_t code = add_trap(*k.f, "test trap: something impossible");
    auto x = b.emit(Op::BufferRead, {out, b.u32(0)}, Type::i32());
    auto br = b.if_(b.binary(Op::Lt, x, b.i32(0)));
    k.in(br, 0, [&] { b.emit(Op::Trap, {b.u32(code)}, Type::void_type()); });
    ASSERT_EQ(k.verify(), "");
    EXPECT_EQ(run(*k.f, {{5}}).trap, 0u);
    EXPECT_EQ(run(*k.f, {{uint32_t(-5)}}).trap, code);
    EXPECT_EQ(trap_message(k.f->traps, code), "test trap: something impossible");
    EXPECT_EQ(add_trap(*k.f, "test trap: something impossible"), code) << "equal messages share a code";
    EXPECT_EQ(k.f->traps.size(), 1u);
}

TEST(Interpreter, TrapCodesAreTheKernelsOwn) {
    // A code depends on its message alone: not on the traps other kernels registered before.
    Function first(Function::Kind::Kernel, "first"), second(Function::Kind::Kernel, "second");
    uint32_t other = add_trap(first, "another kernel's trap");
    uint32_t a = add_trap(first, "test trap: the same message");
    uint32_t b = add_trap(second, "test trap: the same message");
    EXPECT_EQ(a, b);
    EXPECT_NE(a, other);
    EXPECT_NE(a, 0u);
    EXPECT_EQ(second.traps.size(), 1u) << "a kernel holds only its own messages";
    EXPECT_EQ(trap_message(second.traps, other), "unknown kernel error code " + std::to_string(other));
}

TEST(Interpreter, VectorAndMatrixValues) {
    // m * v, dot, a select on a bool vector, an insert, and a swizzle, evaluated lane by lane.
    auto f4 = Type::vector(ScalarKind::Float, 4);
    Fn k({Type::buffer(f4)});
    auto out = k.arg(0);
    auto& b = *k.b;
    auto m2 = Type::matrix(2);
    auto f2 = Type::vector(ScalarKind::Float, 2);
    auto m = b.construct(m2, {b.construct(f2, {b.f32(1), b.f32(2)}), b.construct(f2, {b.f32(3), b.f32(4)})});
    auto v = b.construct(f2, {b.f32(10), b.f32(100)});
    auto mv = b.emit(Op::MatMul, {m, v}, f2);                    // (1*10 + 3*100, 2*10 + 4*100)
    auto d = b.emit(Op::Dot, {v, v});                              // 10100
    auto mask = b.binary(Op::Lt, v, b.splat(f2, 50.0));            // (true, false)
    auto sel = b.select(mask, mv, b.splat(f2, -1.0));              // (310, -1)
    ValueId one = b.i32(1);
    auto ins = b.insert(sel, d, std::span<const ValueId>(&one, 1));   // (310, 10100)
    std::array<uint32_t, 4> comps{1, 0, 1, 0};
    auto sw = b.swizzle(ins, comps);
    b.emit(Op::BufferWrite, {out, b.u32(0), sw}, Type::void_type());
    ASSERT_EQ(k.verify(), "");
    auto r = run(*k.f, {{0, 0, 0, 0}});
    EXPECT_EQ(r.buffers[0], (std::vector<uint32_t>{fbits(10100), fbits(310), fbits(10100), fbits(310)}));
}

} // namespace adjoint::ir::test
