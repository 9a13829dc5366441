// Section "tiny_dispatches": many one-thread dispatches in one submission, through the DSL API (record
// and execute), with the same work on the plain vk layer as the floor the runtime sits on.
#include "bench.h"

#include "compile/glsl_compiler.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

namespace adjoint::bench {

namespace {

// The DSL kernel's twin: same work-group size (the DSL's 1D default, 256) and bounds check, so any
// difference is the runtime's recording, not the shader.
constexpr const char* kCounter256 = R"(#version 450
layout(local_size_x = 256) in;
layout(set = 0, binding = 0, std430) buffer C { uint c[]; };
layout(push_constant) uniform P { uint n; } pc;
void main() {
    if (gl_GlobalInvocationID.x >= pc.n) return;
    c[0] = c[0] + 1u;
}
)";

// What one writes by hand for a single thread: a one-invocation work group.
constexpr const char* kCounter1 = R"(#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0, std430) buffer C { uint c[]; };
layout(push_constant) uniform P { uint n; } pc;
void main() {
    c[0] = c[0] + 1u;
}
)";

// Record / execute / total timings of `count` dispatches per rep, and the rates they give.
struct Split {
    Samples record, execute, total;
    json to_json(size_t count) const {
        json j;
        j["end_to_end"] = total.to_json();
        j["end_to_end"]["dispatches_per_s"] = double(count) / (total.median() * 1e-3);
        j["end_to_end"]["us_per_dispatch"] = total.median() * 1e3 / double(count);
        j["record_only"] = record.to_json();
        j["record_only"]["dispatches_per_s"] = double(count) / (record.median() * 1e-3);
        j["record_only"]["us_per_dispatch"] = record.median() * 1e3 / double(count);
        j["execute_only"] = execute.to_json();
        j["execute_only"]["us_per_dispatch"] = execute.median() * 1e3 / double(count);
        return j;
    }
};

// Runs warm-ups and reps of: record `count` dispatches (timed), then submit and wait (timed).
template <typename Record, typename Sync>
Split run_split(Reps r, Record&& record, Sync&& sync) {
    Split s;
    for (int i = 0; i < r.warmup + r.reps; ++i) {
        auto t0 = Clock::now();
        record();
        auto t1 = Clock::now();
        sync();
        auto t2 = Clock::now();
        if (i < r.warmup) continue;   // warm-ups grow the descriptor pools and staging to steady state
        using ms = std::chrono::duration<double, std::milli>;
        s.record.add(ms(t1 - t0).count());
        s.execute.add(ms(t2 - t1).count());
        s.total.add(ms(t2 - t0).count());
    }
    return s;
}

void expect_count(const char* what, uint32_t got, uint64_t want) {
    if (got != want)
        throw std::runtime_error(std::string("tiny_dispatches: ") + what + " counted " + std::to_string(got) +
                                 " dispatches, expected " + std::to_string(want));
}

} // namespace

json bench_tiny_dispatches(Env& env) {
    const size_t count = env.quick() ? 1000 : 10000;
    const Reps reps = env.reps({1, 5}, {1, 2});
    const uint64_t expected = uint64_t(count) * uint64_t(reps.warmup + reps.reps);

    // Every dispatch reads and writes the same element, so the stream must order them with barriers; the
    // final count checks that all of them ran.
    Device& device = env.device();
    Stream& stream = env.stream();
    Kernel1D kernel = [](BufferUInt c) noexcept { c.write(0u, c.read(0u) + 1u); };
    auto shader = device.compile(kernel, {.name = "bench_tiny_dispatch"});
    auto counter = device.create_buffer<uint32_t>(1);
    stream << counter.fill_zero() << synchronize();
    Split dsl = run_split(
        reps,
        [&] {
            for (size_t k = 0; k < count; ++k) stream << shader(counter).dispatch(1);
        },
        [&] { stream << synchronize(); });
    uint32_t dsl_count = 0;
    stream << counter.copy_to(&dsl_count) << synchronize();
    expect_count("the DSL kernel", dsl_count, expected);

    // The vk layer with the same shader: the floor set by the driver and the vk::Stream itself.
    auto ctx = env.vk_context();
    auto vk_case = [&](const std::string& glsl, const char* name, uint32_t push_bytes) {
        vk::Pipeline pipeline(ctx, compile::compile_glsl(glsl, name, true),
                              vk::PipelineLayoutDesc{1, 0, push_bytes, {}}, name);
        vk::Buffer c(ctx, 4);
        vk::Stream vs(ctx);
        vs.fill_zero(c);
        vs.synchronize();
        vk::Bindings b;
        b.buffers = {&c};
        b.buffer_written = {true};
        // The dispatch size (1, 1, 1) in the first words (the hand-written shaders read only n = x).
        const uint32_t size[3] = {1, 1, 1};
        b.push_constants.assign(push_bytes, std::byte{0});
        std::memcpy(b.push_constants.data(), size, std::min<size_t>(push_bytes, sizeof size));
        Split s = run_split(
            reps,
            [&] {
                for (size_t k = 0; k < count; ++k) vs.dispatch(pipeline, b, 1, 1, 1);
            },
            [&] { vs.synchronize(); });
        uint32_t got = 0;
        vs.download(c, 0, &got, 4);
        vs.synchronize();
        expect_count(name, got, expected);
        return s;
    };
    Split hand256 = vk_case(kCounter256, "handwritten_counter_256", 4);
    Split hand1 = vk_case(kCounter1, "handwritten_counter_1", 4);
    auto dsl_layout = emit_like_runtime(env, *kernel.function(), shader.name(), shader.glsl());
    if (dsl_layout.uses_status || dsl_layout.buffer_count != 1 || dsl_layout.push_bytes < 12)
        throw std::runtime_error("tiny_dispatches: the DSL kernel's layout changed; update the bench");
    Split dsl_glsl = vk_case(dsl_layout.source, "dsl_glsl_counter", dsl_layout.push_bytes);

    json j;
    j["dispatches_per_submission"] = count;
    j["kernel"] = "c[0] = c[0] + 1 (one thread; each dispatch depends on the previous one)";
    j["dsl"] = dsl.to_json(count);
    j["handwritten_glsl_vk_local_size_256"] = hand256.to_json(count);
    j["handwritten_glsl_vk_local_size_1"] = hand1.to_json(count);
    j["dsl_glsl_on_vk"] = dsl_glsl.to_json(count);   // the DSL's shader without the runtime's dispatch path
    double e2e = double(count) / (dsl.total.median() * 1e-3);
    double rec = double(count) / (dsl.record.median() * 1e-3);
    j["dsl_record_over_vk_record"] = dsl.record.median() / hand256.record.median();
    j["checks"] = json::array({env.target("tiny_dispatches", "dsl_end_to_end_dispatches_per_s", e2e, ">=", 10000,
                                          "dispatches/s"),
                               env.target("tiny_dispatches", "dsl_record_only_dispatches_per_s", rec, ">=", 10000,
                                          "dispatches/s")});
    return j;
}

} // namespace adjoint::bench
