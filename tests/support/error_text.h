// The message of the adjoint::Error a piece of test code throws, and the check that it names what it should.
#pragma once
#include <adjoint/core/error.h>

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <type_traits>

namespace adjoint::test {

// The message of the exception of type E (adjoint::Error or a subclass: UsageError, SceneError) that `f`
// throws; a test failure (and "(no error)") when it throws none.
template <typename E = Error, typename F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    ADD_FAILURE() << "no " << (std::is_same_v<E, Error> ? "adjoint::Error" : "error of the expected type")
                  << " was thrown";
    return "(no error)";
}

// Whether `f` throws an adjoint::Error whose message contains `text`: EXPECT_TRUE(throws_error(f, text)) prints
// the message when it does not.
template <typename F>
::testing::AssertionResult throws_error(F&& f, std::string_view text) {
    try {
        f();
    } catch (const Error& e) {
        std::string_view msg = e.what();
        if (msg.find(text) != std::string_view::npos) return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure() << "the error does not contain \"" << text << "\"; it says: " << msg;
    }
    return ::testing::AssertionFailure() << "no adjoint::Error was thrown (expected one containing \"" << text << "\")";
}

} // namespace adjoint::test
