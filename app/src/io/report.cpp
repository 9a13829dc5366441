// report.png: the views' rows, the texture parameters' rows and the curves; heat maps scaled by a percentile.
#include <adjoint/app/atomic_file.h>
#include <adjoint/app/report.h>
#include <adjoint/core/error.h>

#include "io/bitmap_font.h"
#include "io/report_draw.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

namespace adjoint::app {
namespace {

using namespace report_draw;

constexpr int min_width = 360;
constexpr int min_plot_height = 100;
constexpr double heat_percentile = 0.99;
constexpr uint32_t max_views = 8;

// inferno at t = 0, 0.1, ..., 1 (sRGB, 8-bit), the colour map's published stops.
constexpr uint8_t inferno_stops[11][3] = {
    {0x00, 0x00, 0x04}, {0x16, 0x0b, 0x39}, {0x42, 0x0a, 0x68}, {0x6a, 0x17, 0x6e}, {0x93, 0x26, 0x67}, {0xbc, 0x37, 0x54},
    {0xdd, 0x51, 0x3a}, {0xf3, 0x78, 0x19}, {0xfc, 0xa5, 0x0a}, {0xf6, 0xd7, 0x46}, {0xfc, 0xff, 0xa4},
};
// The gradient map's ends and middle (sRGB, 8-bit): blue, dark grey, orange.
constexpr uint8_t diverging_stops[3][3] = {{0x3b, 0x8b, 0xeb}, {0x20, 0x20, 0x24}, {0xf3, 0x78, 0x19}};

void check_image(const Image& image, const Image& first) {
    if (image.width <= 0 || image.height <= 0 || image.channels < 1 || image.channels > 4 ||
        image.pixels.size() != size_t(image.width) * size_t(image.height) * size_t(image.channels))
        fail("report: an image is empty or inconsistent (", image.width, "x", image.height, "x", image.channels, ")");
    if (image.width != first.width || image.height != first.height)
        fail("report: the images differ in size (", first.width, "x", first.height, " and ", image.width, "x",
             image.height, ")");
}

// A texture's tile: its height the views' (magnified or shrunk), narrower when three would not fit the width.
std::pair<int, int> texture_tile(int tw, int th, int h, int width) {
    double f = double(h) / double(std::max(th, 1));
    f = std::min(f, double(width - 4 * pad) / 3.0 / double(std::max(tw, 1)));
    return {std::max(1, int(std::lround(tw * f))), std::max(1, int(std::lround(th * f)))};
}

// Heat map of the mean absolute difference into `tile`, scaled by its 99th percentile (returned).
float draw_heat_map(Image& report, const Rect& tile, const Image& final, const Image& target) {
    const int w = target.width, h = target.height;
    std::vector<float> d(size_t(w) * size_t(h));
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            Colour a = rgb(final, x, y), b = rgb(target, x, y);
            float sum = 0.0f;
            for (int k = 0; k < 3; ++k)
                sum += std::fabs(std::clamp(a[size_t(k)], 0.0f, 1.0f) - std::clamp(b[size_t(k)], 0.0f, 1.0f));
            d[size_t(y) * size_t(w) + size_t(x)] = sum / 3.0f;
        }
    const float scale = abs_percentile(d, heat_percentile);
    Image heat(w, h, 3);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            float v = d[size_t(y) * size_t(w) + size_t(x)];
            Colour c = inferno(!std::isfinite(v) ? 1.0f : scale > 0.0f ? v / scale : 0.0f);
            for (int k = 0; k < 3; ++k) heat.at(x, y, k) = c[size_t(k)];
        }
    blit(report, tile, heat);
    return scale;
}

// Above the tile, clipped at the end of its column: `room` wide (the tile's width or more; captions of 48-pixel
// tiles were cut to "V1 TARG").
void caption(Image& report, const Rect& r, const std::string& text, int s, int room) {
    font::draw_text(report, r.x, r.y - font::glyph_height * s - 4, text, s, ink, r.x + std::max({r.width, room, 1}));
}

// The room a row's captions have: its column stride less the gap (the tiles are spread over the report's width).
template <size_t N>
int room_of(const std::array<Rect, N>& row) {
    return row[1].x - row[0].x - pad;
}

