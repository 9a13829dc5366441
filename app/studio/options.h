// adjoint-studio's command line: the programs' options (adjoint/app/cli.h) and the studio's test hooks,
// options too (--test-size, --test-resize, --test-layout, --test-close-at, --test-minimize,
// --test-environment, --test-tab, --test-leak-at-exit), listed under their own heading in --help.
#pragma once
#include "window.h"

#include <adjoint/app/cli.h>

#include <filesystem>
#include <optional>
#include <string>

namespace adjoint::studio {

struct ScriptedResize {
    WindowSize size;
    uint32_t frame = 0;
};

// An environment file picked at a frame, as the run window's control picks it.
struct ScriptedEnvironment {
    std::filesystem::path file;
    uint32_t frame = 0;
};

struct ScriptedMinimize {
    uint32_t frames = 0;   // at least 1
    uint32_t frame = 0;
};

// What the test hooks ask for; all off by default.
struct TestHooks {
    std::optional<ScriptedResize> resize;             // resize at a frame; the run waits for the new size
    std::optional<std::filesystem::path> layout_file; // at exit: window size, panel rectangles, ... (JSON)
    std::optional<uint32_t> close_at;                 // close the window at a frame, as its close button does
    std::optional<ScriptedMinimize> minimize;         // minimized for N frames from a frame, then restored
    std::optional<ScriptedEnvironment> environment; // pick an environment file at a frame (--run goes on)
    std::optional<std::string> tab;                   // the lower window's tab to open on
    bool leak_at_exit = false;                        // a VkSampler left alive: the validation layer must see it
    bool flicker = false;                             // the current panel flickers with the target from the start
};

struct StudioConfig {
    app::StudioOptions options;
    std::optional<app::Scene> scene;         // loaded (and checked) before the window opens
    std::filesystem::path scenes_dir;        // the demos offered by the scene picker
    WindowSize size{1280, 800};              // --test-size
    TestHooks hooks;
};

// argv[0] is the program's name. UsageError (naming the option) for anything parse_studio_args refuses and
// for test hooks' values that do not parse. With --help, options.help_text lists the test hooks too.
StudioConfig parse_command_line(int argc, const char* const* argv);

// "WxH", "WxH@F", "N@F" and "F"; Error naming `what` otherwise.
WindowSize parse_window_size(const std::string& text, const std::string& what);
ScriptedResize parse_scripted_resize(const std::string& text, const std::string& what);
ScriptedMinimize parse_scripted_minimize(const std::string& text, const std::string& what);
ScriptedEnvironment parse_scripted_environment(const std::string& text, const std::string& what);
uint32_t parse_frame(const std::string& text, const std::string& what);

} // namespace adjoint::studio
