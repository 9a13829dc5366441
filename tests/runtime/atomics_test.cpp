// Contended atomics: exact int/uint sums, exact float sums of halves, and the compare-and-swap fallback.
#include "support/device_fixture.h"
#include "support/host_run.h"

#include <cstdlib>

namespace adjoint::test {

namespace {

constexpr uint32_t kThreads = 100'000;
constexpr uint32_t kSlots = 7;

// Every thread adds 1.0 or 0.5 into one of a few slots: each partial sum is a multiple of 0.5 below 2^23,
// hence exact in float whatever the order, so the totals can be compared exactly.
Kernel1D<void(BufferFloat, BufferFloat)> float_add_kernel() {
    return [](BufferFloat slots, BufferFloat olds) noexcept {
        auto i = dispatch_id().x;
        Float v = ite(i % 3u == 0u, 0.5f, 1.0f);
        Float old = slots.atomic(i % kSlots).fetch_add(v);
        olds.write(i, old);
    };
}

void check_float_sums(Device& device, Stream& stream, const char* who) {
    auto k = float_add_kernel();
    auto shader = device.compile(k);
    auto slots = device.create_buffer<float>(kSlots);
    auto olds = device.create_buffer<float>(kThreads);
    stream << slots.fill_zero() << shader(slots, olds).dispatch(kThreads);
    auto got = download(stream, slots);
    auto old = download(stream, olds);
    std::vector<float> want(kSlots, 0.0f);
    for (uint32_t i = 0; i < kThreads; ++i) want[i % kSlots] += i % 3 == 0 ? 0.5f : 1.0f;
    EXPECT_EQ(got, want) << who;
    // Each returned old value is a partial sum: a multiple of 0.5 in [0, total).
    for (uint32_t i = 0; i < kThreads; i += 97) {
        EXPECT_GE(old[i], 0.0f) << who << " " << i;
        EXPECT_LT(old[i], want[i % kSlots]) << who << " " << i;
        EXPECT_EQ(old[i] * 2, std::floor(old[i] * 2)) << who << " " << i;
    }
}

// fetch_min / fetch_max on floats, and a plain read of the same buffer (which the CAS fallback declares
// as uint and must convert back).
void check_float_min_max(Device& device, Stream& stream, const char* who) {
    Kernel1D k = [](BufferFloat in, BufferFloat mm, BufferFloat echo) noexcept {
        auto i = dispatch_id().x;
        Float v = in.read(i);
        mm.atomic(0u).fetch_min(v);
        mm.atomic(1u).fetch_max(v);
        echo.write(i, mm.read(2u) + v);
    };
    const uint32_t n = 20'000;
    auto in = random_floats(n, -1000, 1000, 12);
    auto shader = device.compile(k);
    std::vector<float> mm_init{1e30f, -1e30f, 0.5f};
    auto in_buf = upload(device, stream, in);
    auto mm = upload(device, stream, mm_init);
    auto echo = device.create_buffer<float>(n);
    stream << shader(in_buf, mm, echo).dispatch(n);
    auto got = download(stream, mm);
    auto got_echo = download(stream, echo);
    EXPECT_EQ(got[0], *std::min_element(in.begin(), in.end())) << who;
    EXPECT_EQ(got[1], *std::max_element(in.begin(), in.end())) << who;
    EXPECT_EQ(got[2], 0.5f) << who;
    for (uint32_t i = 0; i < n; i += 101) EXPECT_EQ(got_echo[i], in[i] + 0.5f) << who << " " << i;
}

} // namespace

class Atomics : public DeviceTest {};

TEST_F(Atomics, IntFetchAddFromManyThreadsIsExact) {
    Kernel1D k = [](BufferInt slots, BufferUInt uslots) noexcept {
        auto i = dispatch_id().x;
        slots.atomic(i % kSlots).fetch_add(cast<int>(i % 5u) - 2);
        uslots.atomic(i % 3u).fetch_add(i);
    };
    auto shader = device.compile(k);
    auto slots = device.create_buffer<int32_t>(kSlots);
    auto uslots = device.create_buffer<uint32_t>(3);
    stream << slots.fill_zero() << uslots.fill_zero() << shader(slots, uslots).dispatch(kThreads);
    std::vector<int32_t> want(kSlots, 0);
    std::vector<uint32_t> uwant(3, 0);
    for (uint32_t i = 0; i < kThreads; ++i) {
        want[i % kSlots] += int32_t(i % 5) - 2;
        uwant[i % 3] += i;   // wraps modulo 2^32 like the device
    }
    EXPECT_EQ(download(stream, slots), want);
    EXPECT_EQ(download(stream, uslots), uwant);

    // The interpreter runs threads one after another: same totals.
    std::vector<int32_t> hs(kSlots, 0);
    std::vector<uint32_t> hu(3, 0);
    interpret(k, {kThreads, 1, 1}, hs, hu);
    EXPECT_EQ(hs, want);
    EXPECT_EQ(hu, uwant);
}

TEST_F(Atomics, IntMinMaxExchangeAndCompareExchange) {
    Kernel1D k = [](BufferInt in, BufferInt mm, BufferUInt claims, BufferUInt winners) noexcept {
        auto i = dispatch_id().x;
        Int v = in.read(i);
        mm.atomic(0u).fetch_min(v);
        mm.atomic(1u).fetch_max(v);
        mm.atomic(2u).fetch_sub(1);
        // Exactly one thread per slot claims it: compare_exchange(0 -> i + 1) succeeds once.
        UInt old = claims.atomic(i % 16u).compare_exchange(0u, i + 1u);
        $if (old == 0u) { winners.atomic(i % 16u).exchange(i + 1u); };
    };
    const uint32_t n = 50'000;
    std::vector<int32_t> in(n);
    std::mt19937 rng(3);
    std::uniform_int_distribution<int32_t> dist(-1'000'000, 1'000'000);
    for (auto& x : in) x = dist(rng);
    auto shader = device.compile(k);
    auto in_buf = upload(device, stream, in);
    std::vector<int32_t> mm_init{INT32_MAX, INT32_MIN, 0};
    auto mm = upload(device, stream, mm_init);
    auto claims = device.create_buffer<uint32_t>(16);
    auto winners = device.create_buffer<uint32_t>(16);
    stream << claims.fill_zero() << winners.fill_zero() << shader(in_buf, mm, claims, winners).dispatch(n);
    auto got_mm = download(stream, mm);
    EXPECT_EQ(got_mm[0], *std::min_element(in.begin(), in.end()));
    EXPECT_EQ(got_mm[1], *std::max_element(in.begin(), in.end()));
    EXPECT_EQ(got_mm[2], -int32_t(n));
    auto got_claims = download(stream, claims);
    auto got_winners = download(stream, winners);
    for (uint32_t s = 0; s < 16; ++s) {
        // The winner of slot s is a thread i with i % 16 == s, and it recorded itself.
        ASSERT_NE(got_claims[s], 0u) << s;
        EXPECT_EQ((got_claims[s] - 1) % 16, s);
        EXPECT_EQ(got_winners[s], got_claims[s]) << s;
    }
}

TEST_F(Atomics, FloatFetchAddIsExactForHalves) {
    check_float_sums(device, stream, "native float atomics");
    std::vector<float> slots(kSlots, 0.0f), olds(kThreads);
    interpret(float_add_kernel(), {kThreads, 1, 1}, slots, olds);
    std::vector<float> want(kSlots, 0.0f);
    for (uint32_t i = 0; i < kThreads; ++i) want[i % kSlots] += i % 3 == 0 ? 0.5f : 1.0f;
    EXPECT_EQ(slots, want);
}

TEST_F(Atomics, FloatFetchMinMax) { check_float_min_max(device, stream, "device default"); }

TEST_F(Atomics, FloatFetchAddWithCompareAndSwapFallback) {
    // The variable is read by create_device: a second device made while it is set uses CAS loops.
    ::setenv("ADJOINT_NO_FLOAT_ATOMICS", "1", 1);
    std::unique_ptr<Device> cas_device;
    try {
        Context ctx;
        cas_device = std::make_unique<Device>(ctx.create_device());
    } catch (...) {
        ::unsetenv("ADJOINT_NO_FLOAT_ATOMICS");
        throw;
    }
    ::unsetenv("ADJOINT_NO_FLOAT_ATOMICS");
    Stream cas_stream = cas_device->create_stream();
    auto shader = cas_device->compile(float_add_kernel());
    EXPECT_NE(shader.glsl().find("atomicCompSwap"), std::string::npos) << shader.glsl();
    EXPECT_EQ(shader.glsl().find("GL_EXT_shader_atomic_float"), std::string::npos) << shader.glsl();
    check_float_sums(*cas_device, cas_stream, "compare-and-swap fallback");

    check_float_min_max(*cas_device, cas_stream, "compare-and-swap fallback");
    EXPECT_EQ(cas_device->validation_message_count(), 0u)
        << (cas_device->validation_messages().empty() ? "" : cas_device->validation_messages().front());
}

} // namespace adjoint::test
