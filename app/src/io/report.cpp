// report.png: the four image tiles with captions, the inferno heat map and the log-scale loss curve.
#include <adjoint/app/atomic_file.h>
#include <adjoint/app/report.h>
#include <adjoint/core/error.h>

#include "io/bitmap_font.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace adjoint::app {
namespace {

using Colour = std::array<float, 3>;

constexpr int pad = 8;
constexpr int min_width = 360;
constexpr int min_plot_height = 100;
constexpr Colour background = {0.008f, 0.008f, 0.010f};
constexpr Colour ink = {0.60f, 0.60f, 0.60f};         // captions, axes, labels
constexpr Colour grid = {0.025f, 0.025f, 0.030f};     // decade lines
constexpr Colour curve = {1.0f, 0.30f, 0.02f};        // the loss curve (orange)

// inferno at t = 0, 0.1, ..., 1 (sRGB, 8-bit), the colour map's published stops.
constexpr uint8_t inferno_stops[11][3] = {
    {0x00, 0x00, 0x04}, {0x16, 0x0b, 0x39}, {0x42, 0x0a, 0x68}, {0x6a, 0x17, 0x6e}, {0x93, 0x26, 0x67}, {0xbc, 0x37, 0x54},
    {0xdd, 0x51, 0x3a}, {0xf3, 0x78, 0x19}, {0xfc, 0xa5, 0x0a}, {0xf6, 0xd7, 0x46}, {0xfc, 0xff, 0xa4},
};

void fill(Image& image, const Rect& r, const Colour& c) {
    for (int y = std::max(r.y, 0); y < std::min(r.y + r.height, image.height); ++y)
        for (int x = std::max(r.x, 0); x < std::min(r.x + r.width, image.width); ++x)
            for (int k = 0; k < 3; ++k) image.at(x, y, k) = c[size_t(k)];
}

// A square brush of side `size` centred on (x, y) (for even sizes, the extra pixel goes right/down).
void plot_pixel(Image& image, int x, int y, int size, const Colour& c) {
    fill(image, Rect{x - (size - 1) / 2, y - (size - 1) / 2, size, size}, c);
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

int colour_channels(const Image& image) { return image.channels == 2 || image.channels == 4 ? image.channels - 1 : image.channels; }

// The image's colour at (x, y) as RGB (grey replicated), not clamped.
Colour rgb(const Image& image, int x, int y) {
    if (colour_channels(image) == 1) return {image.at(x, y, 0), image.at(x, y, 0), image.at(x, y, 0)};
    return {image.at(x, y, 0), image.at(x, y, 1), image.at(x, y, 2)};
}

void blit(Image& report, const Rect& r, const Image& image) {
    for (int y = 0; y < image.height; ++y)
        for (int x = 0; x < image.width; ++x) {
            Colour c = rgb(image, x, y);
            for (int k = 0; k < 3; ++k) report.at(r.x + x, r.y + y, k) = c[size_t(k)];
        }
}

std::string scientific(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1E", v);
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

// Tick step for `span` iterations: 1, 2 or 5 times a power of ten, giving at most about six ticks.
int64_t tick_step(int64_t span) {
    int64_t step = 1;
    for (;;) {
        for (int64_t m : {1, 2, 5})
            if (span / (step * m) <= 6) return step * m;
        step *= 10;
    }
}

void check_images(const Image& target, const Image& start, const Image& final) {
    for (const Image* image : {&target, &start, &final}) {
        if (image->width <= 0 || image->height <= 0 || image->channels < 1 || image->channels > 4 ||
            image->pixels.size() != size_t(image->width) * size_t(image->height) * size_t(image->channels))
            fail("report: an image is empty or inconsistent (", image->width, "x", image->height, "x", image->channels, ")");
        if (image->width != target.width || image->height != target.height)
            fail("report: the images differ in size (", target.width, "x", target.height, " and ", image->width, "x",
                 image->height, ")");
    }
}

} // namespace

ReportLayout report_layout(int w, int h) {
    ReportLayout l;
    l.text_scale = w >= 192 ? 2 : 1;
    const int s = l.text_scale;
    const int text_h = font::glyph_height * s;
    const int caption_h = text_h + 6;
    l.width = std::max(4 * w + 5 * pad, min_width);
    const int tiles_y = pad + caption_h;
    for (int i = 0; i < 4; ++i) l.tiles[size_t(i)] = Rect{pad + i * (w + pad), tiles_y, w, h};
    // Below the tiles: a title, then the plot with room for the decade labels on its left ("1E-10")
    // and the iteration labels under it.
    const int left = pad + font::text_width("1E-10", s) + 6;
    const int top = tiles_y + h + pad + caption_h;
    l.plot = Rect{left, top, l.width - left - pad - font::advance * s, std::max(h * 3 / 4, min_plot_height)};
    l.height = top + l.plot.height + 4 + caption_h + pad;
    return l;
}

std::pair<double, double> loss_axis_range(const std::vector<double>& losses) {
    double lo = INFINITY, hi = 0.0;
    for (double v : losses)
        if (v > 0.0 && std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    if (hi == 0.0) return {0.0, 0.0};
    double a = std::floor(std::log10(lo)), b = std::ceil(std::log10(hi));
    if (b <= a) b = a + 1;
    return {std::pow(10.0, a), std::pow(10.0, b)};
}

std::pair<int, int> loss_curve_point(const ReportLayout& l, std::pair<double, double> range, size_t index, size_t count,
                                     double value) {
    const Rect& p = l.plot;
    int x = count <= 1 ? p.x + (p.width - 1) / 2
                       : p.x + int(std::lround(double(index) * double(p.width - 1) / double(count - 1)));
    double top = std::log10(range.second), bottom = std::log10(range.first);
    double t = (top - std::log10(value)) / (top - bottom);
    int y = p.y + int(std::lround(std::clamp(t, 0.0, 1.0) * double(p.height - 1)));
    return {x, y};
}

std::array<float, 3> inferno(float t) {
    if (!(t > 0.0f)) t = 0.0f;
    if (t > 1.0f) t = 1.0f;
    float f = t * 10.0f;
    int i = std::min(int(f), 9);
    float u = f - float(i);
    std::array<float, 3> out;
    for (int k = 0; k < 3; ++k) {
        float a = float(inferno_stops[i][k]) / 255.0f, b = float(inferno_stops[i + 1][k]) / 255.0f;
        out[size_t(k)] = srgb_to_linear(a + (b - a) * u);
    }
    return out;
}

// Heat map of the mean absolute difference into `tile`, normalised by its largest value (returned).
float draw_heat_map(Image& report, const Rect& tile, const Image& final, const Image& target) {
    const int w = target.width, h = target.height;
    std::vector<float> d(size_t(w) * size_t(h));
    float d_max = 0.0f;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            Colour a = rgb(final, x, y), b = rgb(target, x, y);
            float sum = 0.0f;
            for (int k = 0; k < 3; ++k)
                sum += std::fabs(std::clamp(a[size_t(k)], 0.0f, 1.0f) - std::clamp(b[size_t(k)], 0.0f, 1.0f));
            float v = sum / 3.0f;
            d[size_t(y) * size_t(w) + size_t(x)] = v;
            if (std::isfinite(v)) d_max = std::max(d_max, v);
        }
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            float v = d[size_t(y) * size_t(w) + size_t(x)];
            float t = !std::isfinite(v) ? 1.0f : d_max > 0.0f ? v / d_max : 0.0f;
            Colour c = inferno(t);
            for (int k = 0; k < 3; ++k) report.at(tile.x + x, tile.y + y, k) = c[size_t(k)];
        }

    return d_max;
}

// The loss curve on a log axis, with its ticks and labels.
void draw_loss_plot(Image& report, const ReportLayout& l, const std::vector<double>& losses) {
    const int s = l.text_scale;
    const Rect& p = l.plot;
    font::draw_text(report, p.x, p.y - font::glyph_height * s - 4, "LOSS (LOG SCALE) / ITERATION", s, ink);
    const auto range = loss_axis_range(losses);
    if (range.second > 0.0) {
        const int first = int(std::lround(std::log10(range.first))), last = int(std::lround(std::log10(range.second)));
        const int label_every = std::max(1, (last - first) * (font::glyph_height * s + 4) / std::max(p.height, 1) + 1);
        for (int k = first; k <= last; ++k) {
            int y = loss_curve_point(l, range, 0, 2, std::pow(10.0, k)).second;
            if (k != first && k != last) draw_line(report, p.x, y, p.x + p.width - 1, y, 1, grid);
            draw_line(report, p.x - 5, y, p.x - 2, y, 1, ink);
            if ((k - first) % label_every == 0) {
                std::string label = "1E" + std::to_string(k);
                font::draw_text(report, p.x - 7 - font::text_width(label, s), y - font::glyph_height * s / 2, label, s, ink);
            }
        }
    }
    // Axes just outside the plot, so the curve never hides them.
    draw_line(report, p.x - 1, p.y, p.x - 1, p.y + p.height, 1, ink);
    draw_line(report, p.x - 1, p.y + p.height, p.x + p.width - 1, p.y + p.height, 1, ink);
    const size_t n = losses.size();
    if (n > 0) {
        const int64_t step = tick_step(int64_t(n) - 1);
        for (int64_t i = 0; i < int64_t(n); i += step) {
            int x = loss_curve_point(l, {1.0, 10.0}, size_t(i), n, 1.0).first;
            draw_line(report, x, p.y + p.height + 1, x, p.y + p.height + 4, 1, ink);
            std::string label = std::to_string(i);
            font::draw_text(report, x - font::text_width(label, s) / 2, p.y + p.height + 6, label, s, ink);
        }
    }
    if (range.second > 0.0) {
        bool have_previous = false;
        std::pair<int, int> previous;
        for (size_t i = 0; i < n; ++i) {
            double v = losses[i];
            if (!(v > 0.0 && std::isfinite(v))) {
                have_previous = false;
                continue;
            }
            auto point = loss_curve_point(l, range, i, n, v);
            if (have_previous) draw_line(report, previous.first, previous.second, point.first, point.second, s, curve);
            else plot_pixel(report, point.first, point.second, s, curve);
            previous = point;
            have_previous = true;
        }
    } else {
        font::draw_text(report, p.x + 4, p.y + 4, "NO FINITE POSITIVE LOSS", s, ink);
    }
}

Image make_report(const Image& target, const Image& start, const Image& final, const std::vector<double>& losses) {
    check_images(target, start, final);
    const int w = target.width, h = target.height;
    const ReportLayout l = report_layout(w, h);
    const int s = l.text_scale;
    Image report(l.width, l.height, 3);
    fill(report, Rect{0, 0, l.width, l.height}, background);

    blit(report, l.tiles[0], target);
    blit(report, l.tiles[1], start);
    blit(report, l.tiles[2], final);

    const float d_max = draw_heat_map(report, l.tiles[3], final, target);

    // The heat map's caption gives its scale; the longest form that fits the tile (else clipped).
    std::string heat_caption = "|FINAL-TARGET| MAX " + scientific(d_max);
    for (std::string shorter : {"|F-T| MAX " + scientific(d_max), "|F-T| " + scientific(d_max)})
        if (font::text_width(heat_caption, s) > w) heat_caption = shorter;
    const std::string captions[4] = {"TARGET", "START", "FINAL", heat_caption};
    for (int i = 0; i < 4; ++i) {
        const std::string& text = captions[i];
        const Rect& r = l.tiles[size_t(i)];
        font::draw_text(report, r.x, r.y - font::glyph_height * s - 4, text, s, ink, r.x + std::max(r.width, 1));
    }

    draw_loss_plot(report, l, losses);
    return report;
}

void write_report(const std::filesystem::path& path, const Image& target, const Image& start, const Image& final,
                  const std::vector<double>& losses) {
    write_png(path, make_report(target, start, final, losses));
}

} // namespace adjoint::app
