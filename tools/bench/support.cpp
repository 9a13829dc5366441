// adjoint-bench support: the shared environment, statistics, target checks, env-var and temp-dir guards.
#include "bench.h"

#include "runtime/runtime_internal.h"

#include <adjoint/pipeline/lower.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <unistd.h>

namespace adjoint::bench {

Device& Env::device() {
    if (!device_) {
        context_.emplace();
        device_.emplace(context_->create_device());
    }
    return *device_;
}

Stream& Env::stream() {
    if (!stream_) stream_.emplace(device().create_stream());
    return *stream_;
}

std::shared_ptr<vk::Context> Env::vk_context() {
    if (!vk_) vk_ = detail::vulkan_context(*device().impl());
    return vk_;
}

json Env::target(const std::string& section, const std::string& metric, double value, const char* op,
                 double target, const std::string& unit) {
    std::string o = op;
    bool met = o == "<=" ? value <= target
               : o == "<" ? value < target
               : o == ">=" ? value >= target
               : o == ">" ? value > target
                          : throw std::invalid_argument("target: unknown comparison " + o);
    json j;
    j["metric"] = metric;
    j["value"] = value;
    j["unit"] = unit;
    j["target"] = o + " " + json(target).dump();
    j["met"] = met;
    json summary = j;
    summary["section"] = section;
    targets_.push_back(std::move(summary));
    return j;
}

double Samples::median() const {
    if (ms_.empty()) return 0;
    std::vector<double> v = ms_;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double Samples::min() const { return ms_.empty() ? 0 : *std::min_element(ms_.begin(), ms_.end()); }
double Samples::max() const { return ms_.empty() ? 0 : *std::max_element(ms_.begin(), ms_.end()); }

json Samples::to_json(bool samples) const {
    json j;
    j["median_ms"] = median();
    j["min_ms"] = min();
    j["max_ms"] = max();
    j["reps"] = ms_.size();
    if (samples) j["samples_ms"] = ms_;
    return j;
}

ScopedEnv::ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* v = std::getenv(name)) old_ = v;
    ::setenv(name, value.c_str(), 1);
}

ScopedEnv::~ScopedEnv() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
}

TempDir::TempDir(const std::string& prefix) {
    namespace fs = std::filesystem;
    std::mt19937_64 rng{std::random_device{}()};
    for (int attempt = 0; attempt < 16; ++attempt) {
        fs::path p = fs::temp_directory_path() /
                     (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(rng() % 1000000007));
        if (fs::create_directory(p)) {
            path_ = p.string();
            return;
        }
    }
    throw std::runtime_error("cannot create a temporary folder for " + prefix);
}

TempDir::~TempDir() {
    std::error_code ec;   // best effort: a leftover temp folder must not turn a finished run into a failure
    std::filesystem::remove_all(path_, ec);
}

codegen::GlslKernel emit_like_runtime(Env& env, const ir::Function& kernel, const std::string& name,
                                      const std::string& expected_glsl) {
    const detail::DeviceImpl& device = *env.device().impl();
    auto lowered = pipeline::lower(kernel, name, device.lowering);
    codegen::GlslKernel k = codegen::emit_glsl(*lowered.function, device.glsl);
    if (k.source != expected_glsl)
        throw std::runtime_error("the bench's copy of the runtime's compile steps no longer matches Device::compile "
                                 "for kernel '" + name + "'; update emit_like_runtime");
    return k;
}

} // namespace adjoint::bench
