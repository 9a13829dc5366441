// What tile-based rasterization needs, on lavapipe against the interpreter: block sizes, shared memory with
// sync_block(), subgroup operations and 64-bit atomics; and the errors for their misuse.
#include "support/device_fixture.h"
#include "support/host_run.h"
#include "support/error_text.h"

#include "runtime/runtime_internal.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace adjoint::test {

namespace {

class Blocks : public DeviceTest {};

std::string here(int line) { return "runtime/blocks_test.cpp:" + std::to_string(line); }

// Sets an environment variable for a scope (the runtime reads ADJOINT_NO_FLOAT_ATOMICS at create_device).
struct ScopedEnv {
    std::string name;
    std::optional<std::string> old;
    ScopedEnv(const char* n, const char* value) : name(n) {
        if (const char* v = std::getenv(n)) old = v;
        setenv(n, value, 1);
    }
    ~ScopedEnv() {
        if (old) setenv(name.c_str(), old->c_str(), 1);
        else unsetenv(name.c_str());
    }
};

} // namespace

// ---- block size -----------------------------------------------------------------------------------------

TEST_F(Blocks, SetBlockSizeGivesThreadAndBlockIds) {
    Kernel2D k = [](BufferVar<uint4> ids, BufferVar<uint4> sizes) noexcept {
        set_block_size(8, 4);
        auto p = dispatch_id().xy();
        UInt index = p.x + p.y * dispatch_size().x;
        auto t = thread_id();
        auto b = block_id();
        ids.write(index, make_uint4(t.x, t.y, b.x, b.y));
        sizes.write(index, make_uint4(block_size(), t.z));
    };
    auto shader = device.compile(k);
    EXPECT_NE(shader.glsl().find("layout(local_size_x = 8, local_size_y = 4, local_size_z = 1) in;"), std::string::npos);
    const uint32_t w = 30, h = 13;   // not whole blocks: threads past the edge do not run
    auto ids = device.create_buffer<uint4>(w * h);
    auto sizes = device.create_buffer<uint4>(w * h);
    stream << shader(ids, sizes).dispatch(w, h);
    auto got_ids = download(stream, ids);
    auto got_sizes = download(stream, sizes);
    std::vector<uint4> want_ids(w * h), host_ids(w * h), host_sizes(w * h);
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) want_ids[x + y * w] = uint4(x % 8, y % 4, x / 8, y / 4);
    interpret(k, {w, h, 1}, host_ids, host_sizes);
    EXPECT_EQ(got_ids, want_ids);
    EXPECT_EQ(host_ids, want_ids);
    EXPECT_EQ(got_sizes, std::vector<uint4>(w * h, uint4(8, 4, 1, 0)));
    EXPECT_EQ(host_sizes, got_sizes);
}

TEST_F(Blocks, CompileOptionSetsTheBlockOfA1DKernel) {
    Kernel1D k = [](BufferVar<uint4> out) noexcept {
        UInt i = dispatch_id().x;
        out.write(i, make_uint4(thread_id().x, block_id().x, block_size().x, i));
    };
    // 96 is not a power of two: the 1D kernel's linear index still comes out right.
    auto shader = device.compile(k, {.block = {96, 1, 1}});
    EXPECT_NE(shader.glsl().find("local_size_x = 96,"), std::string::npos);
    const uint32_t n = 1000;
    auto out = device.create_buffer<uint4>(n);
    stream << shader(out).dispatch(n);
    auto got = download(stream, out);
    std::vector<uint4> host(n);
    interpret_with({.block = {96, 1, 1}}, k, {n, 1, 1}, host);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(got[i], uint4(i % 96, i / 96, 96, i)) << "thread " << i;
    EXPECT_EQ(host, got);
}

// ---- shared memory and sync_block -----------------------------------------------------------------------

