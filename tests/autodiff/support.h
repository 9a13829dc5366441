// Helpers for autodiff tests: run a one-input-per-thread gradient kernel and read the results back.
#pragma once
#include "support/device_fixture.h"

#include <adjoint/autodiff/autodiff.h>

namespace adjoint::test {

// Runs `kernel(in, out)` over the inputs and returns `out` (one float per input).
template <typename K>
std::vector<float> run_unary(Device& device, Stream& stream, const K& kernel, const std::vector<float>& inputs) {
    auto shader = device.compile(kernel);
    auto in = device.create_buffer<float>(inputs.size());
    auto out = device.create_buffer<float>(inputs.size());
    std::vector<float> result(inputs.size());
    stream << in.copy_from(inputs.data()) << shader(in, out).dispatch(uint32_t(inputs.size())) << out.copy_to(result.data())
           << synchronize();
    return result;
}

// d/dx of f at each input, on the device.
template <typename F>
std::vector<float> device_grad(Device& device, Stream& stream, F f, const std::vector<float>& inputs) {
    Kernel1D k = [&](BufferFloat in, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = in.read(i);
        $autodiff {
            requires_grad(x);
            Float y = f(x);
            backward(y);
            out.write(i, grad(x));
        };
    };
    return run_unary(device, stream, k, inputs);
}

// Forward-mode dual numbers for host references of loops.
struct Dual {
    double v, d;
};
inline Dual operator+(Dual a, Dual b) { return {a.v + b.v, a.d + b.d}; }
inline Dual operator-(Dual a, Dual b) { return {a.v - b.v, a.d - b.d}; }
inline Dual operator*(Dual a, Dual b) { return {a.v * b.v, a.d * b.v + a.v * b.d}; }
inline Dual operator/(Dual a, Dual b) { return {a.v / b.v, (a.d * b.v - a.v * b.d) / (b.v * b.v)}; }
inline Dual dsin(Dual a) { return {std::sin(a.v), std::cos(a.v) * a.d}; }
inline Dual dcos(Dual a) { return {std::cos(a.v), -std::sin(a.v) * a.d}; }
inline Dual konst(double c) { return {c, 0}; }

} // namespace adjoint::test
