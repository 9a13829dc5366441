// adjoint-optimize and adjoint-render as library calls. Order matters for "bad input writes nothing":
// everything that can be refused (arguments, scene, parameters, a checkpoint that does not fit, a busy or
// occupied output folder: run/out_folder.h) is checked before the output folder is written to.
#include <adjoint/app/atomic_file.h>
#include <adjoint/app/checkpoint.h>
#include <adjoint/app/interrupt.h>
#include <adjoint/app/loss_log.h>
#include <adjoint/app/parameter_kinds.h>
#include <adjoint/app/params_file.h>
#include <adjoint/app/progress.h>
#include <adjoint/app/renderer.h>
#include <adjoint/app/report.h>
#include <adjoint/app/run.h>

#include "run/out_folder.h"
#include "run/report_error.h"
#include "run/run_report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace adjoint::app {

namespace fs = std::filesystem;

void apply_overrides(Scene& scene, const OptimizeOptions& o) {
    if (!scene.optimize) return;
    if (o.iters) scene.optimize->iterations = uint32_t(*o.iters);
    if (o.seed) scene.optimize->seed = *o.seed;
}

namespace {

constexpr const char* kCheckpoint = "checkpoint.bin";

} // namespace

struct RunOutputs::State {
    fs::path dir;
    Optimizer& opt;
    std::string fingerprint;   // the checkpoint's metadata (scene_fingerprint)
    std::optional<LossLog> log;
    std::vector<double> losses;
    Image target, start;
    std::vector<ParameterState> parameters;   // paths and kinds (their values as at the start)
    std::vector<std::string> error_columns;   // loss.csv's, one per free parameter
};

namespace {

// The scene's fingerprint once its outputs' names are known to be distinct (the studio's outputs, which no
// prepare_out_folder checked).
std::string checked_fingerprint(const Scene& scene) {
    check_distinct_output_names(scene);
    return scene_fingerprint(scene);
}

} // namespace

RunOutputs::RunOutputs(fs::path dir, Optimizer& opt, const Scene& scene, bool resume)
    : RunOutputs(std::move(dir), opt, OutputsSetup{resume, checked_fingerprint(scene), false}) {}

RunOutputs::RunOutputs(fs::path dir, Optimizer& opt, OutputsSetup setup)
    : s_(std::make_unique<State>(State{std::move(dir), opt, std::move(setup.fingerprint), std::nullopt, {}, {}, {}, {}, {}})) {
    auto& s = *s_;
    s.parameters = opt.parameters();
    std::vector<std::pair<std::string, ParameterKind>> kinds;
    for (const ParameterState& p : s.parameters) kinds.emplace_back(p.path, p.kind);
    s.error_columns = loss_error_columns(kinds);
    // Temporary files of a run that was killed mid-write are not outputs: cleared, but only under the folder's
    // lock (otherwise they may be a live run's files being written).
    std::error_code ec;
    if (setup.clear_temporaries && fs::is_directory(s.dir, ec))
        for (const auto& e : fs::directory_iterator(s.dir, ec)) {
            std::string name = e.path().filename().string();
            if (name.size() > 1 && name[0] == '.' && name.find(".tmp-") != std::string::npos) fs::remove(e.path(), ec);
        }
    if (setup.resume) {
        try {
            resume_from_checkpoint();
        } catch (const SceneError&) {
            throw;
        } catch (const Error& e) {   // damage found only now (a file changed since the checks): still bad input
            throw SceneError("", "", std::string("--resume: ") + e.what());
        }
        return;
    }
    try {
        ensure_directory(s.dir);
        write_file_atomic(s.dir / ".adjoint-write-test", "");   // an unwritable folder is bad input
        fs::remove(s.dir / ".adjoint-write-test");
        // Another run's checkpoint (--force) is not this one's: a run killed before its first checkpoint left it,
        // and --resume continued that run under this one's loss.csv rows.
        std::error_code gone;
        if (!fs::remove(s.dir / kCheckpoint, gone) && gone)
            fail("cannot remove ", (s.dir / kCheckpoint).string(), ", an earlier run's: ", gone.message());
    } catch (const Error& e) {
        throw SceneError("", "--out", e.what());
    }
    s.target = to_image(opt.target(0));
    s.start = to_image(opt.render_current(0));
    write_png(s.dir / "target.png", s.target);
    write_png(s.dir / "start.png", s.start);
    s.log.emplace(s.dir / "loss.csv", s.error_columns);
    s.log->write_in_background();
}