// The classic tree reduction: each block of 256 threads sums its 256 values in shared memory, halving the
// active threads at each step, with a barrier between steps.
TEST_F(Blocks, SharedMemoryReductionSumsEachBlock) {
    Kernel1D block_sum = [](BufferFloat x, BufferFloat sums) noexcept {
        set_block_size(256);
        Shared<float> partial(256);
        UInt t = thread_id().x;
        partial.write(t, x.read(dispatch_id().x));
        sync_block();
        $for (k, 0u, 8u) {
            UInt stride = 128u >> k;
            $if (t < stride) { partial.write(t, partial.read(t) + partial.read(t + stride)); };
            sync_block();
        };
        $if (t == 0u) { sums.write(block_id().x, partial.read(0u)); };
    };
    const uint32_t blocks = 64, n = 256 * blocks;
    auto x = random_floats(n, -1.0f, 1.0f, 11);
    auto shader = device.compile(block_sum);
    auto xb = upload(device, stream, x);
    auto sb = device.create_buffer<float>(blocks);
    stream << shader(xb, sb).dispatch(n);
    auto got = download(stream, sb);
    std::vector<float> host(blocks);
    interpret(block_sum, {n, 1, 1}, x, host);
    for (uint32_t b = 0; b < blocks; ++b) {
        double want = 0;
        for (uint32_t i = 0; i < 256; ++i) want += x[b * 256 + i];
        EXPECT_EQ(got[b], host[b]) << "block " << b << ": the same additions in the same order";
        EXPECT_NEAR(got[b], want, 1e-4) << "block " << b;
    }
}

TEST_F(Blocks, SharedArraysOfVectorsIntsAndAtomics) {
    // A histogram per block in shared memory (int atomics, and float atomics native and by compare-and-swap),
    // and a shared float3 array read back at another thread's index after the barrier.
    Kernel1D k = [](BufferUInt bins_in, BufferUInt histogram, BufferFloat weights, BufferFloat last,
                    BufferFloat3 rotated) noexcept {
        set_block_size(64);
        Shared<uint> counts(16);
        Shared<float> mass(16);
        Shared<float> highest(16);
        Shared<float3> points(64);
        UInt t = thread_id().x, i = dispatch_id().x;
        $if (t < 16u) {
            counts.write(t, 0u);
            mass.write(t, 0.0f);
            highest.write(t, -1.0f);
        };
        points.write(t, make_float3(cast<float>(i), cast<float>(t), 1.0f));
        sync_block();
        UInt bin = bins_in.read(i) % 16u;
        counts.atomic(bin).fetch_add(1u);
        mass.atomic(bin).fetch_add(0.5f);
        highest.atomic(bin).fetch_max(cast<float>(t));
        sync_block();
        $if (t < 16u) {
            histogram.atomic(t).fetch_add(counts.read(t));
            weights.atomic(t).fetch_add(mass.read(t));
            last.atomic(t).fetch_max(highest.read(t));
        };
        rotated.write(i, points.read((t + 1u) % 64u));
    };
    const uint32_t n = 64 * 8;
    std::vector<uint32_t> bins(n);
    for (uint32_t i = 0; i < n; ++i) bins[i] = (i * 7919u) % 23u;
    std::vector<uint32_t> want_hist(16, 0);
    std::vector<float> want_w(16, 0.0f), want_last(16, -1.0f);
    for (uint32_t b = 0; b < 8; ++b)
        for (uint32_t t = 0; t < 64; ++t) {
            uint32_t bin = bins[b * 64 + t] % 16;
            want_hist[bin] += 1;
            want_w[bin] += 0.5f;
            want_last[bin] = std::max(want_last[bin], float(t));
        }
    for (const char* cas : {"0", "1"}) {
        ScopedEnv env("ADJOINT_NO_FLOAT_ATOMICS", cas);
        Context ctx;
        Device dev = ctx.create_device();
        Stream s = dev.create_stream();
        auto shader = dev.compile(k);
        // Compare-and-swap loops on shared memory where they are asked for, or where the device lacks a native
        // shared float atomic (the H200 has add but not max).
        const auto& info = detail::vulkan_context(*dev.impl())->device_info();
        const bool native = info.shared_float_atomic_add && info.shared_float_atomic_min_max;
        EXPECT_EQ(shader.glsl().find("atomicCompSwap(s") != std::string::npos, std::string(cas) == "1" || !native)
            << shader.glsl();
        auto bb = upload(dev, s, bins);
        auto hb = dev.create_buffer<uint32_t>(16);
        auto wb = dev.create_buffer<float>(16);
        auto lb = upload(dev, s, std::vector<float>(16, -1.0f));
        auto rb = dev.create_buffer<float3>(n);
        s << hb.fill_zero() << wb.fill_zero() << shader(bb, hb, wb, lb, rb).dispatch(n);
        auto hist = download(s, hb);
        auto w = download(s, wb);
        auto rot = download(s, rb);
        EXPECT_EQ(hist, want_hist) << "cas " << cas;
        EXPECT_EQ(w, want_w) << "cas " << cas;
        EXPECT_EQ(download(s, lb), want_last) << "cas " << cas;
        for (uint32_t i = 0; i < n; ++i) {
            uint32_t t = i % 64, src = i - t + (t + 1) % 64;
            ASSERT_EQ(rot[i], float3(float(src), float((t + 1) % 64), 1.0f)) << "thread " << i;
        }
        EXPECT_EQ(dev.validation_message_count(), 0u);
    }
    std::vector<uint32_t> hist(16, 0);
    std::vector<float> w(16, 0.0f), last(16, -1.0f);
    std::vector<float3> rot(n);
    interpret(k, {n, 1, 1}, bins, hist, w, last, rot);
    EXPECT_EQ(hist, want_hist);
    EXPECT_EQ(w, want_w);
    EXPECT_EQ(last, want_last);
}