void draw_view_row(Image& report, const std::array<Rect, 4>& row, const ReportView& v, bool first_row, int s) {
    blit(report, row[0], v.target);
    if (v.start) blit(report, row[1], *v.start);
    blit(report, row[2], v.final);
    const float scale = draw_heat_map(report, row[3], v.final, v.target);
    const std::string n = first_row && v.index == 0 ? "" : "V" + std::to_string(v.index) + " ";
    const int room = room_of(row);
    caption(report, row[0], n + "TARGET", s, room);
    if (v.start) caption(report, row[1], n + "START", s, room);
    caption(report, row[2], n + "FINAL", s, room);
    caption(report, row[3], scale_caption("|FINAL-TARGET|", "|F-T|", scale, room, s), s, room);
}

void draw_texture_row(Image& report, const std::array<Rect, 3>& row, const ReportTexture& t, int s) {
    std::string name = t.path;
    for (char& c : name) c = char(std::toupper(static_cast<unsigned char>(c)));
    font::draw_text(report, row[0].x, row[0].y - 2 * (font::glyph_height * s + 6), "TEXTURE " + name + " " +
                    std::to_string(t.current.width) + "X" + std::to_string(t.current.height), s, ink, report.width - pad);
    // A data texture as stored (the report is written sRGB-encoded).
    const auto shown = [&t](Image image) {
        if (t.data) show_as_stored(image.pixels);
        return image;
    };
    const int room = room_of(row);
    blit(report, row[0], shown(t.current));
    caption(report, row[0], "CURRENT", s, room);
    if (t.target) {
        blit(report, row[1], shown(*t.target));
        caption(report, row[1], "TARGET", s, room);
    } else {
        caption(report, row[1], "NO TARGET", s, room);
    }
    float scale = 0.0f;
    blit(report, row[2], gradient_picture(t.gradient, &scale));
    caption(report, row[2], scale_caption("DL/DT", "DL/DT", scale, room, s), s, room);
}

} // namespace

ReportLayout report_layout(int w, int h) { return report_layout(w, h, 1, false, {}, 1); }

ReportLayout report_layout(int w, int h, size_t views, bool sampled, const std::vector<std::pair<int, int>>& textures,
                           size_t curves) {
    ReportLayout l;
    l.text_scale = w >= 192 ? 2 : 1;
    const int s = l.text_scale;
    const int caption_h = font::glyph_height * s + 6;
    l.width = std::max(4 * w + 5 * pad, min_width);
    int y = pad;
    if (sampled) {
        l.header_y = y;
        y += caption_h;
    }
    for (size_t v = 0; v < std::max<size_t>(views, 1); ++v) {
        y += caption_h;
        // Small views spread over the report's width, so that their captions have room.
        const int stride = std::max(w, (l.width - 5 * pad) / 4) + pad;
        std::array<Rect, 4> row;
        for (int i = 0; i < 4; ++i) row[size_t(i)] = Rect{pad + i * stride, y, w, h};
        l.view_rows.push_back(row);
        y += h + pad;
    }
    l.tiles = l.view_rows[0];
    for (const auto& [tw, th] : textures) {
        y += 2 * caption_h;   // the texture's name, then the tiles' captions
        const auto [cw, ch] = texture_tile(tw, th, h, l.width);
        const int stride = std::max(cw, (l.width - 4 * pad) / 3) + pad;
        std::array<Rect, 3> row;
        for (int i = 0; i < 3; ++i) row[size_t(i)] = Rect{pad + i * stride, y, cw, ch};
        l.texture_rows.push_back(row);
        y += ch + pad;
    }
    // Each plot: a title, then the plot with room for the value labels on its left ("1E-10") and the
    // iteration labels under it.
    const int left = pad + font::text_width("1E-10", s) + 6;
    for (size_t c = 0; c < std::max<size_t>(curves, 1); ++c) {
        y += caption_h;
        l.plots.push_back(Rect{left, y, l.width - left - pad - font::advance * s, std::max(h * 3 / 4, min_plot_height)});
        y += l.plots.back().height + 4 + caption_h + pad;
    }
    l.plot = l.plots[0];
    l.height = y;
    return l;
}

std::vector<uint32_t> report_view_sample(uint32_t count) {
    const uint32_t k = std::max<uint32_t>(1, (count + max_views - 1) / max_views);
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < count && out.size() < max_views; i += k) out.push_back(i);
    return out;
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
    return curve_point(l.plot, range, true, index, count, value);
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

