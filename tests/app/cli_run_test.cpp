// adjoint-optimize and adjoint-render as a user runs them: the outputs of a run, the bad-input table
// (exit code 2, the message, nothing written), SIGINT then --resume, and kills at random moments.
#include "io_test_util.h"

#include <adjoint/app/atomic_file.h>
#include <adjoint/app/checkpoint.h>
#include <adjoint/app/image_io.h>
#include <adjoint/app/loss_log.h>
#include <adjoint/app/params_file.h>
#include <adjoint/app/report.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace adjoint::app::test {

namespace fs = std::filesystem;

namespace {

const fs::path kAssets = fs::path(ADJOINT_SOURCE_DIR) / "assets";
const std::string kOptimize = std::string(ADJOINT_BINARY_DIR) + "/app/adjoint-optimize";
const std::string kRender = std::string(ADJOINT_BINARY_DIR) + "/app/adjoint-render";

struct Result {
    int code = -1;
    std::string err;
};

// Runs a program with arguments (no shell), capturing stderr; returns the exit code (128 + signal when
// killed, as a shell reports it).
Result run(const std::string& program, const std::vector<std::string>& args, int kill_after_ms = -1,
           int signal = SIGINT, const std::function<bool()>& when = nullptr) {
    TempDir tmp;
    fs::path err_file = tmp / "stderr.txt";
    pid_t pid = spawn(program, args, err_file);
    if (kill_after_ms >= 0 || when) {
        auto start = std::chrono::steady_clock::now();
        for (;;) {
            int st = 0;
            if (waitpid(pid, &st, WNOHANG) == pid) {
                std::ifstream in(err_file);
                std::stringstream ss;
                ss << in.rdbuf();
                return {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), ss.str()};
            }
            auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
            if ((when && when()) || (!when && ms >= kill_after_ms)) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        kill(pid, signal);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    std::ifstream in(err_file);
    std::stringstream ss;
    ss << in.rdbuf();
    return {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), ss.str()};
}

// A small scene in a temp folder: a textured sphere, two lights, texture and a light free.
std::string small_scene(int iterations, const std::string& extra_param = "", const std::string& mesh_file = "") {
    std::string mesh = mesh_file.empty() ? (kAssets / "meshes" / "uv_sphere.obj").string() : mesh_file;
    return R"({"format": 1,
      "camera": { "eye": [0, 0.8, 4.2], "target": [0, 0, 0], "resolution": [48, 48] },
      "materials": { "skin": { "albedo_texture": ")" + (kAssets / "textures" / "colourful_128.png").string() + R"(" } },
      "meshes": [ { "name": "ball", "file": ")" + mesh + R"(", "material": "skin" } ],
      "lights": [ { "name": "key", "type": "point", "position": [2, 3, 3], "intensity": 14 },
                  { "name": "fill", "type": "ambient", "intensity": 0.25 } ],
      "optimize": { "parameters": { "materials.skin.albedo_texture": { "init": [0.5, 0.5, 0.5], "lr": 0.05 },
                                    "lights.key.intensity": { "init": 10, "lr": 0.05 })" + extra_param + R"( },
                    "iterations": )" + std::to_string(iterations) + R"( } })";
}

void write(const fs::path& p, const std::string& text) {
    std::ofstream(p) << text;
}

// Every output that exists must be complete: decodable, parseable.
void expect_outputs_complete(const fs::path& dir) {
    for (const char* png : {"target.png", "start.png", "final.png", "report.png"}) {
        if (fs::exists(dir / png)) { EXPECT_NO_THROW(read_png_linear(dir / png)) << png; }
    }
    if (fs::exists(dir / "loss.csv")) { EXPECT_NO_THROW(LossLog::parse(read_file(dir / "loss.csv"), "loss.csv")); }
    if (fs::exists(dir / "params.json")) { EXPECT_NO_THROW(read_params_json(dir / "params.json")); }
    if (fs::exists(dir / "checkpoint.bin")) { EXPECT_NO_THROW(read_checkpoint(dir / "checkpoint.bin")); }
}

} // namespace

