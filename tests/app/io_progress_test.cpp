// Progress: 20 plain lines per run off a terminal, an in-place bar on one, only the summary when quiet.
#include <adjoint/app/progress.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <sstream>

using namespace adjoint::app;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// Runs iterations first+1..last with the clock advancing 0.125 s (exact in binary) per iteration.
std::string run(ProgressMode mode, int64_t total, int64_t first, int64_t last, bool finish = true) {
    std::ostringstream out;
    double now = 100.0;
    Progress progress(out, mode, total, first, [&] { return now; });
    for (int64_t i = first + 1; i <= last; ++i) {
        now += 0.125;
        progress.update(i, ProgressSample{0.01, 20.0, 1e-3});
    }
    if (finish) progress.finish();
    return out.str();
}

} // namespace

TEST(IoProgress, LinesEveryFivePercent) {
    std::vector<std::string> lines = lines_of(run(ProgressMode::Lines, 100, 0, 100, false));
    ASSERT_EQ(lines.size(), 20u);
    std::regex format(R"(iter (\d+)/100 \((\d+)%\)  loss 1\.000e-02  psnr 20\.00 dB  param err 1\.00e-03  8\.0 it/s  ETA \d:\d\d)");
    for (size_t i = 0; i < lines.size(); ++i) {
        std::smatch m;
        ASSERT_TRUE(std::regex_match(lines[i], m, format)) << lines[i];
        EXPECT_EQ(std::stoi(m[1]), int(5 * (i + 1)));
        EXPECT_EQ(std::stoi(m[2]), int(5 * (i + 1)));
    }
    EXPECT_EQ(lines[9], "iter 50/100 (50%)  loss 1.000e-02  psnr 20.00 dB  param err 1.00e-03  8.0 it/s  ETA 0:06");
    EXPECT_EQ(lines_of(run(ProgressMode::Lines, 1000, 0, 1000, false)).size(), 20u);
    EXPECT_EQ(lines_of(run(ProgressMode::Lines, 7, 0, 7, false)).size(), 7u);  // short runs: one line per iteration
}

TEST(IoProgress, ResumedRunCountsFromItsFirstIteration) {
    std::vector<std::string> lines = lines_of(run(ProgressMode::Lines, 100, 50, 100, false));
    ASSERT_EQ(lines.size(), 10u);
    EXPECT_EQ(lines[0].rfind("iter 55/100 (55%)", 0), 0u);
    EXPECT_NE(lines[0].find("8.0 it/s  ETA 0:06"), std::string::npos) << lines[0];  // rate of this run only
}

TEST(IoProgress, QuietPrintsOnlyTheSummary) {
    EXPECT_EQ(run(ProgressMode::Quiet, 100, 0, 100),
              "done: 100/100 iterations in 12.5 s (8.0 it/s), loss 1.000e-02, psnr 20.00 dB, param error 1.00e-03\n");
}

TEST(IoProgress, SummaryOmitsUnknownMeasuresAndSaysInterrupted) {
    std::ostringstream out;
    double now = 0.0;
    Progress progress(out, ProgressMode::Lines, 100, 0, [&] { return now; });
    now = 2.0;
    progress.update(4, ProgressSample{0.5, std::nullopt, std::nullopt});  // below 5%: no line
    progress.update(5, ProgressSample{0.5, std::nullopt, std::nullopt});
    progress.finish(Progress::End::interrupted);
    EXPECT_EQ(out.str(), "iter 5/100 (5%)  loss 5.000e-01  2.5 it/s  ETA 0:38\n"
                         "interrupted: 5/100 iterations in 2.0 s (2.5 it/s), loss 5.000e-01\n");
}

