// adjoint-optimize's --out folder under hostile use (issues 21 and 20): locked for the run, never written over
// when it holds another run's outputs (unless --resume or --force), outputs never replace a symlink or a FIFO,
// a signal before the first iteration exits 130 with no temporary file, and --resume checks the scene's content,
// the seed, the resolution and every file it reads back, exiting 2 naming what is wrong.
#include "io_test_util.h"

#include <adjoint/app/atomic_file.h>
#include <adjoint/app/checkpoint.h>
#include <adjoint/app/image_io.h>
#include <adjoint/app/loss_log.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace adjoint::app::test {
namespace {

namespace fs = std::filesystem;

const fs::path kAssets = fs::path(ADJOINT_SOURCE_DIR) / "assets";
const std::string kOptimize = std::string(ADJOINT_BINARY_DIR) + "/app/adjoint-optimize";
const std::string kRender = std::string(ADJOINT_BINARY_DIR) + "/app/adjoint-render";

struct Result {
    int code = -1;
    std::string err;
};

// Starts a program (adjoint-optimize unless named) with `args` (no shell), stderr to `err_file`.
pid_t start(const std::vector<std::string>& args, const fs::path& err_file, const std::string& program = kOptimize) {
    return spawn(program, args, err_file);
}

Result finish(pid_t pid, const fs::path& err_file) {
    int st = 0;
    waitpid(pid, &st, 0);
    std::ifstream in(err_file);
    std::stringstream ss;
    ss << in.rdbuf();
    return {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), ss.str()};
}

Result run(const std::vector<std::string>& args) {
    TempDir tmp;
    return finish(start(args, tmp / "stderr.txt"), tmp / "stderr.txt");
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

// A small scene: a sphere, one light whose intensity is free, `iterations` iterations.
std::string small_scene(int iterations, const std::string& intensity = "14") {
    return R"({"format": 1,
      "camera": { "eye": [0, 0.8, 4.2], "target": [0, 0, 0], "resolution": [16, 16] },
      "materials": { "skin": { "albedo": [0.5, 0.5, 0.5] } },
      "meshes": [ { "name": "ball", "file": "ball.obj", "material": "skin" } ],
      "lights": [ { "name": "key", "type": "point", "position": [2, 3, 3], "intensity": )" + intensity + R"( } ],
      "optimize": { "parameters": { "lights.key.intensity": { "init": 10, "lr": 0.05 } }, "iterations": )" +
           std::to_string(iterations) + R"( } })";
}

// The scene and its mesh in `dir` (the mesh by a relative name, so a copy of the folder is an identical scene).
fs::path scene_in(const fs::path& dir, int iterations, const std::string& intensity = "14") {
    fs::create_directories(dir);
    fs::copy_file(kAssets / "meshes" / "uv_sphere.obj", dir / "ball.obj", fs::copy_options::overwrite_existing);
    write(dir / "s.json", small_scene(iterations, intensity));
    return dir / "s.json";
}

std::vector<std::string> temporaries(const fs::path& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().filename().string().find(".tmp-") != std::string::npos) out.push_back(e.path().filename().string());
    return out;
}

std::string bytes_of(const fs::path& p) { return read_file(p); }

// Waits until `pid` catches SIGTERM (its SigCgt in /proc): the program's first act in main. Before that only the
// dynamic loader has run (about 20 ms here), where no program can catch a signal.
bool wait_for_handler(pid_t pid) {
    for (int i = 0; i < 2000; ++i) {
        std::ifstream status("/proc/" + std::to_string(pid) + "/status");
        std::string line;
        while (std::getline(status, line))
            if (line.rfind("SigCgt:", 0) == 0 && (std::stoull(line.substr(7), nullptr, 16) >> (SIGTERM - 1)) & 1) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
}

} // namespace

