// adjoint-studio's command line through CLI11: the test hooks are taken out first, the rest is the
// programs' parse_studio_args; both lists show in --help and in a usage error.
#include "options.h"

#include <CLI/CLI.hpp>

#include <charconv>
#include <string_view>
#include <vector>

namespace adjoint::studio {

namespace {

bool parse_number(std::string_view text, uint32_t& value) {
    auto r = std::from_chars(text.data(), text.data() + text.size(), value);
    return !text.empty() && r.ec == std::errc() && r.ptr == text.data() + text.size();
}

struct HookText {
    std::string size, resize, layout, close_at, minimize, environment, tab;
    bool leak = false;
    bool flicker = false;
};

// The hooks that take a value, in the order --help lists them.
struct HookOption {
    const char* name;
    std::string HookText::*text;
    const char* type_name;
    const char* description;
};
constexpr HookOption kHookOptions[] = {
    {"--test-size", &HookText::size, "WxH", "the window's first size (default 1280x800)"},
    {"--test-resize", &HookText::resize, "WxH@F", "resize the window at frame F; the run waits for the new size"},
    {"--test-layout", &HookText::layout, "FILE", "at exit, write the window's size and the panels' places (JSON)"},
    {"--test-close-at", &HookText::close_at, "F", "close the window at frame F, as its close button does"},
    {"--test-minimize", &HookText::minimize, "N@F", "minimize the window at frame F for N frames, then restore it"},
    {"--test-environment", &HookText::environment, "FILE@F",
     "at frame F pick FILE as the environment, as the Run window's control does"},
    {"--test-tab", &HookText::tab, "NAME",
     "open on this tab of the lower window (Parameters, Textures, Gradient images, Environment)"},
};

// Every option the hooks do not know (the programs' options and their values) stays, in order, for
// parse_studio_args; so does --help, whose text gets the hooks' section.
void add_hooks(CLI::App& app, HookText& t) {
    app.set_help_flag();
    app.allow_extras();
    const char* group = "Test hooks (for the studio's tests)";
    for (const HookOption& h : kHookOptions)
        app.add_option(h.name, t.*h.text, h.description)->type_name(h.type_name)->group(group);
    app.add_flag("--test-leak-at-exit", t.leak,
                 "leave a VkSampler alive at exit: the validation layer must fail the run")
        ->group(group);
    app.add_flag("--test-flicker", t.flicker, "start with the current panel flickering between current and target")
        ->group(group);
}

// The programs' help with the hooks' section after it.
std::string with_hooks(std::string help, const std::string& hooks_help) {
    while (!help.empty() && help.back() == '\n') help.pop_back();
    return help + "\n" + hooks_help;
}

std::string programs_help() {
    const char* args[] = {"adjoint-studio", "--help"};
    return app::parse_studio_args(2, args).help_text;
}

// A bad hook value is a usage error naming the option.
template <typename Parse>
auto hook(const std::string& option, const std::string& text, const std::string& usage, Parse parse) {
    try {
        return parse(text, option);
    } catch (const Error& e) {
        throw app::UsageError(e.what(), usage);
    }
}

} // namespace

StudioConfig parse_command_line(int argc, const char* const* argv) {
    CLI::App hooks{"", "adjoint-studio"};
    HookText t;
    add_hooks(hooks, t);
    const std::string hooks_help = CLI::Formatter().make_groups(&hooks, CLI::AppFormatMode::Normal);
    StudioConfig c;
    try {
        hooks.parse(argc, argv);
        const std::vector<std::string> rest = hooks.remaining();
        std::vector<const char*> args{argc > 0 ? argv[0] : "adjoint-studio"};
        for (const std::string& a : rest) args.push_back(a.c_str());
        c.options = app::parse_studio_args(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        throw app::UsageError(e.what(), with_hooks(programs_help(), hooks_help));
    } catch (const app::UsageError& e) {
        throw app::UsageError(e.what(), with_hooks(e.usage(), hooks_help));
    }
    if (c.options.help) {
        c.options.help_text = with_hooks(c.options.help_text, hooks_help);
        return c;
    }
    const std::string usage = with_hooks(programs_help(), hooks_help);
    if (hooks.count("--test-size")) c.size = hook("--test-size", t.size, usage, parse_window_size);
    if (hooks.count("--test-resize")) c.hooks.resize = hook("--test-resize", t.resize, usage, parse_scripted_resize);
    if (hooks.count("--test-layout")) c.hooks.layout_file = std::filesystem::path(t.layout);
    if (hooks.count("--test-close-at")) c.hooks.close_at = hook("--test-close-at", t.close_at, usage, parse_frame);
    if (hooks.count("--test-minimize"))
        c.hooks.minimize = hook("--test-minimize", t.minimize, usage, parse_scripted_minimize);
    if (hooks.count("--test-environment"))
        c.hooks.environment = hook("--test-environment", t.environment, usage, parse_scripted_environment);
    if (hooks.count("--test-tab")) c.hooks.tab = t.tab;
    c.hooks.leak_at_exit = t.leak;
    c.hooks.flicker = t.flicker;
    return c;
}

WindowSize parse_window_size(const std::string& text, const std::string& what) {
    auto x = text.find('x');
    WindowSize s;
    if (x == std::string::npos || !parse_number(std::string_view(text).substr(0, x), s.width) ||
        !parse_number(std::string_view(text).substr(x + 1), s.height) || s.width == 0 || s.height == 0 ||
        s.width > 16384 || s.height > 16384)
        fail(what, ": expected WxH (e.g. 1280x800), got '", text, "'");
    return s;
}

ScriptedResize parse_scripted_resize(const std::string& text, const std::string& what) {
    auto at = text.find('@');
    ScriptedResize r;
    if (at == std::string::npos || !parse_number(std::string_view(text).substr(at + 1), r.frame))
        fail(what, ": expected WxH@FRAME (e.g. 900x600@5), got '", text, "'");
    r.size = parse_window_size(text.substr(0, at), what);
    return r;
}

ScriptedMinimize parse_scripted_minimize(const std::string& text, const std::string& what) {
    auto at = text.find('@');
    ScriptedMinimize m;
    if (at == std::string::npos || !parse_number(std::string_view(text).substr(0, at), m.frames) || m.frames == 0 ||
        !parse_number(std::string_view(text).substr(at + 1), m.frame))
        fail(what, ": expected FRAMES@FRAME with FRAMES >= 1 (e.g. 3@2: minimized for 3 frames from frame 2), got '",
             text, "'");
    return m;
}

ScriptedEnvironment parse_scripted_environment(const std::string& text, const std::string& what) {
    auto at = text.rfind('@');   // the last '@': a path may hold one
    ScriptedEnvironment e;
    if (at == std::string::npos || at == 0 || !parse_number(std::string_view(text).substr(at + 1), e.frame))
        fail(what, ": expected FILE@FRAME (e.g. sunset.exr@2), got '", text, "'");
    e.file = text.substr(0, at);
    return e;
}

uint32_t parse_frame(const std::string& text, const std::string& what) {
    uint32_t frame = 0;
    if (!parse_number(text, frame)) fail(what, ": expected a frame number, got '", text, "'");
    return frame;
}

} // namespace adjoint::studio
