// Data in and out of kernels: ADJOINT_STRUCT buffers (host/GLSL padding), images, and copies both ways.
#include "support/device_fixture.h"
#include "support/error_text.h"
#include "support/host_run.h"

// A float after a float3: C++ puts it at offset 16 (float3 takes 16 bytes), std430 would put it at 12, so
// the GLSL struct needs a pad. vel (a float2) after an int checks 8-byte alignment.
struct Particle {
    adjoint::float3 pos;
    float mass;
    int32_t serial;
    adjoint::float2 vel;
};
ADJOINT_STRUCT(Particle, pos, mass, serial, vel)
static_assert(offsetof(Particle, mass) == 16 && offsetof(Particle, vel) == 24 && sizeof(Particle) == 32);

// Nested structs and an array member: a pad after the float3 again, before the array.
struct Inner {
    float a;
    int32_t b;
};
ADJOINT_STRUCT(Inner, a, b)
struct Outer {
    Inner inner;
    adjoint::float3 v;
    std::array<float, 3> arr;
    uint32_t tag;
};
ADJOINT_STRUCT(Outer, inner, v, arr, tag)
static_assert(offsetof(Outer, v) == 16 && offsetof(Outer, arr) == 32 && offsetof(Outer, tag) == 44 && sizeof(Outer) == 48);

// A bool member: 1 byte in C++, 4 in GLSL, so the 3 padding bytes after it would be read as part of it.
struct Flagged {
    float x;
    bool on;
};
ADJOINT_STRUCT(Flagged, x, on)

// A namespaced struct named like the push-constant block, with members named after GLSL keywords: all
// legal C++, so codegen must keep them from clashing in GLSL.
namespace scene {
struct Push {
    float sample;
    int32_t input;
    adjoint::float2 output;
    float patch;
};
} // namespace scene
ADJOINT_STRUCT(scene::Push, sample, input, output, patch)

