// What the image panels show, made on the device by engine kernels from linear RGBA images: packed RGBA8
// texels (sRGB-encoded, R in the low byte) ready to be copied into the window's textures.
//
// - picture: the image itself, clamped to [0, 1] and sRGB-encoded.
// - |diff| heat map: d = mean over RGB of |current - target| (both clamped to [0, 1] first), divided by the
//   largest d of the image and coloured with inferno, as report.png draws it (black where they agree).
// - gradient: dL/dI summed over RGBA, the derivative of the scene's loss (its plug-in's formula, through
//   $autodiff, as the optimizer takes it) with respect to each pixel of the current image, over the pixel
//   count times 3, divided by its largest magnitude and coloured blue (negative) - black (0) - red (positive)
//   on a square-root scale (black at 0, on the studio's dark theme).
#pragma once
#include <adjoint/adjoint.h>
#include <adjoint/app/plugins.h>
#include <adjoint/app/scene.h>

#include <map>

namespace adjoint::studio {

struct CompareScale {
    float max_diff = 0;        // the heat map's full scale
    float max_gradient = 0;    // the gradient map's full scale (|dL/dI| summed over RGB)
};

class DisplayKernels {
public:
    explicit DisplayKernels(Device& device);
    // picture(src) -> dst; `pixels` texels each.
    void picture(Stream& stream, const Buffer<float4>& src, const Buffer<uint32_t>& dst, uint32_t pixels);
    // The heat map and the gradient map of current against target. Synchronizes (the scales come back).
    CompareScale compare(Stream& stream, const Buffer<float4>& target, const Buffer<float4>& current,
                         const Buffer<uint32_t>& diff, const Buffer<uint32_t>& gradient, uint32_t pixels,
                         const app::LossModel& loss);

private:
    Device& device_;
    Shader<1> picture_, measure_, colour_;
    std::map<std::string_view, Shader<1>> gradient_;   // per loss, recorded when first shown
    Buffer<float> scales_, pixel_gradient_;
};

} // namespace adjoint::studio
