// Dispatch shapes: odd 2D/3D sizes with a guard border, over a million threads, and the thread/block ids.
#include "support/device_fixture.h"
#include "support/host_run.h"

namespace adjoint::test {

class Dispatch : public DeviceTest {};

namespace {
constexpr uint32_t kGuard = 300;         // elements after the real ones that no thread may touch
constexpr uint32_t kSentinel = 0xdeadbeefu;
} // namespace

TEST_F(Dispatch, Kernel2DOddSizeWritesEachElementOnce) {
    Kernel2D k = [](BufferUInt out, BufferUInt hits) noexcept {
        auto p = dispatch_id().xy();
        auto size = dispatch_size();
        UInt index = p.x + p.y * size.x;
        out.write(index, p.x * 1000u + p.y);
        hits.atomic(index).fetch_add(1u);
    };
    const uint32_t w = 37, h = 23, n = w * h;
    auto shader = device.compile(k);
    std::vector<uint32_t> init(n + kGuard, kSentinel);
    auto out = upload(device, stream, init);
    auto hits = device.create_buffer<uint32_t>(n + kGuard);
    stream << hits.fill_zero() << shader(out, hits).dispatch(w, h);
    auto got = download(stream, out);
    auto got_hits = download(stream, hits);
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) {
            EXPECT_EQ(got[x + y * w], x * 1000 + y) << x << "," << y;
            EXPECT_EQ(got_hits[x + y * w], 1u) << x << "," << y;
        }
    for (uint32_t i = n; i < n + kGuard; ++i) {
        EXPECT_EQ(got[i], kSentinel) << "guard element " << i << " was written";
        EXPECT_EQ(got_hits[i], 0u) << "guard element " << i << " was hit";
    }
}

TEST_F(Dispatch, Kernel3DOddSizeWritesEachElementOnce) {
    Kernel3D k = [](BufferUInt out) noexcept {
        auto p = dispatch_id();
        auto s = dispatch_size();
        out.write(p.x + s.x * (p.y + s.y * p.z), p.x + 100u * p.y + 10000u * p.z + 1000000u * s.z);
    };
    const uint32_t w = 9, h = 7, d = 5, n = w * h * d;
    auto shader = device.compile(k);
    std::vector<uint32_t> init(n + kGuard, kSentinel);
    auto out = upload(device, stream, init);
    stream << shader(out).dispatch(w, h, d);
    auto got = download(stream, out);
    std::vector<uint32_t> host = init;
    interpret(k, {w, h, d}, host);
    for (uint32_t z = 0; z < d; ++z)
        for (uint32_t y = 0; y < h; ++y)
            for (uint32_t x = 0; x < w; ++x) {
                uint32_t want = x + 100 * y + 10000 * z + 1000000 * d;
                EXPECT_EQ(got[x + w * (y + h * z)], want) << x << "," << y << "," << z;
                EXPECT_EQ(host[x + w * (y + h * z)], want) << "interpreter " << x << "," << y << "," << z;
            }
    for (uint32_t i = n; i < n + kGuard; ++i) EXPECT_EQ(got[i], kSentinel) << "guard element " << i << " was written";
}

TEST_F(Dispatch, MoreThanAMillionThreads) {
    Kernel1D k = [](BufferUInt out, UInt salt) noexcept {
        auto i = dispatch_id().x;
        out.write(i, i * 3u + salt);
    };
    const uint32_t n = (1u << 20) + 17;
    auto shader = device.compile(k);
    std::vector<uint32_t> init(n + kGuard, kSentinel);
    auto out = upload(device, stream, init);
    stream << shader(out, 5u).dispatch(n);
    auto got = download(stream, out);
    uint32_t bad = 0;
    for (uint32_t i = 0; i < n; ++i) bad += got[i] != i * 3 + 5;
    EXPECT_EQ(bad, 0u);
    for (uint32_t i = n; i < n + kGuard; ++i) EXPECT_EQ(got[i], kSentinel) << "guard element " << i << " was written";
}

TEST_F(Dispatch, OneDimensionalDispatchBeyondTheGroupLimit) {
    // More threads than 65535 groups of 256 (lavapipe's limit in x): the runtime adds rows of groups in y
    // and the kernel sees one linear index, so every element is written exactly once.
    Kernel1D k = [](BufferUInt out) noexcept {
        auto i = dispatch_id().x;
        out.write(i, i ^ 0x5a5a5a5au);
    };
    const uint32_t n = 65535u * 256u + 1000u;
    auto shader = device.compile(k);
    std::vector<uint32_t> init(n + kGuard, kSentinel);
    auto out = upload(device, stream, init);
    stream << shader(out).dispatch(n);
    auto got = download(stream, out);
    uint32_t bad = 0;
    for (uint32_t i = 0; i < n; ++i) bad += got[i] != (i ^ 0x5a5a5a5au);
    EXPECT_EQ(bad, 0u);
    for (uint32_t i = n; i < n + kGuard; ++i) EXPECT_EQ(got[i], kSentinel) << "guard element " << i << " was written";
}

