// The objective (objective.h): the two chains of stages, their targets, the loss and its partial sums.
#include "optim/objective.h"

#include <adjoint/app/parameter_kinds.h>
#include <adjoint/app/plugins.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace adjoint::app {

namespace {

// The static chain needs the geometry to stay put and the renderer's hard visibility and colour loss, and no
// shadows (its surfaces carry no triangles to cast them: shadows come from the dynamic chain's world vertices).
bool needs_dynamic(const Scene& scene) {
    if (scene.render.visibility != Visibility::hard || scene.optimize->loss == "silhouette") return true;
    if (std::any_of(scene.lights.begin(), scene.lights.end(), [](const Light& l) { return l.shadows; })) return true;
    for (const auto& p : scene.optimize->parameters)
        if (is_geometry_parameter(p.kind)) return true;
    return false;
}

Buffer<float> upload_floats(Device& device, Stream& stream, const std::vector<float>& v) {
    return upload(device, stream, v);
}

} // namespace

Objective::Objective(Device& device, Stream& stream, const Scene& truth, const Scene& current,
                     const SceneData& data, bool camera_free, bool dynamic)
    : device_(device), stream_(stream), data_(data), opt_(*truth.optimize), views_(current.views),
      forward_(device, data), sum_chunks_(compile_sum_chunks(device)),
      sum_lanes_(sum_lanes(device)) {
    const uint32_t views = uint32_t(data.views.size());
    pixels_ = data.views[0].width * data.views[0].height;
    partials_per_view_ = (pixels_ + kSumChunk - 1) / kSumChunk;
    loss_px_ = device.create_buffer<float>(size_t(pixels_) * views);   // an iteration may render every view
    sqerr_px_ = device.create_buffer<float>(size_t(pixels_) * views);
    if (dynamic || needs_dynamic(truth)) {
        DynamicOptions o{truth.render.visibility, camera_free};
        dynamic_ = std::make_unique<DynamicRenderer>(device, stream, current, data, o);
        final_image_ = device.create_buffer<float4>(pixels_);
        regularizers_.emplace(device, stream, current, data.layout);
        reg_terms_ = regularizers_->terms();
        reg_chunks_ = (reg_terms_ + kSumChunk - 1) / kSumChunk;
        reg_loss_ = device.create_buffer<float>(std::max(reg_terms_, 1u));
    }
    partials_ = device.create_buffer<float>(size_t(partials_per_view_) * 2 * views + reg_chunks_);
    const bool textures_only = std::all_of(opt_.parameters.begin(), opt_.parameters.end(), [](const Parameter& p) {
        return kind_info(p.kind).storage == ParameterStorage::texture;
    });
    if (!dynamic_ && TexelGather::applies(data.shading)) gather_ = std::make_unique<TexelGather>(device, data.shading);
    losses_.emplace(device, loss_model(opt_.loss), opt_.mask_alpha, dynamic_ ? nullptr : &data.shading,
                    textures_only, gather_ ? gather_->samples() : 0);
    if (!dynamic_) {
        no_samples_ = device.create_buffer<float4>(1);
        rasterize_once(current);
        covered_partials_ = device.create_buffer<float>(partials_.size());
    }
    make_targets(truth);
    stream << synchronize();
}

Objective::~Objective() = default;

// Visibility once per view (the geometry is the same in truth and current scenes), and the list of covered
// pixels, which alone are shaded for the gradient.
void Objective::rasterize_once(const Scene& current) {
    Rasterizer raster(device_);
    std::optional<Buffer<float>> params;   // the start values, for the gather's taps
    if (gather_) params.emplace(upload_floats(device_, stream_, gather_values(current, data_.layout)));
    std::vector<gpu::SurfaceRecord> host_surfaces(pixels_);
    for (uint32_t v = 0; v < data_.views.size(); ++v) {
        auto gb = raster.rasterize(stream_, data_.geometry, data_.views[v]);
        surfaces_.emplace_back(device_, pixels_, data_.geometry.tangents);
        raster.interpolate(stream_, data_.geometry, data_.views[v], gb, surfaces_.back());
        stream_ << surfaces_.back().records.copy_to(host_surfaces.data()) << synchronize();
        std::vector<uint32_t> list;
        for (uint32_t i = 0; i < pixels_; ++i)
            if (host_surfaces[i].material != gpu::kNone) list.push_back(i);
        covered_count_.push_back(uint32_t(list.size()));
        covered_.push_back(upload(device_, stream_, list));
        if (gather_)
            gather_->add_view(stream_, data_, v, surfaces_.back(), covered_.back(), covered_count_.back(), *params);
        stream_ << synchronize();
    }
    slot_view_.assign(data_.views.size(), ~0u);
}