// Two runs into one --out: each deleted the other's temporary files and their outputs mixed. Now the second
// exits 2 naming the folder, writes nothing, and the first ends as if alone.
TEST(CliOutFolder, ASecondRunIntoABusyFolderExitsTwoAndTheFirstIsUnharmed) {
    TempDir tmp;
    const fs::path scene = scene_in(tmp / "scene", 1'000'000);
    const fs::path out = tmp / "out";
    const pid_t first = start({"--scene", scene.string(), "--out", out.string(), "--quiet"}, tmp / "first.txt");
    for (int i = 0; i < 2000 && !fs::exists(out / "loss.csv"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(fs::exists(out / "loss.csv"));
    const Result second = run({"--scene", scene.string(), "--out", out.string(), "--force", "--iters", "3"});
    EXPECT_EQ(second.code, 2) << second.err;
    EXPECT_EQ(second.err, "adjoint: error: --out: " + out.string() + " is in use by another run (it holds " +
                              (out / ".adjoint.lock").string() + "); wait for it or choose another folder\n");
    // The runs beside an optimization take the lock too (they wrote their files into the live run's folder).
    for (const char* beside : {"--check-gradients", "--diagnose"}) {
        const Result r = run({"--scene", scene.string(), "--out", out.string(), beside});
        EXPECT_EQ(r.code, 2) << beside << ": " << r.err;
        EXPECT_NE(r.err.find("is in use by another run"), std::string::npos) << beside << ": " << r.err;
    }
    EXPECT_FALSE(fs::exists(out / "gradient_check.txt"));
    EXPECT_FALSE(fs::exists(out / "diagnose.txt"));
    kill(first, SIGTERM);
    const Result r = finish(first, tmp / "first.txt");
    ASSERT_EQ(r.code, 130) << r.err;
    const Checkpoint ck = read_checkpoint(out / "checkpoint.bin");
    const auto rows = LossLog::parse(read_file(out / "loss.csv"), "loss.csv");
    ASSERT_EQ(rows.size(), ck.iteration);   // one run's rows, all of them, 0..n-1
    for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i].iteration, int64_t(i));
    EXPECT_TRUE(temporaries(out).empty());
    // Its lock died with it: a resume goes ahead.
    const Result resumed = run({"--scene", scene.string(), "--out", out.string(), "--resume", "--iters",
                                std::to_string(ck.iteration + 2), "--quiet"});
    EXPECT_EQ(resumed.code, 0) << resumed.err;
    EXPECT_EQ(read_checkpoint(out / "checkpoint.bin").iteration, ck.iteration + 2);
}

