// Progress reporting for an optimization run: a live bar on a terminal, plain lines otherwise, or quiet.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>
#include <ostream>
#include <string>

namespace adjoint::app {

enum class ProgressMode {
    Bar,    // a terminal: one line redrawn in place with '\r' (at most every 0.1 s, always at the end)
    Lines,  // not a terminal: a plain line each time the run crosses a multiple of 5% (20 lines per run)
    Quiet,  // nothing but finish()'s summary
};

// Bar when stderr is a terminal, else Lines; Quiet when `quiet`.
ProgressMode progress_mode_for_stderr(bool quiet);

// The measures of the latest iteration; psnr and param_error are left out of the text when unknown.
struct ProgressSample {
    double loss = 0.0;
    std::optional<double> psnr;
    std::optional<double> param_error;
    // The worst error of each unit's free parameters ("deg", "scene_units", "relative"), in that unit; when
    // given, the text shows these ("err 1.25 deg, 3.10e-03 scene_units") in place of param_error.
    std::vector<std::pair<std::string, double>> unit_errors = {};
};

class Progress {
public:
    // `total`: the run's last iteration count (--iters); `first`: iterations already done (a resumed
    // run starts there; rates and ETA count only this run's iterations). `now_s` (seconds, monotonic)
    // can be injected for tests.
    Progress(std::ostream& out, ProgressMode mode, int64_t total, int64_t first = 0,
             std::function<double()> now_s = nullptr);

    // Reports that `done` iterations are now complete (first < done <= total).
    void update(int64_t done, const ProgressSample& sample);

    // How a run ended: all its iterations, a signal, or an error (whose message follows the summary).
    enum class End { done, interrupted, stopped };

    // Ends the bar's line and prints one summary line in every mode, e.g.
    //   "done: 100/100 iterations in 12.3 s (8.1 it/s), loss 1.234e-03, psnr 31.20 dB, param error 2.1e-03"
    // with "interrupted" or "stopped" instead of "done".
    void finish(End how = End::done);

    // The text of one progress line (also the bar's text after its gauge), for tests and the studio:
    //   "iter 57/100 (57%)  loss 1.234e-03  psnr 31.20 dB  param err 2.1e-03  8.1 it/s  ETA 0:05"
    static std::string describe(int64_t done, int64_t total, const ProgressSample& sample, double it_per_s);

private:
    void draw_bar(double it_per_s);

    std::ostream& out_;
    ProgressMode mode_;
    int64_t total_;
    int64_t first_;
    std::function<double()> now_s_;
    double start_s_;
    double last_draw_s_ = -1e300;
    int64_t done_;
    int64_t last_step_;  // the last 5% step a Lines line was printed for
    ProgressSample last_;
    bool drawn_ = false;  // the bar shows the latest update
};

} // namespace adjoint::app
