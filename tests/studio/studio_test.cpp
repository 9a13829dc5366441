// adjoint-studio end to end, under Xvfb on lavapipe with the validation layer: a 20-iteration run of the
// texture demo with --screenshot and --out, read back pixel by pixel (the panels' places come from the
// --test-layout hook), the same with a resize and with a minimize in the middle, a validation message at
// exit failing the run, the exits without a display, and the test hooks on the command line.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <stb_image.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "studio/harness.h"

namespace fs = std::filesystem;

namespace {

using namespace studio_test;

std::vector<double> loss_column(const fs::path& csv) {
    std::ifstream in(csv);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line.rfind("iteration,loss,image_psnr,param_error,ms", 0), 0u) << line;   // then the error columns
    std::vector<double> losses;
    while (std::getline(in, line)) {
        auto a = line.find(','), b = line.find(',', a + 1);
        losses.push_back(std::stod(line.substr(a + 1, b - a - 1)));
    }
    return losses;
}

// Everything the studio run must show; `window` is the size the screenshot must have.
void check_run(const fs::path& dir, const Result& r, int width, int height) {
    ASSERT_EQ(r.code, 0) << r.err << r.out;
    // Validation was on in the studio (ctest sets ADJOINT_VALIDATION=1) and saw nothing: the studio fails
    // with a non-zero exit and lists the messages otherwise; its summary says so too.
    EXPECT_NE(r.out.find("validation on, 0 messages"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" 20 iterations"), std::string::npos) << r.out;

    const Picture shot = read_png(dir / "shot.png");
    EXPECT_EQ(shot.width, width);
    EXPECT_EQ(shot.height, height);
    const nlohmann::json layout = nlohmann::json::parse(read_text(dir / "layout.json"));
    EXPECT_EQ(layout["window"][0].get<int>(), width);
    EXPECT_EQ(layout["window"][1].get<int>(), height);
    EXPECT_EQ(layout["iterations"].get<int>(), 20);
    EXPECT_EQ(layout["scene_picker"].get<std::string>(), "texture.json");   // the demo that is loaded
    ASSERT_EQ(layout["image"][0].get<int>(), 256);

    const Picture target = crop(shot, layout["panels"]["target"]);
    const Picture current = crop(shot, layout["panels"]["current"]);
    const Picture diff = crop(shot, layout["panels"]["diff"]);
    const Picture gradient = crop(shot, layout["panels"]["gradient"]);
    for (const Picture* p : {&target, &current, &diff, &gradient}) {
        ASSERT_EQ(p->width, 256);   // shown at 1:1: every texel is one pixel of the window
        ASSERT_EQ(p->height, 256);
        EXPECT_GT(stddev_luminance(*p), 8.0);   // not blank
    }

    // The panels show the run's images: the same pixels adjoint-optimize's outputs hold (sRGB rounding of
    // the GPU's pow against the host's may differ by a level).
    EXPECT_GT(share_equal(target, read_png(dir / "out" / "target.png"), 1), 0.999);
    EXPECT_GT(share_equal(current, read_png(dir / "out" / "final.png"), 1), 0.999);
    EXPECT_LT(share_equal(target, current, 4), 0.9);   // 20 iterations from flat grey: far from done

    // The heat map is black exactly where target and current agree, and brighter where they differ more; so is
    // the dL/dI map (blue - black - red).
    size_t agree = 0, agree_black = 0, agree_dark_gradient = 0;
    double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0, n = 0;
    size_t redder = 0, redder_ok = 0, bluer = 0, bluer_ok = 0;
    for (int y = 0; y < 256; ++y)
        for (int x = 0; x < 256; ++x) {
            const uint8_t *t = target.at(x, y), *c = current.at(x, y), *h = diff.at(x, y), *g = gradient.at(x, y);
            const double d = (std::abs(int(t[0]) - c[0]) + std::abs(int(t[1]) - c[1]) + std::abs(int(t[2]) - c[2])) / 3.0;
            const double heat = luminance(h);
            if (d == 0) {
                ++agree;
                agree_black += h[0] <= 1 && h[1] <= 1 && h[2] <= 5;
                // dL/dI is 0 there (the background is the same colour in both): dark, as the theme is.
                agree_dark_gradient += luminance(g) < 16;
            }
            sx += d, sy += heat, sxx += d * d, syy += heat * heat, sxy += d * heat, n += 1;
            // dL/dI: red where the current image is brighter than the target in every channel, blue where darker.
            if (c[0] > t[0] + 8 && c[1] > t[1] + 8 && c[2] > t[2] + 8) {
                ++redder;
                redder_ok += g[0] > g[2] + 20;
            }
            if (c[0] + 8 < t[0] && c[1] + 8 < t[1] && c[2] + 8 < t[2]) {
                ++bluer;
                bluer_ok += g[2] > g[0] + 20;
            }
        }
    EXPECT_GT(agree, 1000u);   // the background
    EXPECT_EQ(agree_black, agree);
    EXPECT_GE(double(agree_dark_gradient), 0.99 * double(agree)) << "dL/dI = 0 is not dark";
    const double corr = (sxy / n - sx / n * sy / n) /
                        std::sqrt(std::max((sxx / n - sx / n * sx / n) * (syy / n - sy / n * sy / n), 1e-12));
    EXPECT_GT(corr, 0.8) << "the heat map does not follow |current - target|";
    EXPECT_GT(redder + bluer, 500u);
    EXPECT_GE(double(redder_ok), 0.95 * double(redder));
    EXPECT_GE(double(bluer_ok), 0.95 * double(bluer));

    // The loss fell, and the outputs are those of adjoint-optimize.
    const std::vector<double> losses = loss_column(dir / "out" / "loss.csv");
    ASSERT_EQ(losses.size(), 20u);
    EXPECT_LT(losses.back(), 0.9 * losses.front());
    for (const char* f : {"start.png", "params.json", "report.png"}) EXPECT_TRUE(fs::exists(dir / "out" / f)) << f;
}

