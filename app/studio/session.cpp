// The studio's session: the optimizer driven in per-frame slices, its history, panels and --out outputs.
#include "session.h"

#include "clock.h"

#include <adjoint/app/scene.h>

#include <algorithm>

namespace adjoint::studio {

Session::Session(Device& device, app::Scene scene, std::optional<std::filesystem::path> out, bool diagnosable)
    : device_(device), stream_(device.create_stream()), display_(device), scene_(std::move(scene)),
      out_(std::move(out)), diagnosable_(diagnosable) {
    build(scene_);
}

Session::~Session() = default;

void Session::build(const app::Scene& scene) {
    std::unique_ptr<app::Optimizer> optimizer;
    std::unique_ptr<app::SceneRenderer> renderer;
    if (scene.optimize) {
        // As adjoint-optimize does: too large for this device is a SceneError before any device work (the
        // SceneRenderer below checks by itself).
        app::check_scene_fits(device_, scene);
        app::check_meshes_in_view(scene);
        optimizer = std::make_unique<app::Optimizer>(device_, scene, diagnosable_);
    } else {
        renderer = std::make_unique<app::SceneRenderer>(device_, scene);
    }
    // Only now, with nothing refused, does the session change.
    outputs_.reset();
    optimizer_ = std::move(optimizer);
    renderer_ = std::move(renderer);
    if (&scene != &scene_) scene_ = scene;
    history_.clear();
    error_.clear();
    parameters_.clear();
    parameters_iteration_ = UINT32_MAX;
    parameter_reads_.clear();
    width_ = scene_.camera.width;
    height_ = scene_.camera.height;
    const uint32_t n = optimizer_ ? optimizer_->view_count() : renderer_->view_count();
    selected_view = std::min(selected_view, n - 1);
    views_.clear();
    const size_t pixels = size_t(width_) * height_;
    for (uint32_t v = 0; v < n; ++v) {
        ViewImages im;
        im.target = device_.create_buffer<float4>(pixels);
        im.current = device_.create_buffer<float4>(pixels);
        im.target_px = device_.create_buffer<uint32_t>(pixels);
        im.current_px = device_.create_buffer<uint32_t>(pixels);
        im.diff_px = device_.create_buffer<uint32_t>(pixels);
        im.gradient_px = device_.create_buffer<uint32_t>(pixels);
        views_.push_back(std::move(im));
    }
    make_targets();
    std::vector<uint32_t> all(n);
    for (uint32_t v = 0; v < n; ++v) all[v] = v;
    refresh(all);
    if (out_ && optimizer_) {
        outputs_ = std::make_unique<app::RunOutputs>(*out_, *optimizer_, scene_, false);
        outputs_current_ = false;
    }
}

void Session::make_targets() {
    for (uint32_t v = 0; v < views_.size(); ++v) {
        ViewImages& im = views_[v];
        if (optimizer_) {
            // The target is fixed for the run: one upload, then it lives on the device.
            app::LinearImage t = optimizer_->target(v);
            stream_ << im.target.copy_from(t.texels.data());
        } else {
            renderer_->render(v, im.target);
        }
        display_.picture(stream_, im.target, im.target_px, width_ * height_);
        stream_ << synchronize();
    }
}

uint32_t Session::iteration() const { return optimizer_ ? optimizer_->iteration() : 0; }
uint32_t Session::total_iterations() const { return optimizer_ ? optimizer_->total_iterations() : 0; }

uint32_t Session::advance(uint32_t max_iterations, double budget_ms) {
    if (!optimizer_ || !error_.empty()) return 0;
    const double start = now_ms();
    uint32_t ran = 0;
    while (ran < max_iterations && !finished() && (ran == 0 || now_ms() - start < budget_ms)) {
        try {
            app::IterationReport r = optimizer_->step();
            history_.push_back({r.iteration, r.loss, r.image_psnr, r.param_error, r.ms});
            if (outputs_) {
                outputs_->record(r);
                outputs_current_ = false;
            }
        } catch (const app::NonFiniteError& e) {
            error_ = e.what();
            break;
        }
        ++ran;
    }
    return ran;
}

double Session::iterations_per_second() const {
    const size_t n = std::min<size_t>(history_.size(), 20);
    if (n == 0) return 0;
    double ms = 0;
    for (size_t i = history_.size() - n; i < history_.size(); ++i) ms += history_[i].ms;
    return ms > 0 ? 1000.0 * double(n) / ms : 0;
}

void Session::refresh(const std::vector<uint32_t>& views) {
    const app::LossModel& loss = app::loss_model(scene_.optimize ? scene_.optimize->loss : "l2");
    for (uint32_t v : views) {
        ViewImages& im = views_.at(v);
        if (optimizer_)
            optimizer_->render_current(v, im.current);
        else
            renderer_->render(v, im.current);
        display_.picture(stream_, im.current, im.current_px, width_ * height_);
        im.scale = display_.compare(stream_, im.target, im.current, im.diff_px, im.gradient_px, width_ * height_, loss);
        ++im.version;
    }
}

const std::vector<app::ParameterState>& Session::parameters() {
    if (!optimizer_) return parameters_;
    const double t = now_ms();
    if (parameters_iteration_ != iteration() && t - parameters_read_at_ > 250) {
        parameters_ = optimizer_->parameters();
        parameters_read_at_ = t;
        parameters_iteration_ = iteration();
    }
    return parameters_;
}

void Session::set_learning_rate(size_t parameter, float lr) {
    if (!optimizer_) return;
    optimizer_->set_learning_rate(parameter, lr);
    scene_.optimize->parameters.at(parameter).lr = lr;
    if (parameter < parameters_.size()) parameters_[parameter].lr = lr;
}

void Session::parameter_now(size_t parameter, std::vector<float>& value, std::vector<float>& gradient) {
    if (!optimizer_) return;
    ParameterRead& r = parameter_reads_[parameter];
    if (r.iteration != iteration()) {
        optimizer_->parameter_now(parameter, r.value, r.gradient);
        r.iteration = iteration();
    }
    value = r.value;
    gradient = r.gradient;
}

bool Session::pixel_gradients_available() const {
    return optimizer_ && diagnosable_;
}

app::PixelAttribution Session::pixel_gradients(size_t parameter, uint32_t view) {
    if (!pixel_gradients_available()) fail("gradient images need --diagnose");
    return optimizer_->attribute_pixels({parameter}, false, view);
}

app::Scene Session::current_scene() { return optimizer_ ? optimizer_->current_scene() : scene_; }

void Session::reset(const app::Scene& edited) {
    // The run being left writes its final outputs; the next run's outputs then replace its loss.csv, start and
    // target images, and its checkpoint (RunOutputs removes another run's).
    if (outputs_ && !outputs_current_) outputs_->finish();
    app::Scene copy = edited;
    build(copy);
}

void Session::finish_outputs() {
    if (!outputs_ || outputs_current_) return;
    outputs_->finish();
    outputs_current_ = true;
}

} // namespace adjoint::studio