// Issue 20: a folder holding another run's outputs is refused (exit 2, the folder and the outputs named),
// nothing of the old run touched; --force writes over it; --resume continues it.
TEST(CliOutFolder, AFolderWithAnotherRunsOutputsNeedsResumeOrForce) {
    TempDir tmp;
    const fs::path scene = scene_in(tmp / "scene", 3);
    const fs::path out = tmp / "out";
    ASSERT_EQ(run({"--scene", scene.string(), "--out", out.string(), "--quiet"}).code, 0);
    const std::string checkpoint = bytes_of(out / "checkpoint.bin"), losses = bytes_of(out / "loss.csv");
    const Result again = run({"--scene", scene.string(), "--out", out.string(), "--iters", "2"});
    EXPECT_EQ(again.code, 2) << again.err;
    EXPECT_EQ(again.err, "adjoint: error: --out: " + out.string() + " holds another run's outputs (checkpoint.bin, "
                         "params.json, loss.csv, final.png, report.png, target.png, start.png); give --resume to "
                         "continue that run, --force to write over it, or another folder\n");
    EXPECT_EQ(bytes_of(out / "checkpoint.bin"), checkpoint);
    EXPECT_EQ(bytes_of(out / "loss.csv"), losses);
    // One output is enough to mark the folder.
    fs::create_directories(tmp / "one");
    write(tmp / "one" / "loss.csv", "iteration,loss,image_psnr,param_error,ms\n");
    const Result one = run({"--scene", scene.string(), "--out", (tmp / "one").string()});
    EXPECT_EQ(one.code, 2) << one.err;
    EXPECT_NE(one.err.find("holds another run's outputs (loss.csv)"), std::string::npos) << one.err;
    // So is a free texture's file left alone (it was written over without --force).
    std::string textured = small_scene(1);
    textured.replace(textured.find("\"albedo\": [0.5, 0.5, 0.5]"), 26,
                     "\"albedo_texture\": \"" + (kAssets / "textures" / "colourful_128.png").string() + "\"");
    textured.replace(textured.find("\"lights.key.intensity\""), 0,
                     "\"materials.skin.albedo_texture\": { \"init\": [0.5, 0.5, 0.5], \"lr\": 0.05 }, ");
    const fs::path texture_scene = scene_in(tmp / "textured", 1);
    write(texture_scene, textured);
    ASSERT_EQ(run({"--scene", texture_scene.string(), "--out", (tmp / "t").string(), "--quiet"}).code, 0);
    for (const auto& e : fs::directory_iterator(tmp / "t"))
        if (e.path().filename() != "materials.skin.albedo_texture.png") fs::remove(e.path());
    const std::string texture = bytes_of(tmp / "t" / "materials.skin.albedo_texture.png");
    const Result lone = run({"--scene", texture_scene.string(), "--out", (tmp / "t").string()});
    EXPECT_EQ(lone.code, 2) << lone.err;
    EXPECT_NE(lone.err.find("holds another run's outputs (materials.skin.albedo_texture.png)"), std::string::npos)
        << lone.err;
    EXPECT_EQ(bytes_of(tmp / "t" / "materials.skin.albedo_texture.png"), texture);
    // A folder with other files only (or the lock file a run leaves) is fine.
    fs::create_directories(tmp / "other");
    write(tmp / "other" / "notes.txt", "mine");
    write(tmp / "other" / ".adjoint.lock", "");
    EXPECT_EQ(run({"--scene", scene.string(), "--out", (tmp / "other").string(), "--quiet"}).code, 0);
    EXPECT_EQ(bytes_of(tmp / "other" / "notes.txt"), "mine");
    const Result forced = run({"--scene", scene.string(), "--out", out.string(), "--iters", "2", "--force", "--quiet"});
    EXPECT_EQ(forced.code, 0) << forced.err;
    EXPECT_EQ(read_checkpoint(out / "checkpoint.bin").iteration, 2u);
    EXPECT_EQ(LossLog::parse(read_file(out / "loss.csv"), "loss.csv").size(), 2u);
}

// A --force run that fails before its first checkpoint (here its loss turns non-finite at iteration 1: SGD with a
// learning rate of 1e38) left the earlier run's checkpoint.bin, and --resume continued that run under the new
// run's loss.csv rows. And the row it computed before failing was lost (loss.csv held its header only).
TEST(CliOutFolder, AForcedRunThatFailsLeavesNoOtherRunsCheckpointAndKeepsItsRows) {
    TempDir tmp;
    const fs::path scene = scene_in(tmp / "scene", 3);
    const fs::path out = tmp / "out";
    ASSERT_EQ(run({"--scene", scene.string(), "--out", out.string(), "--quiet"}).code, 0);
    ASSERT_TRUE(fs::exists(out / "checkpoint.bin"));
    std::string diverging = small_scene(10);
    const std::string adam = R"("lr": 0.05 } })";
    ASSERT_NE(diverging.find(adam), std::string::npos);
    diverging.replace(diverging.find(adam), adam.size(), R"("lr": 1e38 } }, "optimizer": "sgd", "momentum": 0)");
    write(tmp / "scene" / "nan.json", diverging);
    const Result failed = run({"--scene", (tmp / "scene" / "nan.json").string(), "--out", out.string(), "--force",
                               "--quiet"});
    EXPECT_EQ(failed.code, 1) << failed.err;
    EXPECT_NE(failed.err.find("non-finite"), std::string::npos) << failed.err;
    EXPECT_FALSE(fs::exists(out / "checkpoint.bin"));
    const auto rows = LossLog::parse(read_file(out / "loss.csv"), "loss.csv");
    ASSERT_GE(rows.size(), 1u);
    EXPECT_EQ(rows[0].iteration, 0);
    const Result resumed = run({"--scene", scene.string(), "--out", out.string(), "--resume", "--quiet"});
    EXPECT_EQ(resumed.code, 2) << resumed.err;
    EXPECT_NE(resumed.err.find("there is no checkpoint to resume from"), std::string::npos) << resumed.err;
}

