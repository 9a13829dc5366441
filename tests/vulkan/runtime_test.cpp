// The Vulkan runtime on the real device (lavapipe in CI): transfers, dispatches, barriers and limits.
#include "compile/glsl_compiler.h"
#include "vulkan/vk_runtime.h"

#include <adjoint/core/error.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>

using namespace adjoint::vk;

namespace {

// y[i] = 2 * x[i] + add: 2x is exact, so the device result must equal the host's bit for bit.
constexpr const char* kAxpy = R"(#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer X { float x[]; };
layout(set = 0, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { float add; uint n; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) y[i] = 2.0 * x[i] + pc.add;
}
)";

// Counts dispatches twice: atomically, and with a plain read-modify-write that is only right when every
// dispatch sees the previous one's write, i.e. when the stream orders them with barriers.
constexpr const char* kCounter = R"(#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer C { uint atomic_count; uint plain_count; };
void main() {
    atomicAdd(atomic_count, 1u);
    plain_count = plain_count + 1u;
}
)";

constexpr const char* kScaleImage = R"(#version 450
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, rgba32f) uniform image2D img;
void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, imageSize(img)))) return;
    imageStore(img, p, imageLoad(img, p) * 2.0);
}
)";

std::vector<float> random_floats(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1000.0f, 1000.0f);
    std::vector<float> v(n);
    for (auto& f : v)
        f = dist(rng);
    return v;
}

struct AxpyPush {
    float add;
    uint32_t n;
};

std::vector<std::byte> bytes_of(const AxpyPush& p) {
    std::vector<std::byte> out(sizeof p);
    std::memcpy(out.data(), &p, sizeof p);
    return out;
}

Bindings buffer_bindings(std::vector<Buffer*> buffers, std::vector<bool> written,
                         std::vector<std::byte> push = {}) {
    Bindings b;
    b.buffers = std::move(buffers);
    b.buffer_written = std::move(written);
    b.push_constants = std::move(push);
    return b;
}

class VulkanRuntime : public ::testing::Test {
protected:
    void SetUp() override {
        // The runtime's own reading of ADJOINT_VALIDATION, so "0" means off here too.
        ctx = Context::create(ContextOptions::from_environment());
    }
    void TearDown() override {
        // Test bodies have destroyed their resources by now, so destruction is validated too.
        std::string all;
        for (const auto& m : ctx->validation_messages())
            all += m + "\n";
        EXPECT_EQ(ctx->validation_message_count(), 0u) << all;
    }
    std::unique_ptr<Pipeline> pipeline(const char* glsl, const char* name, PipelineLayoutDesc desc) {
        auto spirv = adjoint::compile::compile_glsl(glsl, name, /*optimize*/ false);
        return std::make_unique<Pipeline>(ctx, spirv, desc, name);
    }
    std::shared_ptr<Context> ctx;
};

} // namespace

TEST_F(VulkanRuntime, CreatesContextAndReportsChoice) {
    const DeviceChoice& choice = ctx->choice();
    ASSERT_TRUE(choice.chosen);
    EXPECT_EQ(ctx->all_devices().size(), choice.report.size());
    EXPECT_NE(choice.report[*choice.chosen].find(": chosen"), std::string::npos);
    EXPECT_EQ(ctx->device_info().name, ctx->all_devices()[*choice.chosen].name);
    EXPECT_TRUE(ctx->device_info().has_compute_queue);
    EXPECT_GE(ctx->device_info().max_push_constants, 128u);
}

TEST_F(VulkanRuntime, OverrideMatchingNothingThrowsWithReport) {
    try {
        ContextOptions options;
        options.device_override = "no-such-device";
        Context::create(options);
        FAIL() << "expected an Error";
    } catch (const adjoint::Error& e) {
        EXPECT_NE(std::string(e.what()).find("ADJOINT_DEVICE=no-such-device does not match"),
                  std::string::npos)
            << e.what();
    }
}

TEST_F(VulkanRuntime, BufferRoundtrip) {
    auto data = random_floats(10007, 1);
    Buffer buf(ctx, data.size() * 4);
    EXPECT_EQ(buf.size(), data.size() * 4);
    Stream stream(ctx);
    std::vector<float> back(data.size()), part(100);
    stream.upload(buf, 0, data.data(), data.size() * 4);
    stream.download(buf, 0, back.data(), back.size() * 4);
    stream.download(buf, 400, part.data(), part.size() * 4);
    EXPECT_EQ(stream.pending_commands(), 3u);
    stream.synchronize();
    EXPECT_EQ(stream.pending_commands(), 0u);
    EXPECT_EQ(back, data);
    EXPECT_EQ(part, std::vector<float>(data.begin() + 100, data.begin() + 200));
    EXPECT_THROW(stream.upload(buf, 4, data.data(), data.size() * 4), adjoint::Error);
}

