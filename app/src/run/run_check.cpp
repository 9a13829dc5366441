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
#include <iostream>

namespace adjoint::app {

std::string hard_geometry_warning(const Scene& scene) {
    if (!scene.optimize || scene.render.visibility != Visibility::hard) return "";
    std::string names;
    for (const auto& p : scene.optimize->parameters)
        if (is_geometry_parameter(p.kind)) names += (names.empty() ? "" : ", ") + p.path;
    if (names.empty()) return "";
    return "adjoint: warning: " + scene.display_name + ": render.visibility: with hard visibility silhouettes will " +
           "not move the free geometry parameters (" + names + "); set render.visibility to antialias or soft\n";
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
