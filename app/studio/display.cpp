// The panels' kernels: sRGB encoding, the |diff| heat map (inferno) and the dL/dI diverging map (the loss
// plug-in's formula through $autodiff).
#include "display.h"

#include <algorithm>
#include <vector>

namespace adjoint::studio {

namespace {

constexpr uint32_t kPixelsPerThread = 64;   // the scales' atomics: one per thread, not per pixel

// inferno at t = 0, 0.1, ..., 1 (sRGB), the stops report.png uses.
constexpr float kInferno[11][3] = {
    {0x00, 0x00, 0x04}, {0x16, 0x0b, 0x39}, {0x42, 0x0a, 0x68}, {0x6a, 0x17, 0x6e}, {0x93, 0x26, 0x67}, {0xbc, 0x37, 0x54},
    {0xdd, 0x51, 0x3a}, {0xf3, 0x78, 0x19}, {0xfc, 0xa5, 0x0a}, {0xf6, 0xd7, 0x46}, {0xfc, 0xff, 0xa4},
};

// [0, 1], NaN as 0 (a comparison with NaN is false).
Float unit(Float x) { return ite(x > 0.0f, min(x, 1.0f), 0.0f); }

Float3 unit3(Float3 v) { return make_float3(unit(v.x), unit(v.y), unit(v.z)); }

Float encode_srgb(Float linear) {
    Float c = unit(linear);
    return ite(c <= 0.0031308f, c * 12.92f, 1.055f * pow(c, 1.0f / 2.4f) - 0.055f);
}

// sRGB-encoded [0, 1] colour -> R8G8B8A8 in one word, R in the low byte, alpha 255.
UInt pack(Float3 srgb) {
    Float3 scaled = round(unit3(srgb) * 255.0f);
    UInt r = cast<uint32_t>(scaled.x), g = cast<uint32_t>(scaled.y), b = cast<uint32_t>(scaled.z);
    return r | (g << 8u) | (b << 16u) | 0xff000000u;
}

Float3 stop(int k) { return make_float3(kInferno[k][0], kInferno[k][1], kInferno[k][2]) * (1.0f / 255.0f); }

Float3 inferno(Float t) {
    Float f = unit(t) * 10.0f;
    Float segment = min(floor(f), 9.0f);
    Float u = f - segment;
    Float3 c = stop(0);
    for (int k = 0; k < 10; ++k) c = ite(segment == float(k), stop(k) + (stop(k + 1) - stop(k)) * u, c);
    return c;
}

// t in [-1, 1]: blue - black - red (sRGB). Zero is black, as the dark theme around it and the |diff| map's
// agreement are: a pixel that does not push the loss does not light up.
Float3 diverging(Float t) {
    Float3 blue = make_float3(0.25f, 0.55f, 1.0f), red = make_float3(1.0f, 0.3f, 0.1f);
    Float a = min(abs(t), 1.0f);
    return ite(t < 0.0f, blue * a, red * a);
}

Float mean_abs_diff(Float3 c, Float3 t) {
    Float3 d = abs(unit3(c) - unit3(t));
    return (d.x + d.y + d.z) * (1.0f / 3.0f);
}

// dL/dI summed over RGBA per pixel, from the loss plug-in's formula; `factor` is 1 / (pixels * 3).
auto gradient_kernel(const app::LossModel& loss) {
    return Kernel1D([&loss](BufferFloat4 target, BufferFloat4 current, BufferFloat out, Float factor) noexcept {
        UInt i = dispatch_id().x;
        Float4 c = current.read(i), t = target.read(i);
        Float4 g = make_float4(0.0f);
        $autodiff {
            requires_grad(c);
            backward(loss.pixel(c, t) * factor);
            g = grad(c);
        };
        out.write(i, g.x + g.y + g.z + g.w);
    });
}

auto picture_kernel() {
    return Kernel1D([](BufferFloat4 src, BufferUInt dst) noexcept {
        UInt i = dispatch_id().x;
        Float4 c = src.read(i);
        dst.write(i, pack(make_float3(encode_srgb(c.x), encode_srgb(c.y), encode_srgb(c.z))));
    });
}

auto measure_kernel() {
    return Kernel1D([](BufferFloat4 target, BufferFloat4 current, BufferFloat gradients, BufferFloat scales,
                       UInt pixels) noexcept {
        UInt first = dispatch_id().x * kPixelsPerThread;
        Float d_max = 0.0f, g_max = 0.0f;
        $for (i, first, min(first + kPixelsPerThread, pixels)) {
            Float3 c = current.read(i).xyz(), t = target.read(i).xyz();
            d_max = max(d_max, mean_abs_diff(c, t));
            g_max = max(g_max, abs(gradients.read(i)));
        };
        scales.atomic(0u).fetch_max(d_max);
        scales.atomic(1u).fetch_max(g_max);
    });
}

auto colour_kernel() {
    return Kernel1D([](BufferFloat4 target, BufferFloat4 current, BufferFloat gradients, BufferFloat scales,
                       BufferUInt diff, BufferUInt gradient) noexcept {
        UInt i = dispatch_id().x;
        Float3 c = current.read(i).xyz(), t = target.read(i).xyz();
        Float d_max = scales.read(0u), g_max = scales.read(1u);
        Float d = mean_abs_diff(c, t), g = gradients.read(i);
        diff.write(i, pack(inferno(ite(d_max > 0.0f, d / d_max, 0.0f))));
        // A square-root scale: a few pixels with large gradients would otherwise leave the rest black.
        Float r = ite(g_max > 0.0f, g / g_max, 0.0f);
        gradient.write(i, pack(diverging(sign(r) * sqrt(abs(r)))));
    });
}

} // namespace

DisplayKernels::DisplayKernels(Device& device)
    : device_(device), picture_(device.compile(picture_kernel(), {.name = "studio_picture"})),
      measure_(device.compile(measure_kernel(), {.name = "studio_measure"})),
      colour_(device.compile(colour_kernel(), {.name = "studio_compare_colour"})),
      scales_(device.create_buffer<float>(2)), pixel_gradient_(device.create_buffer<float>(1)) {}

void DisplayKernels::picture(Stream& stream, const Buffer<float4>& src, const Buffer<uint32_t>& dst, uint32_t pixels) {
    stream << picture_(src, dst).dispatch(pixels);
}

CompareScale DisplayKernels::compare(Stream& stream, const Buffer<float4>& target, const Buffer<float4>& current,
                                     const Buffer<uint32_t>& diff, const Buffer<uint32_t>& gradient, uint32_t pixels,
                                     const app::LossModel& loss) {
    const float factor = 1.0f / (float(std::max(pixels, 1u)) * 3.0f);
    auto kernel = gradient_.find(loss.name);
    if (kernel == gradient_.end())
        kernel = gradient_.emplace(loss.name, device_.compile(gradient_kernel(loss), {.name = "studio_loss_gradient"})).first;
    if (pixel_gradient_.size() < pixels) pixel_gradient_ = device_.create_buffer<float>(pixels);
    float host[2] = {0, 0};
    stream << scales_.fill_zero() << kernel->second(target, current, pixel_gradient_, factor).dispatch(pixels)
           << measure_(target, current, pixel_gradient_, scales_, pixels)
                  .dispatch((pixels + kPixelsPerThread - 1) / kPixelsPerThread)
           << colour_(target, current, pixel_gradient_, scales_, diff, gradient).dispatch(pixels)
           << scales_.copy_to(host) << synchronize();
    return {host[0], host[1]};
}

} // namespace adjoint::studio
