// Tests for the GLSL -> SPIR-V compiler, its content-addressed cache and kernel dumps.
#include "compile/glsl_compiler.h"

#include <adjoint/core/error.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
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

TEST_F(CompileTest, CacheEntryRoundTripsAndRefusesEveryDamage) {
    const std::string key = "0123456789abcdef";
    std::vector<uint32_t> spirv = compile_glsl(kValid, "k", false);
    const std::string entry = encode_cache_entry(key, spirv);
    ASSERT_EQ(entry.size(), 20 + spirv.size() * 4);
    EXPECT_EQ(decode_cache_entry(key, entry), spirv);

    auto refused = [&](std::string bytes, const char* what) {
        EXPECT_FALSE(decode_cache_entry(key, bytes).has_value()) << what;
    };
    refused(entry.substr(0, entry.size() - 4), "tail cut by a word");
    refused(entry.substr(0, entry.size() - 3), "tail cut by 3 bytes");
    refused(entry + std::string(4, '\0'), "a word too many");
    refused("", "zero length");
    refused(entry.substr(0, 20), "header alone");
    for (size_t at : {size_t(0), size_t(8), size_t(16), size_t(20), entry.size() / 2, entry.size() - 1}) {
        std::string flipped = entry;
        flipped[at] ^= 0x01;
        refused(flipped, ("bit flipped at byte " + std::to_string(at)).c_str());
    }
    // Plain SPIR-V (the magic number first, as the old cache wrote it) and SPIR-V's magic with garbage.
    refused(entry.substr(20), "plain SPIR-V");
    std::string garbage = entry;
    for (size_t i = 24; i < garbage.size(); ++i) garbage[i] = char(i * 31);
    refused(garbage, "the header and SPIR-V's magic, then garbage");
    // A whole entry of another key (a file copied under the wrong name).
    EXPECT_FALSE(decode_cache_entry("fedcba9876543210", entry).has_value());
}

TEST_F(CompileTest, DamagedDiskEntriesAreRecompiledAndRewritten) {
    CompileOptions opts{true, "dev"};
    ShaderCache writer(cache_dir_);
    const CompileResult good = writer.compile(kValid, "k", opts);
    const fs::path file = cache_dir_ / (good.cache_key + ".spv");
    const std::string whole = read_text(file);
    EXPECT_EQ(decode_cache_entry(good.cache_key, whole), good.spirv);

    std::string flipped = whole;
    flipped[whole.size() / 2] ^= 0x40;
    std::string magic_garbage = whole.substr(20);
    for (size_t i = 4; i < magic_garbage.size(); ++i) magic_garbage[i] = char(i);
    for (const auto& [what, bytes] : std::vector<std::pair<std::string, std::string>>{
             {"cut tail", whole.substr(0, whole.size() - 8)},
             {"flipped byte", flipped},
             {"zero length", ""},
             {"SPIR-V magic then garbage", magic_garbage}}) {
        { std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes; }
        ShaderCache cache(cache_dir_);
        CompileResult r = cache.compile(kValid, "k", opts);
        EXPECT_FALSE(r.cache_hit) << what;
        EXPECT_EQ(r.spirv, good.spirv) << what;
        EXPECT_EQ(cache.misses(), 1u) << what;
        EXPECT_EQ(cache.damaged(), 1u) << what;
        EXPECT_EQ(read_text(file), whole) << what << ": rewritten whole";
        ShaderCache next(cache_dir_);
        EXPECT_TRUE(next.compile(kValid, "k", opts).cache_hit) << what;
        EXPECT_EQ(next.damaged(), 0u) << what;
    }
}

TEST_F(CompileTest, MemoryCacheIsBounded) {
    ShaderCache cache(cache_dir_);
    EXPECT_EQ(ShaderCache::kDefaultMemoryEntries, 256u);
    cache.set_memory_capacity(2);
    // Three sources differing in a constant: three entries, of which memory keeps the last two.
    std::vector<std::string> sources;
    for (int c = 0; c < 3; ++c) {
        std::string src = kValid;
        src.replace(src.find("1.0"), 3, std::to_string(c) + ".5");
        sources.push_back(src);
        EXPECT_FALSE(cache.compile(src, "k", {}).cache_hit);
        EXPECT_LE(cache.memory_size(), 2u);
    }
    EXPECT_EQ(cache.memory_size(), 2u);
    // The first one is no longer in memory, but the disk still has it.
    EXPECT_TRUE(cache.compile(sources[0], "k", {}).cache_hit);
    EXPECT_EQ(cache.misses(), 3u);
    cache.clear_memory();
    EXPECT_EQ(cache.memory_size(), 0u);
}

TEST(LruCache, ForgetsTheLeastRecentlyUsedFirst) {
    LruCache<int, int> lru(3);
    lru.put(1, 10);
    lru.put(2, 20);
    lru.put(3, 30);
    EXPECT_EQ(lru.get(1), 10);   // 1 is now the most recent; 2 the least
    lru.put(4, 40);
    EXPECT_FALSE(lru.get(2).has_value());
    EXPECT_EQ(lru.get(3), 30);
    EXPECT_EQ(lru.get(4), 40);
    lru.put(1, 11);              // replacing keeps the size
    EXPECT_EQ(lru.size(), 3u);
    EXPECT_EQ(lru.get(1), 11);
    lru.set_capacity(1);         // keeps only the most recent (1)
    EXPECT_EQ(lru.size(), 1u);
    EXPECT_EQ(lru.get(1), 11);
    lru.set_capacity(0);
    lru.put(5, 50);
    EXPECT_EQ(lru.size(), 0u);
}

TEST_F(CompileTest, OneCacheServesSeveralThreads) {
    // Four threads compile overlapping sets of sources through one cache; every result is the right module.
    ShaderCache cache(cache_dir_);
    std::vector<std::string> sources;
    std::vector<std::vector<uint32_t>> want;
    for (int c = 0; c < 6; ++c) {
        std::string src = kValid;
        src.replace(src.find("1.0"), 3, std::to_string(c) + ".25");
        sources.push_back(src);
        want.push_back(compile_glsl(src, "k", true));
    }
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int round = 0; round < 3; ++round)
                for (size_t i = 0; i < sources.size(); ++i) {
                    size_t j = (i + t) % sources.size();
                    if (cache.compile(sources[j], "k", {}).spirv != want[j]) ++wrong;
                }
        });
    for (auto& th : threads) th.join();
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(cache.hits() + cache.misses(), 4u * 3u * 6u);
    EXPECT_GE(cache.misses(), 6u);
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
