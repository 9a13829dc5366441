// adjoint-optimize / adjoint-render / adjoint-studio command lines through CLI11, with our own checks of every value.
#include <adjoint/app/cli.h>

#include <adjoint/app/atomic_file.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <limits>
#include <new>

namespace adjoint::app {
namespace {

constexpr int max_resolution = 16384;
// --iters, --save-every and --quit-after-iters: at most the iterations a scene's optimize block may ask for.
constexpr int64_t max_iterations = 1'000'000'000;

// Numbers are taken as text and converted here, so "-1" for an unsigned seed or "1.5" for a count is
// refused with one clear message rather than wrapped or truncated.
template <typename T>
T parse_integer(const std::string& text, const std::string& option, const std::string& usage) {
    T value{};
    auto r = std::from_chars(text.data(), text.data() + text.size(), value);
    if (!text.empty() && r.ec == std::errc::result_out_of_range && r.ptr == text.data() + text.size())
        throw UsageError(option + ": " + text + " is out of range (at most " +
                             std::to_string(std::numeric_limits<T>::max()) + ")", usage);
    if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size()) {
        std::string kind = std::is_signed_v<T> ? "an integer" : "a non-negative integer";
        throw UsageError(option + ": expected " + kind + ", got '" + text + "'", usage);
    }
    return value;
}

// Runs CLI11 for one program's options; true when --help was asked for (options.help and help_text are then
// set, and nothing else is read).
template <typename Options>
bool parse(CLI::App& app, int argc, const char* const* argv, Options& options) {
    try {
        app.parse(argc, argv);
        return false;
    } catch (const CLI::CallForHelp&) {
        options.help = true;
        options.help_text = app.help();
        return true;
    } catch (const CLI::ParseError& e) {
        // CLI11 says "--iters: At Most 1 required but received 2" of an option given twice.
        for (const CLI::Option* option : app.get_options())
            if (option->count() > 1 && option->get_items_expected_max() == 1 && option->get_type_size() != 0)
                throw UsageError(option->get_name() + ": given " + std::to_string(option->count()) +
                                     " times; give it once",
                                 app.help());
        throw UsageError(e.what(), app.help());
    }
}

// A file or folder option given as "" was refused later as "cannot read : No such file", naming nothing.
void require_name(const CLI::Option* option, const std::string& value, const std::string& usage) {
    if (option->count() != 0 && value.empty())
        throw UsageError(option->get_name() + ": the name is empty; give a file or folder name", usage);
}

// A count-like option's value when given: an integer in [least, most], refused otherwise with a message that
// names the bound ("--iters: must be >= 0, got -5"; "--view: must be in 0..2147483647, got 2147483648"):
// nothing is wrapped or truncated.
std::optional<int64_t> bounded_integer(const CLI::Option* option, const std::string& text, const std::string& name,
                                       int64_t least, int64_t most, const std::string& usage) {
    if (option->count() == 0) return std::nullopt;
    const auto out_of_range = [&](bool below) {
        return UsageError(name + ": must be " +
                              (below ? ">= " + std::to_string(least)
                                     : "in " + std::to_string(least) + ".." + std::to_string(most)) +
                              ", got " + text,
                          usage);
    };
    int64_t value = 0;
    try {
        value = parse_integer<int64_t>(text, name, usage);
    } catch (const UsageError&) {
        // A whole number beyond int64 is out of range like any other; anything else keeps its own message.
        const size_t sign = !text.empty() && text[0] == '-' ? 1 : 0;
        if (text.size() > sign && text.find_first_not_of("0123456789", sign) == std::string::npos)
            throw out_of_range(sign == 1);
        throw;
    }
    if (value < least || value > most) throw out_of_range(value < least);
    return value;
}

std::optional<Resolution> optional_resolution(const CLI::Option* option, const std::string& text, const std::string& usage) {
    if (option->count() == 0) return std::nullopt;
    try {
        return parse_resolution(text);
    } catch (const SceneError& e) {
        throw UsageError(e.what(), usage);
    }
}

} // namespace

