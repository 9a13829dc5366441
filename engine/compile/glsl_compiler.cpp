// GLSL -> SPIR-V with glslang in-process, a memory + disk cache keyed by content hash, and kernel dumps.
#include "compile/glsl_compiler.h"

#include <adjoint/core/error.h>
#include <adjoint/core/hash.h>

#include <glslang/Public/ResourceLimits.h>
#include <glslang/Public/ShaderLang.h>
#include <glslang/SPIRV/GlslangToSpv.h>
#include <glslang/build_info.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <random>
#include <system_error>
#include <unistd.h>

namespace adjoint::compile {
namespace fs = std::filesystem;

namespace {

constexpr uint32_t kSpirvMagic = 0x07230203;
constexpr size_t kSpirvHeaderWords = 5;   // magic, version, generator, bound, schema

// Unset and empty mean the same: an empty string in the environment is never a useful path.
const char* env(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? v : nullptr;
}

// glslang keeps process-wide tables (built-in symbol tables); they must exist before any TShader, and
// InitializeProcess is not safe to race with itself.
void init_glslang() {
    static std::once_flag once;
    std::call_once(once, [] { glslang::InitializeProcess(); });
}

// Kernel names come from user code and become file names, so keep only characters safe in any path.
std::string sanitize(std::string_view name) {
    std::string out(name);
    for (char& c : out) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                  c == '.' || c == '-';
        if (!ok) c = '_';
    }
    return out.empty() ? "kernel" : out;
}

bool write_file(const fs::path& path, std::string_view text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    return static_cast<bool>(out);
}

// A failed compile is an engine bug (the engine wrote the GLSL): keep the source where a reporter finds it.
[[noreturn]] void fail_compile(std::string_view kernel_name, std::string_view glsl, std::string log) {
    while (!log.empty() && std::isspace(static_cast<unsigned char>(log.back()))) log.pop_back();
    fs::path dir;
    if (const char* d = env("ADJOINT_DUMP_DIR")) {
        dir = d;
    } else {
        std::error_code ec;
        dir = fs::temp_directory_path(ec);
        if (ec) dir = "/tmp";
        dir /= "adjoint-failed";
    }
    std::error_code ec;
    fs::create_directories(dir, ec);
    fs::path file = dir / (sanitize(kernel_name) + ".glsl");
    bool written = write_file(file, glsl);
    fail("GLSL compilation failed for kernel '", kernel_name, "' (an engine bug; please report it): ", log,
         written ? "; source written to " : "; could not write the source to ", file.string());
}

// A cache entry is a header of five words, then the SPIR-V: the entry magic, the format version, the
// SPIR-V's word count and a 64-bit hash of its words seeded with the cache key. A torn write, a cut tail,
// a flipped bit or a file moved under another key all fail the check; anything that fails is a miss.
constexpr uint32_t kEntryMagic = 0x4a444141;   // "AADJ" in a little-endian dump
constexpr uint32_t kEntryVersion = 1;
constexpr size_t kEntryHeaderWords = 5;

uint64_t entry_hash(std::string_view key, const uint32_t* words, size_t count) {
    return hash_bytes(words, count * 4, hash_string(key));
}

std::optional<std::string> read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) return std::nullopt;
    return bytes;
}

// Hashes each part with its length in front, so ("ab","c") and ("a","bc") can never share a key.
void mix(uint64_t& h, std::string_view part) {
    uint64_t n = part.size();
    h = hash_bytes(&n, sizeof n, h);
    h = hash_string(part, h);
}

} // namespace

