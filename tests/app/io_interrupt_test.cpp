// InterruptGuard: SIGINT/SIGTERM become a flag, a second SIGINT force-quits, old handlers come back.
#include "app/io_test_util.h"

#include <adjoint/app/interrupt.h>

#include <csignal>

using namespace adjoint::app;
using adjoint::app::test::error_of;

namespace {
volatile std::sig_atomic_t custom_calls = 0;
extern "C" void custom_handler(int) { custom_calls = custom_calls + 1; }
} // namespace

TEST(IoInterrupt, SigintSetsTheFlagAndTheProcessGoesOn) {
    InterruptGuard guard;
    EXPECT_FALSE(interrupt_requested());
    std::raise(SIGINT);
    EXPECT_TRUE(interrupt_requested());
    EXPECT_EQ(interrupt_signal(), SIGINT);
}

TEST(IoInterrupt, SigtermSetsTheFlagToo) {
    InterruptGuard guard;
    std::raise(SIGTERM);
    EXPECT_TRUE(interrupt_requested());
    EXPECT_EQ(interrupt_signal(), SIGTERM);
}

TEST(IoInterrupt, NewGuardClearsTheFlag) {
    {
        InterruptGuard guard;
        std::raise(SIGINT);
        EXPECT_TRUE(interrupt_requested());
    }
    InterruptGuard guard;
    EXPECT_FALSE(interrupt_requested());
}

TEST(IoInterrupt, SecondSigintKillsTheProcess) {
    EXPECT_EXIT(
        {
            InterruptGuard guard;
            std::raise(SIGINT);
            if (!interrupt_requested()) std::exit(3);
            std::raise(SIGINT);  // the default action: killed by SIGINT
            std::exit(0);
        },
        ::testing::KilledBySignal(SIGINT), "");
}

TEST(IoInterrupt, PreviousHandlersAreRestored) {
    struct sigaction custom = {}, saved_int = {}, saved_term = {};
    custom.sa_handler = custom_handler;
    sigemptyset(&custom.sa_mask);
    sigaction(SIGINT, &custom, &saved_int);
    sigaction(SIGTERM, &custom, &saved_term);
    custom_calls = 0;
    {
        InterruptGuard guard;
        std::raise(SIGINT);  // the guard's handler, not the custom one
        EXPECT_EQ(custom_calls, 0);
    }
    std::raise(SIGINT);
    std::raise(SIGTERM);
    EXPECT_EQ(custom_calls, 2);
    sigaction(SIGINT, &saved_int, nullptr);
    sigaction(SIGTERM, &saved_term, nullptr);
}

TEST(IoInterrupt, OneGuardAtATime) {
    InterruptGuard guard;
    EXPECT_EQ(error_of([] { InterruptGuard second; }), "InterruptGuard: a guard is already installed");
}