// Targets: rendered from the true values (through the same surfaces, or by the dynamic renderer with the
// true geometry), or the given images.
void Objective::make_targets(const Scene& truth) {
    const uint32_t views = uint32_t(data_.views.size());
    if (!opt_.target_is_scene) {
        for (uint32_t v = 0; v < views; ++v) {
            target_images_.push_back(opt_.target_images.at(v));
            targets_.push_back(upload(device_, stream_, target_images_.back().texels));
        }
        return;
    }
    SceneData truth_data = upload_scene(device_, stream_, truth);
    ForwardRenderer truth_forward(device_, truth_data);
    std::unique_ptr<DynamicRenderer> truth_dynamic;
    const auto tp = upload_floats(device_, stream_, gather_values(truth, truth_data.layout));
    truth_forward.build_mips(stream_, truth_data, tp);
    if (dynamic_) {
        truth_dynamic = std::make_unique<DynamicRenderer>(device_, stream_, truth, truth_data,
                                                          DynamicOptions{truth.render.visibility, false});
        truth_dynamic->update_geometry(stream_, tp);
    }
    for (uint32_t v = 0; v < views; ++v) {
        targets_.push_back(device_.create_buffer<float4>(pixels_));
        if (truth_dynamic)
            truth_dynamic->render(stream_, v, truth.views[v], tp, targets_.back());
        else
            truth_forward.shade(stream_, truth_data, v, surfaces_[v], tp, targets_.back());
        LinearImage img;
        img.width = data_.views[v].width;
        img.height = data_.views[v].height;
        img.texels.resize(pixels_);
        stream_ << targets_.back().copy_to(img.texels.data()) << synchronize();
        target_images_.push_back(std::move(img));
    }
}

void Objective::set_target(uint32_t view, const LinearImage& image) {
    if (view >= targets_.size()) fail("set_target: view ", view, " does not exist (", targets_.size(), " views)");
    const auto& v = data_.views[view];
    if (image.width != v.width || image.height != v.height || image.texels.size() != size_t(v.width) * v.height)
        fail("set_target: view ", view, " is ", v.width, "x", v.height, ", the image ", image.width, "x", image.height);
    stream_ << targets_[view].copy_from(image.texels.data(), 0, image.texels.size());
    target_images_[view] = image;
    slot_view_.assign(slot_view_.size(), ~0u);   // the background losses were made against the old target
}

void Objective::render(const Buffer<float>& params, uint32_t view, const Buffer<float4>& out) {
    forward_.build_mips(stream_, data_, params);
    if (!dynamic_) {
        forward_.shade(stream_, data_, view, surfaces_[view], params, out);
        return;
    }
    dynamic_->update_geometry(stream_, params);
    dynamic_->render(stream_, view, views_[view], params, out);
}

void Objective::record(const DiffBuffer<float>& params, const std::vector<uint32_t>& order, float scale,
                       bool regularize) {
    const uint32_t k = uint32_t(order.size());
    stream_ << params.grad.fill_zero() << data_.textures.zero_grad();
    forward_.build_mips(stream_, data_, params.value);
    if (dynamic_) {
        dynamic_->zero_grad(stream_);
        dynamic_->update_geometry(stream_, params.value);
        for (uint32_t j = 0; j < k; ++j) {
            const uint32_t v = order[j];
            dynamic_->render(stream_, v, views_[v], params.value, final_image_);
            stream_ << (*losses_->image_loss)(final_image_, targets_[v], loss_px_, sqerr_px_, j * pixels_,
                                              dynamic_->image_gradient().as<float4>(), scale, views_[v].width)
                           .dispatch(image_loss_runs_x(views_[v].width), views_[v].height);
            dynamic_->backward(stream_, v, params);
        }
        dynamic_->geometry_backward(stream_, params);
        if (regularize) regularizers_->record(stream_, params, reg_loss_);
        const uint32_t reg_first = uint32_t(partials_.size()) - reg_chunks_;
        if (regularize && reg_terms_ > 0)
            stream_ << sum_chunks_(reg_loss_, reg_loss_, partials_, 0u, reg_terms_, reg_first, reg_first)
                           .dispatch(reg_chunks_ * sum_lanes_);   // one buffer: both sums go to the same place
    } else {
        stream_ << covered_partials_.fill_zero();
        for (uint32_t j = 0; j < k; ++j) {
            const uint32_t view = order[j];
            const auto& v = data_.views[view];
            if (slot_view_[j] != view) {
                stream_ << (*losses_->background_loss)(surfaces_[view].records, targets_[view], loss_px_, sqerr_px_,
                                                       j * pixels_, data_.background, data_.view_recs, view,
                                                       params.value, data_.textures, data_.materials, data_.lights)
                               .dispatch(v.width, v.height)
                        << sum_chunks_(loss_px_, sqerr_px_, partials_, j * pixels_, (j + 1) * pixels_,
                                       2 * j * partials_per_view_, (2 * j + 1) * partials_per_view_)
                               .dispatch(partials_per_view_ * sum_lanes_);
                slot_view_[j] = view;
            }
            if (covered_count_[view] > 0)
                stream_ << (*losses_->shade_loss_backward)(covered_[view], surfaces_[view].records,
                                                           surfaces_[view].tangents, params, data_.textures,
                                                           data_.materials, data_.lights, targets_[view],
                                                           covered_partials_, 2 * j * partials_per_view_,
                                                           (2 * j + 1) * partials_per_view_, v.eye, scale,
                                                           gather_ ? gather_->dsample() : no_samples_)
                               .dispatch(covered_count_[view]);
            if (gather_ && covered_count_[view] > 0) gather_->gather(stream_, view, data_.textures.texels().grad);
        }
    }
    // Every texture's gradient down its mip chain to level 0 and into the parameter buffer.
    forward_.backward_mips(stream_, data_, params.grad);
    for (uint32_t j = 0; dynamic_ && j < k; ++j) {
        // View j's runs of pixels (image_loss) are the first of [j * pixels, (j + 1) * pixels) of the per-pixel
        // buffers; the view's chunks past them sum nothing, and are written 0.
        const uint32_t runs = image_loss_runs(views_[order[j]].width, views_[order[j]].height);
        stream_ << sum_chunks_(loss_px_, sqerr_px_, partials_, j * pixels_, j * pixels_ + runs,
                               2 * j * partials_per_view_, (2 * j + 1) * partials_per_view_)
                       .dispatch(partials_per_view_ * sum_lanes_);
    }
}

