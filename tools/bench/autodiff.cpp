// Sections "autodiff" and "autodiff_loop": the engine's generated gradient kernels against the same
// gradient derived by hand in the DSL and against hand-written GLSL on the plain vk layer.
#include "bench.h"

#include "compile/glsl_compiler.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>

namespace adjoint::bench {

namespace {

// One hand-written GLSL kernel y[i] = g(x[i]) on the vk layer, dispatched like the DSL's.
class VkKernel {
public:
    VkKernel(std::shared_ptr<vk::Context> ctx, const std::string& body, const std::string& name, size_t n)
        : n_(n), x_(ctx, n * 4), y_(ctx, n * 4), stream_(ctx),
          pipeline_(ctx, compile::compile_glsl(source(body), name, true), vk::PipelineLayoutDesc{2, 0, 16, {}}, name) {
        bindings_.buffers = {&x_, &y_};
        bindings_.buffer_written = {false, true};
        bindings_.push_constants.resize(16);
        uint32_t count = uint32_t(n);
        std::memcpy(bindings_.push_constants.data(), &count, 4);
    }
    void upload(const std::vector<float>& x) {
        stream_.upload(x_, 0, x.data(), n_ * 4);
        stream_.synchronize();
    }
    void run() {
        stream_.dispatch(pipeline_, bindings_, uint32_t((n_ + 255) / 256), 1, 1);
        stream_.synchronize();
    }
    std::vector<float> result() {
        std::vector<float> y(n_);
        stream_.download(y_, 0, y.data(), n_ * 4);
        stream_.synchronize();
        return y;
    }

private:
    static std::string source(const std::string& body) {
        return "#version 450\nlayout(local_size_x = 256) in;\n"
               "layout(set = 0, binding = 0, std430) readonly buffer X { float xs[]; };\n"
               "layout(set = 0, binding = 1, std430) writeonly buffer Y { float ys[]; };\n"
               "layout(push_constant) uniform P { uint n; } pc;\n"
               "void main() {\n    uint i = gl_GlobalInvocationID.x;\n    if (i >= pc.n) return;\n    float x = xs[i];\n" +
               body + "    ys[i] = y;\n}\n";
    }
    size_t n_;
    vk::Buffer x_, y_;
    vk::Stream stream_;
    vk::Pipeline pipeline_;
    vk::Bindings bindings_;
};

double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - b[i]) / (1.0 + std::fabs(double(b[i]))));
    return m;
}

// Times the three paths interleaved; returns their samples in order (generated, hand DSL, hand GLSL).
struct Three {
    Samples generated, hand_dsl, hand_glsl;
    std::vector<float> y_generated, y_hand_dsl, y_hand_glsl;
};

template <typename KG, typename KH>
Three run_three(Env& env, const KG& generated, const KH& hand, VkKernel& glsl, const std::vector<float>& xs,
                const std::string& name) {
    Device& device = env.device();
    Stream& stream = env.stream();
    size_t n = xs.size();
    auto sg = device.compile(generated, {.name = name + "_generated"});
    auto sh = device.compile(hand, {.name = name + "_hand_dsl"});
    auto x = device.create_buffer<float>(n);
    auto yg = device.create_buffer<float>(n);
    auto yh = device.create_buffer<float>(n);
    stream << x.copy_from(xs.data()) << synchronize();
    glsl.upload(xs);
    auto rg = [&] { stream << sg(x, yg).dispatch(uint32_t(n)) << synchronize(); };
    auto rh = [&] { stream << sh(x, yh).dispatch(uint32_t(n)) << synchronize(); };
    auto rv = [&] { glsl.run(); };
    Reps reps = env.reps({2, 11}, {1, 3});
    for (int i = 0; i < reps.warmup; ++i) { rg(); rh(); rv(); }
    Three t;
    for (int i = 0; i < reps.reps; ++i) {
        auto t0 = Clock::now();
        rg();
        t.generated.add(ms_since(t0));
        t0 = Clock::now();
        rh();
        t.hand_dsl.add(ms_since(t0));
        t0 = Clock::now();
        rv();
        t.hand_glsl.add(ms_since(t0));
    }
    t.y_generated.resize(n);
    t.y_hand_dsl.resize(n);
    stream << yg.copy_to(t.y_generated.data()) << yh.copy_to(t.y_hand_dsl.data()) << synchronize();
    t.y_hand_glsl = glsl.result();
    double d1 = max_rel_diff(t.y_generated, t.y_hand_glsl), d2 = max_rel_diff(t.y_hand_dsl, t.y_hand_glsl);
    if (d1 > 1e-3 || d2 > 1e-3)
        throw std::runtime_error(name + ": gradients disagree (generated vs GLSL " + std::to_string(d1) +
                                 ", hand DSL vs GLSL " + std::to_string(d2) + ")");
    return t;
}