namespace adjoint::test {

class Data : public DeviceTest {};

TEST_F(Data, BufferCopiedOnTheDeviceInStreamOrder) {
    // A kernel writes a, a copy takes a to b, a kernel reads b while another writes a again: the copy sees the
    // first kernel's values and none of the last one's (the stream puts barriers on both sides of it).
    Kernel1D fill = [](BufferFloat a, Float k) noexcept { a.write(dispatch_id().x, cast<float>(dispatch_id().x) * k); };
    Kernel1D add_one = [](BufferFloat b, BufferFloat c) noexcept { c.write(dispatch_id().x, b.read(dispatch_id().x) + 1.0f); };
    auto fills = device.compile(fill);
    auto adds = device.compile(add_one);
    constexpr uint32_t n = 1000;
    auto a = device.create_buffer<float>(n), b = device.create_buffer<float>(n), c = device.create_buffer<float>(n);
    std::vector<float> got_a(n), got_b(n), got_c(n);
    stream << fills(a, 2.0f).dispatch(n) << a.copy_to(b) << adds(b, c).dispatch(n) << fills(a, 3.0f).dispatch(n)
           << a.copy_to(got_a.data()) << b.copy_to(got_b.data()) << c.copy_to(got_c.data()) << synchronize();
    for (uint32_t i = 0; i < n; ++i) {
        ASSERT_EQ(got_b[i], 2.0f * float(i)) << i;
        ASSERT_EQ(got_c[i], 2.0f * float(i) + 1.0f) << i;
        ASSERT_EQ(got_a[i], 3.0f * float(i)) << i;
    }
}

// A range of one buffer into a range of another (byte offsets 12 and 20, not multiples of 16): only dst's
// [dst_offset, dst_offset + count) changes, to src's [offset, offset + count); a count of 0 changes nothing.
TEST_F(Data, BufferRangeCopiedOnTheDevice) {
    std::vector<float> from(10), to(12, -1.0f), got(12);
    for (uint32_t i = 0; i < 10; ++i) from[i] = float(i) + 0.5f;
    auto a = device.create_buffer<float>(10), b = device.create_buffer<float>(12);
    stream << a.copy_from(from.data()) << b.copy_from(to.data()) << a.copy_to(b, 3, 5, 4) << a.copy_to(b, 9, 0, 1)
           << a.copy_to(b, 0, 11, 0) << b.copy_to(got.data()) << synchronize();
    for (uint32_t i = 0; i < 12; ++i) {
        const float want = i == 0 ? from[9] : i >= 5 && i < 9 ? from[i - 2] : -1.0f;
        EXPECT_EQ(got[i], want) << i;
    }
}

TEST_F(Data, StructAndMemberNamesThatGlslReserves) {
    Kernel1D k = [](BufferVar<scene::Push> buf, Float bump) noexcept {
        auto i = dispatch_id().x;
        Var<scene::Push> p = buf.read(i);
        p.sample = p.sample + bump;
        p.input = p.input * 2;
        p.output = p.output.yx();
        p.patch = cast<float>(p.input);
        buf.write(i, p);
    };
    const uint32_t n = 20;
    std::vector<scene::Push> host(n);
    for (uint32_t i = 0; i < n; ++i) host[i] = scene::Push{float(i), int32_t(i), float2(1.0f, float(i)), 0.0f};
    auto shader = device.compile(k);
    auto buf = upload(device, stream, host);
    stream << shader(buf, 0.5f).dispatch(n);
    auto got = download(stream, buf);
    for (uint32_t i = 0; i < n; ++i) {
        EXPECT_EQ(got[i].sample, float(i) + 0.5f) << i;
        EXPECT_EQ(got[i].input, int32_t(2 * i)) << i;
        EXPECT_EQ(got[i].output, float2(float(i), 1.0f)) << i;
        EXPECT_EQ(got[i].patch, float(2 * i)) << i;
    }
}

namespace {

std::vector<Particle> make_particles(size_t n) {
    auto r = random_floats(n * 6, -10, 10, 9);
    std::vector<Particle> ps(n);
    for (size_t i = 0; i < n; ++i)
        ps[i] = Particle{float3(r[6 * i], r[6 * i + 1], r[6 * i + 2]), r[6 * i + 3], int32_t(i) * 3 - 50,
                         float2(r[6 * i + 4], r[6 * i + 5])};
    return ps;
}

Particle step_particle(Particle p, float dt) {
    p.pos = float3(p.pos.x + p.vel.x * dt, p.pos.y + p.vel.y * dt, p.pos.z + p.mass);
    p.mass = p.mass * 2.0f;
    p.serial = p.serial + 1;
    p.vel = float2(p.vel.y, -p.vel.x);
    return p;
}

void expect_particles_equal(const std::vector<Particle>& got, const std::vector<Particle>& want, const char* who) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        const Particle &g = got[i], &w = want[i];
        bool same = g.pos == w.pos && g.mass == w.mass && g.serial == w.serial && g.vel == w.vel;
        if (!same) {
            ADD_FAILURE() << who << ", particle " << i << ": got pos (" << g.pos.x << ", " << g.pos.y << ", " << g.pos.z
                          << ") mass " << g.mass << " serial " << g.serial << " vel (" << g.vel.x << ", " << g.vel.y
                          << "), want pos (" << w.pos.x << ", " << w.pos.y << ", " << w.pos.z << ") mass " << w.mass
                          << " serial " << w.serial << " vel (" << w.vel.x << ", " << w.vel.y << ")";
            return;
        }
    }
}

} // namespace

TEST_F(Data, StructBufferReadAndWrittenInPlace) {
    Kernel1D k = [](BufferVar<Particle> ps, Float dt) noexcept {
        auto i = dispatch_id().x;
        Var<Particle> p = ps.read(i);
        p.pos = make_float3(p.pos.x + p.vel.x * dt, p.pos.y + p.vel.y * dt, p.pos.z + p.mass);
        p.mass *= 2.0f;
        p.serial += 1;
        p.vel = make_float2(p.vel.y, -p.vel.x);
        ps.write(i, p);
    };
    const size_t n = 333;
    auto host = make_particles(n);
    std::vector<Particle> want;
    for (auto& p : host) want.push_back(step_particle(p, 0.25f));

    auto shader = device.compile(k);
    auto buf = upload(device, stream, host);
    stream << shader(buf, 0.25f).dispatch(uint32_t(n));
    expect_particles_equal(download(stream, buf), want, "device");

    auto interp = host;
    float dt = 0.25f;
    interpret(k, {uint32_t(n), 1, 1}, interp, dt);
    expect_particles_equal(interp, want, "interpreter");
}

