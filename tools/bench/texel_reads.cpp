// Section "texel_reads": the same DSL kernels compiled with the buffers they only read bound as uniform texel
// buffers (the engine's choice on lavapipe, GlslOptions::texel_reads) and as storage buffers (a second device
// with DeviceOptions::texel_reads off), side by side in one run. On lavapipe (Mesa 22.3) a storage-buffer read
// is a loop over the SIMD lanes with a branch each, a texel fetch one vector gather.
#include "bench.h"

#include <random>
#include <stdexcept>

namespace adjoint::bench {

namespace {

// A triangle's screen setup, the shape the rasterizer and antialiasing read per pixel (64 bytes).
struct BenchSetup {
    float2 p0, p1, p2;
    uint2 tiles;
    float3 inv_w, z;
};

} // namespace

} // namespace adjoint::bench

ADJOINT_STRUCT(adjoint::bench::BenchSetup, p0, p1, p2, tiles, inv_w, z)

namespace adjoint::bench {

json bench_texel_reads(Env& env) {
    const uint32_t n = env.quick() ? 1u << 14 : 1u << 18, table = 4096;
    const Reps reps = env.reps({2, 10}, {1, 3});
    // Each thread reads 16 entries of a table at pseudo-random places: floats, float4s, or 64-byte structs.
    Kernel1D gather_float = [](BufferFloat t, BufferFloat out) noexcept {
        UInt i = dispatch_id().x, h = i * 2654435761u;
        Float s = 0.0f;
        for (int k = 0; k < 16; ++k) {
            h = h * 1664525u + 1013904223u;
            s += t.read((i + (h >> 20u)) & 4095u);
        }
        out.write(i, s);
    };
    Kernel1D gather_float4 = [](BufferFloat4 t, BufferFloat out) noexcept {
        UInt i = dispatch_id().x, h = i * 2654435761u;
        Float4 s = make_float4(0.0f);
        for (int k = 0; k < 16; ++k) {
            h = h * 1664525u + 1013904223u;
            s += t.read((i + (h >> 20u)) & 4095u);
        }
        out.write(i, s.x + s.y + s.z + s.w);
    };
    Kernel1D gather_struct = [](BufferVar<BenchSetup> t, BufferFloat out) noexcept {
        UInt i = dispatch_id().x, h = i * 2654435761u;
        Float s = 0.0f;
        for (int k = 0; k < 16; ++k) {
            h = h * 1664525u + 1013904223u;
            Var<BenchSetup> e = t.read((i + (h >> 20u)) & 4095u);
            s += e.p0.x + e.p1.y + e.p2.x + e.inv_w.z + e.z.y + cast<float>(e.tiles.x);
        }
        out.write(i, s);
    };

    std::mt19937 rng(5);
    std::vector<float> floats(table);
    std::vector<float4> float4s(table);
    std::vector<BenchSetup> setups(table);
    for (uint32_t k = 0; k < table; ++k) {
        auto r = [&] { return float(rng() % 64) / 8.0f; };   // exact in float sums of a few dozen terms
        floats[k] = r();
        float4s[k] = float4(r(), r(), r(), r());
        setups[k] = BenchSetup{float2(r(), r()), float2(r(), r()), float2(r(), r()), uint2(rng() % 16, 0),
                               float3(r(), r(), r()), float3(r(), r(), r())};
    }

    Context context;
    DeviceOptions plain_options = DeviceOptions::from_environment();
    plain_options.texel_reads = false;
    Device plain = context.create_device(plain_options);
    Stream plain_stream = plain.create_stream();
    Device* devices[2] = {&env.device(), &plain};   // texel reads (where the device is a CPU one), storage reads
    Stream* streams[2] = {&env.stream(), &plain_stream};

    // One gather on both devices: compiled, its table uploaded and warmed up on each, then timed alternately.
    auto one_case = [&](const auto& kernel, const char* name, const auto& host) {
        using T = typename std::decay_t<decltype(host)>::value_type;
        Samples samples[2];
        std::vector<float> results[2];
        std::string glsl[2];
        std::vector<Shader<1>> shaders;
        std::vector<Buffer<T>> tables;
        std::vector<Buffer<float>> outs;
        for (int r = 0; r < 2; ++r) {
            shaders.push_back(devices[r]->compile(kernel, {.name = std::string("bench_gather_") + name}));
            tables.push_back(devices[r]->create_buffer<T>(table));
            outs.push_back(devices[r]->create_buffer<float>(n));
            glsl[r] = shaders[r].glsl();
            *streams[r] << tables[r].copy_from(host.data()) << synchronize();
        }
        auto step = [&](int r) { *streams[r] << shaders[r](tables[r], outs[r]).dispatch(n) << synchronize(); };
        for (int r = 0; r < 2; ++r) {
            for (int w = 0; w < reps.warmup; ++w) step(r);
            results[r].resize(n);
            *streams[r] << outs[r].copy_to(results[r].data()) << synchronize();
        }
        for (int i = 0; i < reps.reps; ++i)
            for (int r = 0; r < 2; ++r) {
                auto t0 = Clock::now();
                step(r);
                samples[r].add(ms_since(t0));
            }
        if (results[0] != results[1])
            throw std::runtime_error(std::string("texel_reads: ") + name + ": texel and storage reads gave different sums");
        json c;
        c["texel_buffers"] = samples[0].to_json();
        // false where the device is not a CPU one (GlslOptions::texel_reads)
        c["texel_buffers"]["used"] = glsl[0].find("usamplerBuffer") != std::string::npos;
        c["storage_buffers"] = samples[1].to_json();
        c["storage_over_texel"] = samples[1].median() / samples[0].median();
        return c;
    };

    json j;
    j["threads"] = n;
    j["reads_per_thread"] = 16;
    j["timed"] = "one dispatch and a synchronize";
    j["float"] = one_case(gather_float, "float", floats);
    j["float4"] = one_case(gather_float4, "float4", float4s);
    j["struct_64_bytes"] = one_case(gather_struct, "struct", setups);
    return j;
}

} // namespace adjoint::bench
