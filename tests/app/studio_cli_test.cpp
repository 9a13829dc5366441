// adjoint-studio's command line (app-contract.md): every option, defaults, help and bad values.
#include <adjoint/app/cli.h>
#include <gtest/gtest.h>

#include <vector>

using namespace adjoint::app;

namespace {

StudioOptions studio(std::vector<const char*> args) {
    args.insert(args.begin(), "adjoint-studio");
    return parse_studio_args(int(args.size()), args.data());
}

std::string usage_error(std::vector<const char*> args) {
    try {
        studio(std::move(args));
    } catch (const UsageError& e) {
        EXPECT_NE(e.usage().find("--quit-after-iters"), std::string::npos);
        return e.what();
    }
    ADD_FAILURE() << "expected a UsageError";
    return "";
}

} // namespace

TEST(StudioCli, ParsesEveryOption) {
    StudioOptions o = studio({"--scene", "assets/scenes/texture.json", "--run", "--quit-after-iters", "20",
                              "--screenshot", "shot.png", "--out", "dir"});
    EXPECT_EQ(o.scene, std::filesystem::path("assets/scenes/texture.json"));
    EXPECT_TRUE(o.run);
    EXPECT_EQ(o.quit_after_iters, 20);
    EXPECT_EQ(o.screenshot, std::filesystem::path("shot.png"));
    EXPECT_EQ(o.out, std::filesystem::path("dir"));
    EXPECT_FALSE(o.help);
}

TEST(StudioCli, EverythingIsOptional) {
    StudioOptions o = studio({});
    EXPECT_FALSE(o.scene || o.quit_after_iters || o.screenshot || o.out);
    EXPECT_FALSE(o.run || o.help);
    EXPECT_EQ(studio({"--quit-after-iters=0"}).quit_after_iters, 0);
}

TEST(StudioCli, HelpAndBadValues) {
    StudioOptions h = studio({"--help"});
    EXPECT_TRUE(h.help);
    EXPECT_NE(h.help_text.find("--screenshot"), std::string::npos);
    EXPECT_EQ(usage_error({"--quit-after-iters", "-3"}), "--quit-after-iters: must be >= 0, got -3");
    EXPECT_EQ(usage_error({"--quit-after-iters", "ten"}), "--quit-after-iters: expected an integer, got 'ten'");
    EXPECT_NE(usage_error({"--iters", "5"}).find("--iters"), std::string::npos);
    EXPECT_NE(usage_error({"--scene"}).find("--scene"), std::string::npos);
    // A .jpg screenshot wrote PNG bytes, found at exit; --force belongs to --out.
    EXPECT_EQ(usage_error({"--screenshot", "shot.jpg"}),
              "--screenshot: shot.jpg: the studio writes a PNG: name the file .png");
    EXPECT_EQ(usage_error({"--force"}), "--force: only with --out");
    EXPECT_TRUE(studio({"--out", "dir", "--force"}).force);
}
