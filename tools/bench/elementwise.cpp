// Section "elementwise": y = a*x + sin(x)*cos(x) as a DSL kernel, as hand-written GLSL on the vk layer,
// and as a single-threaded host loop.
#include "bench.h"

#include "compile/glsl_compiler.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>

namespace adjoint::bench {

namespace {

// What an engineer would write by hand: the DSL's work-group size (256) so only the code differs, a
// bounds check, and no status buffer (hand-written code has no traps to report).
constexpr const char* kHandwritten = R"(#version 450
layout(local_size_x = 256) in;
layout(set = 0, binding = 0, std430) readonly buffer X { float x[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint n; float a; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.n) return;
    float v = x[i];
    y[i] = pc.a * v + sin(v) * cos(v);
}
)";

struct HandPush {
    uint32_t n;
    float a;
};

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::fabs(a[i] - b[i])));
    return m;
}

json timing(const Samples& s, size_t n) {
    json j = s.to_json();
    // Elements per second and bytes moved (one float read, one written) per second, from the median.
    j["gelem_per_s"] = double(n) / (s.median() * 1e-3) / 1e9;
    j["gb_per_s"] = double(n) * 8 / (s.median() * 1e-3) / 1e9;
    return j;
}

} // namespace

json bench_elementwise(Env& env) {
    const size_t n = env.quick() ? size_t(1) << 16 : size_t(1) << 22;
    const Reps reps = env.reps({3, 15}, {1, 3});
    const float a = 1.5f;

    std::vector<float> host_x(n);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
    for (auto& v : host_x) v = dist(rng);

    // (a) the DSL kernel through Device::compile and Stream.
    Device& device = env.device();
    Stream& stream = env.stream();
    Kernel1D kernel = [](BufferFloat x, BufferFloat y, Float a) noexcept {
        auto i = dispatch_id().x;
        Float v = x.read(i);
        y.write(i, a * v + sin(v) * cos(v));
    };
    auto shader = device.compile(kernel, {.name = "bench_elementwise"});
    auto dx = device.create_buffer<float>(n);
    auto dy = device.create_buffer<float>(n);
    stream << dx.copy_from(host_x.data()) << dy.fill_zero() << synchronize();

    // (b) the hand-written GLSL through compile_glsl (optimized, as the runtime compiles) and the vk layer.
    auto ctx = env.vk_context();
    auto spirv = compile::compile_glsl(kHandwritten, "handwritten_elementwise", /*optimize*/ true);
    vk::Pipeline pipeline(ctx, spirv, vk::PipelineLayoutDesc{2, 0, sizeof(HandPush), {}}, "handwritten_elementwise");
    vk::Buffer vx(ctx, n * 4), vy(ctx, n * 4);
    vk::Stream vs(ctx);
    vs.upload(vx, 0, host_x.data(), n * 4);
    vs.fill_zero(vy);
    vs.synchronize();
    vk::Bindings bindings;
    bindings.buffers = {&vx, &vy};
    bindings.buffer_written = {false, true};
    HandPush push{uint32_t(n), a};
    bindings.push_constants.resize(sizeof push);
    std::memcpy(bindings.push_constants.data(), &push, sizeof push);
    const uint32_t groups = uint32_t((n + 255) / 256);

    // (a') the DSL's own GLSL on the vk layer: separates what the generated shader costs from what the
    // runtime's dispatch path costs (a' vs b: codegen; a vs a': runtime).
    auto dsl_layout = emit_like_runtime(env, *kernel.function(), shader.name(), shader.glsl());
    if (dsl_layout.uses_status || dsl_layout.buffer_count != 2 || dsl_layout.args.size() != 3)
        throw std::runtime_error("elementwise: the DSL kernel's layout changed; update the bench");
    vk::Pipeline dsl_pipeline(ctx, compile::compile_glsl(dsl_layout.source, shader.name(), true),
                              vk::PipelineLayoutDesc{dsl_layout.buffer_count, 0, dsl_layout.push_bytes,
                                                     dsl_layout.texel_words},
                              shader.name());
    vk::Buffer wy(ctx, n * 4);
    vk::Bindings dsl_bindings;
    dsl_bindings.buffers.resize(2);
    dsl_bindings.buffer_written.resize(2);
    dsl_bindings.buffers[dsl_layout.args[0].binding] = &vx;
    dsl_bindings.buffers[dsl_layout.args[1].binding] = &wy;
    dsl_bindings.buffer_written[dsl_layout.args[0].binding] = dsl_layout.args[0].written;
    dsl_bindings.buffer_written[dsl_layout.args[1].binding] = dsl_layout.args[1].written;
    dsl_bindings.push_constants.resize(dsl_layout.push_bytes);
    const uint32_t size[3] = {uint32_t(n), 1, 1};   // the runtime's push block starts with the dispatch size
    std::memcpy(dsl_bindings.push_constants.data(), size, sizeof size);
    std::memcpy(dsl_bindings.push_constants.data() + dsl_layout.args[2].offset, &a, sizeof a);

    auto run_dsl = [&] { stream << shader(dx, dy, a).dispatch(uint32_t(n)) << synchronize(); };
    auto run_dsl_glsl = [&] {
        vs.dispatch(dsl_pipeline, dsl_bindings, groups, 1, 1);
        vs.synchronize();
    };
    auto run_hand = [&] {
        vs.dispatch(pipeline, bindings, groups, 1, 1);
        vs.synchronize();
    };

    // Interleaved, so that drift in the machine's state (other load, clocks) hits all paths alike.
    for (int i = 0; i < reps.warmup; ++i) {
        run_dsl();
        run_dsl_glsl();
        run_hand();
    }
    Samples dsl, dsl_glsl, hand;
    for (int i = 0; i < reps.reps; ++i) {
        auto t0 = Clock::now();
        run_dsl();
        dsl.add(ms_since(t0));
        t0 = Clock::now();
        run_dsl_glsl();
        dsl_glsl.add(ms_since(t0));
        t0 = Clock::now();
        run_hand();
        hand.add(ms_since(t0));
    }

    // (c) the host loop, single-threaded; the result is also the reference for both device paths.
    std::vector<float> host_y(n);
    Samples host = measure(env.reps({1, 5}, {0, 2}), [&] {
        for (size_t i = 0; i < n; ++i) {
            float v = host_x[i];
            host_y[i] = a * v + std::sin(v) * std::cos(v);
        }
    });

    std::vector<float> dsl_y(n), dsl_glsl_y(n), hand_y(n);
    stream << dy.copy_to(dsl_y.data()) << synchronize();
    vs.download(wy, 0, dsl_glsl_y.data(), n * 4);
    vs.download(vy, 0, hand_y.data(), n * 4);
    vs.synchronize();

    json j;
    j["n"] = n;
    j["kernel"] = "y[i] = a*x[i] + sin(x[i])*cos(x[i])";
    j["timed"] = "one dispatch + synchronize per rep, inputs already on the device";
    j["dsl"] = timing(dsl, n);
    j["dsl_glsl_on_vk"] = timing(dsl_glsl, n);
    j["handwritten_glsl_vk"] = timing(hand, n);
    j["host_loop_single_thread"] = timing(host, n);
    j["max_abs_diff_vs_host"] = {{"dsl", max_abs_diff(dsl_y, host_y)},
                                 {"dsl_glsl_on_vk", max_abs_diff(dsl_glsl_y, host_y)},
                                 {"handwritten_glsl_vk", max_abs_diff(hand_y, host_y)}};
    double ratio = dsl.median() / hand.median();
    j["dsl_over_handwritten"] = ratio;
    j["dsl_over_handwritten_min"] = dsl.min() / hand.min();
    j["dsl_glsl_over_handwritten"] = dsl_glsl.median() / hand.median();   // the generated shader's share
    j["dsl_over_dsl_glsl"] = dsl.median() / dsl_glsl.median();            // the runtime's share
    j["host_over_dsl"] = host.median() / dsl.median();
    j["checks"] = json::array({env.target("elementwise", "dsl_over_handwritten", ratio, "<=", 1.15, "ratio")});
    // A device path that computes something else would make the ratio meaningless.
    const double tolerance = 1e-3, d1 = max_abs_diff(dsl_y, host_y), d2 = max_abs_diff(hand_y, host_y),
                 d3 = max_abs_diff(dsl_glsl_y, host_y);
    if (d1 > tolerance || d2 > tolerance || d3 > tolerance)
        throw std::runtime_error("elementwise: a device result differs from the host's (dsl " + std::to_string(d1) +
                                 ", dsl glsl on vk " + std::to_string(d3) + ", hand-written " + std::to_string(d2) +
                                 ", tolerance 1e-3)");
    return j;
}

} // namespace adjoint::bench