// Bytes in use count the Buffers alive, rounded to words, whether their memory is new or taken from the pool.
TEST_F(VulkanRuntime, BytesInUseCountTheBuffersAlive) {
    const size_t before = ctx->buffer_bytes_in_use();
    {
        Buffer a(ctx, 4093), b(ctx, 100);
        EXPECT_EQ(ctx->buffer_bytes_in_use(), before + 4096 + 100);
    }
    EXPECT_EQ(ctx->buffer_bytes_in_use(), before);
    Buffer again(ctx, 4096);   // takes a's memory from the pool
    EXPECT_EQ(ctx->buffer_bytes_in_use(), before + 4096);
}

// A released buffer is taken by the next buffer of its size (rounded to words), so a loop that makes its scratch
// buffers anew allocates device memory once; buffers of other sizes, or made while the kept one is taken,
// allocate their own.
TEST_F(VulkanRuntime, ReleasedBuffersAreTakenByTheNextOfTheirSize) {
    const uint64_t before = ctx->buffer_allocations();
    VkBuffer first = VK_NULL_HANDLE;
    for (int i = 0; i < 10; ++i) {
        Buffer scratch(ctx, i % 2 ? 4096 : 4093);   // both round to 4096 bytes
        if (i == 0) first = native(scratch);
        EXPECT_EQ(native(scratch), first) << "iteration " << i;
    }
    EXPECT_EQ(ctx->buffer_allocations(), before + 1);
    {
        Buffer a(ctx, 4096), b(ctx, 4096), c(ctx, 8192);
        EXPECT_EQ(ctx->buffer_allocations(), before + 3);   // a took the kept one; b and c are new
        Stream stream(ctx);
        const std::vector<float> ones(1024, 1.0f);
        stream.upload(b, 0, ones.data(), 4096);
        stream.synchronize();
    }
    // b, released with its contents, comes back as it was: new buffers' contents are undefined, not zero.
    Buffer again(ctx, 4096), other(ctx, 4096);
    EXPECT_EQ(ctx->buffer_allocations(), before + 3);
    Stream stream(ctx);
    std::vector<float> x(1024), y(1024);
    stream.download(again, 0, x.data(), 4096);
    stream.download(other, 0, y.data(), 4096);
    stream.synchronize();
    EXPECT_TRUE(x == std::vector<float>(1024, 1.0f) || y == std::vector<float>(1024, 1.0f));
}