std::array<float, 3> diverging(float t) {
    if (!(t == t)) t = 0.0f;
    t = std::clamp(t, -1.0f, 1.0f);
    const uint8_t* end = diverging_stops[t < 0.0f ? 0 : 2];
    const float u = std::fabs(t);
    std::array<float, 3> out;
    for (int k = 0; k < 3; ++k) {
        float a = float(diverging_stops[1][k]) / 255.0f, b = float(end[k]) / 255.0f;
        out[size_t(k)] = srgb_to_linear(a + (b - a) * u);
    }
    return out;
}

float abs_percentile(const std::vector<float>& values, double q) {
    std::vector<float> a;
    a.reserve(values.size());
    for (float v : values)
        if (std::isfinite(v)) a.push_back(std::fabs(v));
    if (a.empty()) return 0.0f;
    const size_t k = std::min(a.size() - 1, size_t(std::ceil(q * double(a.size()))) - (q > 0.0 ? 1 : 0));
    std::nth_element(a.begin(), a.begin() + ptrdiff_t(k), a.end());
    return a[k];
}

void show_as_stored(std::vector<float>& values) {
    for (float& v : values) v = srgb_to_linear(std::clamp(v, 0.0f, 1.0f));
}

Image gradient_picture(const Image& g, float* scale_out) {
    const size_t n = size_t(std::max(g.width, 0)) * size_t(std::max(g.height, 0));
    std::vector<float> sum(n, 0.0f);
    for (size_t i = 0; i < n && g.channels > 0; ++i)
        for (int c = 0; c < g.channels; ++c) sum[i] += g.pixels[i * size_t(g.channels) + size_t(c)];
    const float scale = abs_percentile(sum, heat_percentile);
    if (scale_out) *scale_out = scale;
    Image out(g.width, g.height, 3);
    for (size_t i = 0; i < n; ++i) {
        const float v = sum[i];
        const auto c = diverging(!std::isfinite(v) ? (v < 0 ? -1.0f : 1.0f) : scale > 0.0f ? v / scale : 0.0f);
        for (int k = 0; k < 3; ++k) out.pixels[i * 3 + size_t(k)] = c[size_t(k)];
    }
    return out;
}

Image make_report(const ReportInputs& in) {
    if (in.views.empty()) fail("report: no view to show");
    const Image& first = in.views[0].target;
    for (const ReportView& v : in.views)
        for (const Image* image : {&v.target, &v.final, v.start ? &*v.start : &v.target}) check_image(*image, first);
    std::vector<std::pair<int, int>> sizes;
    for (const ReportTexture& t : in.textures) sizes.emplace_back(t.current.width, t.current.height);
    const bool sampled = in.views.size() < in.view_count;
    const ReportLayout l = report_layout(first.width, first.height, in.views.size(), sampled, sizes, in.curves.size());
    const int s = l.text_scale;
    Image report(l.width, l.height, 3);
    fill(report, Rect{0, 0, l.width, l.height}, background);
    if (sampled) {
        const uint32_t k = in.views.size() > 1 ? in.views[1].index - in.views[0].index : 1;
        font::draw_text(report, pad, l.header_y, "VIEWS: " + std::to_string(in.views.size()) + " OF " +
                        std::to_string(in.view_count) + " SHOWN (EVERY " + std::to_string(k) + " FROM VIEW 0, AT MOST 8)",
                        s, ink, l.width - pad);
    }
    for (size_t i = 0; i < in.views.size(); ++i) draw_view_row(report, l.view_rows[i], in.views[i], i == 0, s);
    for (size_t i = 0; i < in.textures.size(); ++i) draw_texture_row(report, l.texture_rows[i], in.textures[i], s);
    for (size_t i = 0; i < in.curves.size(); ++i) draw_plot(report, l.plots[i], in.curves[i], s);
    return report;
}

Image make_report(const Image& target, const Image& start, const Image& final, const std::vector<double>& losses) {
    check_image(target, target);
    ReportInputs in;
    in.views.push_back(ReportView{0, target, final, start});
    in.curves.push_back(ReportCurve{"LOSS", losses, true});
    return make_report(in);
}

void write_report(const std::filesystem::path& path, const ReportInputs& inputs) { write_png(path, make_report(inputs)); }

void write_report(const std::filesystem::path& path, const Image& target, const Image& start, const Image& final,
                  const std::vector<double>& losses) {
    write_png(path, make_report(target, start, final, losses));
}

} // namespace adjoint::app