// ---- subgroups ------------------------------------------------------------------------------------------

// Per-block sums from subgroup sums: one elected thread per subgroup adds its subgroup's sum, so the
// result is the block's sum whatever the subgroup size. Inside a branch only the threads that took it
// take part. Each checked identity holds for any subgroup size.
TEST_F(Blocks, SubgroupSumsAndIdentitiesHoldForAnySubgroupSize) {
    Kernel1D k = [](BufferUInt x, BufferFloat xf, BufferUInt sums, BufferUInt odd_sums, BufferFloat fsums,
                    BufferUInt checks) noexcept {
        UInt i = dispatch_id().x, b = block_id().x;
        UInt v = x.read(i);
        UInt s = subgroup_add(v);
        Float fs = subgroup_add(xf.read(i));
        $if (subgroup_elect()) {
            sums.atomic(b).fetch_add(s);
            fsums.atomic(b).fetch_add(fs);
        };
        $if (v % 2u == 1u) {
            UInt so = subgroup_add(v);
            $if (subgroup_elect()) { odd_sums.atomic(b).fetch_add(so); };
        };
        UInt size = subgroup_size(), lane = subgroup_invocation_id();
        UInt one = 1u;
        Int neg = -cast<int>(lane);
        UInt ok = 0u;
        ok = ok | ite(lane < size, 1u, 0u);
        ok = ok | ite(subgroup_add(one) == size, 2u, 0u);
        ok = ok | ite(subgroup_exclusive_add(one) == lane, 4u, 0u);
        ok = ok | ite(subgroup_min(lane) == 0u && subgroup_max(lane) == size - 1u, 8u, 0u);
        ok = ok | ite(subgroup_min(neg) == -cast<int>(size - 1u), 16u, 0u);
        ok = ok | ite(subgroup_broadcast_first(lane + 7u) == 7u, 32u, 0u);
        ok = ok | ite(subgroup_all(lane < size) && subgroup_any(lane == 0u) && !subgroup_all(lane == 0u), 64u, 0u);
        ok = ok | ite(subgroup_all_equal(size) && !subgroup_all_equal(lane), 128u, 0u);
        ok = ok | ite(all(subgroup_ballot(lane == 1u) == make_uint4(2u, 0u, 0u, 0u)), 256u, 0u);
        Float f = 1.0f;
        ok = ok | ite(subgroup_add(f) == cast<float>(size), 512u, 0u);
        UInt2 m = subgroup_max(make_uint2(lane, 7u));
        ok = ok | ite(m.x == size - 1u && m.y == 7u, 1024u, 0u);
        checks.write(i, ok);
    };
    const uint32_t blocks = 16, n = 256 * blocks;
    std::vector<uint32_t> x(n);
    std::vector<float> xf(n);
    for (uint32_t i = 0; i < n; ++i) {
        x[i] = (i * 2654435761u) >> 20;
        xf[i] = float(x[i] % 1000);   // integers: exact sums in any order
    }
    std::vector<uint32_t> want(blocks, 0), want_odd(blocks, 0);
    std::vector<float> want_f(blocks, 0.0f);
    for (uint32_t i = 0; i < n; ++i) {
        want[i / 256] += x[i];
        if (x[i] % 2 == 1) want_odd[i / 256] += x[i];
        want_f[i / 256] += xf[i];
    }
    ASSERT_GE(device.subgroup_size(), 2u) << "the identities below assume subgroups of at least 2 threads";
    auto shader = device.compile(k);
    auto xb = upload(device, stream, x);
    auto xfb = upload(device, stream, xf);
    auto sb = device.create_buffer<uint32_t>(blocks);
    auto ob = device.create_buffer<uint32_t>(blocks);
    auto fb = device.create_buffer<float>(blocks);
    auto cb = device.create_buffer<uint32_t>(n);
    stream << sb.fill_zero() << ob.fill_zero() << fb.fill_zero() << shader(xb, xfb, sb, ob, fb, cb).dispatch(n);
    EXPECT_EQ(download(stream, sb), want);
    EXPECT_EQ(download(stream, ob), want_odd);
    EXPECT_EQ(download(stream, fb), want_f);
    EXPECT_EQ(download(stream, cb), std::vector<uint32_t>(n, 2047u)) << "device subgroups of " << device.subgroup_size();
    for (uint32_t size : {4u, 32u, 128u}) {
        std::vector<uint32_t> s(blocks, 0), o(blocks, 0), c(n, 0);
        std::vector<float> f(blocks, 0.0f);
        interpret_with({.subgroup_size = size}, k, {n, 1, 1}, x, xf, s, o, f, c);
        EXPECT_EQ(s, want) << "interpreted subgroups of " << size;
        EXPECT_EQ(o, want_odd) << "interpreted subgroups of " << size;
        EXPECT_EQ(f, want_f) << "interpreted subgroups of " << size;
        EXPECT_EQ(c, std::vector<uint32_t>(n, 2047u)) << "interpreted subgroups of " << size;
    }
}

