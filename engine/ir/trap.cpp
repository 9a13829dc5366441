// Trap messages: each kernel's own table, codes derived from the messages.
#include <adjoint/ir/trap.h>

#include <adjoint/core/hash.h>

namespace adjoint::ir {

uint32_t add_trap(Function& f, const std::string& message) {
    uint32_t code = uint32_t(hash_string(message)) & 0x7fffffffu;
    for (;; ++code) {
        if (code == 0) continue;   // 0: no trap ran
        auto [it, fresh] = f.traps.try_emplace(code, message);
        if (fresh || it->second == message) return code;
    }
}

std::string trap_message(const TrapTable& traps, uint32_t code) {
    auto it = traps.find(code);
    return it != traps.end() ? it->second : "unknown kernel error code " + std::to_string(code);
}

} // namespace adjoint::ir
