// Shared pieces of adjoint-bench: run options, the per-run environment, timing statistics and targets.
#pragma once
#include <adjoint/adjoint.h>

#include "vulkan/vk_runtime.h"

#include <adjoint/codegen/glsl.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace adjoint::bench {

using json = nlohmann::ordered_json;   // ordered: the report reads top-down in the order it was written

struct Options {
    bool quick = false;                  // small sizes and few repetitions (the smoke test)
};

// Repetition counts: a section asks for (warm-ups, measured reps) and gets the quick or the full pair.
struct Reps {
    int warmup;
    int reps;
};

// What the sections share: the options, one DSL device and stream, the plain Vulkan context of that device (its
// VkDevice and queue: on an NVIDIA H200 a rep that followed a dispatch on a second VkDevice took 0.23 ms instead
// of 0.06, whichever side it was, so peers on two devices measured the switch), and the targets checked so far.
class Env {
public:
    explicit Env(Options options) : options_(options) {}
    const Options& options() const { return options_; }
    bool quick() const { return options_.quick; }
    Reps reps(Reps full, Reps quick) const { return options_.quick ? quick : full; }

    Device& device();                    // created on first use
    Stream& stream();
    std::shared_ptr<vk::Context> vk_context();

    // Records a target check and returns its JSON: {"metric", "value", "unit", "target", "met"}.
    // `op` is "<=", "<", ">=" or ">".
    json target(const std::string& section, const std::string& metric, double value, const char* op,
                double target, const std::string& unit);
    const json& targets() const { return targets_; }

private:
    Options options_;
    std::optional<Context> context_;
    std::optional<Device> device_;
    std::optional<Stream> stream_;
    std::shared_ptr<vk::Context> vk_;
    json targets_ = json::array();
};

// A section: a name (for --only and the report) and the function that measures it.
struct Section {
    const char* name;
    std::function<json(Env&)> run;
    const char* description;
};

// ---- timing ------------------------------------------------------------------------------------------

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Samples of one measurement, in milliseconds.
class Samples {
public:
    void add(double ms) { ms_.push_back(ms); }
    void add(const Samples& s) { ms_.insert(ms_.end(), s.ms_.begin(), s.ms_.end()); }
    double median() const;
    double min() const;
    double max() const;
    size_t count() const { return ms_.size(); }
    // {"median_ms", "min_ms", "max_ms", "reps"}; `samples` adds the raw list.
    json to_json(bool samples = false) const;

private:
    std::vector<double> ms_;
};

// Runs f `warmup` times untimed, then `reps` times timed (the whole call).
template <typename F>
Samples measure(Reps r, F&& f) {
    for (int i = 0; i < r.warmup; ++i) f();
    Samples s;
    for (int i = 0; i < r.reps; ++i) {
        auto t0 = Clock::now();
        f();
        s.add(ms_since(t0));
    }
    return s;
}

// Several measurements side by side: each f runs `warmup` times untimed, then `reps` rounds time each f once in
// turn, so that a change in the machine's load hits all of them alike (their ratios are what a section reports).
inline std::vector<Samples> measure_interleaved(Reps r, const std::vector<std::function<void()>>& fs) {
    for (const auto& f : fs)
        for (int i = 0; i < r.warmup; ++i) f();
    std::vector<Samples> s(fs.size());
    for (int i = 0; i < r.reps; ++i)
        for (size_t k = 0; k < fs.size(); ++k) {
            auto t0 = Clock::now();
            fs[k]();
            s[k].add(ms_since(t0));
        }
    return s;
}

// Sets an environment variable for the lifetime of the guard, restoring the previous value (or its
// absence) afterwards, so one section's setting never leaks into the next.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::string& value);
    ~ScopedEnv();
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    std::string name_;
    std::optional<std::string> old_;
};

// A fresh folder under the system temp folder, removed with everything in it when the guard goes.
class TempDir {
public:
    explicit TempDir(const std::string& prefix);
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

// The runtime's compile steps up to the GLSL (lowering with the device's options: lavapipe's loop check, naming,
// emission with the device's GLSL options), so a bench can run the DSL's own shader on the vk layer with the right
// layout. Throws if the result differs from `expected_glsl` (Shader::glsl()), i.e. if this copy of the steps went
// stale.
codegen::GlslKernel emit_like_runtime(Env& env, const ir::Function& kernel, const std::string& name,
                                      const std::string& expected_glsl);

// ---- sections (one file each) --------------------------------------------------------------------------
json bench_elementwise(Env& env);
json bench_tiny_dispatches(Env& env);
json bench_compile(Env& env);
json bench_autodiff(Env& env);
json bench_autodiff_loop(Env& env);
json bench_renderer(Env& env);
json bench_renderer_texture(Env& env);
json bench_reduce(Env& env);
json bench_visibility(Env& env);
json bench_shadows(Env& env);
json bench_texel_reads(Env& env);

} // namespace adjoint::bench
