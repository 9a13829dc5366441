// adjoint-optimize --check-gradients (gradient_check.h) as a library call, and the warning that hard
// visibility leaves free geometry to the shading alone.
#include <adjoint/app/atomic_file.h>
#include <adjoint/app/gradient_check.h>
#include <adjoint/app/interrupt.h>
#include <adjoint/app/parameter_kinds.h>
#include <adjoint/app/renderer.h>
#include <adjoint/app/run.h>

#include "run/side_run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace adjoint::app {

std::string hard_geometry_warning(const Scene& scene) {
    if (!scene.optimize || scene.render.visibility == Visibility::antialias) return "";
    // Geometry, and the place or direction of a light that casts shadows: edges in the image move with them.
    std::string names;
    for (const auto& p : scene.optimize->parameters)
        if (moves_edges(scene, p)) names += (names.empty() ? "" : ", ") + p.path;
    if (names.empty()) return "";
    if (scene.render.visibility == Visibility::hard)
        return "adjoint: warning: " + scene.display_name + ": render.visibility: with hard visibility silhouettes " +
               "and shadows' outlines will not move the free parameters that move them (" + names +
               "); set render.visibility to antialias or soft\n";
    // Soft coverage reaches sqrt(sigma ln(1e4 - 1)) NDC units from an edge (soft_dsl.h), width / 2 pixels each: a
    // tester's sigma of 1e-30 reached no pixel centre, and the run behaved as hard visibility, saying nothing.
    const double reach_px = std::sqrt(double(scene.render.soft_sigma) * std::log(9999.0)) * 0.5 * scene.camera.width;
    if (reach_px >= 0.1) return "";
    const double sigma_for_a_pixel = 1.0 / (std::log(9999.0) * 0.25 * double(scene.camera.width) * scene.camera.width);
    char text[160];
    std::snprintf(text, sizeof text, "%.3g reaches %.3g pixels from an edge at %ux%u, so ", scene.render.soft_sigma,
                  reach_px, scene.camera.width, scene.camera.height);
    char fix[64];
    std::snprintf(fix, sizeof fix, "%.2g", sigma_for_a_pixel);
    return "adjoint: warning: " + scene.display_name + ": render.soft.sigma: " + text + "almost no pixel lies within " +
           "it: silhouettes and shadows' outlines will hardly move the free parameters that move them (" + names +
           "), as with hard visibility; " +
           "about " + fix + " reaches a pixel\n";
}

int run_check_gradients(const OptimizeOptions& o, std::ostream& out, std::ostream& err) {
    std::vector<std::string> paths;
    if (!o.test_break_gradient.empty()) paths.push_back(o.test_break_gradient);
    return run_beside_optimization(o, "--test-break-gradient", paths, "gradient_check.txt", err,
                                   [&](Device& device, const Scene& scene) {
        Optimizer opt(device, scene);
        GradientCheckOptions co;
        co.seed = scene.optimize->seed;
        co.break_parameter = o.test_break_gradient;
        co.stop = interrupt_requested;   // Ctrl-C: the rows done so far are the table, which says so (exit 130)
        const GradientCheck check = check_gradients(opt, scene, co);
        const std::string table = format_gradient_check(check);
        out << table << std::flush;
        write_file_atomic(o.out / "gradient_check.txt", table);
        if (check.interrupted()) return exit_interrupted;
        return check.passed() ? exit_ok : exit_failure;
    });
}

} // namespace adjoint::app