TEST(OptimizeCli, ARunWritesEveryOutput) {
    TempDir tmp;
    write(tmp / "s.json", small_scene(12));
    auto r = run(kOptimize, {"--scene", (tmp / "s.json").string(), "--out", (tmp / "out").string(), "--save-every",
                             "5", "--quiet"});
    ASSERT_EQ(r.code, 0) << r.err;
    fs::path out = tmp / "out";
    for (const char* f : {"loss.csv", "target.png", "start.png", "final.png", "render_0005.png", "render_0010.png",
                          "params.json", "report.png", "checkpoint.bin", "materials.skin.albedo_texture.png"})
        EXPECT_TRUE(fs::exists(out / f)) << f;
    std::vector<std::string> columns;
    auto rows = LossLog::parse(read_file(out / "loss.csv"), "loss.csv", &columns);
    EXPECT_EQ(columns, (std::vector<std::string>{"materials.skin.albedo_texture.error_relative",
                                                 "lights.key.intensity.error_relative"}));
    ASSERT_EQ(rows.size(), 12u);
    for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i].iteration, int64_t(i));
    EXPECT_LT(rows.back().loss, rows.front().loss);
    EXPECT_TRUE(rows.back().param_error.has_value());
    ASSERT_EQ(rows.back().errors.size(), 2u);
    // The worst relative error is the largest column's.
    EXPECT_NEAR(std::max(*rows.back().errors[0], *rows.back().errors[1]), *rows.back().param_error,
                1e-6 * *rows.back().param_error);
    EXPECT_NEAR(*rows.front().errors[1], 4.0 / 14.0, 1e-6);   // the light's intensity starts at 10, its truth 14
    auto params = read_params_json(out / "params.json");
    ASSERT_EQ(params.size(), 2u);
    EXPECT_EQ(params[0].path, "lights.key.intensity");
    EXPECT_TRUE(params[0].true_value && params[0].error);
    EXPECT_EQ(read_checkpoint(out / "checkpoint.bin").iteration, 12u);
    // The texture's gradient as a picture beside params.json, named there; not all of one colour.
    ASSERT_TRUE(params[1].gradient_picture);
    EXPECT_TRUE(fs::exists(out / "materials.skin.albedo_texture.grad.png"));
    const Image& g = *params[1].gradient_picture;
    EXPECT_EQ(g.width, params[1].texture->width);
    EXPECT_NE(*std::min_element(g.pixels.begin(), g.pixels.end()), *std::max_element(g.pixels.begin(), g.pixels.end()));
    // report.png: one view row, the texture's row, and four curves (loss, PSNR, the texture's and the light's errors).
    auto report = read_png_linear(out / "report.png");
    const ReportLayout l =
        report_layout(48, 48, 1, false, {{params[1].texture->width, params[1].texture->height}}, 4);
    EXPECT_EQ(report.width, l.width);
    EXPECT_EQ(report.height, l.height);
    // The texture row's target tile is the true texture (sRGB PNG round trips to within a few 8-bit steps).
    const Rect& tt = l.texture_rows[0][1];
    const Image truth = read_png_linear(kAssets / "textures" / "colourful_128.png");
    EXPECT_NEAR(report.at(tt.x + tt.width / 2, tt.y + tt.height / 2, 1),
                truth.at(truth.width * (tt.width / 2) / tt.width, truth.height * (tt.height / 2) / tt.height, 1), 0.02f);
    expect_outputs_complete(out);

    // adjoint-render with the run's params.json reproduces final.png.
    auto rr = run(kRender, {"--scene", (tmp / "s.json").string(), "--out", (tmp / "again.png").string(), "--params",
                            (out / "params.json").string()});
    ASSERT_EQ(rr.code, 0) << rr.err;
    EXPECT_GT(psnr(read_png_linear(tmp / "again.png"), read_png_linear(out / "final.png")), 35.0);
}

