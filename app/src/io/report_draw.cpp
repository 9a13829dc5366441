// report.png's drawing primitives and curve plots (log axes in whole decades, linear axes in round steps).
#include "io/report_draw.h"

#include "io/bitmap_font.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace adjoint::app::report_draw {
namespace {

int colour_channels(const Image& image) { return image.channels == 2 || image.channels == 4 ? image.channels - 1 : image.channels; }

// A square brush of side `size` centred on (x, y) (for even sizes, the extra pixel goes right/down).
void plot_pixel(Image& image, int x, int y, int size, const Colour& c) {
    fill(image, Rect{x - (size - 1) / 2, y - (size - 1) / 2, size, size}, c);
}

// Tick step for `span` iterations: 1, 2 or 5 times a power of ten, giving at most about six ticks.
int64_t tick_step(int64_t span) {
    int64_t step = 1;
    for (;;) {
        for (int64_t m : {1, 2, 5})
            if (span / (step * m) <= 6) return step * m;
        step *= 10;
    }
}

// A linear axis around the finite values: round ends in steps of 1, 2 or 5 times a power of ten.
std::pair<double, double> linear_range(const std::vector<double>& values, double& step) {
    double lo = INFINITY, hi = -INFINITY;
    for (double v : values)
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    if (!(hi >= lo)) return {0.0, 0.0};
    if (hi - lo < 1e-9) {
        lo -= 1.0;
        hi += 1.0;
    }
    const double raw = (hi - lo) / 4.0, p = std::pow(10.0, std::floor(std::log10(raw)));
    step = raw <= p ? p : raw <= 2 * p ? 2 * p : raw <= 5 * p ? 5 * p : 10 * p;
    return {std::floor(lo / step) * step, std::ceil(hi / step) * step};
}

std::string fixed_label(double v, double step) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", step >= 1.0 ? 0 : int(std::ceil(-std::log10(step))), v);
    return buf;
}

// The value axis: decade lines (log) or round steps (linear), ticks and labels left of the plot.
void draw_value_axis(Image& report, const Rect& p, std::pair<double, double> range, bool log_scale, double step, int s) {
    std::vector<std::pair<double, std::string>> ticks;
    if (log_scale) {
        const int first = int(std::lround(std::log10(range.first))), last = int(std::lround(std::log10(range.second)));
        const int every = std::max(1, (last - first) * (font::glyph_height * s + 4) / std::max(p.height, 1) + 1);
        for (int k = first; k <= last; ++k) ticks.emplace_back(std::pow(10.0, k), (k - first) % every ? "" : "1E" + std::to_string(k));
    } else {
        for (double v = range.first; v <= range.second + step * 0.5; v += step) ticks.emplace_back(v, fixed_label(v, step));
    }
    for (size_t i = 0; i < ticks.size(); ++i) {
        const int y = curve_point(p, range, log_scale, 0, 2, ticks[i].first).second;
        if (i != 0 && i + 1 != ticks.size()) draw_line(report, p.x, y, p.x + p.width - 1, y, 1, grid);
        draw_line(report, p.x - 5, y, p.x - 2, y, 1, ink);
        const std::string& label = ticks[i].second;
        font::draw_text(report, p.x - 7 - font::text_width(label, s), y - font::glyph_height * s / 2, label, s, ink);
    }
}

} // namespace

void fill(Image& image, const Rect& r, const Colour& c) {
    for (int y = std::max(r.y, 0); y < std::min(r.y + r.height, image.height); ++y)
        for (int x = std::max(r.x, 0); x < std::min(r.x + r.width, image.width); ++x)
            for (int k = 0; k < 3; ++k) image.at(x, y, k) = c[size_t(k)];
}

// Bresenham's line from (x0, y0) to (x1, y1), both ends included.
void draw_line(Image& image, int x0, int y0, int x1, int y1, int size, const Colour& c) {
    int dx = std::abs(x1 - x0), sx = x0 < x1 ? 1 : -1;
    int dy = -std::abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    for (;;) {
        plot_pixel(image, x0, y0, size, c);
        if (x0 == x1 && y0 == y1) return;
        int e2 = 2 * err;
        if (e2 >= dy) {
            err += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            err += dx;
            y0 += sy;
        }
    }
}

Colour rgb(const Image& image, int x, int y) {
    if (colour_channels(image) == 1) return {image.at(x, y, 0), image.at(x, y, 0), image.at(x, y, 0)};
    return {image.at(x, y, 0), image.at(x, y, 1), image.at(x, y, 2)};
}

