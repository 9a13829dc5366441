// adjoint::Error and the helpers that build its messages; the one exception type of the engine.
#pragma once
#include <source_location>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace adjoint {

// Every failure the engine reports to a user is an Error whose message names the cause and, where one
// exists, the kernel and the C++ line of the DSL call that caused it.
class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// "file.cpp:42" for a recorded source location; empty when unknown.
std::string format_location(const std::source_location& loc);

template <typename... Args>
[[noreturn]] void fail(Args&&... args) {
    std::ostringstream os;
    (os << ... << std::forward<Args>(args));
    throw Error(os.str());
}

} // namespace adjoint