// camera.intrinsics in params.json are in pixels at the scene file's resolution, whatever --resolution the run took:
// a run at twice the file's resolution writes its start and truth as the file gives them, and adjoint-render applies
// them at the file's resolution as the start renders there.
TEST(OptimizeCli, IntrinsicsInParamsJsonAreInTheFilesPixels) {
    TempDir tmp;
    write(tmp / "s.json", R"({"format": 1,
      "camera": { "eye": [0, 0.8, 4.2], "target": [0, 0, 0], "resolution": [32, 24],
                  "intrinsics": { "fx": 40, "fy": 40, "cx": 16, "cy": 12 } },
      "materials": { "red": { "albedo": [0.8, 0.2, 0.1] } },
      "meshes": [ { "name": "ball", "file": ")" + (kAssets / "meshes" / "uv_sphere.obj").string() +
                R"(", "material": "red" } ],
      "lights": [ { "name": "key", "type": "point", "position": [2, 3, 3], "intensity": 14 } ],
      "optimize": { "parameters": { "camera.intrinsics": { "init": [36, 44, 17, 11] } }, "iterations": 0 } })");
    auto r = run(kOptimize, {"--scene", (tmp / "s.json").string(), "--out", (tmp / "out").string(), "--resolution",
                             "64x48", "--quiet"});
    ASSERT_EQ(r.code, 0) << r.err;
    auto params = read_params_json(tmp / "out" / "params.json");
    ASSERT_EQ(params.size(), 1u);
    EXPECT_EQ(params[0].value, (std::vector<float>{36, 44, 17, 11}));
    EXPECT_EQ(*params[0].true_value, (std::vector<float>{40, 40, 16, 12}));
    auto start = run(kOptimize, {"--scene", (tmp / "s.json").string(), "--out", (tmp / "small").string(), "--quiet"});
    ASSERT_EQ(start.code, 0) << start.err;
    auto rr = run(kRender, {"--scene", (tmp / "s.json").string(), "--out", (tmp / "again.png").string(), "--params",
                            (tmp / "out" / "params.json").string()});
    ASSERT_EQ(rr.code, 0) << rr.err;
    EXPECT_GT(psnr(read_png_linear(tmp / "again.png"), read_png_linear(tmp / "small" / "start.png")), 50.0);
}