void RunOutputs::resume_from_checkpoint() {
    auto& s = *s_;
    fs::path ck = s.dir / kCheckpoint;
    if (!fs::exists(ck)) throw SceneError(ck.string(), "", "--resume: there is no checkpoint to resume from");
    Checkpoint c = read_checkpoint(ck);
    if (c.metadata != s.fingerprint)
        throw SceneError(ck.string(), "", "--resume: the checkpoint was written for another scene or other free "
                                          "parameters");
    OptimizerState st;
    st.iteration = uint32_t(c.iteration);
    if (c.rng_state.size() != 4) throw SceneError(ck.string(), "", "--resume: the random state is damaged");
    std::copy(c.rng_state.begin(), c.rng_state.end(), st.rng.begin());
    st.params = c.at("params", ck.string()).data;
    for (const NamedArray& a : c.arrays)   // the optimizer's state, by the names its plug-in gives them
        if (a.name != "params") st.arrays.emplace_back(a.name, a.data);
    try {
        s.opt.load_state(st);
    } catch (const Error& e) {
        throw SceneError(ck.string(), "", std::string("--resume: ") + e.what());
    }
    s.log.emplace(LossLog::resume(s.dir / "loss.csv", int64_t(c.iteration) - 1, s.error_columns));
    s.log->write_in_background();   // the iterations never wait for loss.csv's fsync (flush() does)
    for (const auto& r : s.log->rows()) s.losses.push_back(r.loss);
    // The target as the run measured it, not target.png's 8 bits (report.png's |final - target| differed from an
    // uninterrupted run's in half its pixels); the start is no longer rendered, and start.png shows it as it was.
    s.target = to_image(s.opt.target(0));
    s.start = read_png_linear(s.dir / "start.png");
}

RunOutputs::~RunOutputs() = default;

const std::vector<double>& RunOutputs::losses() const { return s_->losses; }

void RunOutputs::record(const IterationReport& r) {
    s_->log->append({int64_t(r.iteration), r.loss, r.image_psnr, r.param_error, r.ms, r.errors});
    s_->losses.push_back(r.loss);
}

std::vector<std::pair<std::string, double>> RunOutputs::unit_errors(const IterationReport& r) const {
    return adjoint::app::unit_errors(s_->parameters, r.errors);
}

void RunOutputs::snapshot(uint32_t iteration) {
    std::ostringstream name;
    name << "render_" << std::setw(4) << std::setfill('0') << iteration << ".png";
    write_png(s_->dir / name.str(), to_image(s_->opt.render_current(0)));
}

void RunOutputs::flush_log() {
    if (s_->log) s_->log->flush();
}

void RunOutputs::checkpoint() {
    auto& s = *s_;
    s.log->flush();   // loss.csv always covers the checkpoint, so a resume finds no gap
    OptimizerState st = s.opt.save_state();
    Checkpoint c;
    c.iteration = st.iteration;
    c.metadata = s.fingerprint;
    c.rng_state.assign(st.rng.begin(), st.rng.end());
    c.arrays = {{"params", {st.params.size()}, st.params}};
    for (auto& [name, data] : st.arrays) c.arrays.push_back({name, {data.size()}, std::move(data)});
    write_checkpoint(s.dir / kCheckpoint, c);
}

void RunOutputs::finish() {
    auto& s = *s_;
    Image final_image = to_image(s.opt.render_current(0));
    write_png(s.dir / "final.png", final_image);
    const std::vector<ParameterState> parameters = s.opt.parameters();
    const Scene scene = s.opt.current_scene();
    write_params_json(s.dir / "params.json", param_records(s.opt, parameters, scene));
    write_report(s.dir / "report.png",
                 report_inputs(s.opt, parameters, scene, s.target, s.start, final_image, s.log->rows()));
    checkpoint();
}

