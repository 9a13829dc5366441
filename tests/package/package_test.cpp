// The installed package: cmake --install, then tests/package/consumer built with find_package(Adjoint) and run;
// and engine/docs/quick-start.md's CMakeLists.txt and examples built against it and run.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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

// cmake --install of this build into a fresh `prefix`.
void install_into(const fs::path& prefix) {
    fs::remove_all(prefix);
    auto install = run(quote(ADJOINT_CMAKE_COMMAND) + " --install " + quote(ADJOINT_BINARY_DIR) + " --prefix " + quote(prefix));
    ASSERT_EQ(install.status, 0) << install.output;
}

std::string read_text(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

struct Fenced {
    std::string language, text;
};

// Every fenced block of a markdown text, in order.
std::vector<Fenced> fenced_blocks(const std::string& markdown) {
    std::vector<Fenced> blocks;
    std::istringstream in(markdown);
    std::string line;
    bool open = false;
    while (std::getline(in, line)) {
        if (line.rfind("```", 0) == 0) {
            if (!open) blocks.push_back({line.substr(3), ""});
            open = !open;
        } else if (open) {
            blocks.back().text += line + "\n";
        }
    }
    return blocks;
}

// The quick start's examples as one program: each example's includes hoisted, the rest in a namespace of its
// own (its `int main()` is then an ordinary function), and a main that runs them in order, each after a line
// "== example <i>".
std::string examples_program(const std::vector<std::string>& examples) {
    std::string includes = "#include <cstdio>\n#include <exception>\n", bodies, runner;
    for (size_t i = 0; i < examples.size(); ++i) {
        std::istringstream in(examples[i]);
        std::string line, body;
        while (std::getline(in, line)) {
            if (line.rfind("#include", 0) == 0) {
                if (includes.find(line + "\n") == std::string::npos) includes += line + "\n";
            } else {
                body += line + "\n";
            }
        }
        const std::string name = "quick_start_example_" + std::to_string(i + 1);
        bodies += "namespace " + name + " {\n" + body + "} // namespace " + name + "\n\n";
        runner += "    std::printf(\"== example " + std::to_string(i + 1) + "\\n\");\n    std::fflush(stdout);\n"
                  "    try {\n        if (int code = " + name + "::main(); code != 0) return code;\n"
                  "    } catch (const std::exception& e) {\n        std::printf(\"%s\\n\", e.what());\n        return 1;\n    }\n"
                  "    std::fflush(stdout);\n";
    }
    return includes + "\n" + bodies + "int main() {\n" + runner + "    return 0;\n}\n";
}

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

// engine/docs/quick-start.md: its CMakeLists.txt (find_package(Adjoint COMPONENTS engine)) configured with the
// renderer's dependencies hidden from CMake, its ```cpp examples built as one program by it, and what each
// prints compared with the ```text block that follows it on the page.
TEST(Package, QuickStartExamplesBuildAndRun) {
    const fs::path work = fs::path(ADJOINT_BINARY_DIR) / "quick-start-test";
    const fs::path prefix = work / "prefix", project = work / "project", build = work / "build";
    fs::remove_all(work);
    fs::create_directories(project);
    ASSERT_NO_FATAL_FAILURE(install_into(prefix));

    const std::vector<Fenced> blocks = fenced_blocks(read_text(fs::path(ADJOINT_SOURCE_DIR) / "engine" / "docs" / "quick-start.md"));
    std::string cmakelists;
    std::vector<std::string> examples, expected;
    for (size_t i = 0; i < blocks.size(); ++i) {
        if (blocks[i].language == "cmake") {
            EXPECT_TRUE(cmakelists.empty()) << "one CMakeLists.txt on the page";
            cmakelists = blocks[i].text;
        } else if (blocks[i].language == "cpp") {
            examples.push_back(blocks[i].text);
            const bool has_output = i + 1 < blocks.size() && blocks[i + 1].language == "text";
            EXPECT_TRUE(has_output) << "example " << examples.size() << " has no ```text block after it";
            expected.push_back(has_output ? blocks[i + 1].text : "");
        }
    }
    EXPECT_NE(cmakelists.find("find_package(Adjoint REQUIRED COMPONENTS engine)"), std::string::npos) << cmakelists;
    ASSERT_GE(examples.size(), 3u);
    for (const char* shown : {"Kernel1D", "Kernel2D", "Callable", "$autodiff", "make_float2", "dispatch_size()",
                              "create_buffer"}) {
        bool found = false;
        for (const std::string& e : examples) found = found || e.find(shown) != std::string::npos;
        EXPECT_TRUE(found) << "no example uses " << shown;
    }
    std::ofstream(project / "CMakeLists.txt") << cmakelists;
    std::ofstream(project / "main.cpp") << examples_program(examples);

    // The renderer's packages hidden: the engine component must not look for any of them.
    std::string hidden;
    for (const char* package : {"nlohmann_json", "tinyobjloader", "TinyGLTF", "CLI11", "OpenEXR"})
        hidden += std::string(" -DCMAKE_DISABLE_FIND_PACKAGE_") + package + "=ON";
    const std::string cmake = quote(ADJOINT_CMAKE_COMMAND);
    const std::string configure_args = " -DCMAKE_PREFIX_PATH=" + quote(prefix) + " -DCMAKE_CXX_COMPILER=" +
                                       quote(ADJOINT_CXX_COMPILER) + " -DCMAKE_BUILD_TYPE=Debug" + hidden;
    auto configure = run(cmake + " -S " + quote(project) + " -B " + quote(build) + configure_args);
    ASSERT_EQ(configure.status, 0) << configure.output;
    // ... which bites: asking for the renderer too fails with the same packages hidden.
    if (fs::exists(prefix / "include" / "adjoint" / "app")) {
        const fs::path both = work / "both";
        fs::create_directories(both);
        std::string with_renderer = cmakelists;
        with_renderer.replace(with_renderer.find("COMPONENTS engine"), 17, "COMPONENTS engine renderer");
        std::ofstream(both / "CMakeLists.txt") << with_renderer;
        std::ofstream(both / "main.cpp") << "int main() { return 0; }\n";
        auto refused = run(cmake + " -S " + quote(both) + " -B " + quote(work / "both-build") + configure_args);
        EXPECT_NE(refused.status, 0) << refused.output;
        EXPECT_NE(refused.output.find("nlohmann_json"), std::string::npos) << refused.output;
    }

    auto compile = run(cmake + " --build " + quote(build) + " -j2");
    ASSERT_EQ(compile.status, 0) << compile.output;
    // stdout alone: lavapipe may say things on stderr.
    auto program = run("(" + quote(build / "quick-start") + " 2>" + quote(work / "stderr.txt") + ")");
    ASSERT_EQ(program.status, 0) << program.output << read_text(work / "stderr.txt");
    std::string want;
    for (size_t i = 0; i < expected.size(); ++i) want += "== example " + std::to_string(i + 1) + "\n" + expected[i];
    EXPECT_EQ(program.output, want) << read_text(work / "stderr.txt");
}
