// Host options: DeviceOptions read from the environment once (its defaults otherwise), and the device list.
#include <adjoint/adjoint.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <optional>
#include <string>

// Read through a texel buffer's words: a pad after the float3 (C++ puts the float at 16), a nested struct and an
// array member, as in data_test.cpp.
struct TexelInner {
    float a;
    int32_t b;
};
ADJOINT_STRUCT(TexelInner, a, b)
struct TexelRecord {
    adjoint::float3 p;
    float w;
    TexelInner inner;
    adjoint::float2 uv;
    std::array<uint32_t, 3> ids;
    int32_t tag;
};
ADJOINT_STRUCT(TexelRecord, p, w, inner, uv, ids, tag)
static_assert(sizeof(TexelRecord) == 64 && sizeof(TexelInner) == 8);   // texels of 4 and 2 words

namespace adjoint::test {

namespace {

// Sets (or unsets) an environment variable for a scope.
class ScopedEnv {
public:
    ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value) ::setenv(name, value->c_str(), 1);
        else ::unsetenv(name);
    }
    ~ScopedEnv() {
        if (old_) ::setenv(name_, old_->c_str(), 1);
        else ::unsetenv(name_);
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

// The test environment's validation setting, as explicit options (any validation message fails a test).
DeviceOptions defaults() {
    DeviceOptions o;
    o.validation = DeviceOptions::from_environment().validation;
    return o;
}

} // namespace

TEST(DeviceOptions, FromEnvironmentReadsEachVariable) {
    {
        ScopedEnv d("ADJOINT_DEVICE", std::nullopt), v("ADJOINT_VALIDATION", std::nullopt);
        ScopedEnv f("ADJOINT_NO_FLOAT_ATOMICS", std::nullopt), l("ADJOINT_LOOP_LIMIT", std::nullopt);
        ScopedEnv t("ADJOINT_NO_TEXEL_READS", std::nullopt), b("ADJOINT_LOCAL_TAPE_BYTES", std::nullopt);
        DeviceOptions o = DeviceOptions::from_environment();
        EXPECT_EQ(o.device, "");
        EXPECT_FALSE(o.validation);
        EXPECT_TRUE(o.float_atomics);
        EXPECT_TRUE(o.texel_reads);
        EXPECT_FALSE(o.loop_limit.has_value());
        EXPECT_FALSE(o.local_tape_bytes.has_value());
    }
    ScopedEnv d("ADJOINT_DEVICE", "llvm"), v("ADJOINT_VALIDATION", "1");
    ScopedEnv f("ADJOINT_NO_FLOAT_ATOMICS", "1"), l("ADJOINT_LOOP_LIMIT", "0");
    ScopedEnv t("ADJOINT_NO_TEXEL_READS", "1"), b("ADJOINT_LOCAL_TAPE_BYTES", "4096");
    DeviceOptions o = DeviceOptions::from_environment();
    EXPECT_EQ(o.device, "llvm");
    EXPECT_TRUE(o.validation);
    EXPECT_FALSE(o.float_atomics);
    EXPECT_FALSE(o.texel_reads);
    ASSERT_TRUE(o.loop_limit.has_value());
    EXPECT_EQ(*o.loop_limit, 0u);
    EXPECT_EQ(o.local_tape_bytes, std::optional<uint32_t>(4096));
    ScopedEnv off("ADJOINT_NO_FLOAT_ATOMICS", "0");
    EXPECT_TRUE(DeviceOptions::from_environment().float_atomics);
}

TEST(DeviceOptions, ExplicitOptionsDoNotReadTheEnvironment) {
    ScopedEnv d("ADJOINT_DEVICE", "no-such-device");
    Context ctx;
    try {
        ctx.create_device();   // the environment's options: nothing matches
        FAIL() << "expected an Error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("ADJOINT_DEVICE=no-such-device does not match"), std::string::npos)
            << e.what();
    }
    Device device = ctx.create_device(defaults());   // explicit options: the best ranked device
    EXPECT_FALSE(device.name().empty());
}

TEST(DeviceOptions, FloatAtomicsOffWritesCompareAndSwapLoops) {
    Kernel1D k = [](BufferFloat sum, BufferFloat x) noexcept {
        sum.atomic(0u).fetch_add(x.read(dispatch_id().x));
    };
    Context ctx;
    DeviceOptions o = defaults();
    o.float_atomics = false;
    Device cas = ctx.create_device(o);
    auto shader = cas.compile(k);
    EXPECT_NE(shader.glsl().find("atomicCompSwap"), std::string::npos) << shader.glsl();
    EXPECT_EQ(shader.glsl().find("atomicAdd("), std::string::npos) << shader.glsl();
    // And it runs: 100 ones sum to 100.
    auto sum = cas.create_buffer<float>(1);
    auto x = cas.create_buffer<float>(100);
    std::vector<float> ones(100, 1.0f), out(1, -1.0f);
    float zero = 0.0f;
    Stream stream = cas.create_stream();
    stream << sum.copy_from(&zero) << x.copy_from(ones.data()) << shader(sum, x).dispatch(100)
           << sum.copy_to(out.data()) << synchronize();
    EXPECT_EQ(out[0], 100.0f);
}

// On lavapipe the buffers a kernel only reads are texel buffers (GlslOptions::texel_reads); every element type
// reads the same values through them as through storage buffers, sizes included, and texel_reads = false turns
// them off.
TEST(DeviceOptions, TexelReadsReadWhatStorageBuffersRead) {
    Kernel1D k = [](BufferFloat a, BufferFloat2 b, BufferFloat3 c, BufferVar<uint3> d, BufferVar<float4x4> m,
                    BufferVar<TexelRecord> r, BufferVar<TexelInner> s, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Var<TexelRecord> rec = r.read(i);
        Float4x4 mat = m.read(i);
        UInt3 ids = d.read(i);
        Float v[] = {a.read(i), b.read(i).x, b.read(i).y, c.read(i).x, c.read(i).y, c.read(i).z,
                     cast<float>(ids.x), cast<float>(ids.z), mat[0].y, mat[2].x, mat[3].w, rec.p.z, rec.w,
                     rec.inner.a, cast<float>(rec.inner.b), rec.uv.y, cast<float>(rec.ids[2]), cast<float>(rec.tag),
                     cast<float>(a.size()), cast<float>(c.size()), cast<float>(m.size()), cast<float>(r.size()),
                     s.read(i).a, cast<float>(s.read(i).b)};
        for (uint32_t j = 0; j < 24; ++j) out.write(i * 24u + j, v[j]);
    };
    const uint32_t n = 37;
    std::vector<float> a(n), want;
    std::vector<float2> b(n);
    std::vector<float3> c(n);
    std::vector<uint3> d(n);
    std::vector<float4x4> m(n);
    std::vector<TexelRecord> r(n);
    std::vector<TexelInner> q(n);
    for (uint32_t i = 0; i < n; ++i) {
        const float x = float(i);
        a[i] = x + 0.5f;
        b[i] = float2(x * 2.0f, -x);
        c[i] = float3(x, x + 1.0f, x + 2.0f);
        d[i] = uint3(i * 7u, 0u, i * 11u + 3u);
        for (int col = 0; col < 4; ++col)
            for (int row = 0; row < 4; ++row) m[i][col][row] = x * 100.0f + float(col * 4 + row);
        r[i] = TexelRecord{float3(x, -x, x * 3.0f), x / 4.0f, {x - 1.0f, -int32_t(i)}, float2(x, x * 5.0f),
                           {i, i + 1u, i + 2u}, int32_t(i) * 9 - 100};
        q[i] = TexelInner{x * 0.25f, int32_t(i) - 20};
        const float row[] = {a[i], b[i].x, b[i].y, c[i].x, c[i].y, c[i].z, float(d[i].x), float(d[i].z), m[i][0][1],
                             m[i][2][0], m[i][3][3], r[i].p.z, r[i].w, r[i].inner.a, float(r[i].inner.b), r[i].uv.y,
                             float(r[i].ids[2]), float(r[i].tag), float(n), float(n), float(n), float(n), q[i].a,
                             float(q[i].b)};
        want.insert(want.end(), std::begin(row), std::end(row));
    }
    Context ctx;
    for (bool texel : {true, false}) {
        DeviceOptions o = defaults();
        o.texel_reads = texel;
        Device device = ctx.create_device(o);
        auto shader = device.compile(k);
        const bool lavapipe = device.name().find("llvmpipe") != std::string::npos;
        EXPECT_EQ(shader.glsl().find("usamplerBuffer") != std::string::npos, texel && lavapipe) << shader.glsl();
        auto ab = device.create_buffer<float>(n);
        auto bb = device.create_buffer<float2>(n);
        auto cb = device.create_buffer<float3>(n);
        auto db = device.create_buffer<uint3>(n);
        auto mb = device.create_buffer<float4x4>(n);
        auto rb = device.create_buffer<TexelRecord>(n);
        auto sb = device.create_buffer<TexelInner>(n);
        auto out = device.create_buffer<float>(n * 24);
        std::vector<float> got(n * 24, -1.0f);
        Stream stream = device.create_stream();
        stream << ab.copy_from(a.data()) << bb.copy_from(b.data()) << cb.copy_from(c.data())
               << db.copy_from(d.data()) << mb.copy_from(m.data()) << rb.copy_from(r.data())
               << sb.copy_from(q.data()) << shader(ab, bb, cb, db, mb, rb, sb, out).dispatch(n) << out.copy_to(got.data()) << synchronize();
        for (size_t j = 0; j < want.size(); ++j)
            ASSERT_EQ(got[j], want[j]) << (texel ? "texel" : "storage") << " reads, thread " << j / 24 << ", value "
                                       << j % 24;
    }
}

TEST(DeviceOptions, LoopLimitZeroTurnsTheCheckOff) {
    // 100,000 iterations in one thread: past lavapipe's budget. With the check (the default there) the
    // synchronize reports the loop; with loop_limit 0 the loop stops silently at the budget.
    Kernel1D k = [](BufferUInt out) noexcept {
        UInt s = 0u;
        $for (j, 100000u) { s += 1u; };
        out.write(0u, s);
    };
    Context ctx;
    DeviceOptions o = defaults();
    o.loop_limit = 0u;
    Device device = ctx.create_device(o);
    auto out = device.create_buffer<uint32_t>(1);
    std::vector<uint32_t> host(1);
    Stream stream = device.create_stream();
    EXPECT_NO_THROW(stream << device.compile(k)(out).dispatch(1) << out.copy_to(host.data()) << synchronize());
    EXPECT_GT(host[0], 0u);
    EXPECT_EQ(device.compile(k).glsl().find("adjoint_status"), std::string::npos);   // no check emitted
}

TEST(DeviceOptions, ListDevicesNamesEachPhysicalDevice) {
    Context ctx;
    auto devices = ctx.list_devices();
    ASSERT_FALSE(devices.empty());
    for (size_t i = 0; i < devices.size(); ++i) {
        EXPECT_EQ(devices[i].index, i);
        EXPECT_FALSE(devices[i].name.empty());
        const std::string& t = devices[i].type;
        EXPECT_TRUE(t == "discrete" || t == "integrated" || t == "virtual" || t == "cpu" || t == "other") << t;
    }
    // Each usable entry is what DeviceOptions::device = its index gives.
    Device chosen = ctx.create_device(defaults());
    bool listed = false;
    for (const auto& d : devices) listed = listed || d.name == chosen.name();
    EXPECT_TRUE(listed) << chosen.name();
    DeviceOptions by_index = defaults();
    for (const auto& d : devices) {
        if (d.name != chosen.name()) continue;
        by_index.device = std::to_string(d.index);
        EXPECT_EQ(ctx.create_device(by_index).name(), d.name);
        if (d.name.find("llvmpipe") != std::string::npos) {
            EXPECT_EQ(d.type, "cpu");
        }
    }
}

} // namespace adjoint::test