// A data texture (metallic-roughness, normals) is written as its values, as the scene's own files hold them, and a
// colour texture sRGB-encoded: a run's written truth, given back as the next run's init, is the truth again (the
// data textures were sRGB-encoded and read back linear: an error of 0.38 from the truth itself).
TEST(OptimizeCli, WrittenTexturesReadBackAsTheValuesTheyHold) {
    TempDir tmp;
    Image mr(4, 4, 3), normal(4, 4, 3), colour(4, 4, 3);
    for (size_t i = 0; i < mr.pixels.size(); ++i) {
        mr.pixels[i] = float((37 * i) % 256) / 255.0f;           // every channel, stored values
        normal.pixels[i] = float(i % 3 == 2 ? 255 : 96 + 5 * i % 64) / 255.0f;
        colour.pixels[i] = srgb_to_linear(float((53 * i) % 256) / 255.0f);
    }
    write_png(tmp / "mr.png", mr, false);
    write_png(tmp / "normal.png", normal, false);
    write_png(tmp / "colour.png", colour);
    const std::string scene = R"({"format": 1,
      "camera": { "eye": [0, 0.5, 3], "target": [0, 0, 0], "resolution": [24, 24] },
      "materials": { "m": { "model": "pbr", "base_color_texture": "colour.png", "metallic_roughness_texture": "mr.png",
                            "normal_texture": "normal.png" } },
      "meshes": [ { "name": "ball", "file": ")" + (kAssets / "meshes" / "uv_sphere.obj").string() +
                              R"(", "material": "m" } ],
      "lights": [ { "name": "sun", "type": "directional", "direction": [-0.3, -1, -0.5], "intensity": 2 } ],
      "optimize": { "target": "scene", "iterations": 1, "parameters": {
        "materials.m.metallic_roughness_texture": { "init": "%MR%", "lr": 1e-9 },
        "materials.m.normal_texture": { "init": "%NORMAL%", "lr": 1e-9 },
        "materials.m.base_color_texture": { "init": "%COLOUR%", "lr": 1e-9 } } } })";
    const auto with_inits = [&](const std::string& prefix) {
        std::string s = scene;
        for (const auto& [key, name] : {std::pair{"%MR%", "metallic_roughness_texture"},
                                        std::pair{"%NORMAL%", "normal_texture"},
                                        std::pair{"%COLOUR%", "base_color_texture"}})
            s.replace(s.find(key), std::string(key).size(), prefix + "materials.m." + name + ".true.png");
        return s;
    };
    std::string first = scene;
    for (const auto& [key, name] : {std::pair{"%MR%", "mr.png"}, std::pair{"%NORMAL%", "normal.png"},
                                    std::pair{"%COLOUR%", "colour.png"}})
        first.replace(first.find(key), std::string(key).size(), name);
    write(tmp / "first.json", first);
    auto r = run(kOptimize, {"--scene", (tmp / "first.json").string(), "--out", (tmp / "a").string(), "--quiet"});
    ASSERT_EQ(r.code, 0) << r.err;
    // The files' bytes: the values as given, each colour channel as its file encodes it.
    for (const auto& [name, given, srgb] : {std::tuple{"metallic_roughness_texture", &mr, false},
                                            std::tuple{"normal_texture", &normal, false},
                                            std::tuple{"base_color_texture", &colour, true}}) {
        const Image written = read_png_linear(tmp / "a" / ("materials.m." + std::string(name) + ".true.png"));
        ASSERT_EQ(written.pixels.size(), given->pixels.size()) << name;
        for (size_t i = 0; i < written.pixels.size(); ++i) {
            const float x = srgb ? written.pixels[i] : linear_to_srgb(written.pixels[i]);
            ASSERT_NEAR(x, given->pixels[i], 1e-4f) << name << " float " << i;
        }
    }
    write(tmp / "again.json", with_inits((tmp / "a").string() + "/"));
    r = run(kOptimize, {"--scene", (tmp / "again.json").string(), "--out", (tmp / "b").string(), "--quiet"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto rows = LossLog::parse(read_file(tmp / "b" / "loss.csv"), "loss.csv");
    ASSERT_FALSE(rows.empty());
    EXPECT_LT(*rows.front().param_error, 1e-6);
    EXPECT_LT(rows.front().loss, 1e-12);
    // params.json applied by adjoint-render reads the textures back as they were written: the run's picture.
    auto rr = run(kRender, {"--scene", (tmp / "first.json").string(), "--out", (tmp / "again.png").string(),
                            "--params", (tmp / "a" / "params.json").string()});
    ASSERT_EQ(rr.code, 0) << rr.err;
    EXPECT_GT(psnr(read_png_linear(tmp / "again.png"), read_png_linear(tmp / "a" / "final.png")), 45.0);
}

// --all-views DIR: every view of a NeRF dataset as view_<i>.png, and beside each its photo (view_<i>_side.png,
// twice as wide, the photo on the right); a scene without a dataset target writes no side images.
TEST(RenderCli, AllViewsWritesEveryViewAndItsPhoto) {
    TempDir tmp;
    const std::string pose0 = "[[1,0,0,0],[0,1,0,0],[0,0,1,4],[0,0,0,1]]", pose1 = "[[0,0,1,4],[0,1,0,0],[-1,0,0,0],[0,0,0,1]]";
    write(tmp / "transforms.json", R"({"camera_angle_x": 0.7, "frames": [
        {"file_path": "p0.png", "transform_matrix": )" + pose0 + R"(},
        {"file_path": "p1.png", "transform_matrix": )" + pose1 + R"(}]})");
    Image photo(20, 16, 3);
    for (float& v : photo.pixels) v = 0.75f;
    write_png(tmp / "p0.png", photo);
    write_png(tmp / "p1.png", photo);
    write(tmp / "d.json", R"({"format": 1, "camera": {"resolution": [20, 16]},
      "materials": {"m": {"albedo": [0.2, 0.5, 0.8]}},
      "meshes": [{"name": "ball", "file": ")" + (kAssets / "meshes" / "uv_sphere.obj").string() + R"(", "material": "m"}],
      "lights": [{"name": "sky", "type": "ambient"}],
      "views": {"nerf": "transforms.json"},
      "optimize": {"target": "views", "parameters": {"materials.m.albedo": {"init": [0.5, 0.5, 0.5]}}}})");
    auto r = run(kRender, {"--scene", (tmp / "d.json").string(), "--all-views", (tmp / "all").string()});
    ASSERT_EQ(r.code, 0) << r.err;
    for (int v = 0; v < 2; ++v) {
        const std::string name = "view_" + std::to_string(v);
        const Image view = read_png_linear(tmp / "all" / (name + ".png"));
        const Image side = read_png_linear(tmp / "all" / (name + "_side.png"));
        ASSERT_EQ(view.width, 20);
        ASSERT_EQ(view.height, 16);
        ASSERT_EQ(side.width, 40);
        EXPECT_NEAR(side.at(10, 0, 0), view.at(10, 0, 0), 1e-6f);          // the render on the left
        EXPECT_NEAR(side.at(25, 0, 0), 0.75f, 5e-3f);   // the photo (written linear, as write_png takes it) on the right
    }
    EXPECT_GT(read_png_linear(tmp / "all" / "view_0.png").at(10, 8, 2), 0.5f);   // the ball, centred
    // A scene target: the views only. --out and --all-views together, or --view with it: usage errors.
    write(tmp / "s.json", small_scene(1));
    ASSERT_EQ(run(kRender, {"--scene", (tmp / "s.json").string(), "--all-views", (tmp / "one").string()}).code, 0);
    EXPECT_TRUE(fs::exists(tmp / "one" / "view_0.png"));
    EXPECT_FALSE(fs::exists(tmp / "one" / "view_0_side.png"));
    auto both = run(kRender, {"--scene", (tmp / "s.json").string(), "--all-views", (tmp / "x").string(), "--out",
                              (tmp / "x.png").string()});
    EXPECT_EQ(both.code, 2);
    EXPECT_NE(both.err.find("either --out FILE or --all-views DIR"), std::string::npos) << both.err;
    write(tmp / "afile", "x");
    auto bad = run(kRender, {"--scene", (tmp / "s.json").string(), "--all-views", (tmp / "afile").string()});
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.err.find("--all-views"), std::string::npos) << bad.err;
    EXPECT_FALSE(fs::exists(tmp / "x"));
}

