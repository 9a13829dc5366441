// The device's kernel cache (bounded, clearable, shaders outlive it) and damaged SPIR-V disk-cache entries.
#include "support/device_fixture.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace adjoint::test {

namespace fs = std::filesystem;

namespace {

// Sets an environment variable for the life of the object (devices read theirs when created).
class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::string& value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv() {
        if (old_) setenv(name_, old_->c_str(), 1);
        else unsetenv(name_);
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

// A device of its own, so the shared device's caches are left alone; validation messages fail the test.
class OwnDevice : public ::testing::Test {
protected:
    void TearDown() override {
        if (!device) return;
        auto messages = device->validation_messages();
        EXPECT_EQ(device->validation_message_count(), 0u) << (messages.empty() ? "" : messages.front());
    }
    Context ctx;
    std::optional<Device> device;
};

// One kernel per value of c: the constant makes the recorded IR, and so the cache key, differ.
Kernel1D<void(BufferFloat)> add_kernel(float c) {
    return [c](BufferFloat x) noexcept {
        auto i = dispatch_id().x;
        x.write(i, x.read(i) * 2.0f + c);
    };
}

// Runs the shader on {0, 1, 2, 3} and returns the results.
std::vector<float> run(Device& device, const Shader<1>& shader) {
    Stream stream = device.create_stream();
    std::vector<float> host{0, 1, 2, 3}, got(4);
    auto buf = device.create_buffer<float>(4);
    stream << buf.copy_from(host.data()) << shader(buf).dispatch(4) << buf.copy_to(got.data()) << synchronize();
    return got;
}

std::vector<float> expected(float c) { return {c, 2 + c, 4 + c, 6 + c}; }

} // namespace

class KernelCache : public OwnDevice {};

TEST_F(KernelCache, StaysWithinItsCapacityAndEvictedKernelsRecompile) {
    ScopedEnv no_disk("ADJOINT_CACHE_DIR", "off");   // every compile that misses the memory caches is a real one
    device.emplace(ctx.create_device());
    EXPECT_EQ(device->kernel_cache_capacity(), Device::kDefaultKernelCacheCapacity);
    device->set_kernel_cache_capacity(4);
    EXPECT_EQ(device->kernel_cache_capacity(), 4u);

    auto first_kernel = add_kernel(100);
    Shader<1> first = device->compile(first_kernel);
    EXPECT_FALSE(first.cache_hit());
    for (int c = 0; c < 10; ++c) {
        Shader<1> s = device->compile(add_kernel(float(c)));
        EXPECT_LE(device->kernel_cache_size(), 4u);
        EXPECT_EQ(run(*device, s), expected(float(c))) << c;
    }
    EXPECT_EQ(device->kernel_cache_size(), 4u);
    EXPECT_EQ(device->cache_misses(), 11u);

    // The first kernel was forgotten long ago; its shader still runs, and compiling it again compiles.
    EXPECT_EQ(run(*device, first), expected(100));
    Shader<1> again = device->compile(first_kernel);
    EXPECT_FALSE(again.cache_hit());
    EXPECT_EQ(device->cache_misses(), 12u);
    EXPECT_EQ(run(*device, again), expected(100));
    // Now it is the most recently used: compiling it once more reuses it.
    Shader<1> reused = device->compile(first_kernel);
    EXPECT_TRUE(reused.cache_hit());
    EXPECT_EQ(device->cache_misses(), 12u);
    EXPECT_EQ(device->kernel_cache_size(), 4u);
}

TEST_F(KernelCache, ClearForgetsEverythingAndShadersStayValid) {
    ScopedEnv no_disk("ADJOINT_CACHE_DIR", "off");
    device.emplace(ctx.create_device());
    auto kernel = add_kernel(7);
    Shader<1> shader = device->compile(kernel);
    EXPECT_EQ(device->kernel_cache_size(), 1u);
    // A dispatch recorded before the clear runs after it: the stream keeps its kernel (held by nothing else)
    // alive until the submission is done.
    Stream stream = device->create_stream();
    std::vector<float> host{0, 1, 2, 3}, got(4);
    auto buf = device->create_buffer<float>(4);
    stream << buf.copy_from(host.data()) << device->compile(add_kernel(8))(buf).dispatch(4);
    EXPECT_EQ(device->kernel_cache_size(), 2u);
    device->clear_kernel_cache();
    EXPECT_EQ(device->kernel_cache_size(), 0u);
    stream << buf.copy_to(got.data()) << synchronize();
    EXPECT_EQ(got, expected(8));
    EXPECT_EQ(run(*device, shader), expected(7));
    Shader<1> recompiled = device->compile(kernel);
    EXPECT_FALSE(recompiled.cache_hit());
    EXPECT_EQ(run(*device, recompiled), expected(7));
    // Capacity 0 keeps nothing, and compiling still works.
    device->set_kernel_cache_capacity(0);
    EXPECT_EQ(device->kernel_cache_size(), 0u);
    EXPECT_EQ(run(*device, device->compile(kernel)), expected(7));
    EXPECT_EQ(device->kernel_cache_size(), 0u);
}

// ---- Damaged disk-cache entries ---------------------------------------------------------------------

class DamagedCache : public OwnDevice {
protected:
    void SetUp() override {
        dir = fs::temp_directory_path() / ("adjoint-damaged-cache-" + std::to_string(::getpid()));
        fs::remove_all(dir);
        env.emplace("ADJOINT_CACHE_DIR", dir.string());
        device.emplace(ctx.create_device());
    }
    void TearDown() override {
        OwnDevice::TearDown();
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    fs::path only_entry() {
        std::vector<fs::path> files;
        for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
        EXPECT_EQ(files.size(), 1u);
        return files.empty() ? fs::path() : files.front();
    }
    static std::string read(const fs::path& p) {
        std::ifstream in(p, std::ios::binary);
        return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }
    static void write(const fs::path& p, const std::string& bytes) {
        std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
    }
    fs::path dir;
    std::optional<ScopedEnv> env;
};

TEST_F(DamagedCache, EveryDamageIsRecompiledAndTheEntryRewritten) {
    auto kernel = add_kernel(3);
    Shader<1> first = device->compile(kernel);
    EXPECT_FALSE(first.cache_hit());
    const fs::path file = only_entry();
    const std::string good = read(file);
    ASSERT_GT(good.size(), 64u);

    std::string flipped = good;
    flipped[good.size() / 2] ^= 0x10;
    // SPIR-V's magic number followed by words that are no module; then the entry's own header with a body
    // of garbage (right size, wrong hash).
    std::string spirv_magic_garbage = good.substr(20);
    for (size_t i = 4; i < spirv_magic_garbage.size(); ++i) spirv_magic_garbage[i] = char(i * 7);
    std::string header_garbage = good;
    for (size_t i = 40; i < header_garbage.size(); ++i) header_garbage[i] = char(i * 13);
    const std::vector<std::pair<std::string, std::string>> damages = {
        {"tail cut by 8 bytes", good.substr(0, good.size() - 8)},
        {"tail cut by 3 bytes", good.substr(0, good.size() - 3)},
        {"one flipped bit", flipped},
        {"zero length", std::string()},
        {"SPIR-V magic then garbage", spirv_magic_garbage},
        {"the entry header then garbage", header_garbage},
    };
    uint64_t misses = device->cache_misses();
    for (const auto& [what, bytes] : damages) {
        write(file, bytes);
        device->clear_kernel_cache();   // so the compile reads the disk
        Shader<1> s = device->compile(kernel);
        EXPECT_FALSE(s.cache_hit()) << what;
        EXPECT_EQ(device->cache_misses(), ++misses) << what;
        EXPECT_EQ(run(*device, s), expected(3)) << what;
        EXPECT_EQ(read(file), good) << what << ": the entry is rewritten whole";
        // And the rewritten entry serves the next compile.
        device->clear_kernel_cache();
        Shader<1> hit = device->compile(kernel);
        EXPECT_TRUE(hit.cache_hit()) << what;
        EXPECT_EQ(run(*device, hit), expected(3)) << what;
    }
    // No temporary file is left behind.
    only_entry();
}

} // namespace adjoint::test