std::vector<float> inputs(size_t n, float lo, float hi) {
    std::vector<float> xs(n);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> dist(lo, hi);
    for (auto& v : xs) v = dist(rng);
    return xs;
}

json report(Env& env, const char* section, const std::string& fn, Three& t, double target) {
    json j;
    j["function"] = fn;
    j["generated"] = t.generated.to_json();
    j["hand_derived_dsl"] = t.hand_dsl.to_json();
    j["hand_written_glsl_vk"] = t.hand_glsl.to_json();
    double ratio = t.generated.median() / t.hand_dsl.median();
    j["generated_over_hand_derived"] = ratio;
    j["generated_over_hand_written_glsl"] = t.generated.median() / t.hand_glsl.median();
    j["max_rel_diff_generated_vs_glsl"] = max_rel_diff(t.y_generated, t.y_hand_glsl);
    j["check"] = env.target(section, fn + ": generated_over_hand_derived", ratio, "<=", target, "ratio");
    return j;
}

} // namespace

json bench_autodiff(Env& env) {
    const size_t n = env.quick() ? size_t(1) << 16 : size_t(1) << 22;
    json out;
    out["n"] = n;
    out["timed"] = "one dispatch + synchronize per rep; each thread computes one gradient";
    json cases = json::array();
    {
        Kernel1D generated = [](BufferFloat xs, BufferFloat ys) noexcept {
            auto i = dispatch_id().x;
            Float x = xs.read(i);
            $autodiff {
                requires_grad(x);
                backward(x * sin(x));
                ys.write(i, grad(x));
            };
        };
        Kernel1D hand = [](BufferFloat xs, BufferFloat ys) noexcept {
            auto i = dispatch_id().x;
            Float x = xs.read(i);
            ys.write(i, sin(x) + x * cos(x));
        };
        VkKernel glsl(env.vk_context(), "    float y = sin(x) + x * cos(x);\n", "bench_ad_xsinx_glsl", n);
        auto t = run_three(env, generated, hand, glsl, inputs(n, -4, 4), "bench_ad_xsinx");
        cases.push_back(report(env, "autodiff", "x*sin(x)", t, 1.10));
    }
    {
        Kernel1D generated = [](BufferFloat xs, BufferFloat ys) noexcept {
            auto i = dispatch_id().x;
            Float v = xs.read(i);
            $autodiff {
                requires_grad(v);
                Float e = exp(-v * v);
                backward(v * cos(v) * e + v * sin(v) * e);
                ys.write(i, grad(v));
            };
        };
        // d/dv [v e (cos v + sin v)] with e = exp(-v^2) = e [(cos v + sin v)(1 - 2 v^2) + v (cos v - sin v)]
        Kernel1D hand = [](BufferFloat xs, BufferFloat ys) noexcept {
            auto i = dispatch_id().x;
            Float v = xs.read(i);
            Float e = exp(-v * v);
            Float c = cos(v), s = sin(v);
            ys.write(i, e * ((c + s) * (1.0f - 2.0f * v * v) + v * (c - s)));
        };
        VkKernel glsl(env.vk_context(),
                      "    float v = x, e = exp(-v * v), c = cos(v), s = sin(v);\n"
                      "    float y = e * ((c + s) * (1.0 - 2.0 * v * v) + v * (c - s));\n",
                      "bench_ad_gauss_glsl", n);
        auto t = run_three(env, generated, hand, glsl, inputs(n, -3, 3), "bench_ad_gauss");
        cases.push_back(report(env, "autodiff", "v*cos(v)*exp(-v^2) + v*sin(v)*exp(-v^2)", t, 1.10));
    }
    out["cases"] = cases;
    return out;
}