TEST(OptimizeCli, BadInputExitsTwoAndWritesNothing) {
    TempDir tmp;
    write(tmp / "empty.obj", "# no faces\nv 0 0 0\nv 1 0 0\nv 0 1 0\n");
    write(tmp / "nouv.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
    write(tmp / "notafolder", "x");
    struct Case {
        std::string name, scene;
        std::vector<std::string> extra;
        std::string expect;
    };
    std::string good = small_scene(3);
    auto replace = [&](std::string s, const std::string& a, const std::string& b) {
        auto at = s.find(a);
        EXPECT_NE(at, std::string::npos) << a;
        return at == std::string::npos ? s : s.replace(at, a.size(), b);
    };
    std::vector<Case> cases = {
        {"malformed json", "{\"format\": 1,", {}, "s.json"},
        {"unknown key", replace(good, "\"format\": 1,", "\"format\": 1, \"camra\": 3,"), {}, "camra"},
        {"wrong shape", replace(good, "\"target\": [0, 0, 0]", "\"target\": [0, 0]"), {}, "camera.target"},
        {"missing obj", replace(good, (kAssets / "meshes" / "uv_sphere.obj").string(), "nope.obj"), {}, "nope.obj"},
        {"obj without faces", small_scene(3, "", (tmp / "empty.obj").string()), {}, "meshes[0].file"},
        {"texture without uv", small_scene(3, "", (tmp / "nouv.obj").string()), {}, "texture coordinates"},
        {"unknown parameter", small_scene(3, R"(, "lights.kye.position": {"init": [0, 1, 0]})"), {},
         "unknown parameter lights.kye.position"},
        {"negative iterations", replace(good, "\"iterations\": 3", "\"iterations\": -3"), {}, "optimize.iterations"},
        {"resolution zero", good, {"--resolution", "0x64"}, "--resolution"},
        {"resolution too large", good, {"--resolution", "100000x64"}, "--resolution"},
        {"negative --iters", good, {"--iters", "-1"}, "--iters"},
        {"too large for the device", good, {"--resolution", "8000x8000"}, "camera.resolution"},
    };
    for (const auto& c : cases) {
        write(tmp / "s.json", c.scene);
        std::vector<std::string> args{"--scene", (tmp / "s.json").string(), "--out", (tmp / "out").string()};
        args.insert(args.end(), c.extra.begin(), c.extra.end());
        auto r = run(kOptimize, args);
        EXPECT_EQ(r.code, 2) << c.name << ": " << r.err;
        EXPECT_NE(r.err.find("adjoint: error: "), std::string::npos) << c.name << ": " << r.err;
        EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.name << ": " << r.err;
        EXPECT_FALSE(fs::exists(tmp / "out")) << c.name;
    }
    // An output folder that cannot be created.
    write(tmp / "s.json", good);
    auto r = run(kOptimize, {"--scene", (tmp / "s.json").string(), "--out", (tmp / "notafolder" / "out").string()});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("notafolder"), std::string::npos) << r.err;
}

