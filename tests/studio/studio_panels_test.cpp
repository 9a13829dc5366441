// The studio's panels as a new user reads them, under Xvfb: a small view magnified by a whole factor with
// square texels, the scene picker naming the scene that is loaded, the parameter table's cells whole (a
// rotation also in degrees), the curves' axes and ticks, and the target / current flicker.
#include "studio/harness.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

namespace {

using namespace studio_test;

// texture.json at 64x64 with the ball's rotation free too (antialiased), its paths made absolute.
void write_small_scene(const fs::path& file) {
    nlohmann::json scene = nlohmann::json::parse(read_text(kSource / "assets/scenes/texture.json"));
    const fs::path assets = kSource / "assets";
    scene["camera"]["resolution"] = {64, 64};
    scene["materials"]["skin"]["albedo_texture"] = (assets / "textures/colourful_128.png").string();
    scene["meshes"][0]["file"] = (assets / "meshes/uv_sphere.obj").string();
    scene["meshes"][0]["rotation"] = {{"axis", {0, 1, 0}}, {"angle", 20}};
    scene["render"]["visibility"] = "antialias";
    scene["optimize"]["parameters"]["meshes.ball.rotation"] = {{"perturb", 10}, {"lr", 0.01}};
    std::ofstream(file) << scene.dump(2);
}

// Share of the picture's 4x4 blocks whose 16 pixels are one colour.
double share_of_square_texels(const Picture& p) {
    size_t blocks = 0, uniform = 0;
    for (int by = 0; by + 4 <= p.height; by += 4)
        for (int bx = 0; bx + 4 <= p.width; bx += 4) {
            bool same = true;
            for (int y = by; y < by + 4; ++y)
                for (int x = bx; x < bx + 4; ++x)
                    for (int c = 0; c < 3; ++c) same = same && p.at(x, y)[c] == p.at(bx, by)[c];
            ++blocks;
            uniform += same;
        }
    return blocks ? double(uniform) / double(blocks) : 0.0;
}

TEST(StudioPanels, ASmallSceneAsANewUserReadsIt) {
    ASSERT_EQ(std::system("command -v xvfb-run > /dev/null"), 0) << "xvfb-run is missing (Debian package xvfb)";
    const fs::path dir = fresh_dir("panels");
    write_small_scene(dir / "small.json");
    const Result r = run(dir, xvfb(""),
                         "--scene small.json --run --quit-after-iters 3 --screenshot shot.png --test-size 1280x760 "
                         "--test-layout layout.json --test-flicker");
    ASSERT_EQ(r.code, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("validation on, 0 messages"), std::string::npos) << r.out;
    const nlohmann::json layout = nlohmann::json::parse(read_text(dir / "layout.json"));
    const Picture shot = read_png(dir / "shot.png");

    // 64x64 in a 1280-wide window: magnified 4 times, each texel a 4x4 square (nearest filtering).
    ASSERT_EQ(layout["image"][0].get<int>(), 64);
    const Picture target = crop(shot, layout["panels"]["target"]), current = crop(shot, layout["panels"]["current"]);
    ASSERT_EQ(target.width, 256);
    ASSERT_EQ(target.height, 256);
    EXPECT_GT(stddev_luminance(target), 8.0);
    EXPECT_GT(share_of_square_texels(target), 0.99);

    EXPECT_EQ(layout["scene_picker"].get<std::string>(), "small.json (not a demo)");

    // The table: every cell whole; the rotation's value and truth also as an angle about an axis, its error in
    // degrees too.
    EXPECT_EQ(layout["clipped_cells"].get<int>(), 0);
    const nlohmann::json& table = layout["parameter_table"];
    ASSERT_EQ(table.size(), 2u) << layout.dump();
    const nlohmann::json& rotation = table[1];
    EXPECT_EQ(rotation[0].get<std::string>(), "meshes.ball.rotation");
    EXPECT_NE(rotation[2].get<std::string>().find("]\n20.00 deg about [0.00, 1.00, 0.00]"), std::string::npos) << rotation;
    EXPECT_NE(rotation[1].get<std::string>().find(" deg about ["), std::string::npos) << rotation;
    EXPECT_NE(rotation[3].get<std::string>().find(" deg"), std::string::npos) << rotation;

    // The curves: loss, PSNR, parameter error, each with ticks on both axes (decades on the log ones).
    const nlohmann::json& curves = layout["curves"];
    ASSERT_EQ(curves.size(), 3u) << layout.dump();
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_FALSE(curves[i]["y_ticks"].empty()) << curves[i];
        EXPECT_FALSE(curves[i]["x_ticks"].empty()) << curves[i];
        const Picture plot = crop(shot, curves[i]["plot"]);
        EXPECT_GT(plot.width, 120);
        EXPECT_GT(plot.height, 60);
        EXPECT_GT(stddev_luminance(plot), 2.0) << "an empty plot: " << curves[i];
    }
    for (size_t i : {0u, 2u})
        for (const auto& tick : curves[i]["y_ticks"]) {
            EXPECT_EQ(tick.get<std::string>().rfind("1e", 0), 0u) << tick;
            EXPECT_NE(tick.get<std::string>(), "1e-0");
        }

    // The flicker: the current panel shows the target in one phase, the 3-iteration image (far from it) in the other.
    EXPECT_TRUE(layout["flicker"]["on"].get<bool>());
    if (layout["flicker"]["current_shows_target"].get<bool>())
        EXPECT_GT(share_equal(current, target, 0), 0.999);
    else
        EXPECT_LT(share_equal(current, target, 4), 0.9);
}

// The table at exit shows the values the run ended at (it is read back at most 4 times a second while the run
// goes on, and a run shorter than that showed its start): the cells of a colour after 10 quick iterations are the
// values params.json holds.
TEST(StudioPanels, TheLastFrameShowsTheValuesTheRunEndedAt) {
    ASSERT_EQ(std::system("command -v xvfb-run > /dev/null"), 0) << "xvfb-run is missing (Debian package xvfb)";
    const fs::path dir = fresh_dir("last-values");
    nlohmann::json scene = nlohmann::json::parse(read_text(kSource / "assets/scenes/material-light.json"));
    scene["camera"]["resolution"] = {48, 32};
    for (auto& mesh : scene["meshes"])
        mesh["file"] = (kSource / "assets/scenes" / mesh["file"].get<std::string>()).string();
    scene["optimize"]["parameters"] = {{"materials.ball.albedo", {{"init", {0.5, 0.5, 0.5}}, {"lr", 0.05}}}};
    std::ofstream(dir / "scene.json") << scene.dump(2);
    const Result r =
        run(dir, xvfb(""), "--scene scene.json --run --quit-after-iters 10 --out out --test-layout layout.json");
    ASSERT_EQ(r.code, 0) << r.err << r.out;
    const nlohmann::json layout = nlohmann::json::parse(read_text(dir / "layout.json"));
    const nlohmann::json params = nlohmann::json::parse(read_text(dir / "out" / "params.json"));
    const nlohmann::json& value = params["parameters"]["materials.ball.albedo"]["value"];
    std::string cell = layout["parameter_table"][0][1].get<std::string>();   // "[0.854, 0.404, 0.146]"
    for (char& c : cell) c = (c == '[' || c == ']' || c == ',') ? ' ' : c;
    std::istringstream numbers(cell);
    for (size_t i = 0; i < 3; ++i) {
        double shown = -1;
        numbers >> shown;
        EXPECT_NEAR(shown, value[i].get<double>(), 6e-4) << cell;
        EXPECT_GT(std::abs(shown - 0.5), 0.05) << "the start value: " << cell;
    }
}

} // namespace