void require_xvfb() {
    ASSERT_EQ(std::system("command -v xvfb-run > /dev/null"), 0)
        << "xvfb-run is missing (Debian package xvfb; tools/setup.sh installs it)";
}

const std::string kArgs = "--scene '" + (kSource / "assets/scenes/texture.json").string() +
                          "' --run --quit-after-iters 20 --screenshot shot.png --out out";

} // namespace

TEST(Studio, RunsTheTextureDemoAndShowsIt) {
    require_xvfb();
    fs::path dir = fresh_dir("run");
    Result r = run(dir, xvfb(""), kArgs + " --test-size 1280x760 --test-layout layout.json");
    check_run(dir, r, 1280, 760);
}

TEST(Studio, ResizingInTheMiddleOfARun) {
    require_xvfb();
    fs::path dir = fresh_dir("resize");
    Result r = run(dir, xvfb(""),
                   kArgs + " --test-size 1280x760 --test-resize 1100x680@2 --test-layout layout.json");
    check_run(dir, r, 1100, 680);
    const nlohmann::json layout = nlohmann::json::parse(read_text(dir / "layout.json"));
    EXPECT_GE(layout["swapchains"].get<int>(), 2);   // the swapchain was made again for the new size
    EXPECT_GE(layout["resized_at_iteration"].get<int>(), 1);   // in the middle of the run
    EXPECT_LT(layout["resized_at_iteration"].get<int>(), 20);
}

TEST(Studio, MinimizingInTheMiddleOfARun) {
    require_xvfb();
    fs::path dir = fresh_dir("minimize");
    // Minimized at frame 1 for 2 frames (Xvfb has no window manager to iconify it: the studio takes the
    // zero-size path of a minimized window for those frames), then restored.
    Result r = run(dir, xvfb(""), kArgs + " --test-size 1280x760 --test-minimize 2@1 --test-layout layout.json");
    // Drawn again after it: the screenshot is the whole window with the run's panels, and the loss fell.
    check_run(dir, r, 1280, 760);
    const nlohmann::json m = nlohmann::json::parse(read_text(dir / "layout.json"))["minimized"];
    EXPECT_EQ(m["frames"].get<int>(), 2);   // exactly the scripted frames drew nothing
    const int at = m["at_iteration"].get<int>(), ran = m["iterations"].get<int>();
    const int restored = m["restored_at_iteration"].get<int>();
    EXPECT_GE(at, 1);                       // minimized in the middle of the run
    EXPECT_GE(ran, 2);                      // the run went on while minimized (a slice each frame)
    EXPECT_GE(restored, at + ran);          // drawn again once restored ...
    EXPECT_LT(restored, 20);                // ... while the run still went on
}

