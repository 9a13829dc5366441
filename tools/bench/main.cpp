// adjoint-bench: runs the benchmark sections side by side and prints one JSON document to stdout.
#include "bench.h"

#include "compile/glsl_compiler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>

using namespace adjoint;
using namespace adjoint::bench;

namespace {

// The sections, in report order. Adding a section is one line here (plus its function).
const Section kSections[] = {
    {"elementwise", bench_elementwise,
     "y = a*x + sin(x)*cos(x): DSL vs hand-written GLSL on the vk layer vs a host loop"},
    {"tiny_dispatches", bench_tiny_dispatches, "10,000 one-thread dispatches in one submission"},
    {"compile", bench_compile, "compile latency: cold, warm memory cache, warm disk cache, and a split"},
    {"autodiff", bench_autodiff, "generated gradient kernel vs hand-derived DSL vs hand-written GLSL"},
    {"autodiff_loop", bench_autodiff_loop, "gradient of a 64-iteration loop vs hand-written forward mode"},
    {"reduce", bench_reduce, "2^22-float sum: one atomic per element vs subgroup sums vs block sums (barriers)"},
    {"texel_reads", bench_texel_reads, "gathers of floats, float4s and 64-byte structs: texel vs storage buffers"},
#ifdef ADJOINT_BENCH_HAS_APP
    {"renderer", bench_renderer, "texture-recovery iteration of the differentiable renderer, and PyTorch's"},
    {"renderer_texture", bench_renderer_texture,
     "the renderer section's 5k texture iteration alone (no PyTorch peer): tools/bench/loss_csv_vs_bench.sh"},
    {"visibility", bench_visibility, "pose-recovery iteration per visibility mode (hard, antialias, soft)"},
    {"shadows", bench_shadows, "a sun's shadows at 5k triangles: none, every triangle, the light-space grid; and 50k"},
#endif
};

void usage(std::FILE* to) {
    std::fprintf(to,
                 "usage: adjoint-bench [--quick] [--only <section>[,<section>...]]\n"
                 "  --quick           small sizes and few repetitions (the smoke test)\n"
                 "  --only <names>    run only these sections\n"
                 "Prints one JSON document to stdout; progress goes to stderr. Sections:\n");
    for (const auto& s : kSections) std::fprintf(to, "  %-16s  %s\n", s.name, s.description);
}

json env_value(const char* name) {
    const char* v = std::getenv(name);
    return v ? json(v) : json(nullptr);
}

std::string utc_now() {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

} // namespace

int main(int argc, char** argv) {
    Options options;
    std::vector<std::string> only;
    for (int i = 1; i < argc; ++i) {
        std::string_view a = argv[i];
        if (a == "--quick") {
            options.quick = true;
        } else if (a == "--only" && i + 1 < argc) {
            std::string list = argv[++i];
            for (size_t p = 0; p <= list.size();) {
                size_t q = list.find(',', p);
                if (q == std::string::npos) q = list.size();
                if (q > p) only.push_back(list.substr(p, q - p));
                p = q + 1;
            }
        } else if (a == "--help" || a == "-h") {
            usage(stdout);
            return 0;
        } else {
            std::fprintf(stderr, "adjoint-bench: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    for (const auto& name : only) {
        bool known = false;
        for (const auto& s : kSections) known = known || name == s.name;
        if (!known) {
            std::fprintf(stderr, "adjoint-bench: unknown section '%s'\n", name.c_str());
            usage(stderr);
            return 2;
        }
    }

    json report;
    report["benchmark"] = "adjoint-bench";
    report["schema_version"] = 1;
    // Read before any section runs: the compile section changes ADJOINT_CACHE_DIR for its own devices only.
    json environment;
    for (const char* name : {"LP_NUM_THREADS", "ADJOINT_VALIDATION", "ADJOINT_DEVICE", "ADJOINT_CACHE_DIR",
                             "ADJOINT_NO_FLOAT_ATOMICS", "ADJOINT_DUMP_DIR"})
        environment[name] = env_value(name);
    // lavapipe's per-dispatch cost depends mostly on this, so the reader needs it next to the numbers.
    const char* lp = std::getenv("LP_NUM_THREADS");
    environment["note"] = !lp ? "LP_NUM_THREADS unset: llvmpipe runs shaders on a pool of one thread per CPU, which "
                                "adds a hand-off per dispatch; LP_NUM_THREADS=0 runs them inline"
                          : std::string_view(lp) == "0"
                              ? "LP_NUM_THREADS=0: llvmpipe runs shaders inline on the submitting thread"
                              : "LP_NUM_THREADS set: llvmpipe runs shaders on a pool of that many threads";

    Env env(options);
    int status = 0;
    json metadata;
    try {
        metadata["device"] = env.device().name();
    } catch (const std::exception& e) {
        // Without a device no section can run; still print a valid document saying why.
        metadata["device"] = nullptr;
        report["metadata"] = metadata;
        report["environment"] = environment;
        report["error"] = std::string("device creation failed: ") + e.what();
        std::cout << report.dump(2) << std::endl;
        return 1;
    }
    metadata["build_type"] = ADJOINT_BENCH_BUILD_TYPE;
#ifdef NDEBUG
    metadata["assertions"] = false;
#else
    metadata["assertions"] = true;
#endif
    metadata["compiler"] = ADJOINT_BENCH_COMPILER;
    metadata["glslang"] = compile::compiler_version();
    metadata["hardware_threads"] = std::thread::hardware_concurrency();
    metadata["quick"] = options.quick;
    metadata["started_utc"] = utc_now();
    report["metadata"] = metadata;
    report["environment"] = environment;

    json sections = json::object();
    for (const auto& s : kSections) {
        if (!only.empty() && std::find(only.begin(), only.end(), s.name) == only.end()) continue;
        std::fprintf(stderr, "adjoint-bench: %s...\n", s.name);
        auto t0 = Clock::now();
        try {
            sections[s.name] = s.run(env);
        } catch (const std::exception& e) {
            // Keep going: one broken section should not hide the others' numbers, but the exit code says so.
            sections[s.name] = {{"error", e.what()}};
            std::fprintf(stderr, "adjoint-bench: %s failed: %s\n", s.name, e.what());
            status = 1;
        }
        double seconds = ms_since(t0) / 1000;
        if (sections[s.name].is_object()) sections[s.name]["section_wall_s"] = seconds;
        std::fprintf(stderr, "adjoint-bench: %s done in %.1f s\n", s.name, seconds);
    }
    report["sections"] = sections;
    report["targets"] = env.targets();
    bool all_met = true;
    for (const auto& t : env.targets()) all_met = all_met && t["met"].get<bool>();
    // A failed section checked none of its targets, so the run as a whole cannot claim them met.
    report["all_targets_met"] = all_met && status == 0;
    // Validation on makes timings meaningless; the count shows whether the run was also clean.
    report["metadata"]["validation_messages"] = env.device().validation_message_count();
    for (const auto& m : env.device().validation_messages())
        std::fprintf(stderr, "adjoint-bench: validation: %s\n", m.c_str());
    std::cout << report.dump(2) << std::endl;
    return status;
}
