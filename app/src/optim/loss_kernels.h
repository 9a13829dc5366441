// The objective's loss kernels, one loss plug-in (adjoint/app/plugins.h) differentiated by $autodiff for
// every path: the static path's shade + loss + backward over covered pixels, its background, and the loss of
// a rendered image (the dynamic path), which seeds the renderer's backward with d loss / d image.
#pragma once
#include "render/shading.h"
#include "render/work_list.h"

#include <adjoint/app/plugins.h>

#include <optional>
#include <vector>

namespace adjoint::app {

// image_loss's threads along a row, each summing a run of render/work_list.h's kRowRun pixels; and over the image.
inline uint32_t image_loss_runs_x(uint32_t width) { return row_runs(width); }
inline uint32_t image_loss_runs(uint32_t width, uint32_t height) { return image_loss_runs_x(width) * height; }

// The outputs: the loss (times nothing: the mean comes from the sums) and the squared error of the clamped
// colours (for PSNR), at out_base + pixel (image_loss: + run).
struct LossKernels {
    // Static path, over a list of covered pixels: shade, loss, backward(loss * scale) into the parameter
    // buffer and the textures; the loss and squared error added up per kSumChunk entries of the list into
    // sums[loss_at + k], sums[sqerr_at + k]. Two variants: parameters as a differentiable buffer, or plain
    // (textures only). Its last argument takes the material samples' gradients when they are gathered
    // (optim/texel_gather.h), else a buffer it does not write.
    std::optional<Shader<1>> shade_loss_backward;
    // Static path, every pixel: the background's loss at uncovered ones (constant while the targets are), 0 at
    // covered ones.
    std::optional<Shader<2>> background_loss;
    // Dynamic path: a rendered image against its target -> loss, squared error and d loss / d image (times
    // scale, 4 floats a pixel). The loss and squared error come summed over runs of kRowRun pixels of a row, at
    // out_base + run (row-major: image_loss_runs() of them); dispatch (image_loss_runs_x(width), height).
    // Arguments (image, target, loss_out, sqerr_out, out_base, dimage, scale, width); dimage as float4s
    // (Buffer::as: one storage access a pixel, where on lavapipe each is a loop over the SIMD group's lanes).
    std::optional<Shader<2>> image_loss;

    // The static path's kernels when `static_shading` is given (the scene's material models and lights, baked
    // into the shading), else the dynamic path's. mask_alpha: pixels whose target alpha is 0 weigh nothing.
    // gathered_samples: the material samples a pixel records when the texel gather takes their gradients (0: none).
    LossKernels(Device& device, const LossModel& loss, bool mask_alpha, const ShadingPlan* static_shading,
                bool textures_only, uint32_t gathered_samples = 0);
};

} // namespace adjoint::app
