// One device for a whole test program, and the check that no validation message was emitted.
#pragma once
#include <adjoint/adjoint.h>

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

namespace adjoint::test {

inline Device& shared_device() {
    static Context ctx;
    static Device device = ctx.create_device();
    return device;
}

class DeviceTest : public ::testing::Test {
protected:
    Device& device = shared_device();
    Stream stream = device.create_stream();
    void TearDown() override {
        auto messages = device.validation_messages();
        EXPECT_EQ(device.validation_message_count(), 0u) << (messages.empty() ? std::string() : messages.front());
    }
};

inline std::vector<float> random_floats(size_t n, float lo, float hi, uint32_t seed = 1) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
}

} // namespace adjoint::test
