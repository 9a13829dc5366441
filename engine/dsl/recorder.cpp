// The thread-local stack of recordings (kernels and callables nest while they are recorded).
#include <adjoint/dsl/recorder.h>

#include <adjoint/core/error.h>

namespace adjoint::detail {

namespace {
thread_local std::vector<std::unique_ptr<Recorder>> stack;
thread_local std::string deferred;
}

void defer_error(const std::string& message) {
    if (stack.empty()) throw Error(message);
    if (deferred.empty()) deferred = message;
}

void throw_deferred_error() {
    if (deferred.empty()) return;
    std::string message = std::move(deferred);
    deferred.clear();
    throw Error(message);
}

std::string operator_error(std::string message, const std::source_location& last) {
    const std::string at = " at " + format_location(last);
    const size_t found = last.line() == 0 ? std::string::npos : message.rfind(at);
    if (found == std::string::npos || found + at.size() != message.size()) return message;
    return message.substr(0, found) + " in an operator at or after " + format_location(last) +
           " (operators carry no line of their own: the last line recorded before it)";
}

bool is_outermost_recording() { return stack.size() == 1; }

Recorder& Recorder::current(const std::source_location& loc) {
    if (stack.empty()) {
        std::string where = format_location(loc);
        fail("a DSL operation was used outside a kernel or callable being recorded",
             where.empty() ? std::string(" (a DSL value kept from a recording that has ended?)") : " at " + where);
    }
    return *stack.back();
}

Recorder* Recorder::top() { return stack.empty() ? nullptr : stack.back().get(); }

bool Recorder::is_recording(const ir::Function* f) {
    for (auto& r : stack)
        if (r->function.get() == f) return true;
    return false;
}

std::vector<ir::ValueId> Recorder::indices(const Path& path) {
    std::vector<ir::ValueId> out;
    out.reserve(path.size());
    for (const PathElem& e : path) out.push_back(e.dynamic != ir::kNoValue ? e.dynamic : b.i32(int32_t(e.index), last_loc));
    return out;
}

RecordScope::RecordScope(std::shared_ptr<ir::Function> f) {
    if (stack.empty()) deferred.clear();
    stack.push_back(std::make_unique<Recorder>(std::move(f)));
    recorder_ = stack.back().get();
}

RecordScope::~RecordScope() { stack.pop_back(); }

} // namespace adjoint::detail
