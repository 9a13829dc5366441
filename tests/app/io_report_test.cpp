// report.png: tiles where the layout says, the heat map dark where images agree and bright where they
// differ, and the loss curve's pixels on the log-scale line.
#include "app/io_test_util.h"

#include <adjoint/app/image_io.h>
#include <adjoint/app/report.h>

#include "io/bitmap_font.h"
#include "io/report_draw.h"

#include <cmath>

using namespace adjoint::app;
using adjoint::app::test::error_of;
using adjoint::app::test::TempDir;

namespace {

constexpr std::array<float, 3> curve_colour = {1.0f, 0.30f, 0.02f};

bool is_curve(const Image& image, int x, int y) {
    return image.at(x, y, 0) == curve_colour[0] && image.at(x, y, 1) == curve_colour[1] && image.at(x, y, 2) == curve_colour[2];
}

// Whether a curve pixel lies within `slack` rows of y in column x.
bool curve_near(const Image& image, int x, int y, int slack) {
    for (int dy = -slack; dy <= slack; ++dy)
        if (y + dy >= 0 && y + dy < image.height && is_curve(image, x, y + dy)) return true;
    return false;
}

float luminance(const std::array<float, 3>& c) { return 0.2126f * c[0] + 0.7152f * c[1] + 0.0722f * c[2]; }

} // namespace

TEST(IoReport, InfernoRunsFromBlackToBrightYellow) {
    auto lo = inferno(0.0f), hi = inferno(1.0f);
    EXPECT_LT(luminance(lo), 0.001f);
    EXPECT_GT(luminance(hi), 0.9f);
    EXPECT_GT(hi[0], hi[2]);  // yellow, not white
    float previous = -1.0f;
    for (int i = 0; i <= 100; ++i) {  // perceptual maps rise monotonically in lightness
        float l = luminance(inferno(float(i) / 100.0f));
        EXPECT_GT(l, previous) << i;
        previous = l;
    }
    EXPECT_EQ(inferno(-3.0f), lo);
    EXPECT_EQ(inferno(7.0f), hi);
}

TEST(IoReport, TilesHeatMapAndLayout) {
    const int w = 40, h = 30;
    Image target(w, h, 3, 0.5f), start(w, h, 3, 0.1f), final = target;
    for (int y = 10; y < 20; ++y)
        for (int x = 5; x < 15; ++x) final.at(x, y, 1) = 0.8f;  // differs in one block only
    start.at(0, 0, 0) = 0.9f;
    Image report = make_report(target, start, final, {1.0, 0.5, 0.25});
    ReportLayout l = report_layout(w, h);
    ASSERT_EQ(report.width, l.width);
    ASSERT_EQ(report.height, l.height);
    EXPECT_GE(l.width, 4 * w);
    // The first three tiles are the images themselves.
    EXPECT_EQ(report.at(l.tiles[0].x + 3, l.tiles[0].y + 3, 0), 0.5f);
    EXPECT_EQ(report.at(l.tiles[1].x, l.tiles[1].y, 0), 0.9f);
    EXPECT_EQ(report.at(l.tiles[1].x + 1, l.tiles[1].y, 0), 0.1f);
    EXPECT_EQ(report.at(l.tiles[2].x + 7, l.tiles[2].y + 12, 1), 0.8f);
    // Heat map: inferno(0) where final == target, inferno(1) where they differ most.
    const Rect& heat = l.tiles[3];
    auto colour_at = [&](int x, int y) {
        return std::array<float, 3>{report.at(heat.x + x, heat.y + y, 0), report.at(heat.x + x, heat.y + y, 1),
                                    report.at(heat.x + x, heat.y + y, 2)};
    };
    EXPECT_EQ(colour_at(0, 0), inferno(0.0f));
    EXPECT_EQ(colour_at(30, 25), inferno(0.0f));
    EXPECT_EQ(colour_at(5, 10), inferno(1.0f));
    EXPECT_EQ(colour_at(14, 19), inferno(1.0f));
    EXPECT_EQ(colour_at(15, 19), inferno(0.0f));
}

