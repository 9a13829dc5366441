// The messages VK_CHECK builds from failed Vulkan calls.
#include "vulkan/vk_check.h"

#include <gtest/gtest.h>

namespace {

VkResult vkPretendCall(VkResult r) { return r; }

std::string message_of(VkResult r, size_t bytes = 0) {
    try {
        VK_CHECK_ALLOC(vkPretendCall(r), bytes);
    } catch (const adjoint::Error& e) {
        return e.what();
    }
    return {};
}

} // namespace

TEST(VkCheck, NamesTheCallTheResultAndTheLine) {
    std::string m = message_of(VK_ERROR_INITIALIZATION_FAILED);
    EXPECT_NE(m.find("VK_ERROR_INITIALIZATION_FAILED"), std::string::npos) << m;
    EXPECT_EQ(m.rfind("vkPretendCall(r) failed", 0), 0u) << m;
    EXPECT_NE(m.find("vk_check_test.cpp:"), std::string::npos) << m;
    EXPECT_NO_THROW(VK_CHECK(VK_SUCCESS));
}

TEST(VkCheck, DeviceLostAndOutOfMemoryExplainThemselves) {
    EXPECT_NE(message_of(VK_ERROR_DEVICE_LOST).find("device was lost"), std::string::npos);
    std::string m = message_of(VK_ERROR_OUT_OF_DEVICE_MEMORY, 123456);
    EXPECT_NE(m.find("VK_ERROR_OUT_OF_DEVICE_MEMORY"), std::string::npos) << m;
    EXPECT_NE(m.find("out of device memory"), std::string::npos) << m;
    EXPECT_NE(m.find("123456 bytes"), std::string::npos) << m;
}

TEST(VkCheck, ResultNames) {
    EXPECT_STREQ(adjoint::vk::to_string(VK_ERROR_OUT_OF_HOST_MEMORY), "VK_ERROR_OUT_OF_HOST_MEMORY");
    EXPECT_STREQ(adjoint::vk::to_string(VK_ERROR_OUT_OF_POOL_MEMORY), "VK_ERROR_OUT_OF_POOL_MEMORY");
    EXPECT_STREQ(adjoint::vk::to_string(static_cast<VkResult>(-12345)), "VK_RESULT_UNKNOWN");
}