TEST_F(Data, StructFromOneBufferIntoAnother) {
    // Reads members through an Expr (by value) and builds the output member by member.
    Kernel1D k = [](BufferVar<Particle> in, BufferVar<Particle> out, BufferFloat4 flat) noexcept {
        auto i = dispatch_id().x;
        auto p = in.read(i);
        Var<Particle> q;
        q.pos = p.pos * 2.0f;
        q.mass = p.mass + 1.0f;
        q.serial = p.serial * 2;
        q.vel = p.vel;
        out.write(i, q);
        flat.write(i, make_float4(p.pos, p.mass));
    };
    const size_t n = 100;
    auto host = make_particles(n);
    auto shader = device.compile(k);
    auto in = upload(device, stream, host);
    auto out = device.create_buffer<Particle>(n);
    auto flat = device.create_buffer<float4>(n);
    stream << shader(in, out, flat).dispatch(uint32_t(n));
    auto got = download(stream, out);
    auto got_flat = download(stream, flat);
    std::vector<Particle> want;
    for (auto& p : host)
        want.push_back(Particle{float3(p.pos.x * 2, p.pos.y * 2, p.pos.z * 2), p.mass + 1, p.serial * 2, p.vel});
    expect_particles_equal(got, want, "device");
    for (size_t i = 0; i < n; ++i)
        EXPECT_EQ(got_flat[i], float4(host[i].pos.x, host[i].pos.y, host[i].pos.z, host[i].mass)) << i;
}

TEST_F(Data, StructPassedByValueAsAnArgument) {
    // A struct argument travels in push constants with the same padded layout as in buffers.
    Kernel1D k = [](BufferFloat4 out, Float bias, Var<Particle> p) noexcept {
        auto i = dispatch_id().x;
        out.write(i, make_float4(p.pos * cast<float>(i), p.mass + bias) + make_float4(p.vel, cast<float>(p.serial), 0.0f));
    };
    auto shader = device.compile(k);
    Particle p{float3(1, 2, 3), 0.5f, 7, float2(-1, -2)};
    auto out = device.create_buffer<float4>(4);
    stream << shader(out, 10.0f, p).dispatch(4);
    auto got = download(stream, out);
    for (uint32_t i = 0; i < 4; ++i)
        EXPECT_EQ(got[i], float4(1.0f * i - 1, 2.0f * i - 2, 3.0f * i + 7, 10.5f)) << i;
}

TEST_F(Data, BoolArgumentsAndBoolsInMemory) {
    // A bool argument on its own works (and ite of two int literals is an int)...
    Kernel1D k = [](BufferInt out, Bool flag) noexcept { out.write(dispatch_id().x, ite(flag, 1, 2)); };
    auto shader = device.compile(k);
    auto out = device.create_buffer<int32_t>(2);
    stream << shader(out, true).dispatch(1);
    EXPECT_EQ(download(stream, out)[0], 1);
    stream << shader(out, false).dispatch(1);
    EXPECT_EQ(download(stream, out)[0], 2);

    // ...but a bool inside a buffer element or a by-value vector or struct is refused at compile time, with
    // the reason, rather than reading the padding bytes as part of it.
    Kernel1D in_buffer = [](BufferVar<Flagged> buf) noexcept {
        auto i = dispatch_id().x;
        Var<Flagged> f = buf.read(i);
        f.on = !f.on;
        buf.write(i, f);
    };
    try {
        device.compile(in_buffer);
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("a buffer of Flagged, which holds a bool: C++ stores a bool in 1 byte"),
                  std::string::npos) << e.what();
    }
    Kernel1D by_value = [](BufferInt out, Bool3 flags) noexcept { out.write(0u, cast<int>(flags.y)); };
    try {
        device.compile(by_value);
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("is a bool3, which holds bools"), std::string::npos) << e.what();
    }
}

