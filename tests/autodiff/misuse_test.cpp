// Misuse of the autodiff calls is an adjoint::Error naming the C++ line (no device needed): it is
// raised when the kernel is recorded, even though kernel lambdas are noexcept.
#include <adjoint/adjoint.h>

#include <gtest/gtest.h>

namespace adjoint::test {

namespace {

// Records the kernel built by `make` and returns the error message (empty when none).
template <typename F>
std::string record_error(F&& make) {
    try {
        make();
    } catch (const Error& e) {
        return e.what();
    }
    return {};
}

std::string at(int line) { return "misuse_test.cpp:" + std::to_string(line); }

} // namespace

TEST(AutodiffMisuse, RequiresGradOnANonFloatValue) {
    int line = 0;
    auto msg = record_error([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Int n = 3;
            $autodiff {
                line = __LINE__; requires_grad(n);
                backward(Float(1.0f));
            };
        };
    });
    EXPECT_NE(msg.find("requires_grad on a value of type int"), std::string::npos) << msg;
    EXPECT_NE(msg.find(at(line)), std::string::npos) << msg;
}

TEST(AutodiffMisuse, GradOfAnUnmarkedValue) {
    int line = 0;
    auto msg = record_error([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 1.0f, y = 2.0f;
            $autodiff {
                requires_grad(x);
                backward(x * y);
                line = __LINE__; out.write(0u, grad(y));
            };
        };
    });
    EXPECT_NE(msg.find("grad of a value not marked with requires_grad"), std::string::npos) << msg;
    EXPECT_NE(msg.find(at(line)), std::string::npos) << msg;
}

TEST(AutodiffMisuse, SecondBackward) {
    int line = 0;
    auto msg = record_error([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 1.0f;
            $autodiff {
                requires_grad(x);
                backward(x * x);
                line = __LINE__; backward(x);
            };
        };
    });
    EXPECT_NE(msg.find("a second backward"), std::string::npos) << msg;
    EXPECT_NE(msg.find(at(line)), std::string::npos) << msg;
}

TEST(AutodiffMisuse, BackwardAndGradOutsideAutodiff) {
    int line = 0;
    auto msg = record_error([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 1.0f;
            line = __LINE__; backward(x);
        };
    });
    EXPECT_NE(msg.find("backward outside an $autodiff block"), std::string::npos) << msg;
    EXPECT_NE(msg.find(at(line)), std::string::npos) << msg;
    msg = record_error([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 1.0f;
            line = __LINE__; out.write(0u, grad(x));
        };
    });
    EXPECT_NE(msg.find("grad outside an $autodiff block"), std::string::npos) << msg;
    EXPECT_NE(msg.find(at(line)), std::string::npos) << msg;
    msg = record_error([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 1.0f;
            line = __LINE__; requires_grad(x);
        };
    });
    EXPECT_NE(msg.find("requires_grad outside an $autodiff block"), std::string::npos) << msg;
    EXPECT_NE(msg.find(at(line)), std::string::npos) << msg;
}

TEST(AutodiffMisuse, GradBeforeBackward) {
    int line = 0;
    auto msg = record_error([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 1.0f;
            $autodiff {
                requires_grad(x);
                line = __LINE__; out.write(0u, grad(x));
                backward(x * x);
            };
        };
    });
    EXPECT_NE(msg.find("grad before backward"), std::string::npos) << msg;
    EXPECT_NE(msg.find(at(line)), std::string::npos) << msg;
}

TEST(AutodiffMisuse, NestedBlocksAndMissingBackward) {
    int line = 0;
    auto msg = record_error([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 1.0f;
            $autodiff {
                requires_grad(x);
                line = __LINE__; $autodiff { backward(x); };
                backward(x);
            };
        };
    });
    EXPECT_NE(msg.find("nested $autodiff"), std::string::npos) << msg;
    EXPECT_NE(msg.find(at(line)), std::string::npos) << msg;
    msg = record_error([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 1.0f;
            line = __LINE__; $autodiff { requires_grad(x); };
        };
    });
    EXPECT_NE(msg.find("has no backward"), std::string::npos) << msg;
    EXPECT_NE(msg.find(at(line)), std::string::npos) << msg;
}

TEST(AutodiffMisuse, BackwardInsideABranch) {
    int line = 0;
    auto msg = record_error([&] {
        Kernel1D k = [&](BufferFloat out) noexcept {
            Float x = 1.0f;
            $autodiff {
                requires_grad(x);
                $if (x > 0.0f) {
                    line = __LINE__; backward(x);
                };
            };
        };
    });
    EXPECT_NE(msg.find("backward inside a branch or loop"), std::string::npos) << msg;
    EXPECT_NE(msg.find(at(line)), std::string::npos) << msg;
}

} // namespace adjoint::test
