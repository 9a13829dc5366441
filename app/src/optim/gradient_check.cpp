// --check-gradients (gradient_check.h): which components to check, their steps, the central differences and
// the verdicts, and the table.
#include <adjoint/app/gradient_check.h>
#include <adjoint/app/parameter_kinds.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>

namespace adjoint::app {

namespace {

// A texture or a vertex set has too many floats to difference them all; the rest are checked whole.
bool sampled(ParameterKind kind) {
    return kind_info(kind).storage == ParameterStorage::texture || kind == ParameterKind::mesh_vertices ||
           kind == ParameterKind::mesh_vertex_colors;
}

// The step per kind: 1e-3 of a unit quaternion's components; 1e-3 · max(|x|, 1) of everything else (colours,
// intensities, positions, degrees), small against the values' scale and large against float rounding.
// Geometry under antialias or soft visibility takes kCheckGeometryStep and kCheckGeometrySpan instead
// (geometry_difference).
double step_for(ParameterKind kind, float x, double scale = 1e-3) {
    if (kind_info(kind).perturbation == Perturbation::rotation) return scale;
    return scale * std::max(1.0, double(std::fabs(x)));
}

// SplitMix64: the same components on every platform for a seed.
struct Mix {
    uint64_t s;
    uint64_t next() {
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
};

// `samples` components of a large parameter, drawn by the seed from the 4 · samples with the largest |gradient|
// (most texels are seen by few pixels, a vertex by few triangles: an error shows where the gradient is large);
// every component of a small one. In increasing order.
std::vector<size_t> components(const float* g, size_t size, bool sample, uint32_t samples, Mix& rng) {
    std::vector<size_t> order(size);
    std::iota(order.begin(), order.end(), size_t(0));
    if (!sample || size <= samples) return order;
    const size_t pool = std::min(size, size_t(4) * samples);
    std::partial_sort(order.begin(), order.begin() + pool, order.end(),
                      [&](size_t a, size_t b) {
                          return std::fabs(g[a]) > std::fabs(g[b]) || (std::fabs(g[a]) == std::fabs(g[b]) && a < b);
                      });
    for (size_t i = 0; i < samples; ++i) std::swap(order[i], order[i + rng.next() % (pool - i)]);
    order.resize(samples);
    std::sort(order.begin(), order.end());
    return order;
}

// The loss in parts at the current values: [0] the loss, [1 + v] view v's own share, and last the rest (the
// regularizers': the loss less its views' shares), each a series of its own, so that every difference (the
// medians too) measures each part's slope (judge).
using Parts = std::vector<double>;
// A difference's slopes, part by part, and the largest loss it evaluated (x's included): the loss's rounding
// scales with the values differenced, which at a minimum (loss 0 at x) are those beside x.
struct Slopes {
    Parts parts;
    double loss = 0;
};
// A total and its views' shares as parts: [total, views..., total less the views].
Parts with_rest(double total, const std::vector<double>& views) {
    Parts parts{total};
    for (double v : views) parts.push_back(v), total -= v;
    parts.push_back(total);
    return parts;
}
// `gradient`: also d loss / d every free float.
Parts loss_parts(Optimizer& opt, std::vector<float>* gradient = nullptr) {
    std::vector<double> views;
    const double loss = opt.evaluate(gradient, &views);
    return with_rest(loss, views);
}

// The central difference along component i: L at x + a and x - b, the offsets float could represent for ±h
// (a and b differ by an ulp of x), and at x, the slope of the parabola through the three. With a = b it is
// (L(x + a) - L(x - b)) / 2a; with a != b, (L(x + a) - L(x - b)) / (a + b) would take the curvature times (a - b)
// for a slope, which at a minimum (a parameter started at its target) is all there is (a tester's floor albedo:
// 9.6e-9 against a gradient of 0).
Slopes central(Optimizer& opt, std::vector<float>& x, size_t i, double h, const Parts& at_x) {
    const float x0 = x[i];
    x[i] = float(x0 + h);
    const double a = double(x[i]) - double(x0);
    opt.set_free_values(x);
    const Parts lp = loss_parts(opt);
    x[i] = float(x0 - h);
    const double b = double(x0) - double(x[i]);
    opt.set_free_values(x);
    const Parts lm = loss_parts(opt);
    x[i] = x0;
    Slopes out{Parts(at_x.size()), std::max({at_x[0], lp[0], lm[0]})};
    for (size_t k = 0; k < at_x.size(); ++k)
        out.parts[k] = a == b ? (lp[k] - lm[k]) / (a + b)
                              : (b * b * (lp[k] - at_x[k]) + a * a * (at_x[k] - lm[k])) / (a * b * (a + b));
    return out;
}

// The fitted slope (geometry_difference's third scale). The antialiased image moves continuously only between events
// that no pixel pair differentiates (a pixel centre meeting a polygon's corner, an edge turning past 45
// degrees, a segment crossing two silhouettes: small jumps, as in nvdiffrast), and a dense mesh (pose.json's
// 5k-triangle knot: thousands of silhouette pairs over four views) has so many that any two points 1e-4
// apart straddle several: a central difference there measures the jumps, not the slope. So the loss is
// sampled at x + k·h/kCheckGeometryPoints, k = ±1 .. ±kCheckGeometryPoints (h = the span, about half a pixel
// of silhouette motion at 128x128), and the slope is the least-squares one of a cubic through them and L(x)
// (the cubic keeps the loss's own curvature over the span out of the slope and out of the residuals).
// `noise` is the slope's standard error from the residuals: the jumps' share, which the tolerance admits
// kCheckNoiseFactor times.
Slopes geometry_slope(Optimizer& opt, std::vector<float>& x, size_t i, double h, const Parts& at_x,
                      double& noise) {
    const float x0 = x[i];
    std::vector<double> t{0.0};
    std::vector<Parts> l{at_x};
    for (int k = -kCheckGeometryPoints; k <= kCheckGeometryPoints; ++k) {
        if (k == 0) continue;
        x[i] = float(x0 + h * k / kCheckGeometryPoints);
        opt.set_free_values(x);
        t.push_back(double(x[i]) - double(x0));
        l.push_back(loss_parts(opt));
    }
    x[i] = x0;
    opt.set_free_values(x);
    // The t's are symmetric (up to the float rounding of x0 ± step): the odd terms (slope, cubic) and the
    // even ones (base, quadratic) are two separate least-squares problems, solved for each part.
    const double n = double(t.size());
    double s2 = 0, s4 = 0, s6 = 0;
    for (double tk : t) s2 += tk * tk, s4 += tk * tk * tk * tk, s6 += tk * tk * tk * tk * tk * tk;
    const double odd = s2 * s6 - s4 * s4;
    Slopes out{Parts(at_x.size()), 0.0};
    for (const Parts& lk : l) out.loss = std::max(out.loss, lk[0]);
    Parts& slopes = out.parts;
    for (size_t p = 0; p < at_x.size(); ++p) {
        double s1l = 0, s3l = 0, s0l = 0, s2l = 0;
        for (size_t k = 0; k < t.size(); ++k) {
            const double t2 = t[k] * t[k];
            s1l += t[k] * l[k][p], s3l += t[k] * t2 * l[k][p], s0l += l[k][p], s2l += t2 * l[k][p];
        }
        const double slope = (s6 * s1l - s4 * s3l) / odd, cubic = (s2 * s3l - s4 * s1l) / odd;
        slopes[p] = slope;
        if (p != 0) continue;
        // The loss's own residuals: the noise of its slope.
        const double curve = (s2l - s2 * s0l / n) / (s4 - s2 * s2 / n), base = (s0l - curve * s2) / n;
        double rss = 0;
        for (size_t k = 0; k < t.size(); ++k) {
            const double r = l[k][p] - base - t[k] * (slope + t[k] * (curve + t[k] * cubic));
            rss += r * r;
        }
        noise = std::sqrt(rss / (n - 4.0) * s6 / odd);
    }
    return out;
}

void judge(GradientCheckRow& r, const Slopes& difference, const Parts& analytic, bool geometry);

// The local slope among jumps (geometry_difference's second scale): L at x + k·h, k = -kCheckGeometryPoints ..
// kCheckGeometryPoints, and the median of the 2·kCheckGeometryPoints slopes between neighbours. The image is
// continuous between the antialiased image's small jumps, and there its slope is the gradient; a jump lands
// in one interval (the intervals are 1e-4 of silhouette motion's scale) and spoils that slope only, where a
// single central difference across it measures the jump (camera.json: the slope between jumps of its
// textured floor is -0.0115 for eye.y, the gradient -0.0116; an interval with a jump reads -0.03 to -0.056).
Slopes median_slope(Optimizer& opt, std::vector<float>& x, size_t i, double h, const Parts& at_x) {
    const float x0 = x[i];
    std::vector<double> t;
    std::vector<Parts> l;
    for (int k = -kCheckGeometryPoints; k <= kCheckGeometryPoints; ++k) {
        x[i] = float(x0 + h * k);
        opt.set_free_values(x);
        t.push_back(double(x[i]) - double(x0));
        l.push_back(k == 0 ? at_x : loss_parts(opt));
    }
    x[i] = x0;
    opt.set_free_values(x);
    Slopes out{Parts(at_x.size()), 0.0};
    for (const Parts& lk : l) out.loss = std::max(out.loss, lk[0]);
    Parts& medians = out.parts;
    for (size_t p = 0; p < at_x.size(); ++p) {
        std::vector<double> slopes;
        for (size_t k = 1; k < t.size(); ++k) slopes.push_back((l[k][p] - l[k - 1][p]) / (t[k] - t[k - 1]));
        std::sort(slopes.begin(), slopes.end());
        const size_t n = slopes.size();
        medians[p] = n % 2 ? slopes[n / 2] : 0.5 * (slopes[n / 2 - 1] + slopes[n / 2]);
    }
    return out;
}

// Geometry with antialias or soft visibility, at three scales; a correct gradient matches one of them, a wrong
// one (the test hook's negated gradient) matches none:
// - the central difference with a step of kCheckGeometryStep, the local derivative: right where no jump lies
//   within the step (a box, a sphere; pose-from-shadow's box translation [2] is 0.0177 there and 0.0146 over
//   half a pixel, where the shadow's outline bends the loss; a square's spin, whose slope halves within 4
//   steps as corners pass pixel centres);
// - the median of the slopes between 2·kCheckGeometryPoints such steps (median_slope): right where jumps are
//   sparse at that scale but one fell within the central step (camera.json's textured floor);
// - the slope over kCheckGeometrySpan (geometry_slope): right where a dense mesh's jumps crowd even the small
//   steps (pose.json).
void geometry_difference(Optimizer& opt, std::vector<float>& x, size_t i, GradientCheckRow& r, ParameterKind kind,
                         const Parts& at_x, const Parts& analytic) {
    r.step = step_for(kind, float(r.value), kCheckGeometryStep);
    r.method = "central";
    judge(r, central(opt, x, i, r.step, at_x), analytic, true);
    if (r.verdict == CheckVerdict::pass) return;
    r.method = "median";
    judge(r, median_slope(opt, x, i, r.step, at_x), analytic, true);
    if (r.verdict == CheckVerdict::pass) return;
    r.step = step_for(kind, float(r.value), kCheckGeometrySpan);
    r.method = "cubic";
    const Slopes fitted = geometry_slope(opt, x, i, r.step, at_x, r.noise);
    judge(r, fitted, analytic, true);
}

// Two tests of a gradient against a difference: the loss's slope (|gradient - finite diff| within rtol of the
// larger, plus the loss's rounding and the fitted slope's noise), and its parts' (loss_parts: each view's share,
// the regularizers') taken together (the sum over the parts of |gradient - finite diff| within rtol of the sum
// of their larger, plus the same). Where views pull against each other the loss's slope is a small difference of
// larger ones, and its relative error is theirs magnified: pose.json at 128x128, rotation[2]'s views give
// -0.00255, +0.00303, -0.00459 and +0.00087 (the loss's -0.00323), cubics fitted to them -0.00271, +0.00324,
// -0.00508 and +0.00021 (-0.00433, 27% off), the parts' errors 0.00153 in all against their sum of 0.0119. A
// part's error counts whatever its sign, so a gradient off by a factor or negated fails the parts as the loss.
// A row passes on a test that its gradient passes and a zero gradient does not. Where zero passes too, the
// difference is within the absolute terms of 0 (the fitted slope's noise: the antialiased or soft image's jumps;
// the loss's rounding, which the smaller step of a shading value multiplies by ten), which admits a gradient,
// zero and its negation alike: the row is UNSURE, unless its gradient is 0 and the loss flat within its rounding
// alone (a texel no pixel sees, a colour under the silhouette loss). A tester's texture of 512x512 texels over
// eight views: negated, each texel's 1.3e-6 passed at h = 1e-4, where the allowance is 4.9e-6. One view and no
// regularizer: the parts are the loss.
void judge(GradientCheckRow& r, const Slopes& difference, const Parts& analytic, bool geometry) {
    const Parts& numeric = difference.parts;
    r.numeric = numeric[0];
    const double rtol = geometry ? kCheckGeometryRelativeTolerance : kCheckRelativeTolerance;
    const double rounding = kCheckLossRounding * difference.loss / r.step;
    const double absolute = rounding + kCheckNoiseFactor * r.noise;
    struct Tests {
        bool loss, parts;
    };
    // The two tests of the gradient times `factor`, with the absolute term `absolute`.
    auto tests = [&](double factor, double absolute, double* relative, double* parts_relative) {
        double scale = 0, error = 0;
        for (size_t k = 1; k < numeric.size(); ++k) {
            scale += std::max(std::fabs(factor * analytic[k]), std::fabs(numeric[k]));
            error += std::fabs(factor * analytic[k] - numeric[k]);
        }
        const double diff = std::fabs(factor * r.analytic - r.numeric);
        const double own = std::max(std::fabs(factor * r.analytic), std::fabs(r.numeric));
        if (relative) *relative = own > 0 ? diff / own : 0;
        if (parts_relative) *parts_relative = scale > 0 ? error / scale : 0;
        return Tests{diff <= rtol * own + absolute, error <= rtol * scale + absolute};
    };
    r.tolerance = rtol * std::max(std::fabs(r.analytic), std::fabs(r.numeric)) + absolute;
    const Tests given = tests(1.0, absolute, &r.relative_error, &r.parts_error);
    const Tests zero = tests(0.0, absolute, nullptr, nullptr), flat = tests(0.0, rounding, nullptr, nullptr);
    if ((given.loss && !zero.loss) || (given.parts && !zero.parts))
        r.verdict = CheckVerdict::pass;
    else if (!given.loss && !given.parts)
        r.verdict = CheckVerdict::fail;
    else   // a gradient of 0 where the loss is flat within its rounding passes; a zeroed one in noise does not
        r.verdict = r.analytic == 0.0 && (flat.loss || flat.parts) ? CheckVerdict::pass : CheckVerdict::unsure;
}

const char* verdict_name(CheckVerdict v) {
    return v == CheckVerdict::pass ? "pass" : v == CheckVerdict::unsure ? "UNSURE" : v == CheckVerdict::fail ? "FAIL"
                                                                                                          : "skipped";
}

} // namespace

bool GradientCheck::passed() const {
    return std::none_of(rows.begin(), rows.end(),
                        [](const GradientCheckRow& r) { return r.verdict == CheckVerdict::fail; });
}

GradientCheck check_gradients(Optimizer& opt, const Scene& scene, const GradientCheckOptions& o) {
    const std::vector<ParameterState> params = opt.parameters();
    if (!o.break_parameter.empty() &&
        std::none_of(params.begin(), params.end(),
                     [&](const ParameterState& p) { return p.path == o.break_parameter; }))
        throw Error("--test-break-gradient: " + o.break_parameter + " is not a free parameter of the scene");
    GradientCheck check;
    check.scene = scene.display_name;
    check.views = opt.view_count();
    std::vector<float> g;
    const Parts at_x = loss_parts(opt, &g);
    check.loss = at_x[0];
    std::vector<float> x = opt.free_values();
    const std::vector<float> x0 = x;
    const bool hard = scene.render.visibility == Visibility::hard;
    // The components checked, per parameter; then each view's own gradient of those alone, for the parts (judge):
    // the views' whole gradients together would take views times the parameters' floats.
    Mix rng{o.seed};
    std::vector<std::vector<size_t>> checked;
    std::vector<size_t> at;   // every checked component's index among the free floats
    size_t offset = 0;
    for (const ParameterState& p : params) {
        checked.push_back(components(g.data() + offset, p.value.size(), sampled(p.kind), o.samples, rng));
        for (size_t c : checked.back()) at.push_back(offset + c);
        offset += p.value.size();
    }
    std::vector<std::vector<float>> view_g(check.views);   // [view][k]: the k-th of `at`
    for (uint32_t v = 0; v < check.views; ++v) {
        const std::vector<float> gv = opt.view_gradient(v);
        for (size_t i : at) view_g[v].push_back(gv[i]);
    }
    check.planned = at.size();
    offset = 0;
    size_t k = 0;
    for (size_t pi = 0; pi < params.size(); ++pi) {
        const ParameterState& p = params[pi];
        // What moves edges (a tester's shadowing sun failed at 1e-3, 8% off across its outline's jumps).
        const std::optional<Parameter> found = find_parameter(scene, p.path);
        const bool geometry = found ? moves_edges(scene, *found) : is_geometry_parameter(p.kind);
        for (size_t c : checked[pi]) {
            if (o.stop && o.stop()) {
                opt.set_free_values(x0);
                return check;
            }
            GradientCheckRow r;
            r.path = p.path;
            r.component = c;
            r.value = x[offset + c];
            r.step = step_for(p.kind, x[offset + c]);
            const double factor = p.path == o.break_parameter ? o.break_factor : 1.0;
            r.analytic = g[offset + c] * factor;
            std::vector<double> views;
            for (const auto& gv : view_g) views.push_back(gv[k] * factor);
            const Parts analytic = with_rest(r.analytic, views);
            ++k;
            if (geometry && hard) {
                // The finite difference would cross pixel edges that the hard renderer does not differentiate.
                r.verdict = CheckVerdict::skipped;
                r.note = "skipped: hard visibility";
            } else if (geometry) {
                geometry_difference(opt, x, offset + c, r, p.kind, at_x, analytic);
                if (r.verdict == CheckVerdict::fail) r.note = "geometry";   // the table's hint below
            } else {
                r.method = "central";
                judge(r, central(opt, x, offset + c, r.step, at_x), analytic, false);
                if (r.verdict == CheckVerdict::fail) {
                    // The loss is only piecewise smooth in shading values too: a bilinear read (a texture, an
                    // environment's prefiltered levels along the direction roughness leans) bends where a pixel's
                    // lookup crosses a texel centre, and across +-1e-3 a few such bends of pixels with large
                    // residuals bias the difference (BoxTextured.glb's roughness under courtyard.exr at 64x64:
                    // -0.0956 there, -0.0979 at 1e-4, gradient -0.0981). The local difference, then the median
                    // of the local slopes, as for geometry.
                    r.step = step_for(p.kind, x[offset + c], kCheckGeometryStep);
                    judge(r, central(opt, x, offset + c, r.step, at_x), analytic, false);
                    if (r.verdict == CheckVerdict::fail) {
                        r.method = "median";
                        judge(r, median_slope(opt, x, offset + c, r.step, at_x), analytic, false);
                    }
                }
            }
            check.rows.push_back(std::move(r));
        }
        offset += p.value.size();
    }
    opt.set_free_values(x0);
    return check;
}

bool moves_edges(const Scene& scene, const Parameter& p) {
    return is_geometry_parameter(p.kind) ||
           ((p.kind == ParameterKind::light_position || p.kind == ParameterKind::light_direction) &&
            p.target < scene.lights.size() && scene.lights[p.target].shadows);
}

std::string format_gradient_check(const GradientCheck& c) {
    std::ostringstream out;
    char line[2048];
    std::snprintf(line, sizeof line, "gradient check: %s, loss %.6g over %u view(s), every view, at the start values\n",
                  c.scene.c_str(), c.loss, c.views);
    out << line;
    std::snprintf(line, sizeof line,
                  "finite diff (L(x+h) - L(x-h)) / 2h, step h 1e-3 * max(|x|, 1) (a quaternion component: 1e-3),\n"
                  "where that fails (a bend of a bilinear read within the step), step h %.0e * max(|x|, 1),\n"
                  "then the median of the slopes below;\n"
                  "geometry with antialias or soft visibility: step h %.0e * max(|x|, 1) (a quaternion component:\n"
                  "%.0e);\n"
                  "where that fails, the median of the slopes (L(x+(k+1)h) - L(x+kh)) / h, k = -%d .. %d;\n"
                  "where that fails, the slope of a cubic fitted to L at %d points over x +- h, h %.0e * max(|x|, 1)\n"
                  "(a quaternion component: %.0e), with its standard error (noise: the antialiased image's jumps)\n"
                  "pass when |gradient - finite diff| <= rtol * max(|gradient|, |finite diff|) + %.0e * L / h\n"
                  "+ %.0f * noise, rtol %.2g (geometry with antialias or soft visibility: %.2g), or the same of the\n"
                  "loss's parts (each view's share, the regularizers'), summed over them: where views pull against\n"
                  "each other the loss's slope is a small difference of larger ones (parts error: the parts'\n"
                  "|gradient - finite diff| over their max(|gradient|, |finite diff|), summed); hard-visibility\n"
                  "geometry is skipped; L the largest loss the difference evaluated; UNSURE where a zero gradient\n"
                  "(and so the negation) would pass too: the difference is within the noise or rounding of 0\n\n",
                  kCheckGeometryStep, kCheckGeometryStep, kCheckGeometryStep, kCheckGeometryPoints,
                  kCheckGeometryPoints - 1, 2 * kCheckGeometryPoints + 1, kCheckGeometrySpan,
                  kCheckGeometrySpan, kCheckLossRounding, kCheckNoiseFactor,
                  kCheckRelativeTolerance, kCheckGeometryRelativeTolerance);
    out << line;
    std::snprintf(line, sizeof line, "%-36s %9s %12s %10s %8s %14s %14s %10s %10s %10s  %s\n", "parameter",
                  "component", "value", "step", "by", "gradient", "finite diff", "noise", "rel error", "parts err",
                  "verdict");
    out << line;
    size_t pass = 0, fail = 0, unsure = 0, skipped = 0;
    for (const auto& r : c.rows) {
        if (r.verdict == CheckVerdict::skipped) {
            std::snprintf(line, sizeof line, "%-36s %9zu %12.6g %10s %8s %14.6g %14s %10s %10s %10s  %s\n",
                          r.path.c_str(), r.component, r.value, "-", "-", r.analytic, "-", "-", "-", "-",
                          r.note.c_str());
            ++skipped;
        } else {
            std::snprintf(line, sizeof line, "%-36s %9zu %12.6g %10.3g %8s %14.6g %14.6g %10.3g %10.3g %10.3g  %s\n",
                          r.path.c_str(), r.component, r.value, r.step, r.method.c_str(), r.analytic, r.numeric,
                          r.noise, r.relative_error, r.parts_error, verdict_name(r.verdict));
            ++(r.verdict == CheckVerdict::pass ? pass : r.verdict == CheckVerdict::unsure ? unsure : fail);
        }
        out << line;
    }
    std::snprintf(line, sizeof line, "\n%zu checked: %zu pass, %zu FAIL, %zu UNSURE, %zu skipped\n", c.rows.size(),
                  pass, fail, unsure, skipped);
    out << line;
    if (c.interrupted()) {
        std::snprintf(line, sizeof line, "interrupted: %zu of %zu rows checked\n", c.rows.size(), c.planned);
        out << line;
    }
    if (unsure > 0)
        out << "\nan UNSURE row's difference is within its noise (the image's jumps over the span) or the loss's\n"
               "rounding of 0, so it admits the gradient, 0 and the negation alike: it proves nothing either way and\n"
               "does not fail the check; render larger (more pixels per jump, a texel's share of the loss larger),\n"
               "or check the parameter in a simpler scene\n";
    // Found on assimp's BoxTextured and spider: a right gradient failing at every scale, and a reader taking it
    // for a wrong one.
    if (std::any_of(c.rows.begin(), c.rows.end(), [](const GradientCheckRow& r) { return r.note == "geometry"; }))
        out << "\na geometry row can fail with a right gradient where the shading jumps across an edge inside the\n"
               "visible surface (a texture atlas's seam, the crease of flat-shaded faces): only silhouettes are\n"
               "antialiased, so such an edge moves without a gradient, and its small jumps, all one way as the pose\n"
               "turns, bias every difference (the same mesh untextured and evenly lit passes; --diagnose's\n"
               "edges_vV.png shows the edges that carry gradients); and a texture finer than the pixels (a bumpy\n"
               "normal or roughness map seen small) makes the loss rough at the scale of a texel: the gradient is\n"
               "its exact local slope, the differences average it (render larger, or check an untextured twin);\n"
               "and a silhouette that runs along the image's border, within half a pixel of it, has no pixel pair\n"
               "to blend across there (as in nvdiffrast): it jumps as it crosses the last pixel centres, without a\n"
               "gradient (a road's near edge along the bottom row: move the camera so that the edge leaves the\n"
               "border, or crosses it)\n";
    return out.str();
}

} // namespace adjoint::app
