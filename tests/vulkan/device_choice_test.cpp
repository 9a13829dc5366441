// choose_device on made-up device lists: ranking, disqualification, overrides and their reports.
#include "vulkan/vk_runtime.h"

#include <gtest/gtest.h>

using namespace adjoint::vk;

namespace {

constexpr uint32_t kVulkan12 = (1u << 22) | (2u << 12);
constexpr uint32_t kVulkan10 = (1u << 22);

DeviceInfo device(uint32_t index, std::string name, DeviceKind kind, bool compute = true,
                  uint32_t api = kVulkan12) {
    DeviceInfo d;
    d.index = index;
    d.name = std::move(name);
    d.kind = kind;
    d.has_compute_queue = compute;
    d.api_version = api;
    return d;
}

std::vector<DeviceInfo> four_kinds() {
    return {device(0, "llvmpipe (LLVM 15.0.6, 256 bits)", DeviceKind::Cpu),
            device(1, "Virtio GPU", DeviceKind::Virtual), device(2, "Intel UHD 770", DeviceKind::Integrated),
            device(3, "NVIDIA GeForce RTX 4090", DeviceKind::Discrete)};
}

} // namespace

TEST(DeviceChoice, RanksDiscreteIntegratedVirtualCpu) {
    auto devices = four_kinds();
    for (uint32_t expected : {3u, 2u, 1u, 0u}) {
        DeviceChoice c = choose_device(devices, "");
        ASSERT_EQ(c.chosen, expected);
        EXPECT_EQ(c.report[expected],
                  devices[expected].name + " [" + to_string(devices[expected].kind) + "]: chosen");
        devices[expected].has_compute_queue = false; // disqualify the winner; the next kind wins
    }
    DeviceChoice none = choose_device(devices, "");
    EXPECT_FALSE(none.chosen);
    EXPECT_EQ(none.report[0], "llvmpipe (LLVM 15.0.6, 256 bits) [cpu]: passed over: no compute queue");
}

TEST(DeviceChoice, TiesGoToTheFirstEnumerated) {
    std::vector<DeviceInfo> devices = {device(0, "GPU A", DeviceKind::Discrete),
                                       device(1, "GPU B", DeviceKind::Discrete)};
    DeviceChoice c = choose_device(devices, "");
    EXPECT_EQ(c.chosen, 0u);
    EXPECT_EQ(c.report[1], "GPU B [discrete]: passed over: ranked below GPU A");
}

TEST(DeviceChoice, PassesOverDevicesWithoutComputeOrVulkan11) {
    std::vector<DeviceInfo> devices = {device(0, "Old GPU", DeviceKind::Discrete, true, kVulkan10),
                                       device(1, "Display only", DeviceKind::Integrated, false),
                                       device(2, "llvmpipe", DeviceKind::Cpu)};
    DeviceChoice c = choose_device(devices, "");
    EXPECT_EQ(c.chosen, 2u);
    ASSERT_EQ(c.report.size(), 3u);
    EXPECT_EQ(c.report[0], "Old GPU [discrete]: passed over: Vulkan 1.0.0 < 1.1 required");
    EXPECT_EQ(c.report[1], "Display only [integrated]: passed over: no compute queue");
    EXPECT_EQ(c.report[2], "llvmpipe [cpu]: chosen");
}

TEST(DeviceChoice, OverrideByIndex) {
    auto devices = four_kinds();
    DeviceChoice c = choose_device(devices, "1");
    EXPECT_EQ(c.chosen, 1u);
    EXPECT_EQ(c.report[3],
              "NVIDIA GeForce RTX 4090 [discrete]: passed over: ADJOINT_DEVICE=1 does not match");
}

TEST(DeviceChoice, OverrideByNameIsCaseInsensitiveSubstring) {
    auto devices = four_kinds();
    DeviceChoice c = choose_device(devices, "LLVMPIPE");
    EXPECT_EQ(c.chosen, 0u);
    EXPECT_EQ(c.report[0], "llvmpipe (LLVM 15.0.6, 256 bits) [cpu]: chosen");
    EXPECT_EQ(choose_device(devices, "intel").chosen, 2u);
}

TEST(DeviceChoice, OverrideOfAnUnusableDeviceChoosesNone) {
    auto devices = four_kinds();
    devices[0].has_compute_queue = false;
    DeviceChoice c = choose_device(devices, "llvmpipe");
    EXPECT_FALSE(c.chosen);
    EXPECT_EQ(c.report[0], "llvmpipe (LLVM 15.0.6, 256 bits) [cpu]: passed over: no compute queue");
}

TEST(DeviceChoice, OverrideMatchingNothingSaysWhy) {
    auto devices = four_kinds();
    for (const char* spec : {"foo", "7"}) {
        DeviceChoice c = choose_device(devices, spec);
        EXPECT_FALSE(c.chosen) << spec;
        ASSERT_EQ(c.report.size(), devices.size() + 1);
        for (size_t i = 0; i < devices.size(); ++i)
            EXPECT_NE(
                c.report[i].find(std::string("passed over: ADJOINT_DEVICE=") + spec + " does not match"),
                std::string::npos)
                << c.report[i];
        EXPECT_NE(c.report.back().find("selects no usable device"), std::string::npos);
    }
}

TEST(DeviceChoice, EmptyList) {
    DeviceChoice c = choose_device({}, "");
    EXPECT_FALSE(c.chosen);
    ASSERT_EQ(c.report.size(), 1u);
    EXPECT_EQ(c.report[0], "no Vulkan physical devices found");
}

TEST(DeviceChoice, KindNames) {
    EXPECT_STREQ(to_string(DeviceKind::Discrete), "discrete");
    EXPECT_STREQ(to_string(DeviceKind::Integrated), "integrated");
    EXPECT_STREQ(to_string(DeviceKind::Virtual), "virtual");
    EXPECT_STREQ(to_string(DeviceKind::Cpu), "cpu");
    EXPECT_STREQ(to_string(DeviceKind::Other), "other");
}

TEST(DeviceChoice, UnmetCallerRequirementsPassADeviceOver) {
    auto devices = four_kinds();
    devices[3].unmet = "lacks the device extension VK_KHR_swapchain";
    DeviceChoice c = choose_device(devices, "");
    EXPECT_EQ(c.chosen, 2u);
    EXPECT_EQ(c.report[3], "NVIDIA GeForce RTX 4090 [discrete]: passed over: lacks the device extension VK_KHR_swapchain");
    // Even a device that ADJOINT_DEVICE names is refused when it cannot serve the caller.
    DeviceChoice named = choose_device(devices, "rtx");
    EXPECT_FALSE(named.chosen);
}