TEST_F(Data, NestedStructWithArrayMember) {
    Kernel1D k = [](BufferVar<Outer> buf) noexcept {
        auto i = dispatch_id().x;
        Var<Outer> o = buf.read(i);
        o.inner.a = o.inner.a + cast<float>(o.inner.b);
        o.inner.b = o.inner.b * 3;
        o.v = o.v.zyx();
        $for (j, 3) { o.arr[j] = o.arr[j] * cast<float>(j + 1) + o.v[j]; };
        o.tag = o.tag ^ 0xffu;
        buf.write(i, o);
    };
    const size_t n = 64;
    std::vector<Outer> host(n);
    for (size_t i = 0; i < n; ++i)
        host[i] = Outer{Inner{float(i) * 0.5f, int32_t(i) - 10}, float3(float(i), 2.0f, -1.0f),
                        {1.0f, float(i), -2.0f}, uint32_t(i * 7)};
    auto want = host;
    for (auto& o : want) {
        o.inner.a += float(o.inner.b);
        o.inner.b *= 3;
        o.v = float3(o.v.z, o.v.y, o.v.x);
        for (int j = 0; j < 3; ++j) o.arr[j] = o.arr[j] * float(j + 1) + o.v[j];
        o.tag ^= 0xffu;
    }
    auto check = [&](const std::vector<Outer>& got, const char* who) {
        for (size_t i = 0; i < n; ++i) {
            const Outer &g = got[i], &w = want[i];
            EXPECT_TRUE(g.inner.a == w.inner.a && g.inner.b == w.inner.b && g.v == w.v && g.arr == w.arr && g.tag == w.tag)
                << who << ", element " << i << ": inner (" << g.inner.a << ", " << g.inner.b << ") arr[1] " << g.arr[1]
                << " (want " << w.arr[1] << ") tag " << g.tag << " (want " << w.tag << ")";
        }
    };
    auto shader = device.compile(k);
    auto buf = upload(device, stream, host);
    stream << shader(buf).dispatch(uint32_t(n));
    check(download(stream, buf), "device");
    auto interp = host;
    interpret(k, {uint32_t(n), 1, 1}, interp);
    check(interp, "interpreter");
}

// ---- images ---------------------------------------------------------------------------------------------

TEST_F(Data, ImageCopyRoundTripIsExact) {
    const uint32_t w = 13, h = 7;
    auto img = device.create_image<float>(PixelFormat::RGBA32F, w, h);
    EXPECT_EQ(img.width(), w);
    EXPECT_EQ(img.height(), h);
    auto r = random_floats(w * h * 4, -1e6f, 1e6f, 4);
    std::vector<float4> texels(w * h), back(w * h);
    for (size_t i = 0; i < texels.size(); ++i) texels[i] = float4(r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3]);
    stream << img.copy_from(texels.data()) << img.copy_to(back.data()) << synchronize();
    EXPECT_EQ(back, texels);
}

TEST_F(Data, ImageReadWriteOverAnOddSize) {
    // 37x23 is not a multiple of the 16x16 block: every texel must be written exactly once, none outside.
    Kernel2D k = [](ImageFloat src, ImageFloat dst, Float scale) noexcept {
        auto p = dispatch_id().xy();
        Float4 c = src.read(p);
        auto size = src.size();
        dst.write(p, make_float4(c.w, c.z * scale, cast<float>(p.x + p.y * size.x), cast<float>(size.y)));
    };
    const uint32_t w = 37, h = 23;
    auto src = device.create_image<float>(PixelFormat::RGBA32F, w, h);
    auto dst = device.create_image<float>(PixelFormat::RGBA32F, w, h);
    auto r = random_floats(w * h * 4, -5, 5, 6);
    std::vector<float4> texels(w * h), sentinel(w * h, float4(-7.0f)), got(w * h);
    for (size_t i = 0; i < texels.size(); ++i) texels[i] = float4(r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3]);
    auto shader = device.compile(k);
    stream << src.copy_from(texels.data()) << dst.copy_from(sentinel.data()) << shader(src, dst, 3.0f).dispatch(w, h)
           << dst.copy_to(got.data()) << synchronize();

    HostImage hsrc{w, h, texels}, hdst{w, h, sentinel};
    float scale = 3.0f;
    interpret(k, {w, h, 1}, hsrc, hdst, scale);
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) {
            const float4& c = texels[y * w + x];
            float4 want(c.w, c.z * 3.0f, float(x + y * w), float(h));
            EXPECT_EQ(got[y * w + x], want) << "device at " << x << "," << y;
            EXPECT_EQ(hdst.texels[y * w + x], want) << "interpreter at " << x << "," << y;
        }
}

