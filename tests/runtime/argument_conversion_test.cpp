// C++ numbers passed for scalar parameters: one rule for all of them. Float takes any number (rounded to
// float) but a bool; Int and UInt take an integer in their range; Bool takes a bool. Anything else is an
// Error naming the kernel and the argument.
#include "support/device_fixture.h"
#include "support/host_run.h"
#include "support/error_text.h"

#include <cstdint>
#include <limits>

namespace adjoint::test {

namespace {

Kernel1D scalars = [](BufferFloat out, Float f, Int i, UInt u, Bool b) noexcept {
    out.write(0u, f);
    out.write(1u, cast<float>(i));
    out.write(2u, cast<float>(u));
    out.write(3u, ite(b, 1.0f, 0.0f));
};

} // namespace

class ArgumentConversion : public DeviceTest {
protected:
    template <typename... A>
    std::vector<float> run(const A&... args) {
        auto shader = device.compile(scalars, {.name = "scalars"});
        auto out = device.create_buffer<float>(4);
        stream << shader(out, args...).dispatch(1);
        return download(stream, out);
    }
    template <typename... A>
    std::string refused(const A&... args) {
        auto shader = device.compile(scalars, {.name = "scalars"});
        auto out = device.create_buffer<float>(4);
        return error_of([&] { (void)shader(out, args...); });
    }
};

TEST_F(ArgumentConversion, NumbersThatFitConvert) {
    using V = std::vector<float>;
    EXPECT_EQ(run(3, 3, 3, true), (V{3, 3, 3, 1}));                       // int literals, UInt included
    EXPECT_EQ(run(0.1, -5, 4000000000u, false), (V{0.1f, -5, 4e9f, 0}));  // a double rounds to the float
    EXPECT_EQ(run(2.5f, int64_t(-2147483648LL), uint8_t(9), true), (V{2.5f, -2147483648.0f, 9, 1}));
    EXPECT_EQ(run(uint64_t(7), 2147483647u, int64_t(4294967295LL), false), (V{7, 2147483647.0f, 4294967295.0f, 0}));
}

TEST_F(ArgumentConversion, NumbersThatDoNotFitAreRefusedByName) {
    // -1 for a UInt: the message names the kernel, the argument and the range.
    std::string e = refused(1.0f, 1, -1, true);
    EXPECT_NE(e.find("argument 3 of kernel 'scalars' is a uint"), std::string::npos) << e;
    EXPECT_NE(e.find("-1"), std::string::npos) << e;
    EXPECT_NE(e.find("[0, 4294967295]"), std::string::npos) << e;
    EXPECT_NE(refused(1.0f, 1, int64_t(4294967296LL), true).find("argument 3"), std::string::npos);
    EXPECT_NE(refused(1.0f, 2147483648u, 1, true).find("argument 2 of kernel 'scalars' is a int"), std::string::npos);
    EXPECT_NE(refused(1.0f, int64_t(-2147483649LL), 1, true).find("argument 2"), std::string::npos);
    // A floating-point value for an integer parameter, even a whole one, is refused, not truncated.
    e = refused(1.0f, 3.0, 1, true);
    EXPECT_NE(e.find("argument 2 of kernel 'scalars' is a int: got the floating-point number 3"), std::string::npos) << e;
    EXPECT_NE(refused(1.0f, 1, 0.5f, true).find("argument 3"), std::string::npos);
    // Bool takes a bool; a bool is no number for the others.
    e = refused(1.0f, 1, 1, 1);
    EXPECT_NE(e.find("argument 4 of kernel 'scalars' is a bool: got the integer 1 (pass true or false)"), std::string::npos) << e;
    EXPECT_NE(refused(true, 1, 1, true).find("argument 1 of kernel 'scalars' is a float: got the bool true"), std::string::npos);
    EXPECT_NE(refused(1.0f, false, 1, true).find("argument 2"), std::string::npos);
}

} // namespace adjoint::test

namespace adjoint::test {

// A UInt64 takes any non-negative C++ integer, exactly (a double would round 2^53 + 1).
TEST_F(ArgumentConversion, Uint64TakesIntegersExactly) {
    Kernel1D k = [](BufferUInt64 out, UInt64 v) noexcept { out.write(0u, v + 1ul); };
    auto shader = device.compile(k, {.name = "wide"});
    auto out = device.create_buffer<uint64_t>(1);
    for (uint64_t v : {uint64_t(0), (uint64_t(1) << 53) + 1, ~uint64_t(0) - 1}) {
        stream << shader(out, v).dispatch(1);
        EXPECT_EQ(download(stream, out)[0], v + 1);
    }
    stream << shader(out, 5).dispatch(1);   // an int literal
    EXPECT_EQ(download(stream, out)[0], 6u);
    std::string e = error_of([&] { (void)shader(out, -1); });
    EXPECT_NE(e.find("argument 1 of kernel 'wide' is a uint64: got the integer -1, outside its range"), std::string::npos) << e;
    e = error_of([&] { (void)shader(out, 2.0); });
    EXPECT_NE(e.find("argument 1 of kernel 'wide' is a uint64: got the floating-point number 2 (convert it explicitly)"),
              std::string::npos) << e;
}

} // namespace adjoint::test
