// Section "compile": latency of compiling a moderately sized kernel cold, from the memory cache and from
// the disk cache, and the same pipeline re-run stage by stage to show where the time goes.
#include "bench.h"

#include "runtime/runtime_internal.h"

#include "compile/glsl_compiler.h"

#include <adjoint/pipeline/lower.h>
#include <adjoint/codegen/glsl.h>
#include <adjoint/ir/printer.h>

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

namespace adjoint::bench {

namespace {

constexpr const char* kName = "bench_compile_moderate";

// A small path tracer: three callables, nested loops with a data-dependent trip count, a break, a
// switch and vector math; a few hundred lines of GLSL, like a typical kernel of the studio.
auto make_moderate_kernel() {
    Callable hit_sphere = [](Float3 ro, Float3 rd, Float4 sphere) noexcept {
        Float3 oc = ro - sphere.xyz();
        Float b = dot(oc, rd);
        Float c = dot(oc, oc) - sphere.w * sphere.w;
        Float h = b * b - c;
        Float t = -1.0f;
        $if (h > 0.0f) {
            Float s = sqrt(h);
            t = -b - s;
            $if (t < 1e-3f) { t = -b + s; };
        };
        return t;
    };
    Callable sky = [](Float3 rd) noexcept {
        Float k = saturate(0.5f * rd.y + 0.5f);
        return make_float3(1.0f) * (1.0f - k) + make_float3(0.5f, 0.7f, 1.0f) * k;
    };
    Callable hash01 = [](UInt x) noexcept {
        UInt h = x;
        h = h ^ (h >> 16u);
        h = h * 0x7feb352du;
        h = h ^ (h >> 15u);
        h = h * 0x846ca68bu;
        h = h ^ (h >> 16u);
        return cast<float>(h) * (1.0f / 4294967296.0f);
    };
    Kernel2D kernel = [&](BufferFloat4 spheres, BufferFloat4 out, UInt sphere_count, UInt bounces) noexcept {
        auto p = dispatch_id().xy();
        auto size = dispatch_size().xy();
        Float2 uv = make_float2(cast<float>(p.x) / cast<float>(size.x), cast<float>(p.y) / cast<float>(size.y)) *
                        2.0f -
                    1.0f;
        Float3 ro = make_float3(0.0f, 0.0f, -3.0f);
        Float3 rd = normalize(make_float3(uv.x, uv.y, 1.5f));
        Float3 color = make_float3(0.0f);
        Float3 throughput = make_float3(1.0f);
        UInt seed = p.y * size.x + p.x;
        $for (bounce, 0u, bounces) {
            Float best = 1e30f;
            Int hit = -1;
            $for (s, 0u, sphere_count) {
                Float t = hit_sphere(ro, rd, spheres.read(s));
                $if (t > 1e-3f && t < best) {
                    best = t;
                    hit = cast<int>(s);
                };
            };
            $if (hit < 0) {
                color += throughput * sky(rd);
                $break;
            };
            Float4 sp = spheres.read(hit);
            Float3 pos = ro + rd * best;
            Float3 n = normalize(pos - sp.xyz());
            Float3 albedo = make_float3(0.5f + 0.5f * sin(sp.w * 3.0f), 0.6f, 0.5f + 0.5f * cos(sp.w * 5.0f));
            $switch (hit % 3) {
                $case (0) {
                    rd = reflect(rd, n);
                    throughput *= albedo;
                };
                $case (1) {
                    Float u = hash01(seed + bounce * 7919u);
                    Float v = hash01(seed * 3u + bounce);
                    Float phi = 6.2831853f * u;
                    Float r = sqrt(v);
                    Float3 up = ite(abs(n.x) > 0.5f, make_float3(0.0f, 1.0f, 0.0f), make_float3(1.0f, 0.0f, 0.0f));
                    Float3 tangent = normalize(cross(n, up));
                    Float3 bitangent = cross(n, tangent);
                    rd = normalize(tangent * (r * cos(phi)) + bitangent * (r * sin(phi)) + n * sqrt(max(1.0f - v, 0.0f)));
                    throughput *= albedo * 0.8f;
                };
                $default {
                    rd = normalize(reflect(rd, n) + n * 0.2f);
                    throughput *= albedo * 0.9f;
                };
            };
            ro = pos + n * 1e-3f;
        };
        out.write(p.y * size.x + p.x, make_float4(color, 1.0f));
    };
    return kernel;
}

size_t count_lines(const std::string& s) {
    size_t n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

} // namespace

json bench_compile(Env& env) {
    namespace fs = std::filesystem;
    const Reps record_reps = env.reps({2, 10}, {1, 3});
    const Reps cold_reps = env.reps({0, 3}, {0, 1});   // each cold rep needs a fresh cache folder and device
    const Reps warm_reps = env.reps({2, 20}, {1, 3});
    const Reps disk_reps = env.reps({0, 5}, {0, 2});   // each disk rep needs a fresh device (empty memory cache)
    TempDir root("adjoint-bench-cache");
    ShaderOptions options{kName};

    // Recording happens in the Kernel constructor, before Device::compile sees the kernel.
    Samples recording = measure(record_reps, [] { auto k = make_moderate_kernel(); });
    auto kernel = make_moderate_kernel();

    // Device::compile, the public path: lowering, GLSL, IR print, cache lookup (or glslang), pipeline.
    // The cache folder is read when the device is made, so ADJOINT_CACHE_DIR is set just around that.
    Context context;
    Samples cold, warm_memory, warm_disk, device_creation;
    bool paths_as_expected = true;
    std::string glsl;
    std::string cold_dir;
    for (int r = 0; r < cold_reps.reps; ++r) {
        cold_dir = (fs::path(root.path()) / ("device-cold-" + std::to_string(r))).string();
        auto t0 = Clock::now();
        std::optional<Device> device;
        {
            ScopedEnv cache_dir("ADJOINT_CACHE_DIR", cold_dir);
            device.emplace(context.create_device());
        }
        device_creation.add(ms_since(t0));
        t0 = Clock::now();
        auto shader = device->compile(kernel, options);
        cold.add(ms_since(t0));
        paths_as_expected = paths_as_expected && !shader.cache_hit();
        glsl = shader.glsl();
        if (r + 1 == cold_reps.reps) {
            // Same device again: the SPIR-V comes from the memory cache; everything else is redone.
            warm_memory = measure(warm_reps, [&] {
                auto again = device->compile(kernel, options);
                paths_as_expected = paths_as_expected && again.cache_hit();
            });
        }
    }
    for (int r = 0; r < disk_reps.reps; ++r) {
        std::optional<Device> device;
        {
            ScopedEnv cache_dir("ADJOINT_CACHE_DIR", cold_dir);
            device.emplace(context.create_device());
        }
        auto t0 = Clock::now();
        auto shader = device->compile(kernel, options);
        warm_disk.add(ms_since(t0));
        paths_as_expected = paths_as_expected && shader.cache_hit();
    }
    if (!paths_as_expected)
        throw std::runtime_error("compile: a cold compile hit the cache or a warm one missed it; timings invalid");

    // The same pipeline stage by stage, as the runtime runs it (Device::compile exposes no split).
    // The device's own lowering and GLSL options (on lavapipe the lowering adds the loop check, and its status
    // buffer to the layout); the GLSL must come out as Device::compile's, or the pipeline below would not fit.
    auto ctx = env.vk_context();
    const detail::DeviceImpl& runtime = *env.device().impl();
    pipeline::Lowered lowered;
    Samples lowering =
        measure(warm_reps, [&] { lowered = pipeline::lower(*kernel.function(), kName, runtime.lowering); });
    codegen::GlslKernel layout;
    Samples emission = measure(warm_reps, [&] { layout = codegen::emit_glsl(*lowered.function, runtime.glsl); });
    if (layout.source != glsl)
        throw std::runtime_error("compile: the split's GLSL differs from Device::compile's; update the split");
    std::string ir_text;
    Samples ir_print = measure(warm_reps, [&] { ir_text = ir::print(*lowered.function); });

    // compile::ShaderCache::compile alone on the runtime's GLSL: miss, memory hit, disk hit.
    compile::CompileOptions compile_options;
    compile_options.device_key = "adjoint-bench";
    Samples spirv_cold, spirv_warm_memory, spirv_warm_disk;
    std::vector<uint32_t> spirv;
    std::optional<compile::ShaderCache> cache;
    for (int r = 0; r < cold_reps.reps; ++r) {
        cache.emplace(fs::path(root.path()) / ("split-cold-" + std::to_string(r)));
        auto t0 = Clock::now();
        auto result = cache->compile(glsl, kName, compile_options);
        spirv_cold.add(ms_since(t0));
        paths_as_expected = paths_as_expected && !result.cache_hit;
        spirv = result.spirv;
    }
    spirv_warm_memory = measure(warm_reps, [&] {
        paths_as_expected = paths_as_expected && cache->compile(glsl, kName, compile_options).cache_hit;
    });
    for (int r = 0; r < warm_reps.warmup + warm_reps.reps; ++r) {
        cache->clear_memory();   // so the lookup goes to the file
        auto t0 = Clock::now();
        bool hit = cache->compile(glsl, kName, compile_options).cache_hit;
        if (r >= warm_reps.warmup) spirv_warm_disk.add(ms_since(t0));
        paths_as_expected = paths_as_expected && hit;
    }
    // glslang without spirv-opt, for reference: what a cold compile would cost with the optimizer off.
    Samples glslang_unoptimized = measure(cold_reps.reps > 1 ? Reps{1, cold_reps.reps} : Reps{0, 1},
                                          [&] { compile::compile_glsl(glsl, kName, false); });
    vk::PipelineLayoutDesc desc{layout.buffer_count, layout.image_count, layout.push_bytes, layout.texel_words};
    Samples pipeline = measure(warm_reps, [&] { vk::Pipeline p(ctx, spirv, desc, kName); });
    if (!paths_as_expected)
        throw std::runtime_error("compile: a ShaderCache lookup took the wrong path; timings invalid");

    json j;
    j["kernel"] = {{"name", kName},
                   {"description", "2D path tracer: 3 callables, nested loops, break, switch"},
                   {"glsl_lines", count_lines(glsl)},
                   {"glsl_bytes", glsl.size()},
                   {"ir_lines", count_lines(ir_text)},
                   {"spirv_words", spirv.size()}};
    j["device_compile"] = {
        {"note", "Device::compile total (excludes recording, which happens in the Kernel constructor)"},
        {"cold", cold.to_json()},
        {"warm_memory_cache", warm_memory.to_json()},
        {"warm_disk_cache", warm_disk.to_json()},
        {"device_creation_not_in_timings", device_creation.to_json()}};
    const double stages_warm = lowering.median() + emission.median() + ir_print.median() +
                               spirv_warm_memory.median() + pipeline.median();
    j["split"] = {
        {"note", "the runtime's compile steps re-run one by one through the internal layers"},
        {"recording", recording.to_json()},
        {"lowering", lowering.to_json()},
        {"glsl_emission", emission.to_json()},
        {"ir_print", ir_print.to_json()},
        {"spirv_shader_cache_cold", spirv_cold.to_json()},
        {"spirv_shader_cache_warm_memory", spirv_warm_memory.to_json()},
        {"spirv_shader_cache_warm_disk", spirv_warm_disk.to_json()},
        {"glslang_unoptimized", glslang_unoptimized.to_json()},
        {"pipeline_creation", pipeline.to_json()},
        {"sum_of_warm_memory_stages_median_ms", stages_warm},
        {"glsl_matches_device_compile", layout.source == glsl}};
    j["checks"] = json::array(
        {env.target("compile", "device_compile_warm_memory_ms", warm_memory.median(), "<", 2.0, "ms"),
         env.target("compile", "device_compile_warm_disk_ms", warm_disk.median(), "<", 2.0, "ms")});
    return j;
}

} // namespace adjoint::bench