int report_current_exception(std::ostream& err) {
    try {
        throw;
    } catch (const UsageError& e) {
        // One line, as every other refusal (programs.md): the whole usage after it buried the reason.
        err << "adjoint: error: " << e.what() << " (--help lists the options)\n";
        return exit_bad_input;
    } catch (const SceneError& e) {
        err << "adjoint: error: " << e.what() << "\n";
        return exit_bad_input;
    } catch (const std::bad_alloc&) {
        err << "adjoint: error: out of memory\n";
        return exit_failure;
    } catch (const std::exception& e) {
        err << "adjoint: error: " << e.what() << "\n";
        return exit_failure;
    } catch (...) {
        err << "adjoint: error: an unknown exception\n";
        return exit_failure;
    }
}

OptimizeOptions parse_optimize_args(int argc, const char* const* argv) {
    CLI::App app{"Optimizes a scene's free parameters against its targets, headless.", "adjoint-optimize"};
    OptimizeOptions o;
    std::string scene, out, iters, resolution, seed, save_every;
    auto* scene_opt = app.add_option("--scene", scene, "the scene file (JSON)")->required();
    auto* out_opt = app.add_option("--out", out, "the output folder (created if missing)")->required();
    auto* iters_opt = app.add_option("--iters", iters, "number of iterations (overrides the scene)");
    auto* res_opt = app.add_option("--resolution", resolution, "render resolution WxH (overrides the scene)");
    auto* seed_opt = app.add_option("--seed", seed, "random seed (overrides the scene)");
    auto* save_opt = app.add_option("--save-every", save_every, "save a render and a checkpoint every K iterations");
    app.add_flag("--resume", o.resume, "continue from the checkpoint in the output folder");
    app.add_flag("--force", o.force, "write into a folder that holds another run's outputs (they are overwritten)");
    app.add_flag("--quiet", o.quiet, "print only errors and the final summary");
    app.add_flag("--deterministic", o.deterministic,
                 "bit-identical runs (lavapipe on one thread; about half the speed on two cores)");
    app.add_flag("--profile", o.profile, "device time per kernel over the iterations (profile.txt)");
    app.add_flag("--check-gradients", o.check_gradients,
                 "compare the gradient with finite differences at the start (gradient_check.txt); no optimization");
    app.add_flag("--diagnose", o.diagnose,
                 "write gradient images, sensitivity images and the edge pixels at the start (diagnose.txt); no "
                 "optimization");
    auto* dpar_opt = app.add_option("--diagnose-parameter", o.diagnose_parameters,
                                    "with --diagnose: a free parameter whose sensitivity image to write (repeatable; "
                                    "default: the first 8)")
                         ->type_name("PATH");
    // A test hook, in its own section of --help as adjoint-studio's are.
    auto* break_opt = app.add_option("--test-break-gradient", o.test_break_gradient,
                                     "with --check-gradients: negate this free parameter's gradient (the check must fail)")
                          ->type_name("PATH")
                          ->group("Test hooks (for the tests)");
    if (parse(app, argc, argv, o)) return o;
    const std::string usage = app.help();
    require_name(scene_opt, scene, usage);
    require_name(out_opt, out, usage);
    if (break_opt->count() && !o.check_gradients)
        throw UsageError("--test-break-gradient: only with --check-gradients", usage);
    if (dpar_opt->count() && !o.diagnose) throw UsageError("--diagnose-parameter: only with --diagnose", usage);
    if (o.diagnose && (o.check_gradients || o.resume))
        throw UsageError(std::string("--diagnose: not with ") + (o.resume ? "--resume" : "--check-gradients"), usage);
    if (o.check_gradients && o.resume) throw UsageError("--check-gradients: not with --resume (it runs no optimization)", usage);
    o.scene = scene;
    o.out = out;
    o.iters = bounded_integer(iters_opt, iters, "--iters", 0, max_iterations, usage);
    o.resolution = optional_resolution(res_opt, resolution, usage);
    if (seed_opt->count()) o.seed = parse_integer<uint64_t>(seed, "--seed", usage);
    o.save_every = bounded_integer(save_opt, save_every, "--save-every", 1, max_iterations, usage);
    if ((o.check_gradients || o.diagnose) && o.save_every)
        throw UsageError(std::string(o.diagnose ? "--diagnose" : "--check-gradients") +
                             ": not with --save-every (it runs no optimization)", usage);
    return o;
}

