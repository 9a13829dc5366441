// The studio's texture thumbnails and panel and its live gradient images, end to end under Xvfb on lavapipe:
// showcase.json (a translation, a light and a 128x128 texture free at once) with --diagnose.
#include "studio/harness.h"

namespace {

using namespace studio_test;

const std::string kShowcase = "--scene '" + (kSource / "assets/scenes/showcase.json").string() + "'";

nlohmann::json layout_of(const fs::path& dir) { return nlohmann::json::parse(read_text(dir / "layout.json")); }

double width_of(const nlohmann::json& rect) { return rect[2].get<double>() - rect[0].get<double>(); }

} // namespace

TEST(StudioGradients, TheTextureParameterHasAThumbnailAndAPanel) {
    ASSERT_EQ(std::system("command -v xvfb-run > /dev/null"), 0) << "xvfb-run is missing";
    fs::path dir = fresh_dir("textures-panel");
    Result r = run(dir, xvfb(""),
                   kShowcase + " --run --quit-after-iters 3 --screenshot shot.png --test-layout layout.json "
                               "--test-tab Textures");
    ASSERT_EQ(r.code, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("validation on, 0 messages"), std::string::npos) << r.out;
    const nlohmann::json t = layout_of(dir)["textures"];
    ASSERT_EQ(t["items"].size(), 1u);
    EXPECT_EQ(t["items"][0]["path"].get<std::string>(), "materials.skin.albedo_texture");
    EXPECT_EQ(t["items"][0]["size"], nlohmann::json::parse("[128, 128]"));
    EXPECT_EQ(width_of(t["items"][0]["thumbnail"]), 40.0);   // drawn in the parameter table (its first frame)
    EXPECT_EQ(t["selected"].get<int>(), 0);
    EXPECT_GT(t["frames_drawn"].get<int>(), 0);
    EXPECT_EQ(t["iteration"].get<int>(), 3);   // read when the run stopped
    EXPECT_GT(t["gradient_scale"].get<double>(), 0.0);
    // Current (flat grey plus 3 steps), the true texture and the gradient side by side, square, none blank.
    const Picture shot = read_png(dir / "shot.png");
    for (const char* name : {"current", "true", "gradient"}) {
        const Picture p = crop(shot, t["panels"][name]);
        ASSERT_GE(p.width, 64) << name;
        EXPECT_EQ(p.width, p.height) << name;
        EXPECT_GT(stddev_luminance(p), name == std::string("current") ? 0.5 : 2.0) << name;
    }
}

TEST(StudioGradients, GradientImagesAreShownLiveWithTheirEdges) {
    ASSERT_EQ(std::system("command -v xvfb-run > /dev/null"), 0) << "xvfb-run is missing";
    fs::path dir = fresh_dir("gradient-images");
    Result r = run(dir, xvfb(""),
                   kShowcase + " --diagnose --run --quit-after-iters 4 --screenshot shot.png --test-layout layout.json "
                               "--test-tab 'Gradient images'");
    ASSERT_EQ(r.code, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("validation on, 0 messages"), std::string::npos) << r.out;
    const nlohmann::json g = layout_of(dir)["gradient_images"];
    EXPECT_TRUE(g["available"].get<bool>());
    EXPECT_EQ(g["parameter"].get<std::string>(), "meshes.ball.translation");
    EXPECT_GT(g["computed"].get<int>(), 0);
    EXPECT_EQ(g["iteration"].get<int>(), 4);   // the last one, computed in the frame that quit
    EXPECT_GT(g["scale"].get<double>(), 0.0);
    EXPECT_NE(g["sum"].get<double>(), 0.0);
    // A translation under antialias visibility: its silhouette's edge pixels carry gradient (the sphere's outline
    // at 96x96 crosses a few hundred pixel pairs; the ring is drawn green over the image).
    EXPECT_GT(g["edge_pixels"].get<int>(), 40);
    const Picture p = crop(read_png(dir / "shot.png"), g["panel"]);
    ASSERT_EQ(p.width, 96);
    EXPECT_GT(stddev_luminance(p), 2.0);

    // Without --diagnose there is no such tab, and nothing is computed.
    fs::path plain = fresh_dir("gradient-images-off");
    Result o = run(plain, xvfb(""), kShowcase + " --run --quit-after-iters 1 --test-layout layout.json");
    ASSERT_EQ(o.code, 0) << o.err << o.out;
    const nlohmann::json off = layout_of(plain)["gradient_images"];
    EXPECT_FALSE(off["available"].get<bool>());
    EXPECT_EQ(off["computed"].get<int>(), 0);
}

// Soft visibility (render/soft_diagnose.h): the tab is available and computes the pose's images, with edge pixels
// along the knot's soft outline. pose.json made soft at 32x32.
TEST(StudioGradients, SoftVisibilityHasGradientImages) {
    ASSERT_EQ(std::system("command -v xvfb-run > /dev/null"), 0) << "xvfb-run is missing";
    fs::path dir = fresh_dir("gradient-images-soft");
    std::string scene = read_text(kSource / "assets/scenes/pose.json");
    scene.replace(scene.find("\"antialias\""), 11, "\"soft\"");
    scene.replace(scene.find("[128, 128]"), 10, "[32, 32]");
    scene.replace(scene.find("../meshes/"), 10, (kSource / "assets/meshes").string() + "/");
    std::ofstream(dir / "soft.json") << scene;
    Result r = run(dir, xvfb(""),
                   "--scene '" + (dir / "soft.json").string() +
                       "' --diagnose --run --quit-after-iters 30 --test-layout layout.json --test-tab 'Gradient images'");
    ASSERT_EQ(r.code, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("validation on, 0 messages"), std::string::npos) << r.out;
    const nlohmann::json g = layout_of(dir)["gradient_images"];
    EXPECT_TRUE(g["available"].get<bool>());
    EXPECT_EQ(g["parameter"].get<std::string>(), "meshes.knot.rotation");
    EXPECT_GT(g["computed"].get<int>(), 0);
    EXPECT_NE(g["sum"].get<double>(), 0.0);
    EXPECT_GT(g["edge_pixels"].get<int>(), 10);
}
