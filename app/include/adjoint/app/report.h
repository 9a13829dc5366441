// report.png: a row per view shown (target | start | final | |final - target| heat map), a row per texture
// parameter (current | target | gradient), then one curve per measure (loss, PSNR, each parameter group's
// error in its units).
//
// Heat maps are scaled by the 99th percentile of their values, not the largest (a few hot pixels must not
// blacken the rest); values above it saturate. The difference map: d = mean over RGB of |final - target|
// (clamped to [0, 1] first) coloured with inferno, black where the images agree; a non-finite d counts as
// saturated; its caption gives the scale ("|F-T| P99 1.2E-2"). The gradient map: the texel's gradient summed
// over its channels, blue below zero, orange above, dark grey at zero (a diverging map whose middle is
// the background's, so 8-bit quantisation of tiny values shows as near-background rather than noise);
// caption "DL/DT P99 3.1E-5". A scene of many views shows at most eight, every k-th from view 0 (k =
// ceil(views / 8)), and the picture states the rule. Curves: losses and errors on log10 axes spanning
// whole decades (loss_axis_range), PSNR on a linear axis; non-positive or non-finite values are left out
// (the line breaks there).
#pragma once
#include <adjoint/app/image_io.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace adjoint::app {

struct Rect {
    int x = 0, y = 0, width = 0, height = 0;
};

struct ReportView {
    uint32_t index = 0;          // the view's number in the scene
    Image target, final;
    std::optional<Image> start;  // kept for view 0 only (start.png)
};

struct ReportTexture {
    std::string path;               // the parameter's path
    Image current;                  // its value now
    std::optional<Image> target;    // its true value, when known
    Image gradient;                 // d loss / d texel, signed, current's size (any channel count)
    bool data = false;              // it holds data (is_data_texture: normals, metallic-roughness), drawn as stored
};

struct ReportCurve {
    std::string title;              // with its unit: "MESHES.BUNNY.ROTATION ERROR (DEG)"
    std::vector<double> values;     // one per iteration
    bool log_scale = true;
};

struct ReportInputs {
    std::vector<ReportView> views;  // the sample report_view_sample chose, in order
    uint32_t view_count = 1;        // of the scene
    std::vector<ReportTexture> textures;
    std::vector<ReportCurve> curves;  // the first is the loss
};

// Where everything goes.
struct ReportLayout {
    int width = 0, height = 0;
    std::array<Rect, 4> tiles;                       // the first view's row: target, start, final, heat map
    std::vector<std::array<Rect, 4>> view_rows;      // every view's row (view_rows[0] == tiles)
    std::vector<std::array<Rect, 3>> texture_rows;   // current, target, gradient (texels magnified or shrunk)
    Rect plot;                                       // the first curve's (the loss), == plots[0]
    std::vector<Rect> plots;                         // axes are drawn just outside each
    int text_scale = 1;                              // font pixel size: 2 when the images are at least 192 wide
    int header_y = -1;                               // the sampling rule's line (-1: every view is shown)
};
ReportLayout report_layout(int image_width, int image_height);   // one view, no textures, one curve
// texture_sizes: each texture's width and height.
ReportLayout report_layout(int image_width, int image_height, size_t views, bool sampled,
                           const std::vector<std::pair<int, int>>& texture_sizes, size_t curves);

// The views a report shows of `count`: all of them up to 8, else 0, k, 2k, ... with k = ceil(count / 8).
std::vector<uint32_t> report_view_sample(uint32_t count);

// [10^floor(log10 min), 10^ceil(log10 max)] over the positive finite losses (one decade wider at
// the top when both ends meet), or {0, 0} when there are none.
std::pair<double, double> loss_axis_range(const std::vector<double>& losses);
// The pixel of loss `value` at iteration `index` of `count` in the plot (count 1: the plot's middle).
std::pair<int, int> loss_curve_point(const ReportLayout& layout, std::pair<double, double> range, size_t index,
                                     size_t count, double value);

// The inferno colour map at t in [0, 1] (clamped) as linear RGB: interpolated in sRGB between 11 stops.
std::array<float, 3> inferno(float t);
// The gradient map at t in [-1, 1] (clamped) as linear RGB: blue (t = -1) through dark grey (0) to orange (1).
std::array<float, 3> diverging(float t);
// The q-quantile (0..1) of |v| over the finite values (0 when there are none).
float abs_percentile(const std::vector<float>& values, double q);
// A texture's gradient as a picture: per texel the sum over channels, diverging(g / scale) with scale the
// 99th percentile of |sum| (returned in *scale when given).
Image gradient_picture(const Image& gradient, float* scale = nullptr);
// A data texture's values (is_data_texture) as the linear values whose sRGB encoding, which every display of linear
// colour applies, shows them as stored, clamped to [0, 1]: a normal map's (0.5, 0.5, 1) shows as the file holds it,
// not lightened to (0.74, 0.74, 1).
void show_as_stored(std::vector<float>& values);

// The report as a linear RGB image. Every view's images must have the same size (adjoint::Error
// otherwise); grey and alpha channels are handled (alpha is ignored).
Image make_report(const ReportInputs& inputs);
// One view and the loss curve.
Image make_report(const Image& target, const Image& start, const Image& final, const std::vector<double>& losses);
// make_report written as a PNG atomically.
void write_report(const std::filesystem::path& path, const ReportInputs& inputs);
void write_report(const std::filesystem::path& path, const Image& target, const Image& start, const Image& final,
                  const std::vector<double>& losses);

} // namespace adjoint::app