RenderOptions parse_render_args(int argc, const char* const* argv) {
    CLI::App app{"Renders one view of a scene to a PNG.", "adjoint-render"};
    RenderOptions o;
    std::string scene, out, resolution, view, params, all_views;
    auto* scene_opt = app.add_option("--scene", scene, "the scene file (JSON)")->required();
    auto* out_opt = app.add_option("--out", out, "the PNG to write");
    auto* all_opt = app.add_option("--all-views", all_views,
                                   "write every view as DIR/view_<i>.png (and, with a dataset target, view_<i>_side.png)");
    auto* res_opt = app.add_option("--resolution", resolution, "render resolution WxH (overrides the scene)");
    auto* view_opt = app.add_option("--view", view, "the view to render (default 0)");
    auto* params_opt = app.add_option("--params", params, "a params.json written by adjoint-optimize");
    if (parse(app, argc, argv, o)) return o;
    const std::string usage = app.help();
    require_name(scene_opt, scene, usage);
    require_name(out_opt, out, usage);
    require_name(all_opt, all_views, usage);
    require_name(params_opt, params, usage);
    o.scene = scene;
    if (out_opt->count() == all_opt->count())
        throw UsageError("give either --out FILE or --all-views DIR" + std::string(out_opt->count() ? ", not both" : ""),
                         usage);
    if (all_opt->count() && view_opt->count()) throw UsageError("--view: not with --all-views (it renders every view)", usage);
    o.out = out;
    if (all_opt->count()) o.all_views = std::filesystem::path(all_views);
    o.resolution = optional_resolution(res_opt, resolution, usage);
    if (auto v = bounded_integer(view_opt, view, "--view", 0, INT32_MAX, usage)) o.view = int(*v);
    if (params_opt->count()) o.params = std::filesystem::path(params);
    return o;
}

StudioOptions parse_studio_args(int argc, const char* const* argv) {
    CLI::App app{"The interactive optimization window (GLFW, Vulkan, Dear ImGui).", "adjoint-studio"};
    StudioOptions o;
    std::string scene, quit, screenshot, out;
    auto* scene_opt = app.add_option("--scene", scene, "the scene file (JSON); default: assets/scenes/default.json");
    app.add_flag("--run", o.run, "start optimizing at once");
    auto* quit_opt = app.add_option("--quit-after-iters", quit, "exit after N iterations (with --run)");
    auto* shot_opt = app.add_option("--screenshot", screenshot, "save the whole window as a PNG at exit");
    auto* out_opt = app.add_option("--out", out, "write adjoint-optimize's outputs for the scene into DIR");
    app.add_flag("--force", o.force, "with --out: write into a folder that holds another run's outputs");
    app.add_flag("--diagnose", o.diagnose,
                 "show each free parameter's gradient image live (the Gradient images tab; every scene then "
                 "runs the dynamic renderer, which is slower for texture-only scenes)");
    if (parse(app, argc, argv, o)) return o;
    const std::string usage = app.help();
    for (auto [option, value] : {std::pair{scene_opt, &scene}, {shot_opt, &screenshot}, {out_opt, &out}})
        require_name(option, *value, usage);
    if (scene_opt->count()) o.scene = std::filesystem::path(scene);
    o.quit_after_iters = bounded_integer(quit_opt, quit, "--quit-after-iters", 0, max_iterations, usage);
    if (shot_opt->count()) o.screenshot = std::filesystem::path(screenshot);
    // Found at exit, after the whole session, a .jpg name wrote PNG bytes; refused before the window opens.
    if (o.screenshot && lowercase_extension(*o.screenshot) != ".png")
        throw UsageError("--screenshot: " + screenshot + ": the studio writes a PNG: name the file .png", usage);
    if (out_opt->count()) o.out = std::filesystem::path(out);
    if (o.force && !o.out) throw UsageError("--force: only with --out", usage);
    return o;
}

} // namespace adjoint::app
