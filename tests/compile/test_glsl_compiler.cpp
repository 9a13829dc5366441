// Tests for the GLSL -> SPIR-V compiler, its content-addressed cache and kernel dumps.
#include "compile/glsl_compiler.h"

#include <adjoint/core/error.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace adjoint::compile;

namespace {

constexpr const char* kValid = R"(#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { float v[]; } data;
void main() { uint i = gl_GlobalInvocationID.x; data.v[i] = data.v[i] * 2.0 + 1.0; }
)";

// Undeclared identifier: glslang reports "'undeclared_thing' : undeclared identifier".
constexpr const char* kInvalid = R"(#version 450
layout(local_size_x = 1) in;
void main() { float x = undeclared_thing; }
)";

std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Every test gets its own folder and its own view of the environment, so nothing leaks into the user's
// home cache or between tests.
class CompileTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::random_device rd;
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        tmp_ = fs::temp_directory_path() /
               ("adjoint-test-" + std::string(info->name()) + "-" + std::to_string(::getpid()) + "-" +
                std::to_string(rd()));
        fs::create_directories(tmp_);
        cache_dir_ = tmp_ / "cache";
        dump_dir_ = tmp_ / "dump";
        setenv("ADJOINT_DUMP_DIR", dump_dir_.c_str(), 1);
    }
    void TearDown() override {
        unsetenv("ADJOINT_DUMP_DIR");
        std::error_code ec;
        fs::remove_all(tmp_, ec);
    }
    fs::path tmp_, cache_dir_, dump_dir_;
};

} // namespace

TEST_F(CompileTest, ValidShaderCompilesToSpirv) {
    for (bool optimize : {false, true}) {
        auto spirv = compile_glsl(kValid, "double_plus_one", optimize);
        ASSERT_GE(spirv.size(), 5u);
        EXPECT_EQ(spirv[0], 0x07230203u);
        EXPECT_EQ(spirv[1], 0x00010300u) << "expected SPIR-V 1.3";
    }
}

TEST_F(CompileTest, AtomicFloatAddCompiles) {
    constexpr const char* src = R"(#version 450
#extension GL_EXT_shader_atomic_float : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Acc { float sum[]; } acc;
void main() { atomicAdd(acc.sum[0], 1.5); }
)";
    auto spirv = compile_glsl(src, "atomic_sum", true);
    ASSERT_GE(spirv.size(), 5u);
    EXPECT_EQ(spirv[0], 0x07230203u);
}

