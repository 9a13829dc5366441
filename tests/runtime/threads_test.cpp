// One Device used from several threads at once: recording, compiling, dispatching, a shared Stream.
#include "support/device_fixture.h"

#include <atomic>
#include <mutex>
#include <thread>

namespace adjoint::test {

namespace {

constexpr int kThreads = 4;

// Runs body(t) on kThreads threads and returns the first error any of them threw.
std::string run_threads(const std::function<void(int)>& body) {
    std::mutex mutex;
    std::string first_error;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            try {
                body(t);
            } catch (const std::exception& e) {
                std::lock_guard lock(mutex);
                if (first_error.empty()) first_error = "thread " + std::to_string(t) + ": " + e.what();
            }
        });
    for (auto& th : threads) th.join();
    return first_error;
}

} // namespace

class Threads : public DeviceTest {};

TEST_F(Threads, FourThreadsRecordCompileAndDispatchOnOneDevice) {
    // Each thread records kernels of its own and one every thread records alike (so the kernel cache is
    // hit and filled concurrently), compiles them on the shared device and runs them on a stream of its own.
    constexpr int kRounds = 5;
    constexpr uint32_t n = 1000;
    std::atomic<int> checked{0};
    std::string error = run_threads([&](int t) {
        Stream own = device.create_stream();
        for (int round = 0; round < kRounds; ++round) {
            const float c = float(t * 100 + round);
            Kernel1D mine = [c](BufferFloat x, BufferFloat y) noexcept {
                auto i = dispatch_id().x;
                y.write(i, x.read(i) * 3.0f + c);
            };
            Kernel1D common = [](BufferFloat x, BufferFloat y) noexcept {
                auto i = dispatch_id().x;
                y.atomic(i).fetch_add(x.read(i));
            };
            auto s_mine = device.compile(mine);
            auto s_common = device.compile(common);
            auto x = device.create_buffer<float>(n);
            auto y = device.create_buffer<float>(n);
            std::vector<float> host(n), got(n);
            for (uint32_t i = 0; i < n; ++i) host[i] = float(i);
            own << x.copy_from(host.data()) << s_mine(x, y).dispatch(n) << s_common(x, y).dispatch(n)
                << y.copy_to(got.data()) << synchronize();
            for (uint32_t i = 0; i < n; ++i)
                if (got[i] != float(i) * 4.0f + c)
                    throw Error("element " + std::to_string(i) + " is " + std::to_string(got[i]) + ", want " +
                                std::to_string(float(i) * 4.0f + c));
            ++checked;
        }
    });
    EXPECT_EQ(error, "");
    EXPECT_EQ(checked.load(), kThreads * kRounds);
}

TEST_F(Threads, FourThreadsShareOneStream) {
    // Commands from several threads interleave on one stream, each recorded whole; a thread's synchronize()
    // completes everything recorded before it, its own commands included.
    Kernel1D k = [](BufferUInt out, UInt salt) noexcept {
        auto i = dispatch_id().x;
        out.write(i, i * 7u + salt);
    };
    auto shader = device.compile(k);
    constexpr uint32_t n = 4096;
    std::string error = run_threads([&](int t) {
        auto out = device.create_buffer<uint32_t>(n);
        std::vector<uint32_t> got(n);
        for (int round = 0; round < 10; ++round) {
            uint32_t salt = uint32_t(t * 1000 + round);
            stream << shader(out, salt).dispatch(n) << out.copy_to(got.data()) << synchronize();
            for (uint32_t i = 0; i < n; ++i)
                if (got[i] != i * 7 + salt) throw Error("element " + std::to_string(i) + " is wrong");
        }
    });
    EXPECT_EQ(error, "");
}

} // namespace adjoint::test
