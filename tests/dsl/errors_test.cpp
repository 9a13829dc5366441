// DSL misuse caught while recording (no device): each message names the cause and the offending C++ line.
#include <adjoint/adjoint.h>
#include "support/error_text.h"
#include <adjoint/ir/printer.h>

#include <gtest/gtest.h>

#include <functional>
#include <optional>

namespace adjoint::test {

namespace {

// format_location keeps the last two path components.
std::string at_line(int line) { return "dsl/errors_test.cpp:" + std::to_string(line); }

} // namespace

TEST(DslErrors, BufferWriteOfTheWrongType) {
    int line = 0;
    auto msg = error_of([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            line = __LINE__; out.write(0u, make_float3(1.0f));
        };
    });
    EXPECT_NE(msg.find("type error: writing float3 into a buffer of float"), std::string::npos) << msg;
    EXPECT_NE(msg.find(at_line(line)), std::string::npos) << msg;
}

TEST(DslErrors, CallableArgumentOfTheWrongType) {
    Callable scale = [](Float x) noexcept { return x * 2.0f; };
    int line = 0;
    auto msg = error_of([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            line = __LINE__; Float3 v = make_float3(1.0f); out.write(0u, scale(v));
        };
    });
    EXPECT_NE(msg.find("type error: argument 0 of callable '" + scale.function()->name() + "' is float, got float3"),
              std::string::npos) << msg;
    EXPECT_NE(msg.find(at_line(line)), std::string::npos) << msg;
}

TEST(DslErrors, ReturnOfTheWrongType) {
    int line = 0;
    auto msg = error_of([&] {
        Callable<float(float)> f = [&](Float x) noexcept {
            line = __LINE__; $return(make_float3(x));
        };
    });
    EXPECT_NE(msg.find("type error: $return of float3 in a callable returning float"), std::string::npos) << msg;
    EXPECT_NE(msg.find(at_line(line)), std::string::npos) << msg;
}

TEST(DslErrors, OperatorOfTheWrongTypeIsReportedNotFatal) {
    // Operators run inside noexcept lambdas: their type errors must be reported after recording (an
    // exception thrown through the lambda would terminate the program).
    int line = 0;
    auto msg = error_of([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            line = __LINE__; Float x = out.read(0u); out.write(0u, x % 2.0f);
        };
    });
    // An operator has no line of its own: the last line recorded before it, said as such (it named an earlier
    // line as where the error was).
    EXPECT_NE(msg.find("type error: mod(float, float): expects integer operands in an operator at or after " +
                       at_line(line) + " (operators carry no line of their own"),
              std::string::npos)
        << msg;
    auto msg2 = error_of([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            line = __LINE__; Float x = out.read(0u); out.write(0u, sin(cast<int>(x)) + 1.0f);
        };
    });
    EXPECT_NE(msg2.find("type error: sin(int): expects float operands at " + at_line(line)), std::string::npos) << msg2;
    // The first error is the one reported.
    auto msg3 = error_of([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            line = __LINE__; Float x = out.read(0u); out.write(0u, ite(x, x, x));
            out.write(1u, make_float3(1.0f));
        };
    });
    EXPECT_NE(msg3.find("type error: select(float, float, float): the condition must be a bool"), std::string::npos)
        << msg3;
    EXPECT_NE(msg3.find(at_line(line)), std::string::npos) << msg3;
}

TEST(DslErrors, ReturnOfANumberTakesTheCallablesType) {
    // $return(1) in an int callable is an int, not a float type error.
    Callable sign_of = [](Int x) noexcept {
        $if (x > 0) { $return(1); };
        $if (x < 0) { $return(-1); };
        return x * 0;
    };
    Callable<bool(int)> positive = [](Int x) noexcept {
        $if (x > 0) { $return(true); };
        $return(false);
    };
    EXPECT_EQ(sign_of.function()->return_type, ir::Type::i32());
    EXPECT_EQ(positive.function()->return_type, ir::Type::boolean());
    auto text = ir::print(*sign_of.function());
    EXPECT_NE(text.find("const -1"), std::string::npos) << text;
}

TEST(DslErrors, ReturnInsideAKernel) {
    int line = 0, line2 = 0;
    auto msg = error_of([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            line = __LINE__; $return();
        };
    });
    EXPECT_NE(msg.find("$return inside a kernel at " + at_line(line)), std::string::npos) << msg;
    auto msg2 = error_of([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            line2 = __LINE__; $return(1.0f);
        };
    });
    EXPECT_NE(msg2.find("$return inside a kernel at " + at_line(line2)), std::string::npos) << msg2;
}