std::vector<uint32_t> compile_glsl(std::string_view glsl, std::string_view kernel_name, bool optimize) {
    init_glslang();
    const char* src = glsl.data();
    int len = static_cast<int>(glsl.size());
    std::string name(kernel_name);   // shown in glslang's messages instead of "0:"
    const char* names = name.c_str();

    glslang::TShader shader(EShLangCompute);
    shader.setStringsWithLengthsAndNames(&src, &len, &names, 1);
    shader.setEnvInput(glslang::EShSourceGlsl, EShLangCompute, glslang::EShClientVulkan, 100);
    // Vulkan 1.1 semantics with SPIR-V 1.3: every target (lavapipe included) takes it, and
    // GL_EXT_shader_atomic_float needs nothing newer.
    shader.setEnvClient(glslang::EShClientVulkan, glslang::EShTargetVulkan_1_1);
    shader.setEnvTarget(glslang::EShTargetSpv, glslang::EShTargetSpv_1_3);
    const auto messages = static_cast<EShMessages>(EShMsgSpvRules | EShMsgVulkanRules);

    if (!shader.parse(GetDefaultResources(), 450, false, messages))
        fail_compile(kernel_name, glsl, std::string(shader.getInfoLog()) + shader.getInfoDebugLog());

    // Declared after the shader so it is destroyed first, as glslang requires.
    glslang::TProgram program;
    program.addShader(&shader);
    if (!program.link(messages))
        fail_compile(kernel_name, glsl, std::string(program.getInfoLog()) + program.getInfoDebugLog());

    std::vector<uint32_t> spirv;
    spv::SpvBuildLogger logger;
    glslang::SpvOptions options;
    // glslang 12 runs spirv-opt on GLSL only when optimizeSize is also set (plain !disableOptimizer is a
    // no-op outside HLSL). It costs ~5x a plain compile on large kernels, paid once thanks to the cache.
    options.disableOptimizer = !optimize;
    options.optimizeSize = optimize;
    glslang::GlslangToSpv(*program.getIntermediate(EShLangCompute), spirv, &logger, &options);
    if (spirv.size() < kSpirvHeaderWords || spirv[0] != kSpirvMagic)
        fail_compile(kernel_name, glsl, "SPIR-V generation produced no module: " + logger.getAllMessages());
    return spirv;
}

std::string compiler_version() {
    return "glslang " + std::to_string(GLSLANG_VERSION_MAJOR) + "." + std::to_string(GLSLANG_VERSION_MINOR) +
           "." + std::to_string(GLSLANG_VERSION_PATCH) + GLSLANG_VERSION_FLAVOR;
}

std::string encode_cache_entry(std::string_view key, const std::vector<uint32_t>& spirv) {
    uint64_t h = entry_hash(key, spirv.data(), spirv.size());
    const uint32_t header[kEntryHeaderWords] = {kEntryMagic, kEntryVersion, static_cast<uint32_t>(spirv.size()),
                                                static_cast<uint32_t>(h), static_cast<uint32_t>(h >> 32)};
    std::string bytes(reinterpret_cast<const char*>(header), sizeof header);
    bytes.append(reinterpret_cast<const char*>(spirv.data()), spirv.size() * 4);
    return bytes;
}

std::optional<std::vector<uint32_t>> decode_cache_entry(std::string_view key, std::string_view file) {
    uint32_t header[kEntryHeaderWords];
    if (file.size() < sizeof header) return std::nullopt;
    std::memcpy(header, file.data(), sizeof header);
    const uint64_t count = header[2];
    if (header[0] != kEntryMagic || header[1] != kEntryVersion || count < kSpirvHeaderWords ||
        file.size() != sizeof header + count * 4)
        return std::nullopt;
    std::vector<uint32_t> spirv(count);
    std::memcpy(spirv.data(), file.data() + sizeof header, count * 4);
    const uint64_t h = entry_hash(key, spirv.data(), spirv.size());
    if (spirv[0] != kSpirvMagic || header[3] != static_cast<uint32_t>(h) || header[4] != static_cast<uint32_t>(h >> 32))
        return std::nullopt;
    return spirv;
}

// Returns an empty path when ADJOINT_CACHE_DIR=off, meaning "no disk cache".
fs::path ShaderCache::default_dir() {
    if (const char* d = env("ADJOINT_CACHE_DIR"))
        return std::string_view(d) == "off" ? fs::path{} : fs::path(d);
    if (const char* x = env("XDG_CACHE_HOME")) return fs::path(x) / "adjoint";
    if (const char* h = env("HOME")) return fs::path(h) / ".cache" / "adjoint";
    std::error_code ec;
    fs::path tmp = fs::temp_directory_path(ec);
    return (ec ? fs::path("/tmp") : tmp) / "adjoint-cache";
}