TEST(Studio, AValidationMessageAtExitFailsTheRun) {
    require_xvfb();
    fs::path dir = fresh_dir("leak");
    // A VkSampler left alive: the validation layer reports it when the device is destroyed, after the engine's
    // count is read; the studio's own messenger must still see it.
    Result r = run(dir, xvfb(""),
                   "--test-leak-at-exit --scene '" + (kSource / "assets/scenes/texture.json").string() +
                       "' --run --quit-after-iters 2");
    EXPECT_EQ(r.code, 1) << r.err << r.out;
    EXPECT_NE(r.err.find("1 Vulkan validation message(s)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("VkSampler"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("validation on, 1 messages"), std::string::npos) << r.out;
}

TEST(Studio, WithoutADisplayItSaysSoAndExitsWith2) {
    fs::path dir = fresh_dir("no-display");
    Result r = run(dir, "env -u DISPLAY -u WAYLAND_DISPLAY", kArgs);
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("no display"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "out"));   // nothing written
    EXPECT_FALSE(fs::exists(dir / "shot.png"));
}

TEST(Studio, ABadSceneExitsWith2BeforeAnyWindow) {
    fs::path dir = fresh_dir("bad-scene");
    Result r = run(dir, "env -u DISPLAY -u WAYLAND_DISPLAY", "--scene missing.json --run");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("missing.json"), std::string::npos) << r.err;
    Result u = run(dir, "env -u DISPLAY -u WAYLAND_DISPLAY", "--quit-after-iters -1");
    EXPECT_EQ(u.code, 2);
    EXPECT_NE(u.err.find("--quit-after-iters: must be >= 0"), std::string::npos) << u.err;
}

TEST(Studio, TestHooksAreOptionsRefusedWhenBad) {
    fs::path dir = fresh_dir("hooks");
    const std::string no_display = "env -u DISPLAY -u WAYLAND_DISPLAY";
    // Listed in --help under their own heading, with the programs' options.
    Result h = run(dir, no_display, "--help");
    EXPECT_EQ(h.code, 0) << h.err;
    EXPECT_NE(h.out.find("--screenshot"), std::string::npos) << h.out;
    EXPECT_NE(h.out.find("Test hooks"), std::string::npos) << h.out;
    for (const char* hook : {"--test-size", "--test-resize", "--test-layout", "--test-close-at", "--test-minimize",
                             "--test-environment", "--test-leak-at-exit"})
        EXPECT_NE(h.out.find(hook), std::string::npos) << hook;
    // A bad value names its option and exits with 2 before anything else, as any usage error.
    struct Bad {
        const char* args;
        const char* message;
    };
    for (const Bad& b : {Bad{"--test-minimize 0@3", "--test-minimize: expected FRAMES@FRAME with FRAMES >= 1"},
                         Bad{"--test-size 12x", "--test-size: expected WxH"},
                         Bad{"--test-resize 900x600", "--test-resize: expected WxH@FRAME"},
                         Bad{"--test-close-at soon", "--test-close-at: expected a frame number"},
                         Bad{"--test-environment sunset.exr", "--test-environment: expected FILE@FRAME"},
                         Bad{"--test-layout", "--test-layout"}}) {
        Result m = run(dir, no_display, std::string(b.args) + " --quit-after-iters 1");
        EXPECT_EQ(m.code, 2) << b.args;
        EXPECT_NE(m.err.find(b.message), std::string::npos) << b.args << ": " << m.err;
        EXPECT_NE(m.err.find("Test hooks"), std::string::npos) << m.err;   // the usage follows
    }
    // The environment variables of old are no test hooks any more: only the option shapes the window.
    Result e = run(dir, no_display + " ADJOINT_STUDIO_MINIMIZE=0@3", "--quit-after-iters 1");
    EXPECT_EQ(e.code, 2);
    EXPECT_NE(e.err.find("no display"), std::string::npos) << e.err;
    // The programs' own options keep their checks behind the hooks.
    Result q = run(dir, no_display, "--test-size 800x600 --quit-after-iters -1");
    EXPECT_EQ(q.code, 2);
    EXPECT_NE(q.err.find("--quit-after-iters: must be >= 0"), std::string::npos) << q.err;
}