// A run an error ends says "stopped" (its message follows), not "interrupted", which a signal's is; a resumed
// run already past its --iters has done them all.
TEST(IoProgress, AnErrorStopsAndARunPastItsTotalIsDone) {
    std::ostringstream out;
    double now = 0.0;
    Progress progress(out, ProgressMode::Quiet, 3, 0, [&] { return now; });
    progress.finish(Progress::End::stopped);
    EXPECT_EQ(out.str(), "stopped: 0/3 iterations in 0.0 s\n");
    std::ostringstream past;
    Progress resumed(past, ProgressMode::Quiet, 2, 6, [&] { return now; });
    resumed.finish();
    EXPECT_EQ(past.str(), "done: 6/6 iterations (0 this run) in 0.0 s\n");
    // A resumed run's rate is of its own iterations, and it says how many they were.
    std::ostringstream part;
    Progress continued(part, ProgressMode::Quiet, 400, 111, [&] { return now; });
    now = 2.5;
    continued.update(400, {0.5, std::nullopt, std::nullopt, {}});
    continued.finish();
    EXPECT_EQ(part.str(), "done: 400/400 iterations (289 this run) in 2.5 s (115.6 it/s), loss 5.000e-01\n");
}

TEST(IoProgress, TerminalBarRedrawsInPlace) {
    std::string text = run(ProgressMode::Bar, 100, 0, 100);
    // Until the summary, no line ends: every redraw starts with '\r' and clears the rest of the line.
    size_t first_newline = text.find('\n');
    ASSERT_NE(first_newline, std::string::npos);
    std::string bar = text.substr(0, first_newline);
    size_t redraws = size_t(std::count(bar.begin(), bar.end(), '\r'));
    EXPECT_EQ(redraws, 100u);  // 0.125 s apart: each one is drawn
    EXPECT_EQ(bar.substr(bar.rfind('\r')),
              "\r[####################] iter 100/100 (100%)  loss 1.000e-02  psnr 20.00 dB  param err 1.00e-03  "
              "8.0 it/s  ETA 0:00\x1b[K");
    EXPECT_EQ(text.substr(first_newline + 1),
              "done: 100/100 iterations in 12.5 s (8.0 it/s), loss 1.000e-02, psnr 20.00 dB, param error 1.00e-03\n");
}

TEST(IoProgress, TerminalBarIsThrottledButShowsTheLastState) {
    std::ostringstream out;
    double now = 0.0;
    Progress progress(out, ProgressMode::Bar, 1000, 0, [&] { return now; });
    for (int i = 1; i <= 500; ++i) {
        now += 0.001;  // 1000 it/s: at most 10 redraws a second
        progress.update(i, ProgressSample{0.25, std::nullopt, std::nullopt});
    }
    progress.finish(Progress::End::interrupted);
    std::string text = out.str();
    std::string bar = text.substr(0, text.find('\n'));
    size_t redraws = size_t(std::count(bar.begin(), bar.end(), '\r'));
    EXPECT_GE(redraws, 5u);
    EXPECT_LE(redraws, 7u);
    EXPECT_EQ(bar.substr(bar.rfind('\r')).rfind("\r[##########----------] iter 500/1000 (50%)", 0), 0u)
        << bar.substr(bar.rfind('\r'));  // finish drew the latest state
}

// Errors in their units: degrees with two decimals, others in scientific notation with the unit named; they
// take param_error's place on the line and in the summary.
TEST(IoProgress, ErrorsShowInTheirUnits) {
    ProgressSample sample{1e-2, 20.0, 1e-3, {{"deg", 1.2345}, {"scene_units", 3.1e-3}}};
    EXPECT_EQ(Progress::describe(50, 100, sample, 8.0),
              "iter 50/100 (50%)  loss 1.000e-02  psnr 20.00 dB  err 1.23 deg, 3.10e-03 scene_units  8.0 it/s  ETA 0:06");
    std::ostringstream out;
    double now = 0;
    Progress p(out, ProgressMode::Lines, 10, 0, [&] { return now; });
    now = 1.0;
    p.update(10, sample);
    p.finish(Progress::End::done);
    EXPECT_NE(out.str().find("done: 10/10 iterations in 1.0 s (10.0 it/s), loss 1.000e-02, psnr 20.00 dB, error 1.23 deg, "
                             "3.10e-03 scene_units\n"), std::string::npos) << out.str();
}
