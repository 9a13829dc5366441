// adjoint-studio: parses the command line (options.h), loads the scene before any window exists, checks for a
// display, then runs the studio (studio.cpp). Exit codes as app-contract.md: 2 for bad input or no display.
#include "studio.h"

#include <adjoint/app/atomic_file.h>
#include <adjoint/app/interrupt.h>
#include <adjoint/app/run.h>

#include <GLFW/glfw3.h>

#include <cstdlib>
#include <iostream>

#ifndef ADJOINT_ASSETS_DIR
#define ADJOINT_ASSETS_DIR "assets"
#endif

namespace {

namespace fs = std::filesystem;

// The demos: next to the sources (a build tree), else ./assets.
fs::path scenes_dir() {
    for (fs::path p : {fs::path(ADJOINT_ASSETS_DIR) / "scenes", fs::path("assets") / "scenes"})
        if (fs::is_directory(p)) return p;
    return {};
}

void on_glfw_error(int code, const char* text) { std::cerr << "adjoint-studio: GLFW error " << code << ": " << text << "\n"; }

} // namespace

int main(int argc, char** argv) {
    using namespace adjoint;
    using namespace adjoint::app;
    // First, as adjoint-optimize: a SIGINT/SIGTERM from here on closes the window at the next frame (outputs saved),
    // exit 130. The studio took it only once the window was up: a signal in its first second killed it (143).
    InterruptGuard interrupts;
    studio::StudioConfig config;
    try {
        config = studio::parse_command_line(argc, argv);
        if (config.options.help) {
            std::cout << config.options.help_text;
            return exit_ok;
        }
    } catch (const UsageError& e) {
        std::cerr << "adjoint: error: " << e.what() << "\n" << e.usage();
        return exit_bad_input;
    } catch (const Error& e) {
        std::cerr << "adjoint: error: " << e.what() << "\n";
        return exit_bad_input;
    }
    config.scenes_dir = scenes_dir();

    // The scene is read and checked before anything else: bad input writes nothing and opens no window.
    fs::path scene_file = config.options.scene.value_or(config.scenes_dir.empty() ? fs::path()
                                                                                  : config.scenes_dir / "default.json");
    if (config.options.scene || fs::exists(scene_file)) {
        try {
            config.scene = load_scene(scene_file);
            if (config.options.out && !config.scene->optimize)
                throw SceneError(config.scene->display_name, "optimize", "--out needs a scene with an optimize block");
        } catch (const Error& e) {
            std::cerr << "adjoint: error: " << e.what() << "\n";
            return exit_bad_input;
        }
    }

    const char* display = std::getenv("DISPLAY");
    const char* wayland = std::getenv("WAYLAND_DISPLAY");
    if (!(display && *display) && !(wayland && *wayland)) {
        std::cerr << "adjoint: error: no display (neither DISPLAY nor WAYLAND_DISPLAY is set); the studio needs "
                     "a desktop session, or a virtual one: xvfb-run -a adjoint-studio ...; headless runs use "
                     "adjoint-optimize\n";
        return exit_bad_input;
    }
    glfwSetErrorCallback(on_glfw_error);
    if (!glfwInit()) {
        std::cerr << "adjoint: error: cannot open the display '" << (display ? display : wayland)
                  << "' (glfwInit failed); headless runs use adjoint-optimize\n";
        return exit_bad_input;
    }
    if (!glfwVulkanSupported()) {
        std::cerr << "adjoint: error: GLFW finds no Vulkan loader with window-system support\n";
        glfwTerminate();
        return exit_failure;
    }
    // --out is locked for the session, as adjoint-optimize locks it: a second run (studio or optimize) into the
    // same folder is refused (exit 2, naming it) instead of mixing its files with this one's.
    std::unique_ptr<FolderLock> out_lock;
    std::optional<fs::path> created;   // the folder the lock made, taken away again if the studio writes nothing
    if (config.options.out) {
        try {
            if (!fs::exists(*config.options.out)) created = *config.options.out;
            fs::create_directories(*config.options.out);
            out_lock = std::make_unique<FolderLock>(*config.options.out);
            // Another run's outputs (adjoint-optimize's or the studio's): written over only with --force.
            if (config.scene)
                refuse_another_runs_outputs(*config.options.out, *config.scene, config.options.force, false, false,
                                            false);
        } catch (const SceneError& e) {
            std::cerr << "adjoint: error: " << e.what() << "\n";
            out_lock.reset();
            std::error_code ec;
            if (created) fs::remove_all(*created, ec);
            glfwTerminate();
            return exit_bad_input;
        } catch (const std::exception& e) {
            std::cerr << "adjoint: error: --out: " << e.what() << "\n";
            glfwTerminate();
            return exit_bad_input;
        }
    }
    // A screenshot that cannot be written was found at exit, after the whole session; checked once --out exists (a
    // screenshot may go into it). And a signal before the window: exit 130 with nothing written, as
    // adjoint-optimize's (the first frame would have written a run of 0 iterations).
    int code = -1;
    if (config.options.screenshot) {
        try {
            check_writable(*config.options.screenshot);
        } catch (const Error& e) {
            std::cerr << "adjoint: error: --screenshot: " << e.what() << "\n";
            code = exit_bad_input;
        }
    }
    if (code < 0 && interrupt_requested()) code = exit_interrupted;
    if (code < 0) code = studio::run_studio(std::move(config), std::cout, std::cerr);
    out_lock.reset();
    if (created) {   // refused before any output (a scene too large for the device): nothing is left behind
        std::error_code ec;
        auto it = fs::directory_iterator(*created, ec), end = fs::directory_iterator();
        bool only_lock = !ec;
        for (; only_lock && it != end; it.increment(ec)) only_lock = it->path().filename() == FolderLock::file_name;
        if (only_lock) fs::remove_all(*created, ec);
    }
    glfwTerminate();
    return code;
}
