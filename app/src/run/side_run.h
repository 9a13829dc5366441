// The frame of adjoint-optimize's runs beside the optimization (--check-gradients, --diagnose): the scene
// loaded and checked before anything runs, then one job on a fresh device, each stage's errors to its exit code.
#pragma once
#include <adjoint/app/atomic_file.h>
#include <adjoint/app/interrupt.h>
#include <adjoint/app/renderer.h>
#include <adjoint/app/run.h>

#include "run/report_error.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace adjoint::app {

// Loads o.scene with the command line's overrides and runs job(device, scene), returning its exit code. First,
// as bad input with nothing written (exit_bad_input): a scene without an optimize block or whose views show
// nothing it moves (check_meshes_in_view), any of `paths` (given by the option `option`) that is not a free
// parameter, an output folder where `file` cannot be written or that another run holds (FolderLock).
// Errors from the device or the job end with exit_failure (exit_bad_input for a SceneError). A Ctrl-C (the
// caller's InterruptGuard) before the job ends the run with exit_interrupted, nothing written; during it, the job
// polls interrupt_requested() itself.
// `check_out`, when given, checks the locked folder too, before the device (a SceneError: exit_bad_input).
template <typename Job>
int run_beside_optimization(const OptimizeOptions& o, const char* option, const std::vector<std::string>& paths,
                            const char* file, std::ostream& err, Job&& job,
                            const std::function<void()>& check_out = {}) {
    Scene scene;
    std::unique_ptr<FolderLock> lock;
    try {
        LoadOptions lo;
        if (o.resolution) lo.resolution = *o.resolution;
        scene = load_scene(o.scene, lo);
        if (!scene.optimize) throw SceneError(scene.display_name, "optimize", "the scene has no optimize block");
        apply_overrides(scene, o);
        check_meshes_in_view(scene);
        const auto& ps = scene.optimize->parameters;
        for (const auto& path : paths)
            if (std::none_of(ps.begin(), ps.end(), [&](const Parameter& p) { return p.path == path; }))
                throw SceneError(scene.display_name, option, path + " is not a free parameter");
        ensure_directory(o.out);
        // The folder's lock, as an optimization takes it: a check written into a live run's folder raced its files.
        lock = std::make_unique<FolderLock>(o.out);
        check_writable(o.out / file);
        if (check_out) check_out();
    } catch (const Error& e) {
        return report_error(err, e, exit_bad_input);
    }
    err << hard_geometry_warning(scene);
    if (interrupt_requested()) return exit_interrupted;
    try {
        Context ctx;
        Device device = ctx.create_device();
        check_scene_fits(device, scene);
        if (interrupt_requested()) return exit_interrupted;
        return job(device, scene);
    } catch (const Error& e) {
        return report_error(err, e, exit_failure);
    }
}

} // namespace adjoint::app
