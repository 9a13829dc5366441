// The command lines of adjoint-optimize and adjoint-render (app-contract.md), parsed into plain structs.
#pragma once
#include <adjoint/app/scene.h>
#include <adjoint/core/error.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace adjoint::app {

// The programs' exit codes (app-contract.md).
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;      // a failure while running (device, non-finite loss)
inline constexpr int exit_bad_input = 2;    // usage, scene, assets; nothing written
inline constexpr int exit_interrupted = 130;

// A bad command line: what() is the reason ("--iters: must be >= 0, got -5"), usage() the program's
// help text (for --help). The program prints the reason on one line and exits with exit_bad_input.
class UsageError : public Error {
public:
    UsageError(const std::string& message, std::string usage) : Error(message), usage_(std::move(usage)) {}
    const std::string& usage() const { return usage_; }

private:
    std::string usage_;
};

// --resolution takes scene.h's WxH syntax (parse_resolution); a bad value is a UsageError here.

struct OptimizeOptions {
    std::filesystem::path scene;
    std::filesystem::path out;
    std::optional<int64_t> iters;        // >= 0; overrides the scene's optimize.iterations
    std::optional<Resolution> resolution;
    std::optional<uint64_t> seed;
    std::optional<int64_t> save_every;   // >= 1
    bool resume = false;
    bool force = false;                  // write into a folder that holds another run's outputs
    bool quiet = false;
    // --deterministic: bit-identical runs (losses, params.json, images) for the same scene, seed and build, so a
    // --resume continues exactly the run it interrupted. Float atomics (the gradients' scatters) add in the order
    // the device runs the invocations; on lavapipe one thread (LP_NUM_THREADS=0) runs them in one order. Off by
    // default (it gives up lavapipe's second thread); refused on other devices, whose order is not fixed.
    bool deterministic = false;
    // --profile: the device time of every kernel over the iterations (engine timestamps, runtime/profile.h),
    // printed and written to out/profile.txt.
    bool profile = false;
    // --check-gradients: the gradient against finite differences at the start values (gradient_check.h),
    // printed and written to out/gradient_check.txt; no optimization. Exit 0 when every row passes, 1 otherwise.
    bool check_gradients = false;
    // Test hook (--test-break-gradient PATH, with --check-gradients): negates that free parameter's
    // gradient in the check, so a test sees a FAIL and exit 1.
    std::string test_break_gradient;
    // --diagnose: gradient images, sensitivity images and the edge pixels at the start values into out
    // (app/docs/programs.md); no optimization. --diagnose-parameter PATH (repeatable): the parameters whose
    // sensitivity images are written (default: the first few free parameters).
    bool diagnose = false;
    std::vector<std::string> diagnose_parameters;
    // --help (or -h) was given: nothing else is checked; print help_text to stdout and exit 0.
    bool help = false;
    std::string help_text;
};

struct RenderOptions {
    std::filesystem::path scene;
    std::filesystem::path out;           // the PNG to write (empty with all_views)
    // --all-views DIR: every view as DIR/view_<i>.png, and with a dataset target (optimize.target "views")
    // DIR/view_<i>_side.png, the render beside its photo. Exactly one of --out and --all-views is given.
    std::optional<std::filesystem::path> all_views;
    std::optional<Resolution> resolution;
    int view = 0;                        // >= 0; checked against the scene's views by the program
    std::optional<std::filesystem::path> params;  // a params.json from adjoint-optimize
    bool help = false;
    std::string help_text;
};

struct StudioOptions {
    std::optional<std::filesystem::path> scene;      // none: the default demo, if found
    bool run = false;                                // start optimizing at once
    std::optional<int64_t> quit_after_iters;         // >= 0: exit once this many iterations ran
    std::optional<std::filesystem::path> screenshot; // the whole window at exit, as a PNG
    std::optional<std::filesystem::path> out;        // adjoint-optimize's outputs for the scene given
    bool force = false;                              // --out may hold another run's outputs (written over)
    bool diagnose = false;                           // per-parameter gradient images, live
    bool help = false;
    std::string help_text;
};

// argv[0] is the program's name. UsageError for unknown or missing options, values that do not parse,
// and values out of range.
// How adjoint-optimize and adjoint-render end on an exception nothing else handled (call it from a catch
// block: it rethrows the current exception): "adjoint: error: <what>" on `err` (and the usage after a
// UsageError) and the exit code: exit_bad_input for a UsageError or SceneError, exit_failure for anything
// else, out of memory included ("adjoint: error: out of memory"). A program never ends by abort().
int report_current_exception(std::ostream& err);

OptimizeOptions parse_optimize_args(int argc, const char* const* argv);
RenderOptions parse_render_args(int argc, const char* const* argv);
StudioOptions parse_studio_args(int argc, const char* const* argv);

} // namespace adjoint::app
