// End-to-end: DSL kernels compiled to GLSL/SPIR-V and run on the Vulkan device, checked against C++.
#include "support/device_fixture.h"

#include <cmath>

namespace adjoint::test {

class Runtime : public DeviceTest {};

TEST_F(Runtime, ElementwiseScale) {
    Kernel1D k = [](BufferFloat x, BufferFloat out, Float scale) noexcept {
        auto i = dispatch_id().x;
        Float v = x.read(i);
        out.write(i, v * scale + sin(v));
    };
    auto shader = device.compile(k);
    const size_t n = 1000;
    auto host = random_floats(n, -3, 3);
    auto x = device.create_buffer<float>(n);
    auto out = device.create_buffer<float>(n);
    std::vector<float> result(n);
    stream << x.copy_from(host.data()) << shader(x, out, 3.0f).dispatch(uint32_t(n)) << out.copy_to(result.data())
           << synchronize();
    for (size_t i = 0; i < n; ++i) EXPECT_NEAR(result[i], host[i] * 3.0f + std::sin(host[i]), 1e-5f) << i;
}

} // namespace adjoint::test