TEST(IoReport, EqualImagesGiveAnAllBlackHeatMap) {
    Image a(20, 20, 4, 0.3f);
    Image report = make_report(a, a, a, {1.0});
    ReportLayout l = report_layout(20, 20);
    for (int y = 0; y < 20; ++y)
        for (int x = 0; x < 20; ++x)
            for (int c = 0; c < 3; ++c) ASSERT_EQ(report.at(l.tiles[3].x + x, l.tiles[3].y + y, c), inferno(0.0f)[size_t(c)]);
}

TEST(IoReport, LossCurveFollowsTheLogScale) {
    const int w = 64, h = 48;
    std::vector<double> losses;
    for (int i = 0; i < 100; ++i) losses.push_back(std::pow(10.0, -3.0 * i / 99.0));  // 1 down to 1e-3
    Image a(w, h, 3, 0.2f);
    Image report = make_report(a, a, a, losses);
    ReportLayout l = report_layout(w, h);
    auto range = loss_axis_range(losses);
    EXPECT_DOUBLE_EQ(range.first, 1e-3);
    EXPECT_DOUBLE_EQ(range.second, 1.0);
    // The ends sit at the plot's corners; in between, a straight line on a log axis.
    EXPECT_TRUE(is_curve(report, l.plot.x, l.plot.y));
    EXPECT_TRUE(is_curve(report, l.plot.x + l.plot.width - 1, l.plot.y + l.plot.height - 1));
    for (int i = 0; i < 100; i += 11) {
        auto [x, y] = loss_curve_point(l, range, size_t(i), 100, losses[size_t(i)]);
        int expected_y = l.plot.y + int(std::lround(double(i) / 99.0 * (l.plot.height - 1)));
        EXPECT_NEAR(y, expected_y, 1) << i;
        EXPECT_TRUE(curve_near(report, x, y, 0)) << i;
    }
    // No curve pixels far from the line (e.g. a column's top corner when the curve is at the bottom).
    int stray = 0;
    for (int y = l.plot.y; y < l.plot.y + l.plot.height; ++y)
        for (int x = l.plot.x; x < l.plot.x + l.plot.width; ++x)
            if (is_curve(report, x, y)) {
                double t = double(x - l.plot.x) / (l.plot.width - 1);
                double line_y = l.plot.y + t * (l.plot.height - 1);
                if (std::abs(y - line_y) > 2.0) ++stray;
            }
    EXPECT_EQ(stray, 0);
    // Nothing of the curve's colour outside the plot.
    for (int y = 0; y < report.height; ++y)
        for (int x = 0; x < report.width; ++x)
            if (x < l.plot.x || y < l.plot.y || x >= l.plot.x + l.plot.width || y >= l.plot.y + l.plot.height) {
                ASSERT_FALSE(is_curve(report, x, y)) << x << "," << y;
            }
}

// The tiles' captions: one decimal, or none where a view is narrow (a 64-pixel view fits "|F-T| 5E-2" at the
// small font, not "|F-T| 4.9E-2").
TEST(IoReport, ScientificLabelsAreShort) {
    EXPECT_EQ(report_draw::scientific(0.0123), "1.2E-2");
    EXPECT_EQ(report_draw::scientific(1234.0), "1.2E3");
    EXPECT_EQ(report_draw::scientific(0.0487, 0), "5E-2");
    EXPECT_EQ(report_draw::scientific(0.0, 0), "0E0");
    EXPECT_LE(font::text_width("|F-T| " + report_draw::scientific(0.0487, 0), 1), 64);
    EXPECT_GT(font::text_width("|F-T| " + report_draw::scientific(0.0487), 1), 64);
    // The heat maps' captions, down to the scale alone: a 48-pixel view showed "|F-T| 2E", its exponent clipped.
    using report_draw::scale_caption;
    EXPECT_EQ(scale_caption("|FINAL-TARGET|", "|F-T|", 0.21, 400, 1), "|FINAL-TARGET| P99 2.1E-1");
    EXPECT_EQ(scale_caption("|FINAL-TARGET|", "|F-T|", 0.21, 64, 1), "|F-T| 2E-1");
    EXPECT_EQ(scale_caption("|FINAL-TARGET|", "|F-T|", 0.21, 48, 1), "2E-1");
    EXPECT_LE(font::text_width("2E-1", 1), 48);
}

