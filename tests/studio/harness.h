// The studio tests' shared harness: running adjoint-studio (under xvfb-run) in a fresh folder, and reading its
// screenshots back.
#pragma once
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <stb_image.h>

#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace studio_test {

namespace fs = std::filesystem;

inline const fs::path kSource = ADJOINT_SOURCE_DIR;
inline const fs::path kStudio = ADJOINT_STUDIO_PATH;

struct Result {
    int code = -1;
    std::string out, err;
};

inline std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

inline fs::path fresh_dir(const std::string& name) {
    fs::path d = fs::path(ADJOINT_BINARY_DIR) / "studio-test" / name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

// The sanitizer build's tests run with the ASan runtime (and lavapipe) preloaded (ADJOINT_SANITIZE in the
// top-level CMakeLists.txt). The programs on the way to the studio would inherit the preload: xvfb-run's
// mktemp and xauth then leak under LeakSanitizer at exit and end with 1 (mktemp's report unseen: it has
// closed its stderr), and so does xvfb-run, before the studio starts. So this process's preload is taken off
// its environment, and given back to the studio alone.
inline const std::string& studio_preload() {
    static const std::string preload = [] {
        const char* p = std::getenv("LD_PRELOAD");
        std::string s = p ? p : "";
        unsetenv("LD_PRELOAD");
        return s;
    }();
    return preload;
}

// Runs `prefix studio args` in `dir` through the shell; prefix sets the environment (and xvfb-run), `args`
// include the test hooks (--test-*). The code is the studio's own, written by the script that runs it: xvfb-run
// exits with 5 when its cleanup fails ("problem while cleaning up temporary directory", seen twice in the
// sanitizer job's full runs), which says nothing of the studio; its messages stay in `err`.
inline Result run(const fs::path& dir, const std::string& prefix, const std::string& args) {
    const std::string& preload = studio_preload();
    const std::string studio =
        (preload.empty() ? "" : "env LD_PRELOAD='" + preload + "' ") + "'" + kStudio.string() + "'";
    fs::remove(dir / "studio_exit.txt");
    std::ofstream(dir / "run_studio.sh") << studio << " " << args << "\necho $? > studio_exit.txt\n";
    const std::string cmd = "cd '" + dir.string() + "' && " + prefix + " sh ./run_studio.sh > stdout.txt 2> stderr.txt";
    int status = std::system(cmd.c_str());
    Result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (const std::string code = read_text(dir / "studio_exit.txt"); !code.empty()) r.code = std::stoi(code);
    r.out = read_text(dir / "stdout.txt");
    r.err = read_text(dir / "stderr.txt");
    return r;
}

inline std::string xvfb(const std::string& env) {
    return env + " xvfb-run -a -s '-screen 0 1280x800x24'";
}

struct Picture {
    int width = 0, height = 0;
    std::vector<uint8_t> rgb;
    const uint8_t* at(int x, int y) const { return &rgb[(size_t(y) * size_t(width) + size_t(x)) * 3]; }
};

inline Picture read_png(const fs::path& p) {
    Picture pic;
    int n = 0;
    unsigned char* data = stbi_load(p.string().c_str(), &pic.width, &pic.height, &n, 3);
    if (!data) {
        ADD_FAILURE() << "cannot read " << p;
        return pic;
    }
    pic.rgb.assign(data, data + size_t(pic.width) * size_t(pic.height) * 3);
    stbi_image_free(data);
    return pic;
}

// A panel of the screenshot as its own picture.
inline Picture crop(const Picture& shot, const nlohmann::json& rect) {
    const int x0 = int(rect[0].get<double>()), y0 = int(rect[1].get<double>());
    const int x1 = int(rect[2].get<double>()), y1 = int(rect[3].get<double>());
    Picture p;
    p.width = x1 - x0;
    p.height = y1 - y0;
    for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x) p.rgb.insert(p.rgb.end(), shot.at(x, y), shot.at(x, y) + 3);
    return p;
}

inline double luminance(const uint8_t* c) { return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]; }

inline double stddev_luminance(const Picture& p) {
    double s = 0, s2 = 0;
    const double n = double(p.width) * p.height;
    for (int y = 0; y < p.height; ++y)
        for (int x = 0; x < p.width; ++x) {
            double l = luminance(p.at(x, y));
            s += l;
            s2 += l * l;
        }
    return std::sqrt(std::max(s2 / n - (s / n) * (s / n), 0.0));
}

// Share of pixels whose channels all agree within `tolerance` levels.
inline double share_equal(const Picture& a, const Picture& b, int tolerance) {
    if (a.width != b.width || a.height != b.height) return 0;
    size_t ok = 0;
    for (size_t i = 0; i < a.rgb.size(); i += 3) {
        bool same = true;
        for (int c = 0; c < 3; ++c) same = same && std::abs(int(a.rgb[i + c]) - int(b.rgb[i + c])) <= tolerance;
        ok += same;
    }
    return double(ok) / double(a.rgb.size() / 3);
}

} // namespace studio_test