// Outputs went through temp-and-rename, replacing a symlink or a FIFO of that name. Refused before any work.
TEST(CliOutFolder, OutputsNeverReplaceWhatIsNotARegularFile) {
    TempDir tmp;
    const fs::path scene = scene_in(tmp / "scene", 2);
    fs::create_directories(tmp / "link");
    fs::create_symlink(tmp / "elsewhere.png", tmp / "link" / "final.png");
    Result r = run({"--scene", scene.string(), "--out", (tmp / "link").string()});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err, "adjoint: error: --out: cannot write " + (tmp / "link" / "final.png").string() +
                         ": it is a symbolic link; outputs are written only as regular files\n");
    EXPECT_TRUE(fs::is_symlink(tmp / "link" / "final.png"));
    EXPECT_FALSE(fs::exists(tmp / "elsewhere.png"));
    EXPECT_FALSE(fs::exists(tmp / "link" / "target.png"));
    fs::create_directories(tmp / "fifo");
    ASSERT_EQ(::mkfifo((tmp / "fifo" / "render_0001.png").c_str(), 0600), 0);
    r = run({"--scene", scene.string(), "--out", (tmp / "fifo").string(), "--save-every", "1"});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("render_0001.png: it is not a regular file"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(tmp / "fifo" / "target.png"));
}

// Materials "a,b" and "a_b" with their textures free: one PNG held one, params.json named it for both, and
// loss.csv had the column twice (exit 0). Refused before any work, naming both and the file.
TEST(CliOutFolder, ParametersWhoseOutputsWouldShareANameAreRefused) {
    TempDir tmp;
    scene_in(tmp.path(), 2);
    const std::string texture = (kAssets / "textures" / "colourful_128.png").string();
    write(tmp / "two.json", R"({"format": 1,
      "camera": { "eye": [0, 0.8, 4.2], "target": [0, 0, 0], "resolution": [16, 16] },
      "materials": { "a,b": { "albedo_texture": ")" + texture + R"(" }, "a_b": { "albedo_texture": ")" + texture +
                                R"(" } },
      "meshes": [ { "name": "ball", "file": "ball.obj", "material": "a,b", "translation": [-0.6, 0, 0] },
                  { "name": "ball2", "file": "ball.obj", "material": "a_b", "translation": [0.6, 0, 0] } ],
      "lights": [ { "name": "key", "type": "point", "position": [2, 3, 3], "intensity": 14 } ],
      "optimize": { "parameters": { "materials.a,b.albedo_texture": { "init": [0.9, 0.1, 0.1], "resolution": [4, 4] },
                                    "materials.a_b.albedo_texture": { "init": [0.1, 0.1, 0.9], "resolution": [4, 4] } },
                    "iterations": 2 } })");
    Result r = run({"--scene", (tmp / "two.json").string(), "--out", (tmp / "out").string()});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err, "adjoint: error: " + (tmp / "two.json").string() + ": optimize.parameters: "
                     "\"materials.a,b.albedo_texture\" and \"materials.a_b.albedo_texture\" would share the output "
                     "file materials.a_b.albedo_texture.png (a file's name keeps letters, digits, '.', '_' and '-' "
                     "only); rename one\n");
    EXPECT_FALSE(fs::exists(tmp / "out"));
    // Their values free (no file each): the loss.csv column alone.
    std::string text = read_file(tmp / "two.json");
    for (size_t at; (at = text.find("albedo_texture\": { \"init\"")) != std::string::npos;)
        text.replace(at, text.find('}', at) - at + 1, "albedo\": { \"init\": [0.3, 0.3, 0.3] }");
    for (size_t at; (at = text.find("{ \"albedo_texture\": ")) != std::string::npos;)
        text.replace(at, text.find('}', at) - at + 1, "{ \"albedo\": [0.5, 0.5, 0.5] }");
    write(tmp / "values.json", text);
    r = run({"--scene", (tmp / "values.json").string(), "--out", (tmp / "out").string()});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("would share the loss.csv column materials.a_b.albedo.error_relative"), std::string::npos)
        << r.err;
}

