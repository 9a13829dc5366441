// adjoint-optimize --diagnose: at the start values, per free parameter the image of each pixel's share of its
// gradient and (for the chosen ones) the sensitivity image d (R + G + B) / d parameter, as float PFM files and
// diverging-colour PNGs scaled by a stated percentile, the render with its silhouette-gradient pixels marked,
// and diagnose.txt.
#include <adjoint/app/atomic_file.h>
#include <adjoint/app/interrupt.h>
#include <adjoint/app/image_io.h>
#include <adjoint/app/optimization.h>
#include <adjoint/app/renderer.h>
#include <adjoint/app/run.h>

#include "run/side_run.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <set>
#include <sstream>

namespace adjoint::app {

namespace {

constexpr double kPercentile = 99.0;   // the PNGs' scale: this percentile of |value| over the nonzero pixels
constexpr size_t kDefaultSensitivities = 8;

// The file-name form of a parameter path: letters, digits, '-', the rest '_'.
std::string slug(const std::string& path) {
    std::string s = path;
    for (char& c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '_';
    return s;
}

double percentile_scale(const float* v, size_t n) {
    std::vector<float> a;
    for (size_t i = 0; i < n; ++i)
        if (v[i] != 0.0f) a.push_back(std::fabs(v[i]));
    if (a.empty()) return 0;
    const size_t k = std::min(a.size() - 1, size_t(std::ceil(kPercentile / 100.0 * double(a.size()))) - 1);
    std::nth_element(a.begin(), a.begin() + k, a.end());
    return a[k];
}

// A one-channel PFM (little-endian, bottom row first).
void write_pfm(const std::filesystem::path& path, const float* v, uint32_t w, uint32_t h) {
    std::string bytes = "Pf\n" + std::to_string(w) + " " + std::to_string(h) + "\n-1.0\n";
    const size_t header = bytes.size();
    bytes.resize(header + size_t(w) * h * 4);
    for (uint32_t y = 0; y < h; ++y) std::memcpy(&bytes[header + size_t(h - 1 - y) * w * 4], v + size_t(y) * w, size_t(w) * 4);
    write_file_atomic(path, bytes);
}

// Blue (negative) - white (0) - red (positive), clipped at +-scale; sRGB colours, stored linear for write_png.
void write_diverging_png(const std::filesystem::path& path, const float* v, uint32_t w, uint32_t h, double scale) {
    Image img(int(w), int(h), 3);
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) {
            const double t = scale > 0 ? std::clamp(double(v[size_t(y) * w + x]) / scale, -1.0, 1.0) : 0.0;
            const float fade = float(1.0 - std::fabs(t));
            const float r = t < 0 ? fade : 1.0f, g = fade, b = t > 0 ? fade : 1.0f;
            img.at(int(x), int(y), 0) = srgb_to_linear(r);
            img.at(int(x), int(y), 1) = srgb_to_linear(g);
            img.at(int(x), int(y), 2) = srgb_to_linear(b);
        }
    write_png(path, img);
}

// The render with the pixels that carry silhouette gradients in magenta.
void write_edges(const std::filesystem::path& path, const LinearImage& render, const float* edges) {
    Image img(int(render.width), int(render.height), 3);
    for (uint32_t i = 0; i < render.width * render.height; ++i) {
        const bool e = edges[i] != 0.0f;
        img.pixels[3 * i] = e ? 1.0f : render.texels[i].x;
        img.pixels[3 * i + 1] = e ? 0.0f : render.texels[i].y;
        img.pixels[3 * i + 2] = e ? 1.0f : render.texels[i].z;
    }
    write_png(path, img);
}

struct Written {
    double sum = 0, scale = 0;
};

// One parameter's images (every view) under `stem`_v<view>.{pfm,png}; the sum over all views and the scale.
Written write_images(const std::filesystem::path& out, const std::string& stem, const std::vector<float>& v,
                     const PixelAttribution& a) {
    const size_t pixels = size_t(a.width) * a.height;
    Written r;
    r.scale = percentile_scale(v.data(), v.size());
    for (double x : v) r.sum += x;
    for (uint32_t k = 0; k < a.views; ++k) {
        const std::string name = stem + "_v" + std::to_string(k);
        write_pfm(out / (name + ".pfm"), v.data() + k * pixels, a.width, a.height);
        write_diverging_png(out / (name + ".png"), v.data() + k * pixels, a.width, a.height, r.scale);
    }
    return r;
}

std::vector<size_t> chosen(const std::vector<ParameterState>& ps, const OptimizeOptions& o, const Scene& scene) {
    std::vector<size_t> which;
    for (const auto& path : o.diagnose_parameters) {
        auto it = std::find_if(ps.begin(), ps.end(), [&](const ParameterState& p) { return p.path == path; });
        if (it == ps.end()) throw SceneError(scene.display_name, "--diagnose-parameter", path + " is not a free parameter");
        // Twice, its second run read the sums the first had consumed: an all-zero sensitivity, exit 0.
        if (std::find(which.begin(), which.end(), size_t(it - ps.begin())) != which.end())
            throw SceneError(scene.display_name, "--diagnose-parameter", path + " is given twice");
        which.push_back(size_t(it - ps.begin()));
    }
    if (o.diagnose_parameters.empty())
        for (size_t i = 0; i < std::min(ps.size(), kDefaultSensitivities); ++i) which.push_back(i);
    return which;
}

std::string header(const Scene& scene, double loss, uint32_t views) {
    std::ostringstream t;
    t << "diagnose: " << scene.display_name << ", loss " << loss << " over " << views
      << " view(s), every view, at the start values\n"
      << "gradient_<parameter>_v<view>: each pixel's own contribution to d loss / d the parameter, its components\n"
      << "  summed, from the renderer's $autodiff with every read of a free value traced per pixel; the images of a\n"
      << "  parameter sum to its gradient (less a regularizer's share, which no pixel holds)\n"
      << "sensitivity_<parameter>_v<view>: d (R + G + B of the pixel) / d the parameter, components summed (the\n"
      << "  same pass seeded with 1 per colour channel): exact for the pixel's own shading; at silhouette edges the\n"
      << "  antialiasing blend's share is given to the pixel whose pair holds the edge\n"
      << ".pfm: float32, one channel; .png: blue negative, white 0, red positive, clipped at +-scale, scale = the\n"
      << "  " << kPercentile << "th percentile of |value| over the pixels whose value is not 0\n"
      << "edges_v<view>.png: the render, the pixels that carry silhouette (visibility) gradients magenta\n"
      << "  (antialias: their pairs blend an edge; soft: triangles beside a silhouette edge partly cover them)\n\n";
    return t.str();
}

// Whether `name` is one of the files a --diagnose writes (diagnose.txt, edges_vV.png, gradient_P_vV.* and
// sensitivity_P_vV.*).
bool is_diagnose_output(const std::string& name) {
    const auto starts = [&](const char* s) { return name.rfind(s, 0) == 0; };
    const auto ends = [&](const char* s) {
        const size_t n = std::strlen(s);
        return name.size() >= n && name.compare(name.size() - n, n, s) == 0;
    };
    if (name == "diagnose.txt") return true;
    if (starts("edges_v")) return ends(".png");
    return (starts("gradient_") || starts("sensitivity_")) && name.find("_v") != std::string::npos &&
           (ends(".pfm") || ends(".png"));
}

// The files of an earlier --diagnose in `dir`, sorted. Regular files only: a folder or a link in a picture's place
// is refused as such (check_replaceable).
std::vector<std::string> earlier_pictures(const std::filesystem::path& dir) {
    std::vector<std::string> earlier;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
        if (is_diagnose_output(entry.path().filename().string()) &&
            std::filesystem::is_regular_file(entry.symlink_status(ec)))
            earlier.push_back(entry.path().filename().string());
    std::sort(earlier.begin(), earlier.end());
    return earlier;
}

// An earlier --diagnose's pictures (another scene's, other parameters' or views'): the folder mixed them under one
// diagnose.txt that named only its own. Refused without --force, before the device and the kernels.
void refuse_earlier_pictures(const OptimizeOptions& o) {
    if (o.force) return;
    const std::vector<std::string> earlier = earlier_pictures(o.out);
    if (earlier.empty()) return;
    std::string names;
    for (size_t i = 0; i < std::min<size_t>(earlier.size(), 4); ++i) names += (i ? ", " : "") + earlier[i];
    if (earlier.size() > 4) names += ", ... (" + std::to_string(earlier.size()) + " files)";
    throw SceneError("", "--out", o.out.string() + " holds an earlier --diagnose's pictures (" + names +
                                      "); give --force to replace them (those this one does not write are removed), "
                                      "or another folder");
}

// False when a Ctrl-C came before the pictures were written (then none is: a half set would mix two states).
bool diagnose(Optimizer& opt, const Scene& scene, const OptimizeOptions& o, std::ostream& out) {
    const std::vector<ParameterState> ps = opt.parameters();
    // Pictures are named by their parameter's slug: two that slug alike would write one file for both.
    for (size_t i = 0; i < ps.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (slug(ps[i].path) == slug(ps[j].path))
                throw SceneError(scene.display_name, "optimize.parameters",
                                 "\"" + ps[j].path + "\" and \"" + ps[i].path + "\" would share --diagnose's pictures "
                                 "gradient_" + slug(ps[i].path) + "_v*; rename one");
    const std::vector<size_t> sens = chosen(ps, o, scene);
    // Every picture's name, before any work (a folder in the place of one failed with exit 1 after 49 files).
    std::set<std::string> mine = {"diagnose.txt"};
    try {
        for (uint32_t k = 0; k < opt.view_count(); ++k) {
            const std::string v = "_v" + std::to_string(k);
            mine.insert("edges" + v + ".png");
            for (size_t i = 0; i < ps.size(); ++i)
                for (const char* ext : {".pfm", ".png"}) {
                    mine.insert("gradient_" + slug(ps[i].path) + v + ext);
                    if (std::find(sens.begin(), sens.end(), i) != sens.end())
                        mine.insert("sensitivity_" + slug(ps[i].path) + v + ext);
                }
        }
        for (const std::string& name : mine) check_replaceable(o.out / name);
    } catch (const SceneError&) {
        throw;
    } catch (const Error& e) {
        throw SceneError("", "--out", std::string(e.what()) + "; outputs are written only as regular files");
    }
    // With --force (refuse_earlier_pictures), an earlier --diagnose's pictures that this one does not write are
    // removed once its own are written.
    std::vector<std::string> stale;
    for (const std::string& name : earlier_pictures(o.out))
        if (!mine.count(name)) stale.push_back(name);
    if (interrupt_requested()) return false;
    std::vector<float> g;
    const double loss = opt.evaluate(&g);
    std::vector<size_t> all(ps.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    if (interrupt_requested()) return false;
    const PixelAttribution grads = opt.attribute_pixels(all, false);
    if (interrupt_requested()) return false;
    const PixelAttribution units = opt.attribute_pixels(sens, true);
    if (interrupt_requested()) return false;
    std::string text = header(scene, loss, grads.views);
    char line[512];
    std::snprintf(line, sizeof line, "%-36s %14s %14s %12s %12s\n", "parameter", "gradient", "image sum", "grad scale",
                  "sens scale");
    text += line;
    size_t offset = 0;
    std::string unattributed;   // the rows whose pictures miss a part of their gradient, named under the table
    for (size_t i = 0; i < ps.size(); ++i) {
        double gradient = 0, magnitude = 0;   // the sum the pictures are compared with, and the size of its terms
        for (size_t c = 0; c < ps[i].value.size(); ++c) gradient += g[offset + c], magnitude += std::abs(g[offset + c]);
        offset += ps[i].value.size();
        const Written w = write_images(o.out, "gradient_" + slug(ps[i].path), grads.images[i], grads);
        std::string sens_scale = "-";
        const auto it = std::find(sens.begin(), sens.end(), i);
        if (it != sens.end()) {
            const Written s = write_images(o.out, "sensitivity_" + slug(ps[i].path), units.images[it - sens.begin()], units);
            std::snprintf(line, sizeof line, "%.4g", s.scale);
            sens_scale = line;
        }
        std::snprintf(line, sizeof line, "%-36s %14.6g %14.6g %12.4g %12s\n", ps[i].path.c_str(), gradient, w.sum,
                      w.scale, sens_scale.c_str());
        text += line;
        // A blank picture of an environment map's texels read as "no effect" with nothing said (their gradient
        // reaches the loss through the prefiltered maps, which no pixel computes alone). Measured against the
        // size of the gradient's terms, so that a sum that cancels does not flag rounding.
        if (std::abs(w.sum - gradient) > 0.05 * magnitude && gradient != 0) {
            std::snprintf(line, sizeof line, "%s%s (%.0f%%)", unattributed.empty() ? "" : ", ", ps[i].path.c_str(),
                          100.0 * w.sum / gradient + 0.0);   // + 0.0: "0%", not "-0%"
            unattributed += line;
        }
    }
    if (!unattributed.empty())
        text += "\nthe pictures of " + unattributed + " sum to that share of the gradient:\n  the rest "
                "passes through what no pixel computes alone (an environment map's prefiltered levels, a "
                "regularizer)\n";
    size_t edge_pixels = 0;
    for (uint32_t k = 0; k < grads.views; ++k) {
        const size_t pixels = size_t(grads.width) * grads.height;
        for (size_t i = 0; i < pixels; ++i) edge_pixels += grads.edges[k * pixels + i] != 0.0f;
        write_edges(o.out / ("edges_v" + std::to_string(k) + ".png"), opt.render_current(k), grads.edges.data() + k * pixels);
    }
    text += "\nedge pixels (silhouette gradients): " + std::to_string(edge_pixels) + "\n";
    out << text << std::flush;
    write_file_atomic(o.out / "diagnose.txt", text);
    std::error_code ec;
    for (const std::string& name : stale) std::filesystem::remove(o.out / name, ec);
    return true;
}

} // namespace

int run_diagnose(const OptimizeOptions& o, std::ostream& out, std::ostream& err) {
    return run_beside_optimization(o, "--diagnose-parameter", o.diagnose_parameters, "diagnose.txt", err,
                                   [&](Device& device, const Scene& scene) {
        Optimizer opt(device, scene, true);
        return diagnose(opt, scene, o, out) ? exit_ok : exit_interrupted;
    }, [&] { refuse_earlier_pictures(o); });
}

} // namespace adjoint::app
