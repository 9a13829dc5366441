// The process-wide table of trap messages.
#include <adjoint/ir/trap.h>

#include <mutex>
#include <vector>

namespace adjoint::ir {

namespace {
std::mutex mutex;
std::vector<std::string>& table() {
    static std::vector<std::string> t;
    return t;
}
} // namespace

uint32_t register_trap(const std::string& message) {
    std::lock_guard lock(mutex);
    auto& t = table();
    for (size_t i = 0; i < t.size(); ++i)
        if (t[i] == message) return uint32_t(i + 1);
    t.push_back(message);
    return uint32_t(t.size());
}

std::string trap_message(uint32_t code) {
    std::lock_guard lock(mutex);
    auto& t = table();
    if (code == 0 || code > t.size()) return "unknown kernel error code " + std::to_string(code);
    return t[code - 1];
}

} // namespace adjoint::ir
