// Progress bar / lines / summary for an optimization run, written to a given stream with an injectable clock.
#include <adjoint/app/progress.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <unistd.h>

namespace adjoint::app {
namespace {

constexpr int steps_per_run = 20;        // Lines mode: one line per 5%
constexpr double bar_redraw_s = 0.1;     // Bar mode: at most 10 redraws a second
constexpr int gauge_width = 20;

double steady_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <typename... Args>
std::string printf_string(const char* format, Args... args) {
    char buf[128];
    std::snprintf(buf, sizeof buf, format, args...);
    return buf;
}

std::string duration_text(double seconds) {
    auto s = int64_t(std::llround(seconds));
    if (s >= 3600) return printf_string("%lld:%02lld:%02lld", (long long)(s / 3600), (long long)(s / 60 % 60), (long long)(s % 60));
    return printf_string("%lld:%02lld", (long long)(s / 60), (long long)(s % 60));
}

// "1.25 deg, 3.10e-03 scene_units": degrees with two decimals (a pose is read in degrees), others in %.2e.
std::string unit_errors_text(const ProgressSample& sample) {
    std::string text;
    for (const auto& [unit, value] : sample.unit_errors) {
        if (!text.empty()) text += ", ";
        text += unit == "deg" ? printf_string("%.2f deg", value) : printf_string("%.2e ", value) + unit;
    }
    return text;
}

int64_t step_of(int64_t done, int64_t total) { return total > 0 ? done * steps_per_run / total : 0; }

} // namespace

ProgressMode progress_mode_for_stderr(bool quiet) {
    if (quiet) return ProgressMode::Quiet;
    return ::isatty(STDERR_FILENO) ? ProgressMode::Bar : ProgressMode::Lines;
}

Progress::Progress(std::ostream& out, ProgressMode mode, int64_t total, int64_t first, std::function<double()> now_s)
    : out_(out), mode_(mode), total_(total), first_(first), now_s_(now_s ? std::move(now_s) : steady_seconds),
      start_s_(now_s_()), done_(first), last_step_(step_of(first, total)) {}

std::string Progress::describe(int64_t done, int64_t total, const ProgressSample& sample, double it_per_s) {
    std::string text = printf_string("iter %lld/%lld (%d%%)  loss %.3e", (long long)done, (long long)total,
                                     total > 0 ? int(done * 100 / total) : 100, sample.loss);
    if (sample.psnr) text += printf_string("  psnr %.2f dB", *sample.psnr);
    if (!sample.unit_errors.empty()) text += "  err " + unit_errors_text(sample);
    else if (sample.param_error) text += printf_string("  param err %.2e", *sample.param_error);
    if (it_per_s > 0.0 && std::isfinite(it_per_s)) {
        text += printf_string("  %.1f it/s  ETA ", it_per_s);
        text += duration_text(double(total - done) / it_per_s);
    } else {
        text += "  -- it/s  ETA --";
    }
    return text;
}

void Progress::update(int64_t done, const ProgressSample& sample) {
    done_ = done;
    last_ = sample;
    const double now = now_s_();
    const double elapsed = now - start_s_;
    const double rate = elapsed > 0.0 ? double(done - first_) / elapsed : 0.0;
    switch (mode_) {
    case ProgressMode::Quiet:
        return;
    case ProgressMode::Lines: {
        int64_t step = step_of(done, total_);
        if (step <= last_step_) return;
        last_step_ = step;
        out_ << describe(done, total_, sample, rate) << '\n' << std::flush;
        return;
    }
    case ProgressMode::Bar: {
        if (done < total_ && now - last_draw_s_ < bar_redraw_s) {
            drawn_ = false;  // finish() draws the latest state
            return;
        }
        last_draw_s_ = now;
        draw_bar(rate);
        return;
    }
    }
}

void Progress::draw_bar(double rate) {
    int filled = total_ > 0 ? int(std::clamp<int64_t>(done_, 0, total_) * gauge_width / total_) : gauge_width;
    std::string gauge = "[" + std::string(size_t(filled), '#') + std::string(size_t(gauge_width - filled), '-') + "] ";
    // '\r' returns to the line's start; ESC[K clears what a longer previous line left behind.
    out_ << '\r' << gauge << describe(done_, total_, last_, rate) << "\x1b[K" << std::flush;
    drawn_ = true;
}

void Progress::finish(End how) {
    const double elapsed = now_s_() - start_s_;
    const int64_t ran = done_ - first_;
    if (mode_ == ProgressMode::Bar && ran > 0) {
        if (!drawn_) draw_bar(elapsed > 0.0 ? double(ran) / elapsed : 0.0);
        out_ << '\n';
    }
    const char* word = how == End::done ? "done" : how == End::interrupted ? "interrupted" : "stopped";
    // A resumed run already past its --iters has done them all.
    // A resumed run says how many of them this run did: "400/400 iterations in 2.5 s (114.8 it/s)" read as all
    // 400 at that rate, where 289 ran.
    std::string text =
        printf_string("%s: %lld/%lld iterations", word, (long long)done_, (long long)std::max(total_, done_));
    if (first_ > 0) text += printf_string(" (%lld this run)", (long long)std::max<int64_t>(ran, 0));
    text += printf_string(" in %.1f s", elapsed);
    if (ran > 0 && elapsed > 0.0) text += printf_string(" (%.1f it/s)", double(ran) / elapsed);
    if (done_ > 0 && ran > 0) {
        text += printf_string(", loss %.3e", last_.loss);
        if (last_.psnr) text += printf_string(", psnr %.2f dB", *last_.psnr);
        if (!last_.unit_errors.empty()) text += ", error " + unit_errors_text(last_);
        else if (last_.param_error) text += printf_string(", param error %.2e", *last_.param_error);
    }
    out_ << text << '\n' << std::flush;
}

} // namespace adjoint::app
