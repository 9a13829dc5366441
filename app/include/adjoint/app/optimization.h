// Gradient-descent recovery of scene parameters: the optimization loop that adjoint-optimize and the
// studio drive. Parameters, optimizer state, images and gradients live on the device; an iteration
// submits its kernels once and reads back only the scalars it reports.
#pragma once
#include <adjoint/adjoint.h>
#include <adjoint/app/scene.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace adjoint::app {

struct IterationReport {
    uint32_t iteration = 0;            // 0-based index of the iteration just run
    double loss = 0;                   // mean over pixels, channels and the iteration's views
    double image_psnr = 0;             // dB, averaged over the iteration's views
    std::optional<double> param_error; // largest relative error over free parameters (when truth is known)
    // Each free parameter's error in its units (file order; error_unit: degrees, scene units, relative),
    // empty where its truth is unknown.
    std::vector<std::optional<double>> errors;
    double ms = 0;                     // wall time of the iteration
};

// A free parameter's state, for params.json and the studio's table.
struct ParameterState {
    std::string path;
    ParameterKind kind = ParameterKind::material_value;
    std::vector<float> value;
    std::optional<std::vector<float>> true_value;   // when the target is the scene (a texture's at its size)
    std::optional<double> error;
    double grad_norm = 0;                           // of the last iteration's gradient
    float lr = 0;
    uint32_t texture_width = 0, texture_height = 0; // textures
};

// Everything --resume needs to continue exactly.
struct OptimizerState {
    uint32_t iteration = 0;                 // iterations done
    std::array<uint64_t, 4> rng{};          // view-sampling random state
    std::vector<float> params;
    // The optimizer's state arrays by the names its plug-in gives them (adam: moment1, moment2; sgd:
    // velocity), each as long as params.
    std::vector<std::pair<std::string, std::vector<float>>> arrays;
};

// A loss that turned non-finite: names the iteration and the first parameter whose gradient did.
class NonFiniteError : public Error {
public:
    NonFiniteError(uint32_t iteration, std::string parameter);
    uint32_t iteration;
    std::string parameter;
};

struct OptimizerStages;

// adjoint-optimize --diagnose (optim/diagnosis.cpp): each pixel's own share of gradients at the current values.
struct PixelAttribution {
    uint32_t width = 0, height = 0, views = 0;
    // Per parameter asked: views * height * width floats, view after view, top row first.
    std::vector<std::vector<float>> images;
    // The same layout: 1 where the pixel carries a visibility gradient, else 0: its pairs blend a silhouette
    // edge (antialias), triangles beside a silhouette edge partly cover it (soft: render/soft_diagnose.h); none
    // with hard.
    std::vector<float> edges;
};

// The scene at its start values: each free parameter's `init`, or its value plus the seeded offset of size
// `perturb` (what the optimizer starts from, and start.png shows).
Scene start_scene(const Scene& scene);

class Optimizer {
public:
    // The scene must have an `optimize` block (else SceneError). Geometry parameters, antialias and soft
    // visibility and the silhouette loss run through the dynamic renderer (every iteration rasterizes); the
    // rest shades surfaces rasterized once.
    // diagnosable: the dynamic chain for every scene (attribute_pixels needs it; the static one is faster).
    Optimizer(Device& device, const Scene& scene, bool diagnosable = false);
    ~Optimizer();

    IterationReport step();                    // one iteration; throws NonFiniteError
    uint32_t iteration() const;                // iterations done
    uint32_t total_iterations() const;
    uint32_t view_count() const;
    bool has_truth() const;

    LinearImage render_current(uint32_t view); // with the current parameter values
    LinearImage target(uint32_t view) const;   // the target image (linear RGBA)

    std::vector<ParameterState> parameters();  // reads the values back
    // The scene with the current values of the free parameters written into it.
    Scene current_scene();

    // For gradient checks and tools: the loss over every view at the current values (no step), and
    // optionally d loss / d value for every float of every free parameter, concatenated in file order, and each
    // view's own share of the loss (the loss is their sum plus the regularizers').
    double evaluate(std::vector<float>* gradient = nullptr, std::vector<double>* view_losses = nullptr);
    // d (view `view`'s share of the loss) / d every free float, laid out as evaluate()'s gradient: one view
    // rendered and differentiated, the regularizers left out.
    std::vector<float> view_gradient(uint32_t view);
    std::vector<float> free_values();
    void set_free_values(const std::vector<float>& values);
    // Replaces view `view`'s target (an image of the view's resolution; Error otherwise): one optimizer then
    // serves many evaluations against other targets (adjoint.torch's vector-Jacobian products).
    void set_target(uint32_t view, const LinearImage& image);

    // --diagnose: per free parameter in `parameters` (indices in file order) and pixel, the pixel's own
    // contribution to d loss / d the parameter, its components summed (unit: to d (the image's colour channels
    // summed) / d the parameter instead: the sensitivity image), from the renderer's $autodiff kernels with
    // each read of a free value traced per pixel (render/diagnose_dsl.h). Needs `diagnosable`; any visibility.
    // The regularizers' share of the gradient is not a pixel's. `only_view`: that view's
    // pixels alone are computed (the others stay 0; the studio's live panel).
    PixelAttribution attribute_pixels(const std::vector<size_t>& parameters, bool unit,
                                      std::optional<uint32_t> only_view = std::nullopt);

    OptimizerState save_state();
    void load_state(const OptimizerState& state);   // throws Error on a shape mismatch

    // ---- for the studio (app/src/optim/studio_hooks.cpp) ----
    // render_current into `out` (width * height texels) on the device, with nothing read back.
    void render_current(uint32_t view, const Buffer<float4>& out);
    // A free parameter's learning rate (index in file order), from the next step on; lr > 0.
    void set_learning_rate(size_t parameter, float lr);
    // A free parameter's current value and the last step's gradient of the loss with respect to it (index in
    // file order; size floats each, the gradient all zeros before the first step), read back: for a panel that
    // shows one parameter (the studio's environment map) without a whole evaluate().
    void parameter_now(size_t parameter, std::vector<float>& value, std::vector<float>& gradient);

private:
    std::unique_ptr<OptimizerStages> s_;
};

} // namespace adjoint::app