TEST_F(CompileTest, InvalidShaderThrowsWithLogAndWritesSource) {
    try {
        compile_glsl(kInvalid, "broken/kernel", false);
        FAIL() << "expected adjoint::Error";
    } catch (const adjoint::Error& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("'broken/kernel'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("undeclared identifier"), std::string::npos) << msg;
        EXPECT_NE(msg.find("source written to"), std::string::npos) << msg;
        fs::path file = dump_dir_ / "broken_kernel.glsl";
        EXPECT_NE(msg.find(file.string()), std::string::npos) << msg;
        ASSERT_TRUE(fs::exists(file));
        EXPECT_EQ(read_text(file), kInvalid);
    }
}

TEST_F(CompileTest, CompilerVersionNamesGlslang) {
    EXPECT_EQ(compiler_version().rfind("glslang ", 0), 0u) << compiler_version();
}

TEST_F(CompileTest, CacheMissThenMemoryHit) {
    ShaderCache cache(cache_dir_);
    CompileOptions opts{true, "test-device"};
    auto first = cache.compile(kValid, "k", opts);
    EXPECT_FALSE(first.cache_hit);
    EXPECT_EQ(first.cache_key.size(), 16u);
    EXPECT_EQ(cache.misses(), 1u);
    EXPECT_TRUE(fs::exists(cache_dir_ / (first.cache_key + ".spv")));

    auto second = cache.compile(kValid, "k", opts);
    EXPECT_TRUE(second.cache_hit);
    EXPECT_EQ(second.cache_key, first.cache_key);
    EXPECT_EQ(second.spirv, first.spirv);
    EXPECT_EQ(cache.hits(), 1u);
    EXPECT_EQ(cache.misses(), 1u);

    // Only the final file remains: the temporary written before the rename is gone.
    int files = 0;
    for (const auto& entry : fs::directory_iterator(cache_dir_)) {
        ++files;
        EXPECT_EQ(entry.path().extension(), ".spv") << entry.path();
    }
    EXPECT_EQ(files, 1);
}

TEST_F(CompileTest, CacheHitsFromDisk) {
    CompileOptions opts{false, "dev"};
    ShaderCache cache(cache_dir_);
    auto first = cache.compile(kValid, "k", opts);
    ASSERT_FALSE(first.cache_hit);

    cache.clear_memory();
    auto again = cache.compile(kValid, "k", opts);
    EXPECT_TRUE(again.cache_hit);
    EXPECT_EQ(again.spirv, first.spirv);

    ShaderCache fresh(cache_dir_);
    auto other = fresh.compile(kValid, "k", opts);
    EXPECT_TRUE(other.cache_hit);
    EXPECT_EQ(other.spirv, first.spirv);
    EXPECT_EQ(fresh.hits(), 1u);
    EXPECT_EQ(fresh.misses(), 0u);
}

TEST_F(CompileTest, DifferentDeviceOrOptimizeMisses) {
    ShaderCache cache(cache_dir_);
    auto a = cache.compile(kValid, "k", {true, "device-a"});
    auto b = cache.compile(kValid, "k", {true, "device-b"});
    auto c = cache.compile(kValid, "k", {false, "device-a"});
    EXPECT_FALSE(b.cache_hit);
    EXPECT_FALSE(c.cache_hit);
    EXPECT_NE(a.cache_key, b.cache_key);
    EXPECT_NE(a.cache_key, c.cache_key);
    EXPECT_NE(b.cache_key, c.cache_key);
    EXPECT_EQ(cache.misses(), 3u);
    EXPECT_EQ(cache.hits(), 0u);
}

TEST_F(CompileTest, CorruptCacheFileIsRecompiled) {
    CompileOptions opts{true, "dev"};
    std::string key = ShaderCache(cache_dir_).compile(kValid, "k", opts).cache_key;
    fs::path file = cache_dir_ / (key + ".spv");

    // A size that is not a multiple of 4, then a right size with the wrong magic number.
    for (std::string garbage : {std::string("torn!"), std::string(64, 'x')}) {
        { std::ofstream(file, std::ios::binary | std::ios::trunc) << garbage; }
        ShaderCache cache(cache_dir_);
        auto r = cache.compile(kValid, "k", opts);
        EXPECT_FALSE(r.cache_hit);
        EXPECT_EQ(cache.misses(), 1u);
        ASSERT_GE(r.spirv.size(), 5u);
        EXPECT_EQ(r.spirv[0], 0x07230203u);
        // The bad file was replaced by a good one, so the next process hits.
        EXPECT_TRUE(ShaderCache(cache_dir_).compile(kValid, "k", opts).cache_hit);
    }
}

TEST_F(CompileTest, UnwritableCacheDirFallsBackToMemory) {
    // A regular file where the folder should be: creating the folder fails even when running as root.
    fs::path blocker = tmp_ / "not-a-dir";
    { std::ofstream(blocker) << "x"; }
    ShaderCache cache(blocker / "cache");
    auto first = cache.compile(kValid, "k", {});
    EXPECT_FALSE(first.cache_hit);
    EXPECT_EQ(first.spirv[0], 0x07230203u);
    EXPECT_TRUE(cache.compile(kValid, "k", {}).cache_hit);
}

TEST_F(CompileTest, DefaultDirFollowsEnvironment) {
    const char* saved = std::getenv("ADJOINT_CACHE_DIR");
    std::string saved_value = saved ? saved : "";

    setenv("ADJOINT_CACHE_DIR", cache_dir_.c_str(), 1);
    EXPECT_EQ(ShaderCache::default_dir(), cache_dir_);
    EXPECT_EQ(ShaderCache().dir(), cache_dir_);

    // "off" keeps the memory cache but never touches the disk.
    setenv("ADJOINT_CACHE_DIR", "off", 1);
    ShaderCache off;
    EXPECT_TRUE(off.dir().empty());
    EXPECT_FALSE(off.compile(kValid, "k", {}).cache_hit);
    EXPECT_TRUE(off.compile(kValid, "k", {}).cache_hit);

    unsetenv("ADJOINT_CACHE_DIR");
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    if (xdg && *xdg) {
        EXPECT_EQ(ShaderCache::default_dir(), fs::path(xdg) / "adjoint");
    } else if (home && *home) {
        EXPECT_EQ(ShaderCache::default_dir(), fs::path(home) / ".cache" / "adjoint");
    }

    if (saved) setenv("ADJOINT_CACHE_DIR", saved_value.c_str(), 1);
}

TEST_F(CompileTest, DumpKernelWritesBothFiles) {
    fs::path dir = dump_kernel("my kernel:1", "%0 = const 1.0\n", kValid);
    ASSERT_EQ(dir, dump_dir_);
    EXPECT_EQ(read_text(dir / "my_kernel_1.ir.txt"), "%0 = const 1.0\n");
    EXPECT_EQ(read_text(dir / "my_kernel_1.glsl"), kValid);
}

TEST_F(CompileTest, DumpKernelOffWhenUnset) {
    unsetenv("ADJOINT_DUMP_DIR");
    EXPECT_TRUE(dump_kernel("k", "ir", kValid).empty());
    EXPECT_FALSE(fs::exists(dump_dir_));
}
