// The studio's environment panel end to end, under Xvfb on lavapipe: relight.json (a free 64x32 map) run a few
// iterations shows the file's map, the current map and a non-zero gradient of the map; picking another
// environment file reloads the scene with it; a map the loader refuses leaves the scene as it was, with the
// loader's message in the Run window.
#include "studio/harness.h"

namespace {

using namespace studio_test;

const std::string kRelight = "--scene '" + (kSource / "assets/scenes/relight.json").string() + "'";

nlohmann::json layout_of(const fs::path& dir) { return nlohmann::json::parse(read_text(dir / "layout.json")); }

} // namespace

TEST(StudioEnvironment, TheFreeMapAndItsGradientAreShown) {
    ASSERT_EQ(std::system("command -v xvfb-run > /dev/null"), 0) << "xvfb-run is missing";
    fs::path dir = fresh_dir("environment");
    Result r = run(dir, xvfb(""),
                   kRelight + " --run --quit-after-iters 3 --screenshot shot.png --test-layout layout.json");
    ASSERT_EQ(r.code, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("validation on, 0 messages"), std::string::npos) << r.out;
    const nlohmann::json e = layout_of(dir)["environment"];
    EXPECT_TRUE(e["present"].get<bool>());
    EXPECT_TRUE(e["free"].get<bool>());
    EXPECT_GT(e["frames_drawn"].get<int>(), 0);   // the tab opens on the map for a free one
    EXPECT_EQ(e["iteration"].get<int>(), 3);      // the values of the last iteration, read when the run stopped
    EXPECT_GT(e["max_gradient"].get<double>(), 0.0);
    EXPECT_NE(e["file"].get<std::string>().find("sunset.exr"), std::string::npos);
    // The three images side by side in the screenshot, none blank: the file's map, the current one (grey at the
    // start, with 3 steps of the sky in it) and the gradient.
    const Picture shot = read_png(dir / "shot.png");
    for (const char* name : {"map", "current", "gradient"}) {
        const Picture p = crop(shot, e["panels"][name]);
        ASSERT_GT(p.width, 60) << name;
        EXPECT_EQ(p.width, 2 * p.height) << name;
        EXPECT_GT(stddev_luminance(p), 2.0) << name;
    }
}

TEST(StudioEnvironment, PickingAnEnvironmentFileReloadsTheScene) {
    ASSERT_EQ(std::system("command -v xvfb-run > /dev/null"), 0) << "xvfb-run is missing";
    fs::path dir = fresh_dir("environment-pick");
    const fs::path courtyard = kSource / "assets/environments/courtyard.exr";
    Result r = run(dir, xvfb(""),
                   kRelight + " --run --quit-after-iters 2 --test-layout layout.json --test-environment '" +
                       courtyard.string() + "@0'");
    ASSERT_EQ(r.code, 0) << r.err << r.out;
    const nlohmann::json layout = layout_of(dir);
    EXPECT_EQ(layout["environment"]["file"].get<std::string>(), courtyard.lexically_normal().string());
    EXPECT_NE(layout["status"].get<std::string>().find("environment"), std::string::npos);
    EXPECT_EQ(layout["iterations"].get<int>(), 2);   // the run went on with the reloaded scene
    EXPECT_GT(layout["environment"]["max_gradient"].get<double>(), 0.0);

    // A map that is not 2:1: refused as the loader refuses it, shown in the Run window; the scene stays.
    fs::path bad = fresh_dir("environment-bad");
    const fs::path square = kSource / "assets/textures/colourful_128.png";
    Result b = run(bad, xvfb(""),
                   kRelight + " --run --quit-after-iters 2 --test-layout layout.json --test-environment '" +
                       square.string() + "@0'");
    ASSERT_EQ(b.code, 0) << b.err << b.out;
    const nlohmann::json refused = layout_of(bad);
    EXPECT_NE(refused["status"].get<std::string>().find("twice its height"), std::string::npos) << refused["status"];
    EXPECT_NE(refused["environment"]["file"].get<std::string>().find("sunset.exr"), std::string::npos);

    // A file that does not exist: the same.
    Result m = run(bad, xvfb(""),
                   kRelight + " --quit-after-iters 0 --test-layout layout.json --test-environment missing.exr@0");
    ASSERT_EQ(m.code, 0) << m.err << m.out;
    const nlohmann::json missing = layout_of(bad);
    EXPECT_NE(missing["status"].get<std::string>().find("missing.exr"), std::string::npos) << missing["status"];
}
