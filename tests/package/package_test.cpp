// The installed package: cmake --install, then tests/package/consumer built with find_package(Adjoint) and run.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace {

namespace fs = std::filesystem;

struct Result {
    int status = -1;
    std::string output;   // stdout and stderr together
};

// Runs a shell command line and captures what it prints.
Result run(const std::string& command) {
    Result r;
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (!pipe) return r;
    std::array<char, 4096> buf{};
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
    r.status = pclose(pipe);
    return r;
}

std::string quote(const fs::path& p) { return "'" + p.string() + "'"; }

} // namespace

TEST(Package, FindPackageConsumerBuildsAndRuns) {
    const fs::path binary_dir = ADJOINT_BINARY_DIR;
    const fs::path work = binary_dir / "package-test";
    const fs::path prefix = work / "prefix";
    const fs::path build = work / "consumer-build";
    const fs::path consumer = fs::path(ADJOINT_SOURCE_DIR) / "tests" / "package" / "consumer";
    const std::string cmake = quote(ADJOINT_CMAKE_COMMAND);
    // A fresh prefix and build each time: a stale one could hide a missing file or dependency.
    fs::remove_all(work);
    fs::create_directories(work);

    auto install = run(cmake + " --install " + quote(binary_dir) + " --prefix " + quote(prefix));
    ASSERT_EQ(install.status, 0) << install.output;
    EXPECT_TRUE(fs::exists(prefix / "include" / "adjoint" / "adjoint.h")) << install.output;
    EXPECT_TRUE(fs::exists(prefix / "lib" / "cmake" / "Adjoint" / "AdjointConfig.cmake") ||
                fs::exists(prefix / "lib64" / "cmake" / "Adjoint" / "AdjointConfig.cmake"))
        << install.output;

    // Only the installed prefix is on the search path: nothing from this build tree may leak in.
    auto configure = run(cmake + " -S " + quote(consumer) + " -B " + quote(build) + " -DCMAKE_PREFIX_PATH=" +
                         quote(prefix) + " -DCMAKE_CXX_COMPILER=" + quote(ADJOINT_CXX_COMPILER) +
                         " -DCMAKE_BUILD_TYPE=Debug");
    ASSERT_EQ(configure.status, 0) << configure.output;

    auto compile = run(cmake + " --build " + quote(build) + " -j2");
    ASSERT_EQ(compile.status, 0) << compile.output;

    auto program = run(quote(build / "adjoint-consumer"));
    ASSERT_EQ(program.status, 0) << program.output;
    // |(3,4,0)| * 1 * 10 + 1, |(0,0,2)| * 2 * 10 + 1, |(1,2,2)| * 3 * 10 + 1.
    EXPECT_NE(program.output.find("adjoint-consumer: 51 41 91 (validation messages: 0)"), std::string::npos)
        << program.output;

    // The renderer library through the same package: a short texture recovery must lower the loss.
    const fs::path optimize = build / "adjoint-consumer-optimize";
    ASSERT_TRUE(fs::exists(optimize)) << "the installed package has no Adjoint::renderer";
    auto run_opt = run(quote(optimize) + " " +
                       quote(fs::path(ADJOINT_SOURCE_DIR) / "assets" / "scenes" / "texture.json"));
    ASSERT_EQ(run_opt.status, 0) << run_opt.output;
    EXPECT_NE(run_opt.output.find("30 iterations, loss fell yes"), std::string::npos) << run_opt.output;
}