TEST_F(Dispatch, ThreadAndBlockIdsIn1D) {
    // A 1D kernel's block is 256 threads: thread_id = i % 256, block_id = i / 256.
    Kernel1D k = [](BufferVar<uint4> out) noexcept {
        auto i = dispatch_id().x;
        out.write(i, make_uint4(thread_id().x, block_id().x, dispatch_size().x,
                                thread_id().y + thread_id().z + block_id().y + block_id().z + dispatch_size().y * 10u +
                                    dispatch_size().z * 100u));
    };
    const uint32_t n = 1000;
    auto shader = device.compile(k);
    auto out = device.create_buffer<uint4>(n);
    stream << shader(out).dispatch(n);
    auto got = download(stream, out);
    std::vector<uint4> host(n);
    interpret(k, {n, 1, 1}, host);
    for (uint32_t i = 0; i < n; ++i) {
        uint4 want(i % 256, i / 256, n, 110);
        EXPECT_EQ(got[i], want) << i;
        EXPECT_EQ(host[i], want) << "interpreter " << i;
    }
}

TEST_F(Dispatch, ThreadAndBlockIdsIn2DAnd3D) {
    // Blocks are 16x16 in 2D and 8x8x4 in 3D.
    Kernel2D k2 = [](BufferVar<uint4> out) noexcept {
        auto p = dispatch_id();
        auto t = thread_id();
        auto b = block_id();
        out.write(p.x + p.y * dispatch_size().x, make_uint4(t.x, t.y, b.x, b.y + 100u * (t.z + b.z + p.z)));
    };
    Kernel3D k3 = [](BufferVar<uint4> out) noexcept {
        auto p = dispatch_id();
        auto s = dispatch_size();
        auto t = thread_id();
        auto b = block_id();
        out.write(p.x + s.x * (p.y + s.y * p.z), make_uint4(t.x + 10u * t.y + 100u * t.z, b.x, b.y, b.z));
    };
    const uint32_t w = 40, h = 20;
    auto s2 = device.compile(k2);
    auto out2 = device.create_buffer<uint4>(w * h);
    stream << s2(out2).dispatch(w, h);
    auto got2 = download(stream, out2);
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x)
            EXPECT_EQ(got2[x + y * w], uint4(x % 16, y % 16, x / 16, y / 16)) << x << "," << y;

    const uint32_t W = 19, H = 10, D = 9;
    auto s3 = device.compile(k3);
    auto out3 = device.create_buffer<uint4>(W * H * D);
    stream << s3(out3).dispatch(W, H, D);
    auto got3 = download(stream, out3);
    std::vector<uint4> host3(W * H * D);
    interpret(k3, {W, H, D}, host3);
    for (uint32_t z = 0; z < D; ++z)
        for (uint32_t y = 0; y < H; ++y)
            for (uint32_t x = 0; x < W; ++x) {
                uint4 want(x % 8 + 10 * (y % 8) + 100 * (z % 4), x / 8, y / 8, z / 4);
                EXPECT_EQ(got3[x + W * (y + H * z)], want) << x << "," << y << "," << z;
                EXPECT_EQ(host3[x + W * (y + H * z)], want) << "interpreter " << x << "," << y << "," << z;
            }
}

TEST_F(Dispatch, EmptyDispatchRunsNothing) {
    Kernel1D k = [](BufferUInt out) noexcept { out.write(dispatch_id().x, 1u); };
    auto shader = device.compile(k);
    std::vector<uint32_t> init(4, kSentinel);
    auto out = upload(device, stream, init);
    stream << shader(out).dispatch(0) << shader(out).dispatch(2, 0);
    EXPECT_EQ(download(stream, out), init);
}

TEST_F(Dispatch, ValueArgumentsOfEveryKind) {
    // Push constants: alignment of a float3 after a float, a matrix, ints and uints.
    Kernel1D k = [](BufferFloat out, Float a, Float3 v, Int n, Float4x4 m, UInt u, Float2 p) noexcept {
        auto i = dispatch_id().x;
        Float4 mv = m * make_float4(v, 1.0f);
        out.write(i, a + mv.x + mv.y * 10.0f + mv.z * 100.0f + mv.w * 1000.0f + cast<float>(n) * 0.5f +
                         cast<float>(u) * 0.25f + p.x - p.y + cast<float>(i));
    };
    auto shader = device.compile(k);
    float4x4 m = float4x4::identity();
    m[3] = float4(1, 2, 3, 1);     // translation
    m[0][0] = 2;
    auto out = device.create_buffer<float>(4);
    stream << shader(out, 0.5f, float3(1, 1, 1), -4, m, 8u, float2(3, 1)).dispatch(4);
    auto got = download(stream, out);
    for (uint32_t i = 0; i < 4; ++i) {
        // m * (1,1,1,1) = (2+1, 1+2, 1+3, 1) = (3, 3, 4, 1)
        float want = 0.5f + 3 + 30 + 400 + 1000 - 2 + 2 + 3 - 1 + float(i);
        EXPECT_EQ(got[i], want) << i;
    }
    std::vector<float> host(4);
    float a = 0.5f;
    float3 v(1, 1, 1);
    int32_t n = -4;
    uint32_t u = 8;
    float2 p(3, 1);
    interpret(k, {4, 1, 1}, host, a, v, n, m, u, p);
    EXPECT_EQ(host, got);
}

} // namespace adjoint::test
