// adjoint-studio: parses the command line, loads the scene before any window exists, checks for a display,
// then runs the studio (studio.cpp). Exit codes as app-contract.md: 2 for bad input or no display.
#include "studio.h"

#include <adjoint/app/cli.h>

#include <GLFW/glfw3.h>

#include <cstdlib>
#include <iostream>
#include <string_view>

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
    studio::StudioConfig config;
    try {
        config.options = parse_studio_args(argc, argv);
        if (config.options.help) {
            std::cout << config.options.help_text;
            return exit_ok;
        }
        if (const char* s = std::getenv("ADJOINT_STUDIO_SIZE")) config.size = studio::parse_window_size(s, "ADJOINT_STUDIO_SIZE");
        if (const char* r = std::getenv("ADJOINT_STUDIO_RESIZE"))
            config.resize = studio::parse_scripted_resize(r, "ADJOINT_STUDIO_RESIZE");
        if (const char* l = std::getenv("ADJOINT_STUDIO_LAYOUT")) config.layout_file = fs::path(l);
        if (const char* c = std::getenv("ADJOINT_STUDIO_CLOSE_AT"))
            config.close_at = studio::parse_frame(c, "ADJOINT_STUDIO_CLOSE_AT");
        if (const char* m = std::getenv("ADJOINT_STUDIO_MINIMIZE"))
            config.minimize = studio::parse_scripted_minimize(m, "ADJOINT_STUDIO_MINIMIZE");
        if (const char* k = std::getenv("ADJOINT_STUDIO_LEAK_AT_EXIT"))
            config.leak_at_exit = std::string_view(k) == "1";
    } catch (const UsageError& e) {
        std::cerr << "adjoint-studio: error: " << e.what() << "\n" << e.usage();
        return exit_bad_input;
    } catch (const Error& e) {
        std::cerr << "adjoint-studio: error: " << e.what() << "\n";
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
            std::cerr << "adjoint-studio: error: " << e.what() << "\n";
            return exit_bad_input;
        }
    }

    const char* display = std::getenv("DISPLAY");
    const char* wayland = std::getenv("WAYLAND_DISPLAY");
    if (!(display && *display) && !(wayland && *wayland)) {
        std::cerr << "adjoint-studio: error: no display (neither DISPLAY nor WAYLAND_DISPLAY is set); the studio needs "
                     "a desktop session, or a virtual one: xvfb-run -a adjoint-studio ...; headless runs use "
                     "adjoint-optimize\n";
        return exit_bad_input;
    }
    glfwSetErrorCallback(on_glfw_error);
    if (!glfwInit()) {
        std::cerr << "adjoint-studio: error: cannot open the display '" << (display ? display : wayland)
                  << "' (glfwInit failed); headless runs use adjoint-optimize\n";
        return exit_bad_input;
    }
    if (!glfwVulkanSupported()) {
        std::cerr << "adjoint-studio: error: GLFW finds no Vulkan loader with window-system support\n";
        glfwTerminate();
        return exit_failure;
    }
    int code = studio::run_studio(std::move(config), std::cout, std::cerr);
    glfwTerminate();
    return code;
}
