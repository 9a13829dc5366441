// The programs' command lines: every option parsed, help, and each kind of bad input a UsageError.
#include <adjoint/app/cli.h>
#include <gtest/gtest.h>

#include <vector>

using namespace adjoint::app;

namespace {

OptimizeOptions optimize(std::vector<const char*> args) {
    args.insert(args.begin(), "adjoint-optimize");
    return parse_optimize_args(int(args.size()), args.data());
}
RenderOptions render(std::vector<const char*> args) {
    args.insert(args.begin(), "adjoint-render");
    return parse_render_args(int(args.size()), args.data());
}
template <typename F>
std::string usage_error(F&& f) {
    try {
        f();
    } catch (const UsageError& e) {
        EXPECT_NE(e.usage().find("--scene"), std::string::npos);  // the help comes with every error
        return e.what();
    }
    ADD_FAILURE() << "expected a UsageError";
    return "";
}

} // namespace

TEST(IoCli, OptimizeParsesEveryOption) {
    OptimizeOptions o = optimize({"--scene", "s.json", "--out", "run", "--iters", "300", "--resolution", "640x480",
                                  "--seed", "18446744073709551615", "--save-every", "25", "--resume", "--force", "--quiet"});
    EXPECT_EQ(o.scene, "s.json");
    EXPECT_EQ(o.out, "run");
    EXPECT_EQ(o.iters, 300);
    EXPECT_EQ(o.resolution, (Resolution{640, 480}));
    EXPECT_EQ(o.seed, 18446744073709551615ull);
    EXPECT_EQ(o.save_every, 25);
    EXPECT_TRUE(o.resume);
    EXPECT_TRUE(o.force);
    EXPECT_TRUE(o.quiet);
    EXPECT_FALSE(o.help);
}

TEST(IoCli, OptimizeDefaultsLeaveOverridesEmpty) {
    OptimizeOptions o = optimize({"--out=run", "--scene=s.json"});
    EXPECT_EQ(o.scene, "s.json");
    EXPECT_FALSE(o.iters || o.resolution || o.seed || o.save_every);
    EXPECT_FALSE(o.force);
    EXPECT_FALSE(o.resume || o.quiet || o.help);
    EXPECT_EQ(optimize({"--scene", "s", "--out", "o", "--iters", "0"}).iters, 0);
}

TEST(IoCli, HelpNeedsNothingElse) {
    OptimizeOptions o = optimize({"--help"});
    EXPECT_TRUE(o.help);
    EXPECT_NE(o.help_text.find("--save-every"), std::string::npos);
    EXPECT_NE(o.help_text.find("--resume"), std::string::npos);
    RenderOptions r = render({"-h"});
    EXPECT_TRUE(r.help);
    EXPECT_NE(r.help_text.find("--params"), std::string::npos);
}

TEST(IoCli, OptimizeUsageErrors) {
    EXPECT_NE(usage_error([] { optimize({"--out", "o"}); }).find("--scene is required"), std::string::npos);
    EXPECT_EQ(usage_error([] { optimize({"--scene", "s", "--out", "o", "--iters", "-5"}); }), "--iters: must be >= 0, got -5");
    EXPECT_EQ(usage_error([] { optimize({"--scene", "s", "--out", "o", "--iters", "1.5"}); }),
              "--iters: expected an integer, got '1.5'");
    EXPECT_EQ(usage_error([] { optimize({"--scene", "s", "--out", "o", "--save-every", "0"}); }),
              "--save-every: must be >= 1, got 0");
    EXPECT_EQ(usage_error([] { optimize({"--scene", "s", "--out", "o", "--seed", "-1"}); }),
              "--seed: expected a non-negative integer, got '-1'");
    EXPECT_EQ(usage_error([] { optimize({"--scene", "s", "--out", "o", "--resolution", "640"}); }),
              "--resolution: expected WxH with each side in 1..8192, got \"640\"");
    EXPECT_NE(usage_error([] { optimize({"--scene", "s", "--out", "o", "--itres", "5"}); }).find("--itres"), std::string::npos);
    EXPECT_NE(usage_error([] { optimize({"--scene", "s", "--out", "o", "extra"}); }).find("extra"), std::string::npos);
    EXPECT_NE(usage_error([] { optimize({"--scene", "s", "--out", "o", "--iters"}); }).find("--iters"), std::string::npos);
    // Were CLI11's "At Most 1 required but received 2", and "cannot read : No such file or directory" later.
    EXPECT_EQ(usage_error([] { optimize({"--scene", "s", "--out", "o", "--iters", "2", "--iters", "3"}); }),
              "--iters: given 2 times; give it once");
    EXPECT_EQ(usage_error([] { optimize({"--scene", "", "--out", "o"}); }),
              "--scene: the name is empty; give a file or folder name");
    EXPECT_EQ(usage_error([] { optimize({"--scene", "s", "--out", ""}); }),
              "--out: the name is empty; give a file or folder name");
    EXPECT_EQ(usage_error([] { render({"--scene", "s", "--out", "o.png", "--params", ""}); }),
              "--params: the name is empty; give a file or folder name");
    EXPECT_TRUE(optimize({"--scene", "s", "--out", "o", "--force", "--force"}).force);   // a flag twice is the flag
}

TEST(IoCli, ResolutionParsing) {
    // --resolution uses the scene's WxH parser; a bad value becomes a usage error naming the option.
    EXPECT_EQ(optimize({"--scene", "s.json", "--out", "o", "--resolution", "256x128"}).resolution, (Resolution{256, 128}));
    EXPECT_EQ(optimize({"--scene", "s.json", "--out", "o", "--resolution", "8192x1"}).resolution, (Resolution{8192, 1}));
    for (const char* bad : {"x", "256", "x256", "256x", "0x10", "-1x5", "256x256x3", "2.5x4", "axb", "99999x1"}) {
        try {
            optimize({"--scene", "s.json", "--out", "o", "--resolution", bad});
            ADD_FAILURE() << bad;
        } catch (const UsageError& e) {
            EXPECT_NE(std::string(e.what()).find("--resolution"), std::string::npos) << e.what();
        }
    }
}

TEST(IoCli, RenderOptions) {
    RenderOptions r = render({"--scene", "s.json", "--out", "a.png", "--view", "3", "--params", "run/params.json",
                              "--resolution", "64x32"});
    EXPECT_EQ(r.scene, "s.json");
    EXPECT_EQ(r.out, "a.png");
    EXPECT_EQ(r.view, 3);
    EXPECT_EQ(r.params, std::filesystem::path("run/params.json"));
    EXPECT_EQ(r.resolution, (Resolution{64, 32}));
    RenderOptions d = render({"--scene", "s.json", "--out", "a.png"});
    EXPECT_EQ(d.view, 0);
    EXPECT_FALSE(d.params || d.resolution);
    EXPECT_EQ(usage_error([] { render({"--scene", "s", "--out", "o", "--view", "-1"}); }), "--view: must be >= 0, got -1");
    EXPECT_NE(usage_error([] { render({"--scene", "s"}); }).find("give either --out FILE or --all-views DIR"),
              std::string::npos);
}

TEST(IoCli, ExitCodesAreTheContracts) {
    EXPECT_EQ(exit_ok, 0);
    EXPECT_EQ(exit_failure, 1);
    EXPECT_EQ(exit_bad_input, 2);
    EXPECT_EQ(exit_interrupted, 130);
}