// Reduce before scattering: a block's sum from subgroup sums combined in shared memory, one atomic per block.
TEST_F(Blocks, SubgroupsAndSharedMemoryReduceABlockToOneAtomic) {
    Kernel1D k = [](BufferFloat x, BufferFloat total) noexcept {
        set_block_size(256);
        Shared<float> per_subgroup(256);   // room for subgroups of 1 thread
        UInt t = thread_id().x;
        Float s = subgroup_add(x.read(dispatch_id().x));
        UInt group = t / subgroup_size();
        $if (subgroup_elect()) { per_subgroup.write(group, s); };
        sync_block();
        $if (t == 0u) {
            Float sum = 0.0f;
            $for (g, 0u, 256u / subgroup_size()) { sum += per_subgroup.read(g); };
            total.atomic(0u).fetch_add(sum);
        };
    };
    const uint32_t n = 256 * 32;
    std::vector<float> x(n);
    for (uint32_t i = 0; i < n; ++i) x[i] = float(i % 17);
    double want = 0;
    for (float v : x) want += v;
    auto shader = device.compile(k);
    auto xb = upload(device, stream, x);
    auto tb = device.create_buffer<float>(1);
    stream << tb.fill_zero() << shader(xb, tb).dispatch(n);
    EXPECT_EQ(download(stream, tb)[0], float(want));
    for (uint32_t size : {1u, 8u, 64u}) {
        std::vector<float> total(1, 0.0f);
        interpret_with({.subgroup_size = size}, k, {n, 1, 1}, x, total);
        EXPECT_EQ(total[0], float(want)) << "interpreted subgroups of " << size;
    }
}

// ---- 64-bit integers and their atomics ------------------------------------------------------------------