void Objective::diagnose(const DiffBuffer<float>& params, uint32_t v, bool unit, float scale,
                         const DiagnoseBuffers& d) {
    if (!dynamic_) fail("Objective::diagnose: the objective was made without the dynamic chain");
    stream_ << params.grad.fill_zero() << data_.textures.zero_grad();
    forward_.build_mips(stream_, data_, params.value);
    dynamic_->zero_grad(stream_);
    dynamic_->update_geometry(stream_, params.value);
    dynamic_->render(stream_, v, views_[v], params.value, final_image_);
    const Buffer<float>& dimage = dynamic_->image_gradient();
    if (unit) {
        if (unit_seed_.size() != dimage.size()) {
            unit_seed_.assign(dimage.size(), 1.0f);
            for (size_t i = 3; i < unit_seed_.size(); i += 4) unit_seed_[i] = 0.0f;
        }
        stream_ << dimage.copy_from(unit_seed_.data());
    } else {
        stream_ << (*losses_->image_loss)(final_image_, targets_[v], loss_px_, sqerr_px_, 0u, dimage.as<float4>(),
                                          scale, views_[v].width)
                       .dispatch(image_loss_runs_x(views_[v].width), views_[v].height);
    }
    dynamic_->diagnose(device_, stream_, v, params, d);
}

void Objective::read_back() {
    host_partials_.resize(partials_.size());
    stream_ << partials_.copy_to(host_partials_.data());
    host_covered_.assign(dynamic_ ? 0 : partials_.size(), 0.0f);
    if (!dynamic_) stream_ << covered_partials_.copy_to(host_covered_.data());
}

// Slot j's partial sums of the loss (which = 0) or of the squared error (which = 1).
double Objective::slot_sum(uint32_t j, uint32_t which) const {
    double sum = 0;
    for (uint32_t c = 0; c < partials_per_view_; ++c) {
        const size_t at = (2 * j + which) * partials_per_view_ + c;
        sum += host_partials_[at] + (host_covered_.empty() ? 0.0 : double(host_covered_[at]));
    }
    return sum;
}

std::pair<double, double> Objective::loss_and_psnr(uint32_t k, float scale) const {
    double loss = 0, psnr = 0;
    for (uint32_t j = 0; j < k; ++j) {
        loss += slot_sum(j, 0);
        double mse = slot_sum(j, 1) / (double(pixels_) * 3.0);
        psnr += mse > 0 ? -10.0 * std::log10(mse) : 100.0;   // identical images: capped at 100 dB
    }
    double reg = 0;
    for (uint32_t c = 0; c < reg_chunks_; ++c) reg += host_partials_[host_partials_.size() - reg_chunks_ + c];
    return {loss * scale + reg, psnr / k};
}

std::vector<double> Objective::view_losses(uint32_t k, float scale) const {
    std::vector<double> out(k);
    for (uint32_t j = 0; j < k; ++j) out[j] = slot_sum(j, 0) * scale;
    return out;
}

} // namespace adjoint::app
