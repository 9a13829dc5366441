// The objective's loss kernels (see loss_kernels.h): the loss plug-in's formula inside $autodiff.
#include "optim/loss_kernels.h"

#include "optim/kernels.h"
#include "render/geometry_dsl.h"
#include "render/work_list.h"

namespace adjoint::app {

namespace {

// The squared error of colours clamped to [0, 1], for PSNR.
Float squared_error(const Float3& c, const Float3& t) {
    Float3 e = saturate(c) - saturate(t);
    return dot(e, e);
}

// The loss plug-in's value of one pixel. With "mask": "alpha" a pixel whose target alpha is 0 contributes
// nothing, to the loss or its gradient. The mean is still taken over all pixels (a masked one counts as 0: the
// scale is 1 / (pixels · 3 · views) in optimization.cpp), so that the loss's scale, and with it the learning rates, does not depend on the
// mask's area; PSNR stays over all pixels of the composited target.
Float pixel_loss(const LossModel& loss, bool mask_alpha, const Float4& rendered, const Float4& target) {
    Float value = loss.pixel(rendered, target);
    if (!mask_alpha) return value;
    return ite(target.w > 0.0f, value, 0.0f);
}

// Over a view's covered pixels only (a list), their loss and squared error summed per kSumChunk entries of the
// list into `sums` (added: zeroed before) at loss_at and sqerr_at, not written per pixel (a dispatch of sums
// saved): lavapipe runs the body of a branch for every SIMD group, even
// where no lane takes it, so a dispatch over every pixel would shade the background too. P is the parameter
// buffer's type: DiffBufferFloat scatters the gradients of the values it holds; BufferFloat reads them as
// constants, for when only textures are free (their gradients come from the texture set), which spares every
// pixel atomics into the few fixed values all pixels share. With `samples` (the texel gather, texel_gather.h)
// the material texture samples are read detached and their gradients written to dsample, `samples` an entry;
// without, each texel read scatters its adjoint into the texture set's gradient.
template <typename P>
auto shade_loss_backward_kernel(const LossModel& loss, bool mask, const ShadingPlan& groups, uint32_t samples) {
    return Kernel1D([&loss, mask, groups, samples](BufferUInt covered, BufferVar<gpu::SurfaceRecord> surfaces,
                                                   BufferFloat4 tangents, P params, TextureSetFloat3 textures,
                                                   BufferVar<gpu::Material> materials, BufferVar<LightSlots> lights,
                                                   BufferFloat4 target, BufferFloat sums, UInt loss_at,
                                                   UInt sqerr_at, Float3 eye, Float scale,
                                                   BufferFloat4 dsample) noexcept {
        UInt e = dispatch_id().x;
        UInt at = covered.read(e);
        auto s = stored_surface(surfaces, tangents, at, groups).load();
        Float4 t = target.read(at);
        Float3 c;
        Float l;
        $autodiff {
            // Held where a sample is taken (inside the material's branches): grad() of one whose branch did not
            // run is 0. The gather's taps kernel counted them, recording the same shading.
            HeldValues<float3> sampled(int(samples), "shade_loss_backward", "a material sample");
            ShadeInputs<P> in{params, textures, materials, lights};
            if (samples > 0) in.material_sample = [&](const Float3& v) -> Float3 { return sampled.hold(v.load()); };
            Float3 col = shade_surface(in, groups, s, eye);
            Float value = pixel_loss(loss, mask, make_float4(col, 1.0f), t);
            backward(value * scale);
            c = col;
            l = value;
            for (int j = 0; j < sampled.capacity(); ++j)
                dsample.write(e * samples + uint32_t(j), make_float4(grad(sampled.value(j)), 0.0f));
        };
        // Chunk k of the list's sums, kSumChunk entries, is whole subgroups: one atomic per subgroup and sum.
        Float subgroup_loss = subgroup_add(l), subgroup_sqerr = subgroup_add(squared_error(c, t.xyz()));
        $if (subgroup_elect()) {
            UInt k = e / kSumChunk;
            sums.atomic(loss_at + k).fetch_add(subgroup_loss);
            sums.atomic(sqerr_at + k).fetch_add(subgroup_sqerr);
        };
    });
}

auto background_loss_kernel(const LossModel& loss, bool mask, const ShadingPlan& plan) {
    return Kernel2D([&loss, mask, plan](BufferVar<gpu::SurfaceRecord> surfaces, BufferFloat4 target, BufferFloat loss_out,
                                        BufferFloat sqerr_out, UInt out_base, Float3 background,
                                        BufferVar<gpu::ViewRec> views, UInt view, BufferFloat params,
                                        TextureSetFloat3 textures, BufferVar<gpu::Material> materials,
                                        BufferVar<LightSlots> lights) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x;
        $if (surfaces.read(at).material == gpu::kNone) {
            Float4 t = target.read(at);
            ShadeInputs<BufferFloat> in{params, textures, materials, lights};
            Float3 bg = background_at(in, plan, background,
                                      [&] { return camera_of(params, views.read(view)).ray(pixel_centre(pix)); });
            loss_out.write(out_base + at, pixel_loss(loss, mask, make_float4(bg, 0.0f), t));
            sqerr_out.write(out_base + at, squared_error(bg, t.xyz()));
        }
        $else {   // covered: shade_loss_backward sums these itself
            loss_out.write(out_base + at, 0.0f);
            sqerr_out.write(out_base + at, 0.0f);
        };
    });
}

// A thread takes a run of kRowRun pixels of a row (render/work_list.h) and writes their loss and squared error
// summed, at out_base + its run (row-major over the image's runs): two stores a run instead of two a pixel, and
// sum_chunks sums a sixteenth as many (0.3 of 0.7 ms at 5k/256x256 on lavapipe, which stores lane by lane).
auto image_loss_kernel(const LossModel& loss, bool mask) {
    return Kernel2D([&loss, mask](BufferFloat4 image, BufferFloat4 target, BufferFloat loss_out,
                                  BufferFloat sqerr_out, UInt out_base, BufferFloat4 dimage, Float scale,
                                  UInt width) noexcept {
        Float loss_sum = 0.0f, sqerr_sum = 0.0f;
        for_each_in_row_run(width, [&](const UInt&, const UInt&, const UInt& at) {
            Float4 t = target.read(at);
            Float4 f = image.read(at);
            Float value = 0.0f;
            Float4 g = make_float4(0.0f);
            $autodiff {
                requires_grad(f);
                Float l = pixel_loss(loss, mask, f, t);
                backward(l * scale);
                value = l;
                g = grad(f);
            };
            loss_sum = loss_sum + value;
            sqerr_sum = sqerr_sum + squared_error(f.xyz(), t.xyz());
            dimage.write(at, g);   // one write a pixel: on lavapipe each storage write is a loop over the lanes
        });
        UInt run = dispatch_id().y * dispatch_size().x + dispatch_id().x;
        loss_out.write(out_base + run, loss_sum);
        sqerr_out.write(out_base + run, sqerr_sum);
    });
}

} // namespace

LossKernels::LossKernels(Device& device, const LossModel& loss, bool mask_alpha, const ShadingPlan* static_shading,
                         bool textures_only, uint32_t gathered_samples) {
    if (!static_shading) {
        image_loss = device.compile(image_loss_kernel(loss, mask_alpha), {.name = "image_loss"});
        return;
    }
    const uint32_t n = gathered_samples;
    if (textures_only)
        shade_loss_backward = device.compile(shade_loss_backward_kernel<BufferFloat>(loss, mask_alpha, *static_shading, n),
                                             {.name = "shade_loss_backward"});
    else
        shade_loss_backward = device.compile(
            shade_loss_backward_kernel<DiffBufferFloat>(loss, mask_alpha, *static_shading, n),
            {.name = "shade_loss_backward"});
    background_loss = device.compile(background_loss_kernel(loss, mask_alpha, *static_shading), {.name = "loss_background"});
}

} // namespace adjoint::app
