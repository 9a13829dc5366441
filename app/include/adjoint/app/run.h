// The programs' jobs as library calls: adjoint-optimize's run (outputs, checkpoints, resume, interrupts)
// and adjoint-render's picture. The programs (and the studio's --out) are thin wrappers over these.
#pragma once
#include <adjoint/app/cli.h>
#include <adjoint/app/image_io.h>
#include <adjoint/app/optimization.h>

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace adjoint::app {

// Linear RGBA scene image <-> the outputs' RGB image.
Image to_image(const LinearImage& image);

// Applies the command line's overrides (--iters, --seed; --resolution is applied at load) to a scene.
void apply_overrides(Scene& scene, const OptimizeOptions& options);

// Writes what adjoint-optimize writes at the end of a run (final.png, params.json, report.png, the
// checkpoint, loss.csv flushed) for an optimizer driven elsewhere (the studio's --out).
struct OutputsSetup {
    bool resume = false;
    std::string fingerprint;          // the checkpoint's metadata: the scene's content, parameters, resolution, seed
    bool clear_temporaries = false;   // the caller holds dir's FolderLock: killed runs' temporary files are removed
};

class RunOutputs {
public:
    // Creates `dir` (refusing one that cannot be written) and, unless resuming, writes target.png and
    // start.png and removes another run's checkpoint.bin. With resume, restores the optimizer from dir's
    // checkpoint and keeps loss.csv's rows.
    RunOutputs(std::filesystem::path dir, Optimizer& optimizer, OutputsSetup setup);
    // The studio's: the fingerprint from loading the scene's file again; no lock, temporary files left alone.
    RunOutputs(std::filesystem::path dir, Optimizer& optimizer, const Scene& scene, bool resume);
    ~RunOutputs();
    void record(const IterationReport& report);   // a loss.csv row
    void snapshot(uint32_t iteration);            // render_NNNN.png
    void checkpoint();                            // loss.csv flushed, then the checkpoint
    void flush_log();                             // loss.csv's rows so far (after a failure: they stay)
    void finish();                                // final.png, params.json, report.png, checkpoint
    const std::vector<double>& losses() const;
    // The iteration's worst error per unit ("deg", "scene_units", "relative"), for the progress line.
    std::vector<std::pair<std::string, double>> unit_errors(const IterationReport& report) const;

private:
    void resume_from_checkpoint();
    struct State;
    std::unique_ptr<State> s_;
};

// adjoint-optimize's whole run; returns the exit code (errors are printed to err as
// `adjoint: error: ...`). The caller installs an InterruptGuard first (the program does, first thing in main):
// SIGINT/SIGTERM at any moment then end the run with exit 130 and no temporary file left.
int run_optimize(const OptimizeOptions& options, std::ostream& err);
// adjoint-optimize --check-gradients (run_optimize calls it): the table on `out` and in
// options.out/gradient_check.txt; exit_ok when every row passes, exit_failure when one fails, exit_bad_input
// for bad input (nothing written).
int run_check_gradients(const OptimizeOptions& options, std::ostream& out, std::ostream& err);
// adjoint-optimize --diagnose (run_optimize calls it): the images and options.out/diagnose.txt (run_diagnose.cpp);
// exit_ok, exit_bad_input for bad input (nothing written), exit_failure for a device failure.
int run_diagnose(const OptimizeOptions& options, std::ostream& out, std::ostream& err);
// Refuses (SceneError, "--out") a folder that holds another run's outputs unless `allowed` (--resume, --force):
// any file a run of `scene` writes, render_*.png with `snapshots` (--save-every), profile.txt with `profile`.
// `resumable`: the message offers --resume (adjoint-optimize; the studio has none).
void refuse_another_runs_outputs(const std::filesystem::path& dir, const Scene& scene, bool allowed, bool profile,
                                 bool snapshots, bool resumable);
// One line for stderr when free geometry parameters (or a shadowing light's place or direction) meet `hard`
// visibility, or `soft` with a sigma whose reach is under a tenth of a pixel (silhouettes and shadows' outlines will
// not move them), naming them and what to set; "" otherwise.
std::string hard_geometry_warning(const Scene& scene);
// Refuses (SceneError) an optimization that would see nothing move: no mesh that any view shows, or a mesh with
// free parameters that no view shows (they would get no gradient), at the scene's values or at the start values
// (start_scene), where a camera that cannot look (eye at its target, up along the view) is refused too. Judged
// from the meshes' world bounding boxes (out_of_view, scene.h); the programs and the studio call it after loading.
void check_meshes_in_view(const Scene& scene);
// One line for stderr when view `view` shows no mesh (naming why the first cannot show), "" otherwise.
std::string empty_view_warning(const Scene& scene, uint32_t view);
// adjoint-render's job; returns the exit code.
int run_render(const RenderOptions& options, std::ostream& err);

} // namespace adjoint::app
