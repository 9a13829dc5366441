// One scene in the studio: its optimization (the library's Optimizer), the run's history, the device
// images the panels show, and --out's outputs. No window here: the UI calls it once per frame.
//
// The optimization runs on the UI thread in bounded slices (advance(): at most N iterations, and none
// started after the frame's time budget), so the window never stops answering. Panels are refreshed on the
// device: the current images are rendered into device buffers and turned into display texels by the
// display kernels; nothing goes through host memory but a few scalars.
#pragma once
#include "display.h"

#include <adjoint/app/optimization.h>
#include <adjoint/app/renderer.h>
#include <adjoint/app/run.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace adjoint::studio {

// A view's images: linear RGBA renders and the texels of its four panels.
struct ViewImages {
    Buffer<float4> target, current;
    Buffer<uint32_t> target_px, current_px, diff_px, gradient_px;
    CompareScale scale;
    uint64_t version = 0;   // bumped when the texels change
};

struct HistoryPoint {
    uint32_t iteration = 0;
    double loss = 0, psnr = 0;
    std::optional<double> param_error;
    double ms = 0;
};

class Session {
public:
    // The scene must be loaded; `out` as --out (outputs of this scene's run). Throws SceneError for what the
    // optimizer refuses, Error for device failures.
    // diagnosable: pixel_gradients() works (Optimizer's diagnosable: the dynamic renderer for every scene).
    Session(Device& device, app::Scene scene, std::optional<std::filesystem::path> out, bool diagnosable = false);
    ~Session();

    const app::Scene& scene() const { return scene_; }
    bool optimizable() const { return optimizer_ != nullptr; }
    uint32_t view_count() const { return uint32_t(views_.size()); }
    uint32_t width() const { return width_; }
    uint32_t height() const { return height_; }
    const ViewImages& view(uint32_t v) const { return views_.at(v); }

    // ---- the run ----
    uint32_t iteration() const;
    uint32_t total_iterations() const;
    bool finished() const { return optimizable() && iteration() >= total_iterations(); }
    // Runs up to `max_iterations`, starting none once `budget_ms` have passed (at least one runs). Returns
    // how many ran. A non-finite loss stops the run and leaves its message in error().
    uint32_t advance(uint32_t max_iterations, double budget_ms);
    const std::vector<HistoryPoint>& history() const { return history_; }
    const std::string& error() const { return error_; }
    void clear_error() { error_.clear(); }
    double iterations_per_second() const;   // over the recent iterations

    // ---- panels ----
    // Re-renders the given views' current images and their panels (target panels are made once).
    void refresh(const std::vector<uint32_t>& views);
    uint32_t selected_view = 0;

    // ---- parameters ----
    const std::vector<app::ParameterState>& parameters();   // read back at most ~4 times a second
    void read_parameters_next() { parameters_read_at_ = -1e300; }   // the next parameters() reads (a last frame)
    void set_learning_rate(size_t parameter, float lr);      // live, and kept by reset()
    // A free parameter's current value and the last iteration's gradient (Optimizer::parameter_now), read from
    // the device once an iteration: a free environment map is both the texture panel's and the environment
    // panel's, and each reads it at its own cadence.
    void parameter_now(size_t parameter, std::vector<float>& value, std::vector<float>& gradient);
    app::Scene current_scene();                              // with the optimized values
    // Whether pixel_gradients() can run: the session is diagnosable and optimizes (any visibility).
    bool pixel_gradients_available() const;
    // Each pixel's own share of d loss / d the free parameter in view `view` (Optimizer::attribute_pixels).
    app::PixelAttribution pixel_gradients(size_t parameter, uint32_t view);

    // Starts over from `edited` (settings changed in the UI); --out's outputs restart with it. On a refused
    // scene the session is unchanged and the SceneError propagates.
    void reset(const app::Scene& edited);
    // --out: writes the end-of-run outputs (final.png, params.json, report.png, checkpoint). Idempotent until
    // the next iteration.
    void finish_outputs();
    const std::optional<std::filesystem::path>& out() const { return out_; }

private:
    void build(const app::Scene& scene);
    void make_targets();

    Device& device_;
    Stream stream_;
    DisplayKernels display_;
    app::Scene scene_;
    std::optional<std::filesystem::path> out_;
    bool diagnosable_ = false;
    std::unique_ptr<app::Optimizer> optimizer_;
    std::unique_ptr<app::SceneRenderer> renderer_;   // scenes without an optimize block
    std::unique_ptr<app::RunOutputs> outputs_;
    bool outputs_current_ = false;
    std::vector<ViewImages> views_;
    uint32_t width_ = 0, height_ = 0;
    std::vector<HistoryPoint> history_;
    std::string error_;
    std::vector<app::ParameterState> parameters_;
    double parameters_read_at_ = -1e300;
    uint32_t parameters_iteration_ = UINT32_MAX;
    struct ParameterRead {
        uint32_t iteration = UINT32_MAX;
        std::vector<float> value, gradient;
    };
    std::map<size_t, ParameterRead> parameter_reads_;   // parameter_now's, by parameter; cleared by build()
};

} // namespace adjoint::studio