json bench_autodiff_loop(Env& env) {
    const size_t n = env.quick() ? size_t(1) << 14 : size_t(1) << 20;
    json out;
    out["n"] = n;
    out["function"] = "r <- 0.9*sin(r) + x, 64 iterations from r = 0; d r / d x";
    Kernel1D generated = [](BufferFloat xs, BufferFloat ys) noexcept {
        auto i = dispatch_id().x;
        Float x = xs.read(i);
        $autodiff {
            requires_grad(x);
            Float r = 0.0f;
            $for (j, 64) { r = 0.9f * sin(r) + x; };
            backward(r);
            ys.write(i, grad(x));
        };
    };
    // Forward mode by hand in the DSL: the tangent rides along the iteration.
    Kernel1D hand = [](BufferFloat xs, BufferFloat ys) noexcept {
        auto i = dispatch_id().x;
        Float x = xs.read(i);
        Float r = 0.0f, dr = 0.0f;
        $for (j, 64) {
            dr = 0.9f * cos(r) * dr + 1.0f;
            r = 0.9f * sin(r) + x;
        };
        ys.write(i, dr);
    };
    VkKernel glsl(env.vk_context(),
                  "    float r = 0.0, dr = 0.0;\n"
                  "    for (int j = 0; j < 64; ++j) { dr = 0.9 * cos(r) * dr + 1.0; r = 0.9 * sin(r) + x; }\n"
                  "    float y = dr;\n",
                  "bench_ad_loop_forward_glsl", n);
    auto xs = inputs(n, -2, 2);
    auto t = run_three(env, generated, hand, glsl, xs, "bench_ad_loop");
    // What an expert writes in reverse mode by hand: the same tape, the same two loops. It bounds what a
    // reverse-mode tool can reach here, as opposed to forward mode, which needs no tape for one input.
    VkKernel reverse(env.vk_context(),
                     "    float tape[64];\n    float r = 0.0;\n"
                     "    for (int j = 0; j < 64; ++j) { tape[j] = r; r = 0.9 * sin(r) + x; }\n"
                     "    float g = 1.0, y = 0.0;\n"
                     "    for (int j = 63; j >= 0; --j) { y += g; g = g * 0.9 * cos(tape[j]); }\n",
                     "bench_ad_loop_reverse_glsl", n);
    reverse.upload(xs);
    Samples hand_reverse = measure(env.reps({2, 11}, {1, 3}), [&] { reverse.run(); });
    out["hand_reverse_mode_glsl_vk"] = hand_reverse.to_json();
    out["generated_over_hand_reverse_glsl"] = t.generated.median() / hand_reverse.median();
    if (max_rel_diff(reverse.result(), t.y_hand_glsl) > 1e-3) throw std::runtime_error("autodiff_loop: hand reverse mode disagrees");
    out["generated"] = t.generated.to_json();
    out["generated_mode"] = "the engine picks forward mode here: scalar loop code, two active inputs (x, r's start)";
    // The same loop forced through the taped reverse mode (tape_capacity asks for a tape), for comparison.
    Kernel1D taped = [](BufferFloat xs, BufferFloat ys) noexcept {
        auto i = dispatch_id().x;
        Float x = xs.read(i);
        $autodiff {
            requires_grad(x);
            Float r = 0.0f;
            tape_capacity(64);
            $for (j, 64) { r = 0.9f * sin(r) + x; };
            backward(r);
            ys.write(i, grad(x));
        };
    };
    {
        Device& device = env.device();
        Stream& stream = env.stream();
        auto st = device.compile(taped, {.name = "bench_ad_loop_taped"});
        auto bx = device.create_buffer<float>(n);
        auto by = device.create_buffer<float>(n);
        stream << bx.copy_from(xs.data()) << synchronize();
        Samples taped_samples = measure(env.reps({2, 11}, {1, 3}), [&] { stream << st(bx, by).dispatch(uint32_t(n)) << synchronize(); });
        std::vector<float> ty(n);
        stream << by.copy_to(ty.data()) << synchronize();
        if (max_rel_diff(ty, t.y_hand_glsl) > 1e-3) throw std::runtime_error("autodiff_loop: taped gradient disagrees");
        out["generated_taped_reverse_mode"] = taped_samples.to_json();
        out["generated_taped_over_hand_forward_glsl"] = taped_samples.median() / t.hand_glsl.median();
    }
    out["hand_forward_mode_dsl"] = t.hand_dsl.to_json();
    out["hand_forward_mode_glsl_vk"] = t.hand_glsl.to_json();
    double ratio = t.generated.median() / t.hand_glsl.median();
    out["generated_over_hand_forward_glsl"] = ratio;
    out["max_rel_diff_generated_vs_glsl"] = max_rel_diff(t.y_generated, t.y_hand_glsl);
    auto shader = env.device().compile(generated, {.name = "bench_ad_loop_generated"});
    json tape = json::array();
    for (const auto& u : shader.tape_report())
        tape.push_back({{"loop", u.loop}, {"bytes_per_thread", u.bytes_per_thread}, {"capacity", u.capacity}});
    out["tape_report"] = tape;
    // PyTorch's autograd on the same function, when Debian's python3-torch is installed.
    int has_torch = std::system("python3 -c 'import torch' >/dev/null 2>&1");
    out["pytorch"] = has_torch == 0 ? json("installed; not measured by this program") : json("not installed (python3-torch)");
    out["check"] = env.target("autodiff_loop", "generated_over_hand_forward_glsl", ratio, "<=", 1.5, "ratio");
    return out;
}

} // namespace adjoint::bench