// A depth test by packing: the depth's float bits (non-negative floats order like their bits) in the high
// 32 bits, the triangle id in the low 32, and one 64-bit atomic min per fragment. Colliding fragments
// leave the nearest one; equal depths leave the lowest id.
TEST_F(Blocks, Uint64AtomicMinKeepsTheNearestTriangleId) {
    Kernel1D raster = [](BufferUInt pixel_of, BufferFloat depth_of, BufferUInt64 zbuffer) noexcept {
        UInt f = dispatch_id().x;   // the fragment's triangle
        UInt64 key = (cast<uint64_t>(bit_cast<uint>(depth_of.read(f))) << 32u) | cast<uint64_t>(f);
        zbuffer.atomic(pixel_of.read(f)).fetch_min(key);
    };
    const uint32_t pixels = 97, fragments = 50000;
    std::vector<uint32_t> pixel(fragments);
    std::vector<float> depth(fragments);
    std::mt19937 rng(5);
    for (uint32_t f = 0; f < fragments; ++f) {
        pixel[f] = rng() % pixels;
        depth[f] = float(rng() % 4096) / 64.0f;   // many exact ties
    }
    std::vector<uint64_t> want(pixels, ~uint64_t(0));
    std::vector<uint32_t> nearest(pixels, ~0u);
    for (uint32_t f = 0; f < fragments; ++f) {
        uint32_t p = pixel[f];
        if (nearest[p] == ~0u || depth[f] < depth[nearest[p]] || (depth[f] == depth[nearest[p]] && f < nearest[p]))
            nearest[p] = f;
    }
    for (uint32_t p = 0; p < pixels; ++p) {
        uint32_t bits;
        std::memcpy(&bits, &depth[nearest[p]], 4);
        want[p] = uint64_t(bits) << 32 | nearest[p];
    }
    auto shader = device.compile(raster);
    EXPECT_NE(shader.glsl().find("#extension GL_EXT_shader_atomic_int64 : require"), std::string::npos);
    auto pb = upload(device, stream, pixel);
    auto db = upload(device, stream, depth);
    auto zb = upload(device, stream, std::vector<uint64_t>(pixels, ~uint64_t(0)));
    stream << shader(pb, db, zb).dispatch(fragments);
    auto got = download(stream, zb);
    std::vector<uint64_t> host(pixels, ~uint64_t(0));
    interpret(raster, {fragments, 1, 1}, pixel, depth, host);
    EXPECT_EQ(got, want);
    EXPECT_EQ(host, want);
    for (uint32_t p = 0; p < pixels; ++p) EXPECT_EQ(uint32_t(got[p]), nearest[p]) << "pixel " << p;
}

// The same depth test on a tile held in shared memory: each block owns 64 pixels, takes its fragments'
// keys with 64-bit atomics on shared memory, and writes the tile out once.
TEST_F(Blocks, Uint64AtomicsOnASharedTile) {
    Kernel1D tile_raster = [](BufferUInt pixel_of, BufferFloat depth_of, BufferUInt64 zbuffer) noexcept {
        set_block_size(64);
        Shared<uint64_t> tile(64);
        UInt t = thread_id().x, b = block_id().x;
        tile.write(t, ~0ull);
        sync_block();
        $for (r, 0u, 8u) {   // 8 fragments per thread, anywhere in the block's tile
            UInt f = (b * 64u + t) * 8u + r;
            UInt64 key = (cast<uint64_t>(bit_cast<uint>(depth_of.read(f))) << 32u) | cast<uint64_t>(f);
            tile.atomic(pixel_of.read(f) % 64u).fetch_min(key);
        };
        sync_block();
        zbuffer.write(b * 64u + t, tile.read(t));
    };
    const uint32_t blocks = 16, fragments = blocks * 64 * 8;
    std::vector<uint32_t> pixel(fragments);
    std::vector<float> depth(fragments);
    std::mt19937 rng(9);
    for (uint32_t f = 0; f < fragments; ++f) {
        pixel[f] = rng() % 64;
        depth[f] = float(rng() % 256) / 8.0f;
    }
    std::vector<uint64_t> want(blocks * 64, ~uint64_t(0));
    for (uint32_t f = 0; f < fragments; ++f) {
        uint32_t bits;
        std::memcpy(&bits, &depth[f], 4);
        uint64_t& z = want[f / 512 * 64 + pixel[f]];
        z = std::min(z, uint64_t(bits) << 32 | f);
    }
    auto shader = device.compile(tile_raster);
    auto pb = upload(device, stream, pixel);
    auto db = upload(device, stream, depth);
    auto zb = device.create_buffer<uint64_t>(blocks * 64);
    stream << shader(pb, db, zb).dispatch(blocks * 64);
    EXPECT_EQ(download(stream, zb), want);
    std::vector<uint64_t> host(blocks * 64);
    interpret(tile_raster, {blocks * 64, 1, 1}, pixel, depth, host);
    EXPECT_EQ(host, want);
}

