// Lavapipe's loop iteration limit: what the device does without the check (the measurement the check's
// threshold rests on), and the check itself: an error naming the kernel and the loop, never a wrong value.
#include "support/device_fixture.h"
#include "support/host_run.h"
#include "support/error_text.h"

#include <cstdlib>
#include <string>

namespace adjoint::test {

namespace {

bool is_lavapipe(const Device& d) { return d.name().find("llvmpipe") != std::string::npos; }

// The test file and a line of it, as error messages name them.
std::string here(int line) { return "runtime/loop_limit_test.cpp:" + std::to_string(line); }

// The lines of the loops below, set while the kernels are recorded (a statement on the loop's own line).
int first_loop_line = 0, second_loop_line = 0, inner_loop_line = 0, endless_line = 0, autodiff_line = 0,
    break_loop_line = 0;

// s counts n iterations, then t counts m (both read from buffers, so that no compiler unrolls them).
Kernel1D two_loops = [](BufferUInt ns, BufferUInt ms, BufferUInt out) noexcept {
    auto i = dispatch_id().x;
    UInt n = ns.read(i);
    UInt m = ms.read(i);
    UInt s = 0u;
    UInt t = 0u;
    $for (a, n) { s += 1u; }; first_loop_line = __LINE__;
    $for (a, m) { t += 1u; }; second_loop_line = __LINE__;
    out.write(2u * i, s);
    out.write(2u * i + 1u, t);
};

Kernel1D nested = [](BufferUInt ns, BufferUInt ms, BufferUInt out) noexcept {
    auto i = dispatch_id().x;
    UInt n = ns.read(i);
    UInt m = ms.read(i);
    UInt s = 0u;
    $for (a, n) {
        $for (b, m) { s += 1u; }; inner_loop_line = __LINE__;
    };
    out.write(i, s);
};

// s counts up to n, leaving by a $break of its own once it reaches m: the break sets the check's flag, where the
// loops above are checked by their exit tests alone after them.
Kernel1D own_break = [](BufferUInt ns, BufferUInt ms, BufferUInt out) noexcept {
    auto i = dispatch_id().x;
    UInt n = ns.read(i);
    UInt m = ms.read(i);
    UInt s = 0u;
    break_loop_line = __LINE__; $for (a, n) {
        s += 1u;
        $if (s == m) { $break; };
    };
    out.write(i, s);
};

// Even threads run one loop, odd threads the other: on lavapipe neighbouring threads share one budget.
Kernel1D divergent = [](BufferUInt ns, BufferUInt out) noexcept {
    auto i = dispatch_id().x;
    UInt n = ns.read(i);
    UInt s = 0u;
    $if (i % 2u == 0u) {
        $for (a, n) { s += 1u; };
    } $else {
        $for (a, n) { s += 2u; };
    };
    out.write(i, s);
};

// Runs two_loops (or nested) for one thread with n and m.
template <typename K>
std::vector<uint32_t> run_pair(Device& device, Stream& stream, const K& kernel, uint32_t n, uint32_t m, size_t outs) {
    auto shader = device.compile(kernel);
    auto nb = upload(device, stream, std::vector<uint32_t>{n});
    auto mb = upload(device, stream, std::vector<uint32_t>{m});
    auto out = device.create_buffer<uint32_t>(outs);
    stream << shader(nb, mb, out).dispatch(1);
    return download(stream, out);
}

std::vector<uint32_t> run_divergent(Device& device, Stream& stream, uint32_t threads, uint32_t n) {
    auto shader = device.compile(divergent);
    auto nb = upload(device, stream, std::vector<uint32_t>(threads, n));
    auto out = device.create_buffer<uint32_t>(threads);
    stream << shader(nb, out).dispatch(threads);
    return download(stream, out);
}

class LoopLimit : public DeviceTest {
protected:
    void SetUp() override {
        if (!is_lavapipe(device)) GTEST_SKIP() << "the loop limit is lavapipe's; this device is " << device.name();
    }
};

} // namespace

// The measurement, with the check turned off (ADJOINT_LOOP_LIMIT=0): one budget of 65,535 iterations per
// group of threads, the exit test's iteration included, shared by every loop; a spent budget ends each loop
// after its current iteration, but a loop's first iteration still runs.
TEST(LoopLimitDevice, LavapipeStopsLoopsAfter65535Iterations) {
    setenv("ADJOINT_LOOP_LIMIT", "0", 1);
    Context ctx;
    Device device = ctx.create_device();
    unsetenv("ADJOINT_LOOP_LIMIT");
    if (!is_lavapipe(device)) GTEST_SKIP() << "not lavapipe: " << device.name();
    Stream stream = device.create_stream();
    using V = std::vector<uint32_t>;
    EXPECT_EQ(run_pair(device, stream, two_loops, 65535, 0, 2), (V{65535, 0}));
    EXPECT_EQ(run_pair(device, stream, two_loops, 65536, 0, 2), (V{65535, 0}));          // stopped
    EXPECT_EQ(run_pair(device, stream, two_loops, 100000, 0, 2), (V{65535, 0}));         // stopped
    EXPECT_EQ(run_pair(device, stream, two_loops, 65532, 2, 2), (V{65532, 2}));          // 65533 + 2 iterations
    EXPECT_EQ(run_pair(device, stream, two_loops, 65534, 2, 2), (V{65534, 1}));          // stopped
    EXPECT_EQ(run_pair(device, stream, two_loops, 70000, 3, 2), (V{65535, 1}));          // first iteration runs
    EXPECT_EQ(run_pair(device, stream, two_loops, 30000, 35534, 2), (V{30000, 35534}));  // 30001 + 35534
    EXPECT_EQ(run_pair(device, stream, two_loops, 30000, 35535, 2), (V{30000, 35534}));  // stopped
    // 300 x 300: 302 iterations per outer one (300 + the inner exit test + 1 outer), so 217 outer ones
    // and one inner iteration fit.
    EXPECT_EQ(run_pair(device, stream, nested, 300, 300, 1), (V{65101}));
    EXPECT_EQ(run_pair(device, stream, nested, 217, 300, 1), (V{65100}));
    // Two threads of one group in different loops: the odd one gets what the even one left.
    EXPECT_EQ(run_divergent(device, stream, 2, 40000), (V{40000, 2 * (65535 - 40001)}));
    EXPECT_EQ(device.validation_message_count(), 0u);
}

TEST_F(LoopLimit, A100000IterationLoopIsAnErrorNamingTheKernelAndTheLoop) {
    std::string e = error_of([&] { run_pair(device, stream, two_loops, 100000, 0, 2); });
    EXPECT_NE(e.find("in kernel '" + two_loops.name() + "'"), std::string::npos) << e;
    EXPECT_NE(e.find(here(first_loop_line)), std::string::npos) << e;
    EXPECT_NE(e.find("65535"), std::string::npos) << e;
    EXPECT_NE(e.find("not valid"), std::string::npos) << e;
    // The stream is usable again afterwards, and a loop that fits gives its value.
    EXPECT_EQ(run_pair(device, stream, two_loops, 60000, 0, 2), (std::vector<uint32_t>{60000, 0}));
}

// With the check, the exit test also ends each iteration, so a loop of n >= 1 iterations uses n of the
// budget (not n + 1), and the budget is used to its last iteration without a report.
TEST_F(LoopLimit, LoopsThatCompleteAreNeverReportedUpToTheLastIteration) {
    using V = std::vector<uint32_t>;
    EXPECT_EQ(run_pair(device, stream, two_loops, 30000, 35535, 2), (V{30000, 35535}));
    EXPECT_EQ(run_pair(device, stream, two_loops, 65534, 1, 2), (V{65534, 1}));
    EXPECT_EQ(run_pair(device, stream, two_loops, 60000, 0, 2), (V{60000, 0}));
    EXPECT_EQ(run_pair(device, stream, two_loops, 65535, 0, 2), (V{65535, 0}));
    EXPECT_EQ(run_pair(device, stream, two_loops, 65532, 2, 2), (V{65532, 2}));
    EXPECT_EQ(run_pair(device, stream, two_loops, 65535, 1, 2), (V{65535, 1}));
    EXPECT_EQ(run_pair(device, stream, two_loops, 30000, 35534, 2), (V{30000, 35534}));
    EXPECT_EQ(run_pair(device, stream, nested, 217, 300, 1), (V{65100}));
}

TEST_F(LoopLimit, EveryLoopThatTheDeviceWouldStopIsReported) {
    // The error names the loop that was stopped first.
    for (auto [n, m] : {std::pair{65536u, 0u}, {65534u, 2u}, {70000u, 3u}, {30000u, 35536u}}) {
        std::string e = error_of([&] { run_pair(device, stream, two_loops, n, m, 2); });
        EXPECT_NE(e.find("loop iteration limit"), std::string::npos) << n << ", " << m << ": " << e;
        EXPECT_NE(e.find(here(n > 65535 ? first_loop_line : second_loop_line)), std::string::npos) << e;
    }
}

TEST_F(LoopLimit, ALoopWithABreakOfItsOwnIsCheckedToo) {
    using V = std::vector<uint32_t>;
    EXPECT_EQ(run_pair(device, stream, own_break, 100000, 40000, 1), (V{40000}));   // its own break
    EXPECT_EQ(run_pair(device, stream, own_break, 65535, 0, 1), (V{65535}));        // its exit test, at the last
    std::string e = error_of([&] { run_pair(device, stream, own_break, 100000, 0, 1); });
    EXPECT_NE(e.find("loop iteration limit in kernel '" + own_break.name() + "'"), std::string::npos) << e;
    EXPECT_NE(e.find(here(break_loop_line)), std::string::npos) << e;
}

TEST_F(LoopLimit, Nested300By300IsAnError) {
    std::string e = error_of([&] { run_pair(device, stream, nested, 300, 300, 1); });
    EXPECT_NE(e.find("loop iteration limit in kernel"), std::string::npos) << e;
    EXPECT_NE(e.find(here(inner_loop_line)), std::string::npos) << e;
    EXPECT_NE(e.find("inside $autodiff the reverse pass runs a loop again"), std::string::npos) << e;
}

// Threads of one group share lavapipe's budget: two threads, each 40,000 iterations in its own loop.
TEST_F(LoopLimit, NeighbouringThreadsInDifferentLoopsShareTheBudget) {
    EXPECT_EQ(run_divergent(device, stream, 1, 40000), (std::vector<uint32_t>{40000}));
    std::string e = error_of([&] { run_divergent(device, stream, 2, 40000); });
    EXPECT_NE(e.find("loop iteration limit"), std::string::npos) << e;
}

TEST_F(LoopLimit, AnEndlessLoopIsAnError) {
    Kernel1D endless = [](BufferUInt out) noexcept {
        UInt s = 0u;
        $loop { s += 1u; }; endless_line = __LINE__;
        out.write(0u, s);
    };
    auto shader = device.compile(endless);
    auto out = device.create_buffer<uint32_t>(1);
    std::string e = error_of([&] { stream << shader(out).dispatch(1) << synchronize(); });
    EXPECT_NE(e.find("loop iteration limit"), std::string::npos) << e;
    EXPECT_NE(e.find(here(endless_line)), std::string::npos) << e;
}

TEST_F(LoopLimit, LoopsInsideAutodiffAreCheckedToo) {
    // y = x + n * 0.0001 x, so dy/dx = 1 + n * 0.0001. Forward mode: one loop of n + 1 iterations.
    Kernel1D forward = [](BufferUInt ns, BufferFloat out) noexcept {
        UInt n = ns.read(0u);
        Float x = 2.0f;
        $autodiff {
            requires_grad(x);
            Float y = x;
            $for (j, n) { y = y + x * 0.0001f; }; autodiff_line = __LINE__;
            backward(y);
            out.write(0u, grad(x));
        };
    };
    // The same with a tape: the forward loop, then the reverse loop, about 2 (n + 1) iterations in all.
    Kernel1D taped = [](BufferUInt ns, BufferFloat out) noexcept {
        UInt n = ns.read(0u);
        Float x = 2.0f;
        $autodiff {
            requires_grad(x);
            Float y = x;
            tape_capacity(50000);
            $for (j, n) { y = y + x * 0.0001f; };
            backward(y);
            out.write(0u, grad(x));
        };
    };
    for (auto* k : {&forward, &taped}) {
        auto shader = device.compile(*k);
        auto run = [&](uint32_t n) {
            auto nb = upload(device, stream, std::vector<uint32_t>{n});
            auto out = device.create_buffer<float>(1);
            stream << shader(nb, out).dispatch(1);
            return download(stream, out)[0];
        };
        EXPECT_NEAR(run(20000), 1.0f + 20000 * 0.0001f, 1e-3f);
        std::string e = error_of([&] { run(k == &forward ? 70000 : 40000); });
        EXPECT_NE(e.find("loop iteration limit in kernel '" + k->name() + "'"), std::string::npos) << e;
        if (k == &forward) {
            EXPECT_NE(e.find(here(autodiff_line)), std::string::npos) << e;
        }
    }
}

} // namespace adjoint::test