TEST(Studio, AnOptimizingSceneTooLargeForTheDeviceIsRefused) {
    require_xvfb();
    fs::path dir = fresh_dir("too-large");
    // The texture demo at 8192x8192: a view's surfaces need 5 GiB, over any device's storage-buffer range
    // (at most 4 GiB). Refused as adjoint-optimize refuses it, before any device work, as bad input.
    std::string scene = read_text(kSource / "assets/scenes/texture.json");
    const std::string from = "\"resolution\": [256, 256]", to = "\"resolution\": [8192, 8192]";
    ASSERT_NE(scene.find(from), std::string::npos);
    scene.replace(scene.find(from), from.size(), to);
    for (const std::string rel : {"../textures/", "../meshes/"})
        for (size_t at = scene.find(rel); at != std::string::npos; at = scene.find(rel))
            scene.replace(at, rel.size(), (kSource / "assets" / rel.substr(3)).string());
    std::ofstream(dir / "large.json") << scene;
    Result r = run(dir, xvfb(""), "--scene large.json --run --quit-after-iters 1 --out out");
    EXPECT_EQ(r.code, 2) << r.err << r.out;
    EXPECT_NE(r.err.find("camera.resolution: 8192x8192 needs"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("per buffer"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(Studio, ClosingTheWindowDuringARunSavesTheOutputs) {
    require_xvfb();
    fs::path dir = fresh_dir("close");
    // No --quit-after-iters: the run (300 iterations) is cut short by the window's close request at frame 4.
    Result r = run(dir, xvfb(""),
                   "--scene '" + (kSource / "assets/scenes/texture.json").string() + "' --run --out out --test-close-at 4");
    ASSERT_EQ(r.code, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("validation on, 0 messages"), std::string::npos) << r.out;
    const std::vector<double> losses = loss_column(dir / "out" / "loss.csv");
    EXPECT_GE(losses.size(), 1u);
    EXPECT_LT(losses.size(), 300u);
    for (const char* f : {"target.png", "start.png", "final.png", "params.json", "report.png", "checkpoint.bin"})
        EXPECT_TRUE(fs::exists(dir / "out" / f)) << f;
}

TEST(Studio, AnOutFolderInUseByAnotherRunIsRefused) {
    require_xvfb();
    fs::path dir = fresh_dir("out-busy");
    fs::create_directories(dir / "out");
    // Another run holds the folder's lock (as adjoint-optimize's FolderLock takes it: flock on .adjoint.lock).
    // O_CLOEXEC as FolderLock does: without it xvfb-run's Xvfb inherits the descriptor, and the lock (which
    // belongs to the open file, not to this process) outlives the close below until that server has exited.
    int fd = ::open((dir / "out" / ".adjoint.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
    Result r = run(dir, xvfb(""),
                   "--scene '" + (kSource / "assets/scenes/texture.json").string() + "' --run --out out --test-close-at 4");
    ::close(fd);
    EXPECT_EQ(r.code, 2) << r.err << r.out;
    EXPECT_NE(r.err.find("adjoint: error: --out: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("in use by another run"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "out" / "loss.csv"));
    // Free again, the same folder is used.
    r = run(dir, xvfb(""),
            "--scene '" + (kSource / "assets/scenes/texture.json").string() + "' --run --out out --test-close-at 4");
    EXPECT_EQ(r.code, 0) << r.err << r.out;
    EXPECT_TRUE(fs::exists(dir / "out" / "loss.csv"));
    // Now it holds that run's outputs: another run (adjoint-optimize's or the studio's, of any scene) wrote over
    // them without a word. Refused as adjoint-optimize refuses it, unless --force.
    const std::string losses = read_text(dir / "out" / "loss.csv");
    r = run(dir, xvfb(""),
            "--scene '" + (kSource / "assets/scenes/pose.json").string() + "' --run --out out --test-close-at 4");
    EXPECT_EQ(r.code, 2) << r.err << r.out;
    EXPECT_NE(r.err.find("holds another run's outputs (checkpoint.bin, params.json, loss.csv"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("give --force to write over it, or another folder"), std::string::npos) << r.err;
    EXPECT_EQ(read_text(dir / "out" / "loss.csv"), losses);
    r = run(dir, xvfb(""),
            "--scene '" + (kSource / "assets/scenes/texture.json").string() + "' --run --out out --force "
            "--test-close-at 4");
    EXPECT_EQ(r.code, 0) << r.err << r.out;
}

TEST(Studio, ASceneWithoutOptimizeBlockIsShown) {
    require_xvfb();
    fs::path dir = fresh_dir("view-only");
    const fs::path assets = kSource / "assets";
    std::ofstream(dir / "view.json") << R"({ "format": 1,
  "camera": { "eye": [0, 0.8, 4.2], "target": [0, 0, 0], "fov_y": 38, "resolution": [256, 256] },
  "materials": { "skin": { "albedo_texture": ")" << (assets / "textures/colourful_128.png").string() << R"(" } },
  "meshes": [ { "name": "ball", "file": ")" << (assets / "meshes/uv_sphere.obj").string() << R"(", "material": "skin" } ],
  "lights": [ { "name": "key", "type": "point", "position": [2, 3, 3], "intensity": 14 } ] })";
    // Minimized for 3 frames on the way (nothing runs: the idle path), shown again after.
    Result r = run(dir, xvfb(""),
                   "--scene view.json --quit-after-iters 5 --screenshot shot.png --test-layout layout.json "
                   "--test-minimize 3@1");
    ASSERT_EQ(r.code, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("validation on, 0 messages"), std::string::npos) << r.out;
    const Picture shot = read_png(dir / "shot.png");
    const nlohmann::json layout = nlohmann::json::parse(read_text(dir / "layout.json"));
    EXPECT_EQ(layout["minimized"]["frames"].get<int>(), 3);
    EXPECT_EQ(layout["minimized"]["iterations"].get<int>(), 0);
    EXPECT_EQ(shot.width, layout["window"][0].get<int>());
    const Picture target = crop(shot, layout["panels"]["target"]), current = crop(shot, layout["panels"]["current"]);
    const Picture diff = crop(shot, layout["panels"]["diff"]);
    EXPECT_GT(stddev_luminance(target), 8.0);
    EXPECT_EQ(share_equal(target, current, 0), 1.0);   // the scene's own render in both
    EXPECT_LT(stddev_luminance(diff), 0.5);             // and no difference anywhere
    // --out needs something to optimize: refused before any window opens.
    Result o = run(dir, xvfb(""), "--scene view.json --out out");
    EXPECT_EQ(o.code, 2);
    EXPECT_NE(o.err.find("--out needs a scene with an optimize block"), std::string::npos) << o.err;
    EXPECT_EQ(o.err.rfind("adjoint: error: ", 0), 0u) << o.err;   // the programs' one prefix (was adjoint-studio:)
    EXPECT_FALSE(fs::exists(dir / "out"));
}

// The orbit view draws the scene's lights over it and a switch for each light that casts shadows:
// sun-from-shadow.json has a sun with shadows (and an ambient light, which is not drawn).
TEST(Studio, TheOrbitViewDrawsTheLightsAndASwitchForShadows) {
    require_xvfb();
    fs::path dir = fresh_dir("orbit-lights");
    Result r = run(dir, xvfb(""), "--scene '" + (kSource / "assets/scenes/sun-from-shadow.json").string() +
                                      "' --run --quit-after-iters 2 --test-layout layout.json");
    ASSERT_EQ(r.code, 0) << r.err << r.out;
    const nlohmann::json layout = nlohmann::json::parse(read_text(dir / "layout.json"));
    EXPECT_EQ(layout["orbit_lights"], nlohmann::json::array({"sun"}));
    EXPECT_EQ(layout["shadow_switches"].get<int>(), 1);
}
