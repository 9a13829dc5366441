// Misuse of the autodiff calls is an adjoint::Error naming the C++ line (no device needed): it is
// raised when the kernel is recorded, even though kernel lambdas are noexcept.
#include <adjoint/adjoint.h>
#include <adjoint/pipeline/lower.h>

#include <gtest/gtest.h>

namespace adjoint::test {

namespace {

// Records the kernel built by `make`, which must raise an error that says `what` and names line `line` of this file
// (set while recording).
template <typename F>
void expect_misuse(F&& make, const std::string& what, const int& line) {
    std::string msg;
    try {
        make();
    } catch (const Error& e) {
        msg = e.what();
    }
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
    EXPECT_NE(msg.find("misuse_test.cpp:" + std::to_string(line)), std::string::npos) << msg;
}

} // namespace

TEST(AutodiffMisuse, RequiresGradOnANonFloatValue) {
    int line = 0;
    expect_misuse([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Int n = 3;
            $autodiff {
                line = __LINE__; requires_grad(n);
                backward(Float(1.0f));
            };
        };
    }, "requires_grad on a value of type int", line);
}

TEST(AutodiffMisuse, GradOfAnUnmarkedValue) {
    int line = 0;
    expect_misuse([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 1.0f, y = 2.0f;
            $autodiff {
                requires_grad(x);
                backward(x * y);
                line = __LINE__; out.write(0u, grad(y));
            };
        };
    }, "grad of a value not marked with requires_grad", line);
}

TEST(AutodiffMisuse, SecondBackward) {
    int line = 0;
    expect_misuse([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 1.0f;
            $autodiff {
                requires_grad(x);
                backward(x * x);
                line = __LINE__; backward(x);
            };
        };
    }, "a second backward", line);
}

TEST(AutodiffMisuse, BackwardAndGradOutsideAutodiff) {
    int line = 0;
    expect_misuse([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 1.0f;
            line = __LINE__; backward(x);
        };
    }, "backward outside an $autodiff block", line);
    expect_misuse([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 1.0f;
            line = __LINE__; out.write(0u, grad(x));
        };
    }, "grad outside an $autodiff block", line);
    expect_misuse([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 1.0f;
            line = __LINE__; requires_grad(x);
        };
    }, "requires_grad outside an $autodiff block", line);
}

TEST(AutodiffMisuse, GradBeforeBackward) {
    int line = 0;
    expect_misuse([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 1.0f;
            $autodiff {
                requires_grad(x);
                line = __LINE__; out.write(0u, grad(x));
                backward(x * x);
            };
        };
    }, "grad before backward", line);
}

TEST(AutodiffMisuse, NestedBlocksAndMissingBackward) {
    int line = 0;
    expect_misuse([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 1.0f;
            $autodiff {
                requires_grad(x);
                line = __LINE__; $autodiff { backward(x); };
                backward(x);
            };
        };
    }, "nested $autodiff", line);
    expect_misuse([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 1.0f;
            line = __LINE__; $autodiff { requires_grad(x); };
        };
    }, "has no backward", line);
}

// A block inside a callable called inside a block is the same nesting, found once the callable is inlined (when the
// kernel is lowered): its grad() was taken as a constant, so d/dx of dcube(x) + x^2 came out 2x, not 6x + 2x.
TEST(AutodiffMisuse, ABlockInACallableCalledInsideABlock) {
    int line = 0;
    expect_misuse([&] {
        Callable dcube = [&](Float v) noexcept {
            Float d = 0.0f;
            line = __LINE__; $autodiff {
                requires_grad(v);
                backward(v * v * v);
                d = grad(v);
            };
            return d;
        };
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 2.0f;
            $autodiff {
                requires_grad(x);
                backward(dcube(x) + x * x);
                out.write(0u, grad(x));
            };
        };
        (void)pipeline::lower(*k.function());
    }, "nested $autodiff", line);
}

TEST(AutodiffMisuse, BackwardInsideABranch) {
    int line = 0;
    expect_misuse([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 1.0f;
            $autodiff {
                requires_grad(x);
                $if (x > 0.0f) {
                    line = __LINE__; backward(x);
                };
            };
        };
    }, "backward inside a branch or loop", line);
}

TEST(AutodiffMisuse, ASeedOfAnotherTypeThanY) {
    int line = 0;
    expect_misuse([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 1.0f;
            $autodiff {
                requires_grad(x);
                line = __LINE__; backward(make_float3(x), make_float2(1.0f, 2.0f));
            };
        };
    }, "the seed is float2 and y is float3", line);
}

// A Callable's early $return inside a $switch case becomes a break out of the case once inlined: the message said
// "$break", which the user never wrote.
TEST(AutodiffMisuse, AReturnInTheMiddleOfASwitchCaseIsNamedAsOne) {
    int line = 0;
    expect_misuse([&] {
        Callable f = [&](Float a) noexcept {
            Float r = a;
            $switch (cast<int>(a)) {
                $case (0) {
                    $if (a > 0.5f) { line = __LINE__; $return(a * a); };
                    r = a * 3.0f;
                };
                $default { r = a; };
            };
            return r;
        };
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 0.75f;
            $autodiff {
                requires_grad(x);
                backward(f(x));
                out.write(0u, grad(x));
            };
        };
        pipeline::lower(*k.function());
    }, "a $break, or a Callable's $return, in the middle of a $switch case within $autodiff", line);
}

// The same $break in a switch that stands in no loop was not checked: the reverse pass took the case's whole path
// (d/dx 3x^2 = 1.6875 where the break left x*x, 1.5 at x = 0.75).
TEST(AutodiffMisuse, ABreakInTheMiddleOfASwitchCaseOutsideALoop) {
    int line = 0;
    expect_misuse([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = out.read(0u);
            $autodiff {
                requires_grad(x);
                Float y = 0.0f;
                $switch (cast<int>(x)) {
                    $case (0) {
                        y = x * x;
                        $if (x > 0.5f) { line = __LINE__; $break; };
                        y = y * x;
                    };
                    $default { y = x; };
                };
                backward(y);
                out.write(1u, grad(x));
            };
        };
        pipeline::lower(*k.function());
    }, "a $break, or a Callable's $return, in the middle of a $switch case within $autodiff", line);
}

} // namespace adjoint::test