TEST(DslErrors, CallableThatCallsItself) {
    int line = 0;
    std::string name;
    auto msg = error_of([&] {
        Callable<float(float)> f = [&](Float x) noexcept {
            name = f.function()->name();
            line = __LINE__; return f(x * 0.5f);
        };
    });
    EXPECT_NE(msg.find("recursion: callable '" + name + "' calls itself"), std::string::npos) << msg;
    EXPECT_NE(msg.find(at_line(line)), std::string::npos) << msg;
}

TEST(DslErrors, CallableThatCallsItselfThroughAnother) {
    // `outer` is recording when `inner` (recorded inside it) calls it back: indirect recursion.
    int line = 0;
    std::string name;
    std::function<Expr<float>(Expr<float>)> call_outer;
    auto msg = error_of([&] {
        Callable<float(float)> outer = [&](Float x) noexcept {
            name = outer.function()->name();
            // The message names the line of the call that closes the cycle.
            line = __LINE__; call_outer = [&](Expr<float> y) { return outer(y); };
            Callable<float(float)> inner = [&](Float y) noexcept { return call_outer(y + 1.0f); };
            return inner(x);
        };
    });
    EXPECT_NE(msg.find("recursion: callable '" + name + "' calls itself (directly or through other callables)"),
              std::string::npos) << msg;
    EXPECT_NE(msg.find(at_line(line)), std::string::npos) << msg;
}

TEST(DslErrors, BreakAndContinueOutsideALoop) {
    int line = 0;
    auto msg = error_of([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            $if (dispatch_id().x == 0u) {
                line = __LINE__; $break;
            };
        };
    });
    EXPECT_NE(msg.find("$break outside a loop or switch at " + at_line(line)), std::string::npos) << msg;

    auto msg2 = error_of([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            line = __LINE__; $continue;
        };
    });
    EXPECT_NE(msg2.find("$continue outside a loop at " + at_line(line)), std::string::npos) << msg2;

    // Inside a callable called from a loop is still outside any loop of the callable.
    auto msg3 = error_of([&] {
        Callable<void(int)> f = [&](Int x) noexcept {
            line = __LINE__; $break;
        };
    });
    EXPECT_NE(msg3.find("$break outside a loop or switch at " + at_line(line)), std::string::npos) << msg3;
}

TEST(DslErrors, ContinueDirectlyInsideASwitch) {
    int line = 0;
    auto msg = error_of([&] {
        Kernel1D k = [&](BufferInt out) noexcept {
            $for (i, 4) {
                $switch (i) {
                    $case (1) { line = __LINE__; $continue; };
                };
            };
        };
    });
    EXPECT_NE(msg.find("$continue inside a $switch case at " + at_line(line)), std::string::npos) << msg;
    // Within an $if in the case too (it said "directly inside").
    msg = error_of([&] {
        Kernel1D k = [&](BufferInt out) noexcept {
            $for (i, 4) {
                $switch (i) {
                    $case (1) { $if (i > 0) { line = __LINE__; $continue; }; };
                };
            };
        };
    });
    EXPECT_NE(msg.find("$continue inside a $switch case at " + at_line(line) + " (directly or within an $if or a "
                       "nested block there) is not supported"),
              std::string::npos)
        << msg;
}

// A switch on a float and an array indexed by a float threw from inside the noexcept kernel lambda: the program
// ended in std::terminate. They are deferred like every other misuse, and name the line.
TEST(DslErrors, ASwitchOnAFloatAndAFloatIndexAreReportedNotFatal) {
    int line = 0;
    auto msg = error_of([&] {
        Kernel1D k = [&](BufferFloat io) noexcept {
            Float v = io.read(0u);
            Float r = 0.0f;
            line = __LINE__; $switch (v) { $case (1) { r = 30.0f; }; $default { r = 40.0f; }; };
            io.write(1u, r);
        };
    });
    EXPECT_NE(msg.find("a switch value must be an int or uint, not float at " + at_line(line)), std::string::npos)
        << msg;
    msg = error_of([&] {
        Kernel1D k = [&](BufferFloat io) noexcept {
            Float n = io.read(0u);
            ArrayFloat<4> a;
            line = __LINE__; a[n] = 1.0f;
            io.write(1u, a[0]);
        };
    });
    EXPECT_NE(msg.find("an index must be an int or uint, not float"), std::string::npos) << msg;
    msg = error_of([&] {
        Kernel1D k = [&](BufferFloat io) noexcept {
            Float n = io.read(0u);
            ArrayFloat<4> a;
            io.write(1u, a[n]);
        };
    });
    EXPECT_NE(msg.find("an index must be an int or uint, not float"), std::string::npos) << msg;
}