TEST(IoReport, AxisRangeSpansWholeDecades) {
    EXPECT_EQ(loss_axis_range({0.03, 0.7, 0.002}), (std::pair<double, double>{1e-3, 1.0}));
    EXPECT_EQ(loss_axis_range({5.0}), (std::pair<double, double>{1.0, 10.0}));
    EXPECT_EQ(loss_axis_range({1.0}), (std::pair<double, double>{1.0, 10.0}));
    EXPECT_EQ(loss_axis_range({0.0, -1.0, NAN, INFINITY}), (std::pair<double, double>{0.0, 0.0}));
    EXPECT_EQ(loss_axis_range({0.0, 0.5, NAN}), (std::pair<double, double>{0.1, 1.0}));
}

TEST(IoReport, NonFiniteLossesBreakTheLine) {
    Image a(64, 48, 3, 0.2f);
    std::vector<double> losses(50, 0.1);
    for (int i = 20; i < 30; ++i) losses[size_t(i)] = NAN;
    Image report = make_report(a, a, a, losses);
    ReportLayout l = report_layout(64, 48);
    auto range = loss_axis_range(losses);
    auto [x19, y] = loss_curve_point(l, range, 19, 50, 0.1);
    auto [x30, y30] = loss_curve_point(l, range, 30, 50, 0.1);
    EXPECT_TRUE(is_curve(report, x19, y));
    EXPECT_TRUE(is_curve(report, x30, y));
    for (int x = x19 + 1; x < x30; ++x) EXPECT_FALSE(is_curve(report, x, y)) << x;
}

TEST(IoReport, ImagesMustShareASize) {
    Image a(10, 10, 3), b(10, 11, 3);
    EXPECT_EQ(error_of([&] { make_report(a, a, b, {}); }), "report: the images differ in size (10x10 and 10x11)");
}

TEST(IoReport, WriteReportProducesAPng) {
    TempDir dir;
    Image a(8, 8, 3, 0.5f);
    write_report(dir / "report.png", a, a, a, {1.0, 0.1});
    Image back = read_png_linear(dir / "report.png");
    EXPECT_EQ(back.width, report_layout(8, 8).width);
    EXPECT_EQ(back.height, report_layout(8, 8).height);
}

// The heat map's scale is the 99th percentile of |final - target|: one hot pixel saturates alone and the
// rest keeps its contrast (with the largest value as the scale it would turn black).
TEST(IoReport, HeatMapIsScaledByThe99thPercentile) {
    const int w = 40, h = 30;
    Image target(w, h, 3, 0.5f), final = target;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) final.at(x, y, 0) = 0.5f + 0.03f * float(x % 2);   // d = 0.01 on odd columns
    for (int k = 0; k < 3; ++k) final.at(3, 3, k) = 1.0f;   // one hot pixel: d = 0.5
    Image report = make_report(target, target, final, {1.0});
    const Rect heat = report_layout(w, h).tiles[3];   // a copy: the layout is a temporary
    auto colour_at = [&](int x, int y) {
        return std::array<float, 3>{report.at(heat.x + x, heat.y + y, 0), report.at(heat.x + x, heat.y + y, 1),
                                    report.at(heat.x + x, heat.y + y, 2)};
    };
    EXPECT_EQ(colour_at(1, 10), inferno(1.0f));   // at the percentile: the top of the map
    EXPECT_EQ(colour_at(3, 3), inferno(1.0f));    // above it: saturated
    EXPECT_EQ(colour_at(0, 10), inferno(0.0f));
    EXPECT_NEAR(abs_percentile({1, -2, 3, 4, 5, 6, 7, 8, 9, -10}, 0.9), 9.0f, 0.0f);
    EXPECT_EQ(abs_percentile({NAN, INFINITY}, 0.99), 0.0f);
}