// SIGTERM in the first moments (before the guard was installed, or during the kernels' compile) killed the
// process outright, once leaving a temporary file. Now: exit 130 at any moment, no temporary file.
TEST(CliOutFolder, ASignalBeforeTheFirstIterationExits130WithNoTemporaryFile) {
    TempDir tmp;
    const fs::path scene = scene_in(tmp / "scene", 1'000'000);
    for (int delay_ms : {0, 5, 20, 60, 150, 400}) {
        const fs::path out = tmp / ("out" + std::to_string(delay_ms));
        const pid_t pid = start({"--scene", scene.string(), "--out", out.string(), "--quiet"}, tmp / "err.txt");
        EXPECT_TRUE(wait_for_handler(pid));
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        kill(pid, delay_ms % 2 ? SIGINT : SIGTERM);
        const Result r = finish(pid, tmp / "err.txt");
        EXPECT_EQ(r.code, 130) << delay_ms << " ms: " << r.err;
        EXPECT_TRUE(temporaries(out).empty()) << delay_ms << " ms";
        if (fs::exists(out / "checkpoint.bin")) {   // interrupted while iterating: the outputs are whole
            EXPECT_NO_THROW(read_checkpoint(out / "checkpoint.bin"));
            EXPECT_NO_THROW(LossLog::parse(read_file(out / "loss.csv"), "loss.csv"));
        }
    }
}

// --check-gradients and --diagnose did not look at the Ctrl-C flag: a signal was seen only when they had written
// everything (exit 0). Now a signal ends them with 130: --diagnose writing nothing, --check-gradients at most the
// rows it checked, saying so.
TEST(CliOutFolder, ASignalToTheRunsBesideAnOptimizationExits130) {
    TempDir tmp;
    const fs::path scene = scene_in(tmp / "scene", 2);
    for (const char* beside : {"--check-gradients", "--diagnose"}) {
        const fs::path out = tmp / (std::string("out") + beside);
        const pid_t pid = start({"--scene", scene.string(), "--out", out.string(), beside}, tmp / "err.txt");
        EXPECT_TRUE(wait_for_handler(pid));
        kill(pid, SIGINT);
        const Result r = finish(pid, tmp / "err.txt");
        EXPECT_EQ(r.code, 130) << beside << ": " << r.err;
        EXPECT_FALSE(fs::exists(out / "diagnose.txt")) << beside;
        if (fs::exists(out / "gradient_check.txt"))
            EXPECT_NE(read_file(out / "gradient_check.txt").find("interrupted: "), std::string::npos);
        EXPECT_TRUE(temporaries(out).empty()) << beside;
    }
}

// adjoint-render too: a signal once main has begun ends it with 130 and no file (or, when it came after the
// write, exit 0 and a whole PNG), never a kill by the signal and never a temporary file.
TEST(CliOutFolder, ASignalToAdjointRenderExits130WritingNothing) {
    TempDir tmp;
    const fs::path scene = scene_in(tmp / "scene", 2);
    int interrupted = 0;
    for (int delay_ms : {0, 10, 40, 100}) {
        const fs::path out = tmp / ("r" + std::to_string(delay_ms) + ".png");
        const pid_t pid = start({"--scene", scene.string(), "--out", out.string()}, tmp / "err.txt", kRender);
        EXPECT_TRUE(wait_for_handler(pid));
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        kill(pid, SIGTERM);
        const Result r = finish(pid, tmp / "err.txt");
        EXPECT_TRUE(r.code == 130 || r.code == 0) << delay_ms << " ms: " << r.code << " " << r.err;
        interrupted += r.code == 130;
        if (r.code == 130) EXPECT_FALSE(fs::exists(out)) << delay_ms << " ms";
        else EXPECT_NO_THROW(read_png_linear(out)) << delay_ms << " ms";
        EXPECT_TRUE(temporaries(tmp.path()).empty()) << delay_ms << " ms";
    }
    EXPECT_GT(interrupted, 0);   // at least the signal sent at once lands before the render ends
}