ShaderCache::ShaderCache(fs::path dir) : dir_(dir.empty() ? default_dir() : std::move(dir)) {
    disk_ = !dir_.empty() && dir_ != "off";
}

void ShaderCache::clear_memory() { memory_.clear(); }

CompileResult ShaderCache::compile(std::string_view glsl, std::string_view kernel_name,
                                   const CompileOptions& options) {
    // The version is in the key because a new glslang can emit different (or fixed) code for the same source.
    uint64_t h = hash_string("adjoint-spirv-cache-v1");
    mix(h, glsl);
    mix(h, compiler_version());
    mix(h, options.optimize ? "opt" : "noopt");
    mix(h, options.device_key);
    CompileResult result;
    result.cache_key = hex64(h);

    // No lock is held while reading, compiling or writing: threads compiling different kernels proceed in
    // parallel, and two compiling the same one both produce the same module.
    if (auto spirv = memory_.get(result.cache_key)) {
        ++hits_;
        result.spirv = **spirv;
        result.cache_hit = true;
        return result;
    }

    const fs::path file = dir_ / (result.cache_key + ".spv");
    bool damaged = false;
    if (disk_) {
        std::error_code ec;
        if (fs::exists(file, ec)) {
            auto bytes = read_file(file);
            auto spirv = bytes ? decode_cache_entry(result.cache_key, *bytes) : std::nullopt;
            if (spirv) {
                ++hits_;
                memory_.put(result.cache_key, std::make_shared<const std::vector<uint32_t>>(*spirv));
                result.spirv = std::move(*spirv);
                result.cache_hit = true;
                return result;
            }
            damaged = true;
        }
    }

    ++misses_;
    if (damaged) ++damaged_;
    result.spirv = compile_glsl(glsl, kernel_name, options.optimize);
    memory_.put(result.cache_key, std::make_shared<const std::vector<uint32_t>>(result.spirv));

    if (disk_) {
        // Write-then-rename so a concurrent reader (another process) sees either no file or a whole one,
        // never a torn one; the pid and random suffix keep concurrent writers off each other's temp files.
        // The rename also replaces a damaged entry.
        std::error_code ec;
        fs::create_directories(dir_, ec);
        static thread_local std::mt19937_64 rng{std::random_device{}()};
        fs::path tmp = file;
        tmp += ".tmp." + std::to_string(::getpid()) + "." + hex64(rng());
        bool ok = !ec && write_file(tmp, encode_cache_entry(result.cache_key, result.spirv));
        if (ok) fs::rename(tmp, file, ec);
        if (!ok || ec) {
            fs::remove(tmp, ec);
            // A broken cache folder must never cost the user a compile; warn once and stay in memory.
            if (disk_.exchange(false))
                std::fprintf(stderr,
                             "adjoint: warning: cannot write the shader cache in '%s'; caching in memory only\n",
                             dir_.c_str());
        }
    }
    return result;
}

fs::path dump_kernel(std::string_view kernel_name, std::string_view ir_text, std::string_view glsl) {
    const char* d = env("ADJOINT_DUMP_DIR");
    if (!d) return {};
    fs::path dir(d);
    std::error_code ec;
    fs::create_directories(dir, ec);
    const std::string base = sanitize(kernel_name);
    // A dump is a debugging aid: failing to write it must not stop the program, so warn instead of throwing.
    if (ec || !write_file(dir / (base + ".ir.txt"), ir_text) || !write_file(dir / (base + ".glsl"), glsl)) {
        std::fprintf(stderr, "adjoint: warning: cannot write kernel dump for '%s' to '%s'\n", base.c_str(),
                     dir.string().c_str());
        return {};
    }
    return dir;
}

} // namespace adjoint::compile