TEST_F(Blocks, Uint64ArithmeticShiftsCastsAndAtomics) {
    Kernel1D k = [](BufferUInt64 in, BufferUInt64 out, BufferUInt64 acc, BufferUInt halves, UInt64 offset) noexcept {
        UInt i = dispatch_id().x;
        UInt64 a = in.read(i);
        out.write(i * 5u + 0u, a * 3ul + (a >> 7u) - offset);
        out.write(i * 5u + 1u, (a << 13u) ^ ~a);
        out.write(i * 5u + 2u, max(a, 1ul << 40) / 3ul + a % 1000ul);
        Int minus_five = -5;
        Float big = 2.5e12f;
        out.write(i * 5u + 3u, ite(a > offset, a & 0xffff0000ffffull, cast<uint64_t>(minus_five)));
        out.write(i * 5u + 4u, cast<uint64_t>(cast<float>(a >> 40u)) + cast<uint64_t>(big));
        halves.write(i * 2u, cast<uint>(a));
        halves.write(i * 2u + 1u, cast<uint>(a >> 32u));
        acc.atomic(0u).fetch_add(a);
        acc.atomic(1u).fetch_max(a);
        acc.atomic(2u).fetch_min(a);
        acc.atomic(3u).compare_exchange(0ul, cast<uint64_t>(i) + 1ul);
        acc.atomic(4u).fetch_sub(1ul);
        acc.atomic(5u).exchange(42ul);
    };
    const uint32_t n = 1000;
    const uint64_t offset = (uint64_t(1) << 40) | 5u;
    std::vector<uint64_t> in(n);
    std::mt19937_64 rng(3);
    for (auto& v : in) v = rng();
    in[0] = 0;
    in[1] = ~uint64_t(0);
    std::vector<uint64_t> want(n * 5), acc_want(6, 0);
    std::vector<uint32_t> halves_want(n * 2);
    acc_want[2] = ~uint64_t(0);
    acc_want[4] = 0 - uint64_t(n);
    acc_want[5] = 42;
    for (uint32_t i = 0; i < n; ++i) {
        uint64_t a = in[i];
        want[i * 5 + 0] = a * 3 + (a >> 7) - offset;
        want[i * 5 + 1] = (a << 13) ^ ~a;
        want[i * 5 + 2] = std::max(a, uint64_t(1) << 40) / 3 + a % 1000;
        want[i * 5 + 3] = a > offset ? a & 0xffff0000ffffull : uint64_t(int64_t(-5));
        want[i * 5 + 4] = uint64_t(float(a >> 40)) + uint64_t(2.5e12f);
        halves_want[i * 2] = uint32_t(a);
        halves_want[i * 2 + 1] = uint32_t(a >> 32);
        acc_want[0] += a;
        acc_want[1] = std::max(acc_want[1], a);
        acc_want[2] = std::min(acc_want[2], a);
    }
    auto shader = device.compile(k);
    auto ib = upload(device, stream, in);
    auto ob = device.create_buffer<uint64_t>(n * 5);
    std::vector<uint64_t> acc_init(6, 0);
    acc_init[2] = ~uint64_t(0);
    auto ab = upload(device, stream, acc_init);
    auto hb = device.create_buffer<uint32_t>(n * 2);
    stream << shader(ib, ob, ab, hb, offset).dispatch(n);
    auto got = download(stream, ob);
    auto acc = download(stream, ab);
    EXPECT_EQ(got, want);
    EXPECT_EQ(download(stream, hb), halves_want);
    EXPECT_GE(acc[3], 1u);
    EXPECT_LE(acc[3], n) << "exactly one thread's compare_exchange stored its id + 1";
    acc[3] = 0;
    EXPECT_EQ(acc, acc_want);
    std::vector<uint64_t> host(n * 5), host_acc = acc_init;
    std::vector<uint32_t> host_halves(n * 2);
    uint64_t off = offset;
    interpret(k, {n, 1, 1}, in, host, host_acc, host_halves, off);
    EXPECT_EQ(host, want);
    EXPECT_EQ(host_halves, halves_want);
    EXPECT_EQ(host_acc[3], 1u) << "the interpreter runs thread 0 first";
    host_acc[3] = 0;
    EXPECT_EQ(host_acc, acc_want);
}

