// report.png: target | start | final | |final - target| heat map above the loss curve (log scale).
//
// The heat map shows, per pixel, d = mean over RGB of |final - target| (values clamped to [0, 1]
// first), divided by the largest d in the image and coloured with inferno: black where the images
// agree, bright yellow at the largest difference, all black when the images are equal; a non-finite d
// counts as the largest. Its caption gives that largest d ("|FINAL-TARGET| MAX 1.2E-2", or "|F-T| ..."
// when the tile is narrow), so the picture is never read as an absolute scale. The loss curve plots losses[i] at
// iteration i on a log10 axis spanning whole decades (loss_axis_range); non-positive or non-finite
// losses are left out (the line breaks there).
#pragma once
#include <adjoint/app/image_io.h>

#include <array>
#include <filesystem>
#include <utility>
#include <vector>

namespace adjoint::app {

struct Rect {
    int x = 0, y = 0, width = 0, height = 0;
};

// Where everything goes in a report for images of the given size.
struct ReportLayout {
    int width = 0, height = 0;
    std::array<Rect, 4> tiles;  // target, start, final, heat map: each image_width x image_height
    Rect plot;                  // the loss curve's area (axes are drawn just outside it)
    int text_scale = 1;         // font pixel size: 2 when the images are at least 192 wide
};
ReportLayout report_layout(int image_width, int image_height);

// [10^floor(log10 min), 10^ceil(log10 max)] over the positive finite losses (one decade wider at
// the top when both ends meet), or {0, 0} when there are none.
std::pair<double, double> loss_axis_range(const std::vector<double>& losses);
// The pixel of loss `value` at iteration `index` of `count` in the plot (count 1: the plot's middle).
std::pair<int, int> loss_curve_point(const ReportLayout& layout, std::pair<double, double> range, size_t index,
                                     size_t count, double value);

// The inferno colour map at t in [0, 1] (clamped) as linear RGB: interpolated in sRGB between 11 stops.
std::array<float, 3> inferno(float t);

// The report as a linear RGB image. The three images must have the same size (adjoint::Error otherwise);
// grey and alpha channels are handled (alpha is ignored).
Image make_report(const Image& target, const Image& start, const Image& final, const std::vector<double>& losses);
// make_report written as a PNG atomically.
void write_report(const std::filesystem::path& path, const Image& target, const Image& start, const Image& final,
                  const std::vector<double>& losses);

} // namespace adjoint::app
