// The objective: the scene's renderer chain, its targets, the loss (a plug-in) and the regularizers -> the
// loss's per-pixel terms, their partial sums and d loss / d every value of a parameter buffer. It knows no
// optimizer: the Optimizer (optimization.cpp) steps the buffer whose gradient it is given.
//
// Two chains of the same stages: scenes whose geometry does not move rasterize and interpolate once, then
// shade + loss + backward over the covered pixels (fused in one kernel, optim/loss_kernels.h); the others run
// the dynamic renderer (vertex stage -> rasterize -> shade -> antialias, or soft) every iteration, then the
// loss, then the chain's backward.
#pragma once
#include "optim/kernels.h"
#include "optim/loss_kernels.h"
#include "optim/regularizers.h"
#include "optim/texel_gather.h"
#include "render/dynamic.h"
#include "render/forward.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace adjoint::app {

class Objective {
public:
    // truth: the scene whose optimize block this is (its targets: rendered from it, or its images);
    // current: the start values, laid out on the device as `data`. camera_free: the camera is a parameter.
    // dynamic: take the dynamic chain even where the static one would do (--diagnose attributes on it).
    Objective(Device& device, Stream& stream, const Scene& truth, const Scene& current, const SceneData& data,
              bool camera_free, bool dynamic = false);
    ~Objective();

    // Records: the gradients zeroed, the mip chains, then per view of `order` render + loss + backward
    // (of loss * scale), the textures' and the vertices' gradients into params.grad, the regularizers (unless
    // `regularize` is false: the views' share alone, --check-gradients), and the partial sums of each view's
    // loss and squared error.
    void record(const DiffBuffer<float>& params, const std::vector<uint32_t>& order, float scale,
                bool regularize = true);
    // Records the partial sums' copy to the host (loss_and_psnr reads it after the next synchronize).
    void read_back();
    // The loss (mean over pixels, channels and the views, plus the regularizers) and the mean PSNR.
    std::pair<double, double> loss_and_psnr(uint32_t views, float scale) const;
    // Each of the first `views` recorded views' own loss (its mean, times the views' share: loss_and_psnr's
    // loss is their sum plus the regularizers').
    std::vector<double> view_losses(uint32_t views, float scale) const;
    // --diagnose: render view `view`, seed its image gradient with d (loss * scale) / d image (unit: 1 in every
    // colour channel, 0 in alpha: the sensitivity of the image's channel sum), and record each pixel's own
    // contributions to the traced parameters into d.out (render/diagnose_stage.h). The dynamic chain only.
    void diagnose(const DiffBuffer<float>& params, uint32_t view, bool unit, float scale, const DiagnoseBuffers& d);
    const GeometryStage* geometry() const { return dynamic_ ? &dynamic_->geometry() : nullptr; }
    // Records the render of a view at the values in params into out (width * height texels).
    void render(const Buffer<float>& params, uint32_t view, const Buffer<float4>& out);

    const LinearImage& target(uint32_t view) const { return target_images_.at(view); }
    // Records a new target for `view` (its resolution); the static chain's background losses are made again.
    void set_target(uint32_t view, const LinearImage& image);
    uint32_t pixels() const { return pixels_; }

private:
    void rasterize_once(const Scene& current);
    double slot_sum(uint32_t slot, uint32_t which) const;
    void make_targets(const Scene& truth);

    Device& device_;
    Stream& stream_;
    const SceneData& data_;
    const Optimization& opt_;
    std::vector<Camera> views_;               // the views' resolutions (their cameras live in the parameters)
    ForwardRenderer forward_;                 // mip chains, and the static chain's shading
    Shader<1> sum_chunks_;
    uint32_t sum_lanes_;   // threads per chunk of the sums
    std::unique_ptr<DynamicRenderer> dynamic_;   // the dynamic chain (null: the static one)
    // The mesh regularizers, with the dynamic chain (free vertices always take it).
    std::optional<Regularizers> regularizers_;
    std::optional<LossKernels> losses_;
    std::unique_ptr<TexelGather> gather_;     // the static chain's texel gradients, when it gathers them
    uint32_t pixels_ = 0, partials_per_view_ = 0, reg_terms_ = 0, reg_chunks_ = 0;
    Buffer<float4> final_image_;              // the dynamic chain's output, one view at a time
    Buffer<float4> no_samples_;               // shade_loss_backward's material samples' gradients, not gathered
    Buffer<float> reg_loss_, loss_px_, sqerr_px_, partials_;
    // The static chain's covered pixels' sums, laid out as partials_ (added: zeroed each record); partials_
    // then holds the backgrounds' sums, made when a slot's view changes.
    Buffer<float> covered_partials_;
    std::vector<float> host_partials_, host_covered_;
    // The static chain: per view its surfaces and covered pixels; per slot of the per-pixel buffers the
    // view whose background loss it holds.
    std::vector<SurfaceBuffers> surfaces_;
    std::vector<Buffer<uint32_t>> covered_;
    std::vector<uint32_t> covered_count_, slot_view_;
    std::vector<Buffer<float4>> targets_;
    std::vector<LinearImage> target_images_;
    std::vector<float> unit_seed_;            // --diagnose's unit image gradient (made on first use)
};

} // namespace adjoint::app