namespace {

// The scene with the command line's overrides, and its fingerprint (what it was loaded from, for --resume).
Scene load_for_run(const OptimizeOptions& o, std::string& fingerprint) {
    LoadOptions lo;
    if (o.resolution) lo.resolution = *o.resolution;
    ReadRecorder reads;
    Scene scene = load_scene(o.scene, lo);
    if (!scene.optimize) throw SceneError(scene.display_name, "optimize", "the scene has no optimize block");
    apply_overrides(scene, o);
    check_meshes_in_view(scene);
    fingerprint = scene_fingerprint(scene, reads.entries());
    return scene;
}

// --profile's report: the kernels' device time over `iterations` iterations, to stderr and out/profile.txt.
void write_profile(Device& device, uint32_t iterations, const std::filesystem::path& dir, std::ostream& err) {
    uint64_t untimed = 0;
    const std::vector<KernelTime> times = kernel_times(device, &untimed);
    double total = 0.0;
    for (const KernelTime& t : times) total += t.ms;
    std::ostringstream s;
    s << "device time per kernel over " << iterations << " iterations on " << device.name()
      << " (timestamps around each dispatch; host work and waits are not in it)\n"
      << kernel_time_table(times) << "total " << std::fixed << std::setprecision(3) << total << " ms, "
      << (iterations ? total / iterations : 0.0) << " ms an iteration";
    if (untimed) s << "; " << untimed << " dispatches past a submission's 2,048 were not timed";
    s << "\n";
    err << s.str();
    write_file_atomic(dir / "profile.txt", s.str());
}

// The iterations, then the final outputs; the exit code.
int iterate(const OptimizeOptions& o, Optimizer& opt, RunOutputs& out, std::ostream& err, Device& device) {
    const uint32_t total = opt.total_iterations();
    Progress progress(std::cerr, progress_mode_for_stderr(o.quiet), total, opt.iteration());
    const uint32_t first = opt.iteration();
    bool interrupted = false;
    try {
        if (o.profile) set_kernel_profiling(device, true);
        while (opt.iteration() < total) {
            if (interrupt_requested()) {
                interrupted = true;
                break;
            }
            IterationReport r = opt.step();
            out.record(r);
            progress.update(opt.iteration(), {r.loss, r.image_psnr, r.param_error, out.unit_errors(r)});
            if (o.save_every && opt.iteration() % uint32_t(*o.save_every) == 0) {
                out.snapshot(opt.iteration());
                out.checkpoint();
            }
        }
        if (!interrupted && interrupt_requested()) interrupted = true;
        // The run's outputs first: a profile that cannot be written loses nothing else. The summary after all
        // of them: a full disk printed "done:" and then "stopped:".
        if (o.profile) set_kernel_profiling(device, false);
        // A resume with nothing left to run has no step's gradient on the device: the textures' gradient pictures
        // came out blank (grey), replacing the run's. Evaluated at the values the run ended at, they show the
        // gradient there.
        if (opt.iteration() == first && first > 0 && !interrupted) {
            const std::vector<ParameterState> free = opt.parameters();
            if (std::any_of(free.begin(), free.end(), [](const ParameterState& p) {
                    return kind_info(p.kind).storage == ParameterStorage::texture;
                }))
                opt.evaluate();
        }
        out.finish();
        if (o.profile) write_profile(device, opt.iteration() - first, o.out, err);
        progress.finish(interrupted ? Progress::End::interrupted : Progress::End::done);
    } catch (const Error& e) {   // a non-finite loss or gradient (NonFiniteError), a device failure, ...
        progress.finish(Progress::End::stopped);
        // The rows before the failure stay: loss.csv held only its header when it came before a background write.
        try {
            out.flush_log();
        } catch (const Error&) {   // the first error is the one to report
        }
        return report_error(err, e, exit_failure);
    }
    return interrupted ? exit_interrupted : exit_ok;
}

} // namespace

int run_optimize(const OptimizeOptions& o, std::ostream& err) {
    // A signal before the first iteration (the caller's InterruptGuard set the flag) ends the run at the next
    // check with exit 130: after the load, after the kernels compile, before anything is written.
    if (o.check_gradients) return run_check_gradients(o, std::cout, err);
    if (o.diagnose) return run_diagnose(o, std::cout, err);
    Scene scene;
    std::string fingerprint;
    std::unique_ptr<FolderLock> lock;
    try {
        scene = load_for_run(o, fingerprint);
        if (!o.quiet) {
            err << hard_geometry_warning(scene);
        }
        if (interrupt_requested()) return exit_interrupted;
        lock = prepare_out_folder(o, scene, fingerprint, false);   // an existing folder: checked before any work
    } catch (const Error& e) {
        return report_error(err, e, exit_bad_input);
    }
    std::optional<Context> ctx;
    std::optional<Device> device;
    std::unique_ptr<Optimizer> opt;
    try {
        // llvmpipe reads LP_NUM_THREADS when the instance enumerates it: 0 runs every work group on the
        // submitting thread, in one order, so float atomics add in the same order in every run.
        if (o.deterministic) setenv("LP_NUM_THREADS", "0", 1);
        ctx.emplace();
        device.emplace(ctx->create_device());
    } catch (const Error& e) {
        return report_error(err, e, exit_failure);
    }
    if (o.deterministic && device->name().find("llvmpipe") == std::string::npos) {
        err << "adjoint: error: --deterministic: supported on lavapipe only; on " << device->name()
            << " float atomics add in no fixed order\n";
        return exit_bad_input;
    }
    std::unique_ptr<RunOutputs> out;
    try {
        check_scene_fits(*device, scene);
        opt = std::make_unique<Optimizer>(*device, scene);
        if (interrupt_requested()) return exit_interrupted;
        if (!lock) lock = prepare_out_folder(o, scene, fingerprint, true);
        out = std::make_unique<RunOutputs>(o.out, *opt, OutputsSetup{o.resume, fingerprint, true});
    } catch (const Error& e) {
        return report_error(err, e, exit_failure);
    }
    return iterate(o, *opt, *out, err, *device);
}

} // namespace adjoint::app