// ---- refusals -------------------------------------------------------------------------------------------

TEST_F(Blocks, SyncBlockNeedsWholeBlocks) {
    const int line = __LINE__ + 5;   // the sync_block() below
    Kernel1D k = [](BufferFloat x) noexcept {
        set_block_size(64);
        Shared<float> s(64);
        s.write(thread_id().x, x.read(dispatch_id().x));
        sync_block();
        x.write(dispatch_id().x, s.read(63u - thread_id().x));
    };
    auto shader = device.compile(k);
    auto x = device.create_buffer<float>(100);
    std::string e = error_of([&] { stream << shader(x).dispatch(100); });
    EXPECT_NE(e.find("sync_block() (at " + here(line)), std::string::npos) << e;
    EXPECT_NE(e.find("100 x 1 x 1 is not a multiple of 64 x 1 x 1"), std::string::npos) << e;
    std::vector<float> host(100);
    e = error_of([&] { interpret(k, {100, 1, 1}, host); });
    EXPECT_NE(e.find("sync_block() (at " + here(line)), std::string::npos) << e;
    // Whole blocks run.
    std::vector<float> v(128);
    for (uint32_t i = 0; i < 128; ++i) v[i] = float(i);
    auto xb = upload(device, stream, v);
    stream << shader(xb).dispatch(128);
    auto got = download(stream, xb);
    for (uint32_t i = 0; i < 128; ++i) ASSERT_EQ(got[i], float(i - i % 64 + 63 - i % 64));
}

TEST_F(Blocks, SyncBlockInABranchOfSomeThreadsIsAnInterpreterError) {
    const int line = __LINE__ + 3;
    Kernel1D k = [](BufferFloat x) noexcept {
        Shared<float> s(256);
        $if (thread_id().x < 100u) { sync_block(); };
        s.write(thread_id().x, 1.0f);
        x.write(dispatch_id().x, s.read(0u));
    };
    std::vector<float> host(256);
    std::string e = error_of([&] { interpret(k, {256, 1, 1}, host); });
    EXPECT_NE(e.find("sync_block() at " + here(line) + " in kernel"), std::string::npos) << e;
    EXPECT_NE(e.find("reached by 100 of the 256 threads of block (0, 0, 0)"), std::string::npos) << e;
}