TEST(IoReport, ManyViewsShowEveryKthUpToEight) {
    EXPECT_EQ(report_view_sample(3), (std::vector<uint32_t>{0, 1, 2}));
    EXPECT_EQ(report_view_sample(8), (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(report_view_sample(9), (std::vector<uint32_t>{0, 2, 4, 6, 8}));
    EXPECT_EQ(report_view_sample(24), (std::vector<uint32_t>{0, 3, 6, 9, 12, 15, 18, 21}));
    EXPECT_EQ(report_view_sample(100).size(), 8u);
}

// The gradient map: orange above zero, blue below, the dark middle at zero; scaled by the 99th percentile
// of the texel's channel sum.
TEST(IoReport, GradientPictureIsDivergingAroundZero) {
    Image g(4, 1, 3, 0.0f);
    for (int k = 0; k < 3; ++k) {
        g.at(0, 0, k) = 1.0f;
        g.at(1, 0, k) = -1.0f;
    }
    float scale = 0;
    Image p = gradient_picture(g, &scale);
    EXPECT_FLOAT_EQ(scale, 3.0f);
    for (int k = 0; k < 3; ++k) {
        EXPECT_EQ(p.at(0, 0, k), diverging(1.0f)[size_t(k)]);
        EXPECT_EQ(p.at(1, 0, k), diverging(-1.0f)[size_t(k)]);
        EXPECT_EQ(p.at(2, 0, k), diverging(0.0f)[size_t(k)]);
    }
    EXPECT_GT(diverging(1.0f)[0], diverging(1.0f)[2]);    // orange
    EXPECT_GT(diverging(-1.0f)[2], diverging(-1.0f)[0]);  // blue
    EXPECT_LT(diverging(0.0f)[1], 0.03f);                 // dark, as the background
}

// The golden layout: a row per sampled view, a row per texture (current | target | gradient), a plot per
// curve; every panel's pixels are where the layout says.
TEST(IoReport, ViewsTexturesAndCurvesGoWhereTheLayoutSays) {
    const int w = 32, h = 24;
    ReportInputs in;
    in.view_count = 16;
    for (uint32_t v : report_view_sample(16)) in.views.push_back({v, Image(w, h, 3, 0.1f * float(v % 5)), Image(w, h, 3, 0.7f), std::nullopt});
    in.views[0].start = Image(w, h, 3, 0.3f);
    Image current(8, 4, 3, 0.25f), truth(8, 4, 3, 0.75f), grad(8, 4, 3, 0.0f);
    grad.at(7, 3, 0) = 1.0f;
    in.textures.push_back({"materials.m.albedo_texture", current, truth, grad});
    std::vector<double> losses = {1.0, 0.1, 0.01}, psnr = {10, 20, 30}, err = {100, 3, 0.1};
    in.curves = {{"LOSS", losses, true}, {"IMAGE PSNR (DB)", psnr, false}, {"MESHES ROTATION ERROR (DEG)", err, true}};
    Image report = make_report(in);
    const ReportLayout l = report_layout(w, h, 8, true, {{8, 4}}, 3);
    ASSERT_EQ(report.width, l.width);
    ASSERT_EQ(report.height, l.height);
    ASSERT_EQ(l.view_rows.size(), 8u);
    ASSERT_EQ(l.texture_rows.size(), 1u);
    ASSERT_EQ(l.plots.size(), 3u);
    EXPECT_GE(l.header_y, 0);
    for (size_t i = 0; i < 8; ++i) {   // view 2i's target and final where its row says
        EXPECT_FLOAT_EQ(report.at(l.view_rows[i][0].x + 5, l.view_rows[i][0].y + 5, 1), 0.1f * float((2 * i) % 5)) << i;
        EXPECT_FLOAT_EQ(report.at(l.view_rows[i][2].x + 5, l.view_rows[i][2].y + 5, 1), 0.7f) << i;
    }
    EXPECT_FLOAT_EQ(report.at(l.view_rows[0][1].x + 1, l.view_rows[0][1].y + 1, 0), 0.3f);
    // Small views spread over the width, and their captions run past the tile (cut at its width, "V14 FINAL"
    // read "V14 F"): ink beyond the tile's right edge, within the caption's line, and room for the whole text.
    const Rect& last = l.view_rows[7][2];
    EXPECT_GE(l.view_rows[7][3].x - last.x - 8, font::text_width("V14 FINAL", l.text_scale));
    int past = 0;
    for (int y = last.y - font::glyph_height * l.text_scale - 4; y < last.y - 4; ++y)
        for (int x = last.x + w; x < l.view_rows[7][3].x; ++x) past += report.at(x, y, 0) == report_draw::ink[0];
    EXPECT_GT(past, 0);
    // The texture's tiles: magnified to the views' height, the gradient's one hot texel in its corner.
    const auto& t = l.texture_rows[0];
    EXPECT_EQ(t[0].height, h);
    EXPECT_EQ(t[0].width, 2 * h);
    EXPECT_FLOAT_EQ(report.at(t[0].x + 1, t[0].y + 1, 0), 0.25f);
    EXPECT_FLOAT_EQ(report.at(t[1].x + t[1].width - 1, t[1].y + t[1].height - 1, 2), 0.75f);
    EXPECT_EQ(report.at(t[2].x + t[2].width - 1, t[2].y + t[2].height - 1, 0), diverging(1.0f)[0]);
    EXPECT_EQ(report.at(t[2].x, t[2].y, 0), diverging(0.0f)[0]);
    // A data texture (a normal map) as stored: the report is written sRGB-encoded, so its tiles hold the linear values
    // whose encoding is the texture's (0.25 was shown as encode(0.25) = 0.54); the gradient's tile is unchanged.
    in.textures[0].data = true;
    const Image data_report = make_report(in);
    EXPECT_NEAR(data_report.at(t[0].x + 1, t[0].y + 1, 0), srgb_to_linear(0.25f), 1e-6f);
    EXPECT_NEAR(linear_to_srgb(data_report.at(t[0].x + 1, t[0].y + 1, 0)), 0.25f, 1e-5f);
    EXPECT_NEAR(data_report.at(t[1].x + t[1].width - 1, t[1].y + t[1].height - 1, 2), srgb_to_linear(0.75f), 1e-6f);
    EXPECT_EQ(data_report.at(t[2].x + t[2].width - 1, t[2].y + t[2].height - 1, 0), diverging(1.0f)[0]);
    // Each plot holds its curve: the first and last points at the plot's corners (decade and round ends);
    // PSNR rises from the bottom left.
    for (size_t i = 0; i < 3; ++i) {
        const Rect& p = l.plots[i];
        const int first_y = i == 1 ? p.y + p.height - 1 : p.y, last_y = i == 1 ? p.y : p.y + p.height - 1;
        EXPECT_TRUE(is_curve(report, p.x, first_y)) << i;
        EXPECT_TRUE(is_curve(report, p.x + p.width - 1, last_y)) << i;
    }
    // Rows, texture rows and plots do not overlap and run down the picture in that order.
    EXPECT_LT(l.view_rows[7][0].y + h, t[0].y);
    EXPECT_LT(t[0].y + t[0].height, l.plots[0].y);
    EXPECT_LT(l.plots[0].y + l.plots[0].height, l.plots[1].y);
}
