// SIGINT/SIGTERM as a request to stop after the current iteration (exit code 130), with force-quit on a repeat.
#pragma once
#include <csignal>

namespace adjoint::app {

// While alive, SIGINT and SIGTERM set a flag (interrupt_requested) instead of killing the process.
// Each handler is one-shot (SA_RESETHAND): the first signal is a polite request, a second one of the
// same kind gets the default action, so a user can always force-quit with a second Ctrl-C. The
// destructor restores the handlers that were installed before. One guard at a time (adjoint::Error
// otherwise). Constructing a guard clears the flag.
class InterruptGuard {
public:
    InterruptGuard();
    ~InterruptGuard();
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;

private:
    struct sigaction previous_int_;
    struct sigaction previous_term_;
};

// Whether SIGINT or SIGTERM arrived since the guard was installed (async-signal-safe to read).
bool interrupt_requested();
// The signal that was received (SIGINT or SIGTERM), 0 when none.
int interrupt_signal();

} // namespace adjoint::app