// The run is long (20,000 iterations) so that the interrupt lands on any device (an H200 ran 300 of this scene
// in 0.14 s, before the test could send it); the resumed run stops 30 iterations on (--iters may change on a
// resume).
TEST(OptimizeCli, InterruptThenResumeContinuesWhereItStopped) {
    TempDir tmp;
    constexpr uint32_t kLong = 20000;
    write(tmp / "s.json", small_scene(kLong));
    fs::path out = tmp / "out";
    std::vector<std::string> args{"--scene", (tmp / "s.json").string(), "--out", out.string(), "--quiet"};
    // Interrupt once the run has done some iterations (loss.csv has rows).
    auto r = run(kOptimize, args, -1, SIGINT, [&] {
        std::error_code ec;
        return fs::exists(out / "loss.csv") && fs::file_size(out / "loss.csv", ec) > 400;
    });
    ASSERT_EQ(r.code, 130) << r.err;
    auto ck = read_checkpoint(out / "checkpoint.bin");
    auto rows = LossLog::parse(read_file(out / "loss.csv"), "loss.csv");
    ASSERT_GT(ck.iteration, 0u);
    ASSERT_LT(ck.iteration, kLong);
    EXPECT_EQ(rows.size(), ck.iteration);
    EXPECT_TRUE(fs::exists(out / "final.png"));

    const uint64_t end = ck.iteration + 30;
    args.insert(args.end(), {"--resume", "--iters", std::to_string(end)});
    auto r2 = run(kOptimize, args);
    ASSERT_EQ(r2.code, 0) << r2.err;
    rows = LossLog::parse(read_file(out / "loss.csv"), "loss.csv");
    ASSERT_EQ(rows.size(), end);
    for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i].iteration, int64_t(i));
    EXPECT_EQ(read_checkpoint(out / "checkpoint.bin").iteration, end);
    EXPECT_LT(rows.back().loss, rows[ck.iteration - 1].loss);
    // A resume with nothing left to run rewrote the texture's gradient picture flat grey (no step's gradient on the
    // device): now it is the gradient at the values the run ended at, as varied as the last step's.
    const auto distinct = [&] {
        const Image g = read_png_linear(out / "materials.skin.albedo_texture.grad.png");
        std::vector<float> v = g.pixels;
        std::sort(v.begin(), v.end());
        return size_t(std::unique(v.begin(), v.end()) - v.begin());
    };
    const size_t before = distinct();
    ASSERT_GT(before, 20u);
    ASSERT_EQ(run(kOptimize, args).code, 0);   // --resume --iters end again: nothing to run
    EXPECT_GT(distinct(), before / 2) << before;
}

// --deterministic: two runs agree to the bit, and a run stopped at 9 iterations and resumed ends as the
// uninterrupted one (losses, params.json, final.png); without it lavapipe's threads add float atomics in any
// order (the 5th-13th iteration differ in the 8th digit).
TEST(OptimizeCli, DeterministicRunsAreBitIdenticalAndResumeContinuesExactly) {
    TempDir tmp;
    write(tmp / "s.json", small_scene(24));
    auto optimize = [&](const std::string& out, std::vector<std::string> extra) {
        std::vector<std::string> args{"--scene", (tmp / "s.json").string(), "--out", (tmp / out).string(), "--quiet",
                                      "--deterministic"};
        args.insert(args.end(), extra.begin(), extra.end());
        return run(kOptimize, args);
    };
    // Elsewhere than on lavapipe float atomics add in no fixed order, and the program refuses the option.
    const Result first = optimize("a", {});
    if (first.code == 2 && first.err.find("--deterministic: supported on lavapipe only") != std::string::npos)
        GTEST_SKIP() << first.err;
    ASSERT_EQ(first.code, 0) << first.err;
    for (const Result& r : {optimize("b", {}), optimize("c", {"--iters", "9"}), optimize("c", {"--resume"})})
        EXPECT_EQ(r.code, 0) << r.err;
    auto losses = [&](const std::string& out) {
        std::vector<std::array<double, 3>> v;
        for (const LossRow& r : LossLog::parse(read_file(tmp / out / "loss.csv"), "loss.csv"))
            v.push_back({r.loss, r.image_psnr, r.param_error.value_or(-1.0)});
        return v;
    };
    ASSERT_EQ(losses("a").size(), 24u);
    for (const char* other : {"b", "c"}) {
        EXPECT_EQ(losses(other), losses("a")) << other;
        EXPECT_EQ(read_file(tmp / other / "params.json"), read_file(tmp / "a" / "params.json")) << other;
        EXPECT_EQ(read_file(tmp / other / "final.png"), read_file(tmp / "a" / "final.png")) << other;
        // The report too: a resumed run's |final - target| came from target.png's 8 bits.
        EXPECT_EQ(read_file(tmp / other / "report.png"), read_file(tmp / "a" / "report.png")) << other;
    }
}