void blit(Image& report, const Rect& r, const Image& image) {
    for (int y = 0; y < r.height; ++y)
        for (int x = 0; x < r.width; ++x) {
            const int sx = std::min(int(int64_t(x) * image.width / std::max(r.width, 1)), image.width - 1);
            const int sy = std::min(int(int64_t(y) * image.height / std::max(r.height, 1)), image.height - 1);
            Colour c = rgb(image, sx, sy);
            for (int k = 0; k < 3; ++k) report.at(r.x + x, r.y + y, k) = c[size_t(k)];
        }
}

std::string scientific(double v, int digits) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*E", digits, v);
    // "1.2E-02" -> "1.2E-2": shorter labels for a small font.
    std::string s = buf;
    size_t e = s.find('E');
    if (e != std::string::npos) {
        std::string mantissa = s.substr(0, e);
        int exponent = std::atoi(s.c_str() + e + 1);
        s = mantissa + "E" + std::to_string(exponent);
    }
    return s;
}

std::pair<int, int> curve_point(const Rect& p, std::pair<double, double> range, bool log_scale, size_t index,
                                size_t count, double value) {
    int x = count <= 1 ? p.x + (p.width - 1) / 2
                       : p.x + int(std::lround(double(index) * double(p.width - 1) / double(count - 1)));
    const auto f = [&](double v) { return log_scale ? std::log10(v) : v; };
    double top = f(range.second), bottom = f(range.first);
    double t = (top - f(value)) / (top - bottom);
    int y = p.y + int(std::lround(std::clamp(t, 0.0, 1.0) * double(p.height - 1)));
    return {x, y};
}

std::string scale_caption(const std::string& long_name, const std::string& name, double scale, int width, int s) {
    const std::string p = scientific(scale), one = scientific(scale, 0);
    const std::string options[] = {long_name + " P99 " + p, name + " P99 " + p, name + " " + p, name + " " + one};
    for (const std::string& o : options)
        if (font::text_width(o, s) <= width) return o;
    return one;
}

void draw_plot(Image& report, const Rect& p, const ReportCurve& c, int s) {
    // The longest title that fits the report's width (a long parameter group's was cut at 360 pixels).
    const std::string log = c.log_scale ? " (LOG SCALE)" : "", short_log = c.log_scale ? " (LOG)" : "";
    std::string title = c.title;
    for (const std::string& t : {c.title + log + " / ITERATION", c.title + short_log + " / ITER", c.title + short_log})
        if (font::text_width(t, s) <= report.width - pad - p.x) {
            title = t;
            break;
        }
    font::draw_text(report, p.x, p.y - font::glyph_height * s - 4, title, s, ink, report.width - pad);
    double step = 1.0;
    const auto range = c.log_scale ? loss_axis_range(c.values) : linear_range(c.values, step);
    const bool have = c.log_scale ? range.second > 0.0 : range.second > range.first;
    if (have) draw_value_axis(report, p, range, c.log_scale, step, s);
    // Axes just outside the plot, so the curve never hides them.
    draw_line(report, p.x - 1, p.y, p.x - 1, p.y + p.height, 1, ink);
    draw_line(report, p.x - 1, p.y + p.height, p.x + p.width - 1, p.y + p.height, 1, ink);
    const size_t n = c.values.size();
    if (n > 0) {
        const int64_t step_i = tick_step(int64_t(n) - 1);
        for (int64_t i = 0; i < int64_t(n); i += step_i) {
            int x = curve_point(p, {1.0, 10.0}, true, size_t(i), n, 1.0).first;
            draw_line(report, x, p.y + p.height + 1, x, p.y + p.height + 4, 1, ink);
            std::string label = std::to_string(i);
            font::draw_text(report, x - font::text_width(label, s) / 2, p.y + p.height + 6, label, s, ink);
        }
    }
    if (!have) {
        font::draw_text(report, p.x + 4, p.y + 4, c.log_scale ? "NO FINITE POSITIVE VALUE" : "NO FINITE VALUE", s, ink);
        return;
    }
    bool have_previous = false;
    std::pair<int, int> previous;
    for (size_t i = 0; i < n; ++i) {
        double v = c.values[i];
        if (!(std::isfinite(v) && (v > 0.0 || !c.log_scale))) {
            have_previous = false;
            continue;
        }
        auto point = curve_point(p, range, c.log_scale, i, n, v);
        if (have_previous) draw_line(report, previous.first, previous.second, point.first, point.second, s, curve);
        else plot_pixel(report, point.first, point.second, s, curve);
        previous = point;
        have_previous = true;
    }
}

} // namespace adjoint::app::report_draw