// --resume checked the scene's path: an edited light resumed silently, an identical copy elsewhere was refused.
TEST(CliResume, ChecksTheScenesContentAndSeedNotItsPath) {
    TempDir tmp;
    const fs::path scene = scene_in(tmp / "a", 4);
    const fs::path out = tmp / "out";
    ASSERT_EQ(run({"--scene", scene.string(), "--out", out.string(), "--seed", "7", "--quiet"}).code, 0);
    // An identical copy elsewhere resumes (and, without --seed, continues with the run's seed 7).
    const fs::path copy = scene_in(tmp / "b", 4);
    Result r = run({"--scene", copy.string(), "--out", out.string(), "--resume", "--iters", "6", "--quiet"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_checkpoint(out / "checkpoint.bin").iteration, 6u);
    r = run({"--scene", copy.string(), "--out", out.string(), "--resume", "--iters", "7", "--seed", "7", "--quiet"});
    EXPECT_EQ(r.code, 0) << r.err;
    const std::string checkpoint = bytes_of(out / "checkpoint.bin"), losses = bytes_of(out / "loss.csv");
    // Fewer iterations than the checkpoint ran (exit 0, "done", before): refused, naming the option or the
    // scene's field; as many: nothing left to run.
    r = run({"--scene", copy.string(), "--out", out.string(), "--resume", "--iters", "5"});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err, "adjoint: error: --iters: --resume: the checkpoint holds 7 iterations, more than the 5 asked for; "
                     "give --iters 7 or more to continue it\n");
    r = run({"--scene", copy.string(), "--out", out.string(), "--resume"});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err, "adjoint: error: " + copy.string() + ": optimize.iterations: --resume: the checkpoint holds "
                     "7 iterations, more than the 4 asked for; give --iters 7 or more to continue it\n");
    EXPECT_EQ(bytes_of(out / "checkpoint.bin"), checkpoint);
    r = run({"--scene", copy.string(), "--out", out.string(), "--resume", "--iters", "7", "--quiet"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_checkpoint(out / "checkpoint.bin").iteration, 7u);
    // Another --seed: refused, saying why.
    r = run({"--scene", copy.string(), "--out", out.string(), "--resume", "--iters", "9", "--seed", "8"});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err, "adjoint: error: --seed: --resume: the checkpoint's run used seed 7; a resumed run continues "
                     "its random state: leave --seed out\n");
    // An edited light: refused, the scene and the part named.
    const fs::path edited = scene_in(tmp / "c", 4, "15");
    r = run({"--scene", edited.string(), "--out", out.string(), "--resume", "--iters", "9"});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err, "adjoint: error: " + edited.string() + ": --resume: the scene differs from the one the "
                     "checkpoint in " + out.string() + " was written for (lights[0] changed); resume with that "
                     "scene, or start a new run (--force)\n");
    // A comment added or edited ("_" keys, anywhere): not an edit of the scene, the run resumes.
    std::string text = read_file(copy);
    text.replace(text.find("\"format\": 1,"), 12, "\"format\": 1, \"_about\": \"a note\",");
    text.replace(text.find("\"name\": \"key\","), 14, "\"name\": \"key\", \"_why\": [1, 2],");
    write(tmp / "b" / "commented.json", text);
    r = run({"--scene", (tmp / "b" / "commented.json").string(), "--out", out.string(), "--resume", "--iters", "8",
             "--quiet"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_checkpoint(out / "checkpoint.bin").iteration, 8u);
    // A number respelled with a fraction of 0 (14 as 14.0: one value, scene-format.md): the run resumes (it was
    // refused as "lights[0] changed").
    text.replace(text.find("\"intensity\": 14"), 15, "\"intensity\": 14.0");
    write(tmp / "b" / "respelled.json", text);
    r = run({"--scene", (tmp / "b" / "respelled.json").string(), "--out", out.string(), "--resume", "--iters", "8",
             "--quiet"});
    EXPECT_EQ(r.code, 0) << r.err;
    const std::string checkpoint8 = bytes_of(out / "checkpoint.bin"), losses8 = bytes_of(out / "loss.csv");
    // A file the scene names, edited: named too.
    std::ofstream(tmp / "b" / "ball.obj", std::ios::app) << "# edited\n";
    r = run({"--scene", copy.string(), "--out", out.string(), "--resume", "--iters", "9"});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("(file ball.obj changed)"), std::string::npos) << r.err;
    EXPECT_EQ(bytes_of(out / "checkpoint.bin"), checkpoint8);
    EXPECT_EQ(bytes_of(out / "loss.csv"), losses8);
}

