// report.png's drawing: filled rectangles, lines, scaled images, and the curve plots with their axes.
#pragma once
#include <adjoint/app/report.h>

#include <array>
#include <string>

namespace adjoint::app::report_draw {

using Colour = std::array<float, 3>;

constexpr int pad = 8;
constexpr Colour background = {0.008f, 0.008f, 0.010f};
constexpr Colour ink = {0.60f, 0.60f, 0.60f};         // captions, axes, labels
constexpr Colour grid = {0.025f, 0.025f, 0.030f};     // decade lines
constexpr Colour curve = {1.0f, 0.30f, 0.02f};        // the curves (orange)

void fill(Image& image, const Rect& r, const Colour& c);
void draw_line(Image& image, int x0, int y0, int x1, int y1, int size, const Colour& c);
// The image's colour at (x, y) as RGB (grey replicated), not clamped.
Colour rgb(const Image& image, int x, int y);
// `image` into r, scaled with nearest sampling (r's size may differ from the image's).
void blit(Image& report, const Rect& r, const Image& image);
// "1.2E-2" (digits after the point: 1), "1E-2" (0): short for a small font.
std::string scientific(double v, int digits = 1);
// A heat map's caption: its name and the 99th percentile it is scaled by, the longest form that fits `width`
// ("|FINAL-TARGET| P99 2.1E-1" down to "|F-T| 2E-1"), then the scale alone (a 48-pixel view clipped the exponent).
std::string scale_caption(const std::string& long_name, const std::string& name, double scale, int width, int s);

// The point of `value` at `index` of `count` iterations in plot p over range (log10 or linear).
std::pair<int, int> curve_point(const Rect& p, std::pair<double, double> range, bool log_scale, size_t index,
                                size_t count, double value);
// A curve with its title above, ticks and labels on both axes.
void draw_plot(Image& report, const Rect& p, const ReportCurve& c, int text_scale);

} // namespace adjoint::app::report_draw