TEST(DslErrors, CaseOutsideASwitchAndDefaultNotLast) {
    int line = 0;
    auto msg = error_of([&] {
        Kernel1D k = [&](BufferInt out) noexcept {
            line = __LINE__; $case (1) { out.write(0u, 1); };
        };
    });
    EXPECT_NE(msg.find("$case outside a $switch at " + at_line(line)), std::string::npos) << msg;

    auto msg2 = error_of([&] {
        Kernel1D k = [&](BufferInt out) noexcept {
            line = __LINE__; $switch (out.read(0u)) {
                $default { out.write(0u, 1); };
                $case (1) { out.write(0u, 2); };
            };
        };
    });
    EXPECT_NE(msg2.find("$default must be the last case of a $switch at " + at_line(line)), std::string::npos) << msg2;

    auto msg3 = error_of([&] {
        Kernel1D k = [&](BufferInt out) noexcept {
            line = __LINE__; $switch (out.read(0u)) {
                $case (1) { out.write(0u, 1); };
                $case (1) { out.write(0u, 2); };
            };
        };
    });
    EXPECT_NE(msg3.find("duplicate $case 1 in $switch at " + at_line(line)), std::string::npos) << msg3;
}

TEST(DslErrors, DslOperationOutsideAKernel) {
    int line = __LINE__; auto msg = error_of([] { Float x; });
    EXPECT_NE(msg.find("a DSL operation was used outside a kernel or callable being recorded at " + at_line(line)),
              std::string::npos) << msg;

    // A value leaked out of a recording cannot be used after it ended.
    std::optional<Expr<float>> leaked;
    Kernel1D k = [&](BufferFloat in) noexcept { leaked.emplace(in.read(0u)); };
    ASSERT_TRUE(leaked.has_value());
    int line2 = __LINE__; auto msg2 = error_of([&] { (void)sin(*leaked); });
    EXPECT_NE(msg2.find("outside a kernel or callable being recorded at " + at_line(line2)), std::string::npos) << msg2;
}

// Any DSL value made outside a recording: the message names the line that made it, not one in an engine
// header.
TEST(DslErrors, DslValuesMadeOutsideAKernelNameTheUsersLine) {
    auto expect_line = [](int line, const std::string& msg) {
        EXPECT_NE(msg.find("outside a kernel or callable being recorded at " + at_line(line)), std::string::npos) << msg;
        EXPECT_EQ(msg.find(".h:"), std::string::npos) << msg;
    };
    int line = __LINE__; expect_line(line, error_of([] { Float x = 1.0f; }));
    line = __LINE__; expect_line(line, error_of([] { UInt u = 3u; }));
    line = __LINE__; expect_line(line, error_of([] { Float3 v = float3(1, 2, 3); }));
    line = __LINE__; expect_line(line, error_of([] { [[maybe_unused]] Expr<float> e = 2.0f; }));
    line = __LINE__; expect_line(line, error_of([] { [[maybe_unused]] Expr<float3> e = float3(1, 2, 3); }));
    line = __LINE__; expect_line(line, error_of([] { (void)make_float3(1.0f, 2.0f, 3.0f); }));
    line = __LINE__; expect_line(line, error_of([] { (void)make_uint2(1u); }));
    line = __LINE__; expect_line(line, error_of([] { (void)sqrt(Expr<float>(2.0f)); }));

    // A Var kept from a recording and copied afterwards.
    std::optional<Float> kept;
    Kernel1D k = [&](BufferFloat in) noexcept { kept.emplace(in.read(0u)); };
    line = __LINE__; expect_line(line, error_of([&] { Float copy = *kept; }));
    line = __LINE__; expect_line(line, error_of([&] { [[maybe_unused]] Expr<float> e = *kept; }));
    // Operators take no location (C++ allows no extra parameter): they say what probably happened instead.
    std::string msg = error_of([&] { (void)(*kept + 1.0f); });
    EXPECT_NE(msg.find("(a DSL value kept from a recording that has ended?)"), std::string::npos) << msg;
    EXPECT_EQ(msg.find(".h:"), std::string::npos) << msg;
}

// make_float3(a, b) (a wrong component count) is a compile-time error (a static_assert in make_vector),
// so it has no run-time test.

TEST(DslErrors, KernelsAreNamedAfterTheirLine) {
    int line = __LINE__; Kernel1D k = [](BufferFloat out) noexcept { out.write(0u, 1.0f); };
    EXPECT_EQ(k.name(), "kernel_errors_test_" + std::to_string(line));
    k.set_name("renamed");
    EXPECT_EQ(k.function()->name(), "renamed");
}

} // namespace adjoint::test