TEST_F(VulkanRuntime, TransfersTakeEffectInStreamOrder) {
    Buffer buf(ctx, 6); // rounded up to 8 internally; size() still reports 6
    EXPECT_EQ(buf.size(), 6u);
    Stream stream(ctx);
    const uint8_t first[6] = {1, 2, 3, 4, 5, 6}, second[2] = {9, 9};
    uint8_t a[6] = {}, b[6] = {}, c[6] = {};
    stream.upload(buf, 0, first, 6);
    stream.download(buf, 0, a, 6);
    stream.upload(buf, 2, second, 2);
    stream.download(buf, 0, b, 6);
    stream.fill_zero(buf);
    stream.download(buf, 0, c, 6);
    stream.synchronize();
    EXPECT_EQ(std::vector<uint8_t>(a, a + 6), std::vector<uint8_t>({1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(std::vector<uint8_t>(b, b + 6), std::vector<uint8_t>({1, 2, 9, 9, 5, 6}));
    EXPECT_EQ(std::vector<uint8_t>(c, c + 6), std::vector<uint8_t>(6, 0));
}

TEST_F(VulkanRuntime, EmptyStreamSynchronizesAsNoOp) {
    Stream stream(ctx);
    stream.synchronize();
    stream.synchronize();
    EXPECT_EQ(stream.pending_commands(), 0u);
}

TEST_F(VulkanRuntime, StagingGrowsAcrossOneSubmission) {
    // More than the first staging chunk in one submission, then again to use the consolidated chunk.
    auto data = random_floats(300000, 2);
    std::vector<std::unique_ptr<Buffer>> bufs;
    for (int i = 0; i < 4; ++i)
        bufs.push_back(std::make_unique<Buffer>(ctx, data.size() * 4));
    Stream stream(ctx);
    for (int round = 0; round < 2; ++round) {
        std::vector<std::vector<float>> back(4, std::vector<float>(data.size()));
        for (int i = 0; i < 4; ++i) {
            stream.upload(*bufs[i], 0, data.data(), data.size() * 4);
            stream.download(*bufs[i], 0, back[i].data(), data.size() * 4);
        }
        stream.synchronize();
        for (int i = 0; i < 4; ++i)
            EXPECT_EQ(back[i], data) << "round " << round << " buffer " << i;
    }
}

TEST_F(VulkanRuntime, FillZero) {
    auto data = random_floats(1000, 3);
    Buffer buf(ctx, data.size() * 4);
    Stream stream(ctx);
    stream.upload(buf, 0, data.data(), data.size() * 4);
    stream.synchronize();
    std::vector<float> back(data.size(), 1.0f);
    stream.fill_zero(buf);
    stream.download(buf, 0, back.data(), back.size() * 4);
    stream.synchronize();
    EXPECT_EQ(back, std::vector<float>(data.size(), 0.0f));
}

TEST_F(VulkanRuntime, ImageRoundtrip) {
    Image img(ctx, 37, 23);
    auto data = random_floats(37 * 23 * 4, 4);
    std::vector<float> back(data.size());
    Stream stream(ctx);
    stream.upload(img, data.data());
    stream.download(img, back.data());
    stream.synchronize();
    EXPECT_EQ(back, data);
}

TEST_F(VulkanRuntime, ImageDispatch) {
    Image img(ctx, 20, 10);
    auto data = random_floats(20 * 10 * 4, 5);
    auto scale = pipeline(kScaleImage, "scale_image", {.image_count = 1});
    std::vector<float> back(data.size());
    Stream stream(ctx);
    stream.upload(img, data.data());
    Bindings b;
    b.images = {&img};
    b.image_written = {true};
    stream.dispatch(*scale, b, 3, 2, 1);
    stream.dispatch(*scale, b, 3, 2, 1);
    stream.download(img, back.data());
    stream.synchronize();
    for (size_t i = 0; i < data.size(); ++i)
        ASSERT_EQ(back[i], data[i] * 4.0f) << i;
}

TEST_F(VulkanRuntime, DispatchAndDependentDispatch) {
    const uint32_t n = 1000;
    auto x = random_floats(n, 6);
    auto axpy = pipeline(kAxpy, "axpy", {.buffer_count = 2, .push_constant_bytes = sizeof(AxpyPush)});
    Buffer bx(ctx, n * 4), by(ctx, n * 4), bz(ctx, n * 4);
    Stream stream(ctx);
    std::vector<float> y(n), z(n);
    stream.upload(bx, 0, x.data(), n * 4);
    // y = 2x + 1, then z = 2y + 3 in the same submission: the second must see the first's writes.
    Bindings first = buffer_bindings({&bx, &by}, {false, true}, bytes_of({1.0f, n}));
    Bindings second = buffer_bindings({&by, &bz}, {false, true}, bytes_of({3.0f, n}));
    stream.dispatch(*axpy, first, (n + 63) / 64, 1, 1);
    stream.dispatch(*axpy, second, (n + 63) / 64, 1, 1);
    stream.download(by, 0, y.data(), n * 4);
    stream.download(bz, 0, z.data(), n * 4);
    stream.synchronize();
    for (uint32_t i = 0; i < n; ++i) {
        ASSERT_EQ(y[i], 2.0f * x[i] + 1.0f) << i;
        ASSERT_EQ(z[i], 2.0f * y[i] + 3.0f) << i;
    }
}

TEST_F(VulkanRuntime, TwentyThousandTinyDispatchesInOneSubmission) {
    auto counter_pipeline = pipeline(kCounter, "counter", {.buffer_count = 1});
    Buffer counter(ctx, 8);
    Stream stream(ctx);
    Bindings b = buffer_bindings({&counter}, {true});
    uint32_t result[2] = {};
    const int n = 20000;
    stream.fill_zero(counter);
    for (int i = 0; i < n; ++i)
        stream.dispatch(*counter_pipeline, b, 1, 1, 1);
    stream.download(counter, 0, result, sizeof result);
    stream.synchronize();
    // Exact counts prove every dispatch ran, in order, with the barriers between them; the dispatch rate
    // is measured by tools/adjoint-bench, not asserted here.
    EXPECT_EQ(result[0], uint32_t(n));
    EXPECT_EQ(result[1], uint32_t(n));
}

TEST_F(VulkanRuntime, PushConstantsOverTheLimitThrowNamingThePipeline) {
    auto spirv = adjoint::compile::compile_glsl(kAxpy, "axpy", false);
    const uint32_t too_many = ctx->device_info().max_push_constants + 4;
    try {
        Pipeline p(ctx, spirv, {.buffer_count = 2, .push_constant_bytes = too_many},
                   "too_many_push_constants");
        FAIL() << "expected an Error";
    } catch (const adjoint::Error& e) {
        EXPECT_NE(std::string(e.what()).find("too_many_push_constants"), std::string::npos) << e.what();
    }
}

TEST_F(VulkanRuntime, DispatchWithWrongBindingsThrows) {
    auto axpy = pipeline(kAxpy, "axpy", {.buffer_count = 2, .push_constant_bytes = sizeof(AxpyPush)});
    Buffer bx(ctx, 16);
    Stream stream(ctx);
    Bindings b = buffer_bindings({&bx}, {false}, bytes_of({0.0f, 4}));
    EXPECT_THROW(stream.dispatch(*axpy, b, 1, 1, 1), adjoint::Error);
    EXPECT_EQ(stream.pending_commands(), 0u);
}