// Damage under --resume exited 1; --resume at another --resolution ran and left the outputs at two iterations.
// Now each is refused before any work, exit 2, naming the file (or the option).
TEST(CliResume, DamageAndAnotherResolutionExitTwoNamingTheFile) {
    TempDir tmp;
    const fs::path scene = scene_in(tmp / "scene", 3);
    const fs::path good = tmp / "good";
    ASSERT_EQ(run({"--scene", scene.string(), "--out", good.string(), "--quiet"}).code, 0);
    int damaged = 0;
    const auto resume_with = [&](const std::string& file, const std::string& content) {
        const fs::path out = tmp / ("damaged-" + std::to_string(damaged++));
        fs::copy(good, out);
        write(out / file, content);
        return std::pair{run({"--scene", scene.string(), "--out", out.string(), "--resume", "--iters", "5"}), out / file};
    };
    const std::string rows = bytes_of(good / "loss.csv");
    for (const auto& [file, content] : std::vector<std::pair<std::string, std::string>>{
             {"checkpoint.bin", bytes_of(good / "checkpoint.bin").substr(0, 60)},
             {"loss.csv", rows + "x,y\n"},
             {"target.png", bytes_of(good / "target.png").substr(0, 50)},
             {"start.png", "not a png"}}) {
        const auto [r, path] = resume_with(file, content);
        EXPECT_EQ(r.code, 2) << file << ": " << r.err;
        // The file first, as every error names it ("--resume: <file>: ..." before).
        EXPECT_EQ(r.err.rfind("adjoint: error: " + path.string() + ": --resume: ", 0), 0u) << r.err;
        EXPECT_EQ(r.err.find(path.string(), 17), std::string::npos) << "named once: " << r.err;
        EXPECT_EQ(read_checkpoint(good / "checkpoint.bin").iteration, 3u);
    }
    // loss.csv whose rows stop short of the checkpoint.
    const std::string header = rows.substr(0, rows.find('\n') + 1);
    const auto error_cells = std::string(size_t(std::count(header.begin(), header.end(), ',')) - 4, ',');
    const auto [short_rows, csv] = resume_with("loss.csv", header + "0,1,1,,1" + error_cells + "\n");
    EXPECT_EQ(short_rows.code, 2) << short_rows.err;
    EXPECT_EQ(short_rows.err, "adjoint: error: " + csv.string() +
                                  ": --resume: its rows end at iteration 0 but the checkpoint's last is iteration 2 "
                                  "(rows count from 0)\n");
    // loss.csv without the error columns of the scene's free parameters (an older version's): refused.
    const auto [old_header, old_csv] = resume_with("loss.csv", "iteration,loss,image_psnr,param_error,ms\n0,1,1,,1\n");
    EXPECT_EQ(old_header.code, 2) << old_header.err;
    EXPECT_EQ(old_header.err, "adjoint: error: " + old_csv.string() +
                                  ": --resume: its error columns are not one per free parameter of this scene (written "
                                  "by another version or for other parameters)\n");
    // Another resolution: refused, nothing changed.
    const std::string checkpoint = bytes_of(good / "checkpoint.bin"), losses = bytes_of(good / "loss.csv");
    const Result r = run({"--scene", scene.string(), "--out", good.string(), "--resume", "--resolution", "24x24"});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err, "adjoint: error: --resolution: --resume: the checkpoint's run renders at 16x16, not 24x24; "
                     "resume it at its own resolution\n");
    EXPECT_EQ(bytes_of(good / "checkpoint.bin"), checkpoint);
    EXPECT_EQ(bytes_of(good / "loss.csv"), losses);
    // No checkpoint at all: exit 2 naming where it was looked for, no folder made.
    const Result none = run({"--scene", scene.string(), "--out", (tmp / "none").string(), "--resume"});
    EXPECT_EQ(none.code, 2) << none.err;
    EXPECT_EQ(none.err, "adjoint: error: " + (tmp / "none" / "checkpoint.bin").string() +
                            ": --resume: there is no checkpoint to resume from\n");
    EXPECT_FALSE(fs::exists(tmp / "none"));
}

} // namespace adjoint::app::test
