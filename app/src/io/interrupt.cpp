// Signal handlers that turn SIGINT/SIGTERM into a flag the optimization loop polls between iterations.
#include <adjoint/app/interrupt.h>
#include <adjoint/core/error.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace adjoint::app {
namespace {

// Lock-free atomics are safe to touch from a signal handler.
std::atomic<int> received_signal{0};
std::atomic<bool> guard_active{false};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_signal(int signal) {
    int expected = 0;
    received_signal.compare_exchange_strong(expected, signal);
}

void install(int signal, struct sigaction* previous) {
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;  // a second signal takes the default action: force-quit
    if (::sigaction(signal, &action, previous) != 0)
        fail("cannot install the handler for signal ", signal, ": ", std::strerror(errno));
}

} // namespace

InterruptGuard::InterruptGuard() {
    if (guard_active.exchange(true)) fail("InterruptGuard: a guard is already installed");
    received_signal.store(0);
    bool int_installed = false;
    try {
        install(SIGINT, &previous_int_);
        int_installed = true;
        install(SIGTERM, &previous_term_);
    } catch (...) {
        if (int_installed) ::sigaction(SIGINT, &previous_int_, nullptr);
        guard_active.store(false);
        throw;
    }
}

InterruptGuard::~InterruptGuard() {
    ::sigaction(SIGTERM, &previous_term_, nullptr);
    ::sigaction(SIGINT, &previous_int_, nullptr);
    guard_active.store(false);
}

bool interrupt_requested() { return received_signal.load() != 0; }
int interrupt_signal() { return received_signal.load(); }

} // namespace adjoint::app
