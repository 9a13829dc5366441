// Kernel profiling (runtime/profile.h): dispatches counted per kernel name, their device time measured by
// timestamps, nothing recorded while off, and the dispatches past a submission's capacity counted as untimed.
#include "support/device_fixture.h"

#include <algorithm>

namespace adjoint::test {

namespace {

const KernelTime* find(const std::vector<KernelTime>& times, const std::string& name) {
    auto it = std::find_if(times.begin(), times.end(), [&](const KernelTime& t) { return t.kernel == name; });
    return it == times.end() ? nullptr : &*it;
}

} // namespace

class Profile : public DeviceTest {
protected:
    void TearDown() override {
        set_kernel_profiling(device, false);
        clear_kernel_times(device);
        DeviceTest::TearDown();
    }
};

TEST_F(Profile, CountsDispatchesPerKernelAndMeasuresTheirTime) {
    Kernel1D light = [](BufferFloat x) noexcept { x.write(dispatch_id().x, 1.0f); };
    Kernel1D heavy = [](BufferFloat x) noexcept {
        Float s = 0.0f;
        $for (k, 0u, 4000u) { s = s + sin(cast<float>(k) + x.read(dispatch_id().x)); };
        x.write(dispatch_id().x, s);
    };
    auto l = device.compile(light, {.name = "profile_light"});
    auto h = device.compile(heavy, {.name = "profile_heavy"});
    auto x = device.create_buffer<float>(1 << 16);
    stream << x.fill_zero() << synchronize();

    // Off: nothing is recorded.
    clear_kernel_times(device);
    stream << l(x).dispatch(1u << 16) << synchronize();
    EXPECT_TRUE(kernel_times(device).empty());

    set_kernel_profiling(device, true);
    EXPECT_TRUE(kernel_profiling(device));
    stream << l(x).dispatch(1u << 16) << h(x).dispatch(1u << 16) << l(x).dispatch(1u << 16) << synchronize();
    stream << h(x).dispatch(1u << 16) << l(x).dispatch(1u << 16) << synchronize();
    uint64_t untimed = 99;
    auto times = kernel_times(device, &untimed);
    const KernelTime* lt = find(times, "profile_light");
    const KernelTime* ht = find(times, "profile_heavy");
    ASSERT_TRUE(lt && ht) << kernel_time_table(times);
    EXPECT_EQ(lt->dispatches, 3u);
    EXPECT_EQ(ht->dispatches, 2u);
    EXPECT_EQ(untimed, 0u);
    EXPECT_GT(lt->ms, 0.0);
    // 4,000 sines a thread against one store: the heavy kernel is the slowest, and first in the list.
    EXPECT_GT(ht->ms, 10.0 * lt->ms) << kernel_time_table(times);
    EXPECT_EQ(times.front().kernel, "profile_heavy");
    const std::string table = kernel_time_table(times);
    EXPECT_NE(table.find("profile_heavy"), std::string::npos) << table;
    EXPECT_EQ(table.rfind("kernel", 0), 0u) << table;

    set_kernel_profiling(device, false);
    stream << h(x).dispatch(1u << 16) << synchronize();
    EXPECT_EQ(find(kernel_times(device), "profile_heavy")->dispatches, 2u);
    clear_kernel_times(device);
    EXPECT_TRUE(kernel_times(device).empty());
}

TEST_F(Profile, DispatchesPastASubmissionsCapacityAreCountedAsUntimed) {
    Kernel1D light = [](BufferFloat x) noexcept { x.write(dispatch_id().x, 2.0f); };
    auto l = device.compile(light, {.name = "profile_many"});
    auto x = device.create_buffer<float>(64);
    set_kernel_profiling(device, true);
    for (int i = 0; i < 2050; ++i) stream << l(x).dispatch(64u);
    stream << synchronize();
    uint64_t untimed = 0;
    auto times = kernel_times(device, &untimed);
    ASSERT_NE(find(times, "profile_many"), nullptr);
    EXPECT_EQ(find(times, "profile_many")->dispatches, 2048u);
    EXPECT_EQ(untimed, 2u);
}

} // namespace adjoint::test