// --profile: the kernels' device time over the iterations, in profile.txt: the optimizer's kernel ran once an
// iteration, and the total is the sum of the rows.
TEST(OptimizeCli, ProfileWritesEveryKernelsDeviceTime) {
    TempDir tmp;
    write(tmp / "s.json", small_scene(7));
    Result r = run(kOptimize, {"--scene", (tmp / "s.json").string(), "--out", (tmp / "o").string(), "--quiet",
                               "--profile"});
    ASSERT_EQ(r.code, 0) << r.err;
    const std::string text = read_file(tmp / "o" / "profile.txt");
    EXPECT_NE(r.err.find(text), std::string::npos) << r.err;
    EXPECT_EQ(text.rfind("device time per kernel over 7 iterations on ", 0), 0u) << text;
    std::istringstream in(text);
    std::string line;
    double sum = 0.0, total = -1.0;
    bool adam = false;
    while (std::getline(in, line)) {
        std::istringstream row(line);
        std::string name;
        uint64_t dispatches = 0;
        double ms = 0.0;
        if (line.rfind("total ", 0) == 0) total = std::stod(line.substr(6));
        else if (row >> name >> dispatches >> ms) {
            sum += ms;
            if (name == "optim_adam") adam = dispatches == 7;
            EXPECT_GT(ms, 0.0) << line;
        }
    }
    EXPECT_TRUE(adam) << text;
    EXPECT_NEAR(total, sum, 0.01 * sum + 0.01) << text;

    // profile.txt taken by a folder: refused before any work, as the other outputs' names are (it ran the whole
    // run, then lost final.png, params.json, the checkpoint and loss.csv's rows, exit 1).
    fs::create_directories(tmp / "p" / "profile.txt");
    r = run(kOptimize, {"--scene", (tmp / "s.json").string(), "--out", (tmp / "p").string(), "--quiet", "--profile"});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find((tmp / "p" / "profile.txt").string()), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(tmp / "p" / "loss.csv"));
    // Without --profile the name is not an output: the run goes on.
    r = run(kOptimize, {"--scene", (tmp / "s.json").string(), "--out", (tmp / "p").string(), "--quiet"});
    EXPECT_EQ(r.code, 0) << r.err;
}

TEST(OptimizeCli, AKillAtAnyMomentLeavesOnlyCompleteOutputs) {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 4; ++trial) {
        TempDir tmp;
        write(tmp / "s.json", small_scene(200));
        int delay = std::uniform_int_distribution<int>(300, 2500)(rng);
        auto r = run(kOptimize, {"--scene", (tmp / "s.json").string(), "--out", (tmp / "out").string(),
                                 "--save-every", "7", "--quiet"},
                     delay, SIGKILL);
        EXPECT_TRUE(r.code == 128 + SIGKILL || r.code == 0) << r.code;
        if (fs::exists(tmp / "out")) expect_outputs_complete(tmp / "out");
        // The next run (a resume when a checkpoint exists) clears the killed run's temporary files.
        if (fs::exists(tmp / "out" / "checkpoint.bin")) {
            // As many iterations as the checkpoint ran: nothing left to run, the outputs written again.
            const std::string ran = std::to_string(read_checkpoint(tmp / "out" / "checkpoint.bin").iteration);
            auto again = run(kOptimize, {"--scene", (tmp / "s.json").string(), "--out", (tmp / "out").string(),
                                         "--resume", "--quiet", "--iters", ran});
            EXPECT_EQ(again.code, 0) << again.err;
            for (const auto& e : fs::directory_iterator(tmp / "out"))
                EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
        }
    }
}

} // namespace adjoint::app::test