TEST_F(Data, ImageWrittenInPlaceTwice) {
    Kernel2D k = [](ImageFloat img) noexcept {
        auto p = dispatch_id().xy();
        img.write(p, img.read(p) * 2.0f + make_float4(1.0f));
    };
    const uint32_t w = 5, h = 3;
    auto img = device.create_image<float>(PixelFormat::RGBA32F, w, h);
    std::vector<float4> texels(w * h), got(w * h);
    for (uint32_t i = 0; i < w * h; ++i) texels[i] = float4(float(i), -float(i), 0.5f, 2.0f);
    auto shader = device.compile(k);
    // The second dispatch must see the first one's writes (the stream orders them).
    stream << img.copy_from(texels.data()) << shader(img).dispatch(w, h) << shader(img).dispatch(w, h)
           << img.copy_to(got.data()) << synchronize();
    for (uint32_t i = 0; i < w * h; ++i) {
        const float4& t = texels[i];
        auto twice = [](float v) { return (v * 2 + 1) * 2 + 1; };
        EXPECT_EQ(got[i], float4(twice(t.x), twice(t.y), twice(t.z), twice(t.w))) << i;
    }
}

// One buffer seen as another element type (Buffer::as): a kernel writes float4s that another reads as floats
// and atomically adds to, in the same memory; the views' sizes count their own elements (what a kernel's
// size() sees too); a size that is not a whole number of the other type's elements is refused.
TEST_F(Data, BufferSeenAsAnotherElementType) {
    Kernel1D pixels = [](BufferFloat4 p) noexcept {
        Float x = cast<float>(dispatch_id().x);
        p.write(dispatch_id().x, make_float4(x, x + 0.25f, x + 0.5f, x + 0.75f));
    };
    Kernel1D floats = [](BufferFloat f, BufferUInt sizes) noexcept {
        f.atomic(dispatch_id().x * 4u + 1u).fetch_add(100.0f);
        sizes.write(dispatch_id().x, f.size());
    };
    constexpr uint32_t n = 6;
    auto px = device.compile(pixels);
    auto fl = device.compile(floats);
    auto buffer = device.create_buffer<float>(4 * n);
    auto sizes = device.create_buffer<uint32_t>(n);
    const Buffer<float4> as_pixels = buffer.as<float4>();
    EXPECT_EQ(as_pixels.size(), n);
    EXPECT_EQ(as_pixels.as<float>().size(), 4 * n);
    stream << px(as_pixels).dispatch(n) << fl(buffer, sizes).dispatch(n);
    const std::vector<float> got = download(stream, buffer);
    const std::vector<uint32_t> got_sizes = download(stream, sizes);
    for (uint32_t i = 0; i < n; ++i) {
        EXPECT_EQ(got[4 * i], float(i)) << i;
        EXPECT_EQ(got[4 * i + 1], float(i) + 100.25f) << i;
        EXPECT_EQ(got[4 * i + 3], float(i) + 0.75f) << i;
        EXPECT_EQ(got_sizes[i], 4 * n) << i;
    }
    auto odd = device.create_buffer<float>(4 * n + 2);
    EXPECT_EQ(error_of([&] { (void)odd.as<float4>(); }),
              "Buffer::as: 26 elements of 4 bytes are not a whole number of 16-byte elements");
}

TEST_F(Data, BufferCopiesFillZeroAndBufferSize) {
    Kernel1D k = [](BufferFloat3 v, BufferUInt sizes) noexcept {
        auto i = dispatch_id().x;
        v.write(i, v.read(i) + make_float3(1.0f, 2.0f, 3.0f));
        sizes.write(i, v.size() * 10u + sizes.size());
    };
    const uint32_t n = 10;
    std::vector<float3> host(n);
    for (uint32_t i = 0; i < n; ++i) host[i] = float3(float(i), float(i) * 2, float(i) * 3);
    auto shader = device.compile(k);
    auto v = upload(device, stream, host);
    auto sizes = device.create_buffer<uint32_t>(n);
    stream << sizes.fill_zero() << shader(v, sizes).dispatch(n);
    auto got = download(stream, v);
    auto got_sizes = download(stream, sizes);
    for (uint32_t i = 0; i < n; ++i) {
        EXPECT_EQ(got[i], float3(float(i) + 1, float(i) * 2 + 2, float(i) * 3 + 3)) << i;
        EXPECT_EQ(got_sizes[i], n * 10 + n) << i;
    }
    std::vector<uint32_t> zeros(n, 123);
    stream << sizes.fill_zero() << sizes.copy_to(zeros.data()) << synchronize();
    EXPECT_EQ(zeros, std::vector<uint32_t>(n, 0));
}

} // namespace adjoint::test