TEST_F(Blocks, BlockAndSharedMemoryLimitsAreCheckedAtCompile) {
    int line = __LINE__ + 2;
    Kernel1D big_block = [](BufferFloat x) noexcept {
        set_block_size(2048);
        x.write(dispatch_id().x, 1.0f);
    };
    std::string e = error_of([&] { device.compile(big_block, {.name = "big_block"}); });
    const std::string want = "kernel 'big_block': its block of 2048 x 1 x 1 = 2048 threads (set_block_size at " + here(line);
    EXPECT_NE(e.find(want), std::string::npos) << e;
    EXPECT_NE(e.find("maxComputeWorkGroupInvocations"), std::string::npos) << e;

    Kernel1D big_shared = [](BufferFloat x) noexcept {
        Shared<float4> s(4096);   // 64 KiB
        s.write(thread_id().x, make_float4(1.0f));
        x.write(dispatch_id().x, s.read(thread_id().x).x);
    };
    e = error_of([&] { device.compile(big_shared, {.name = "big_shared"}); });
    EXPECT_NE(e.find("kernel 'big_shared' uses 65536 bytes of shared memory per block"), std::string::npos) << e;
    EXPECT_NE(e.find("maxComputeSharedMemorySize"), std::string::npos) << e;

    line = __LINE__ + 2;
    Kernel1D fixed = [](BufferFloat x) noexcept {
        set_block_size(128);
        x.write(dispatch_id().x, 1.0f);
    };
    e = error_of([&] { device.compile(fixed, {.name = "fixed", .block = {64, 1, 1}}); });
    const std::string differs = "the option's block of 64 x 1 x 1 differs from the kernel's 128 x 1 x 1 (set_block_size at ";
    EXPECT_NE(e.find(differs + here(line)), std::string::npos) << e;
    e = error_of([&] { device.compile(fixed, {.name = "fixed", .block = {128, 2, 1}}); });
    EXPECT_NE(e.find("differs"), std::string::npos) << e;
    Kernel1D free_1d = [](BufferFloat x) noexcept { x.write(dispatch_id().x, 1.0f); };
    e = error_of([&] { device.compile(free_1d, {.name = "free", .block = {16, 16, 1}}); });
    EXPECT_NE(e.find("a 1D kernel's block of 16 x 16 x 1 must be 1 in y and z"), std::string::npos) << e;
}

TEST_F(Blocks, RecordingErrorsNameTheLine) {
    std::string e = error_of([] {
        Callable f = [](Float x) noexcept {
            set_block_size(64);
            return x;
        };
    });
    EXPECT_NE(e.find("set_block_size at " + here(__LINE__ - 4) + " inside callable"), std::string::npos) << e;
    e = error_of([] {
        Kernel2D k = [](BufferFloat x) noexcept {
            set_block_size(16, 16, 4);
            x.write(0u, 1.0f);
        };
    });
    EXPECT_NE(e.find("set_block_size(16, 16, 4) at " + here(__LINE__ - 4) + " in a 2D kernel"), std::string::npos) << e;
    e = error_of([] {
        Kernel1D k = [](BufferFloat x) noexcept {
            Shared<float> s(0);
            x.write(0u, 1.0f);
        };
    });
    EXPECT_NE(e.find("a Shared array of 0 elements at " + here(__LINE__ - 4)), std::string::npos) << e;
    // A shared array captured into a callable belongs to the kernel that declared it.
    const int line = __LINE__ + 3;
    e = error_of([] {
        Kernel1D k = [](BufferFloat x) noexcept {
            Shared<float> s(64);
            Callable peek = [&](UInt i) noexcept { return s.read(i); };
            x.write(dispatch_id().x, peek(thread_id().x));
        };
    });
    const std::string want = "a Shared array declared at " + here(line) + " is used at " + here(line + 1);
    EXPECT_NE(e.find(want), std::string::npos) << e;
}

TEST_F(Blocks, SharedMemoryInACallableIsItsOwnPerCall) {
    // Each inlined call gets its own array (declared at module scope in the GLSL).
    Callable rotate = [](Float v) noexcept {
        Shared<float> s(64);
        s.write(thread_id().x, v);
        sync_block();
        return s.read((thread_id().x + 1u) % 64u);
    };
    Kernel1D k = [&](BufferFloat x, BufferFloat y) noexcept {
        set_block_size(64);
        UInt i = dispatch_id().x;
        Float a = rotate(x.read(i));
        Float b = rotate(a * 10.0f);
        y.write(i, b);
    };
    auto shader = device.compile(k);
    const uint32_t n = 128;
    std::vector<float> x(n);
    for (uint32_t i = 0; i < n; ++i) x[i] = float(i);
    auto xb = upload(device, stream, x);
    auto yb = device.create_buffer<float>(n);
    stream << shader(xb, yb).dispatch(n);
    auto got = download(stream, yb);
    std::vector<float> host(n);
    interpret(k, {n, 1, 1}, x, host);
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t t = i % 64, src = i - t + (t + 2) % 64;
        ASSERT_EQ(got[i], 10.0f * float(src)) << i;
    }
    EXPECT_EQ(host, got);
}

} // namespace adjoint::test
