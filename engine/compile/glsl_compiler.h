// GLSL -> SPIR-V with glslang in-process, behind a content-addressed disk cache. Knows no IR, no Vulkan.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace adjoint::compile {

struct CompileOptions {
    bool optimize = true;        // glslang's SPIR-V optimizer (spirv-tools) on or off
    std::string device_key;      // identifies the target device (name, driver version); part of the cache key
};

struct CompileResult {
    std::vector<uint32_t> spirv;
    bool cache_hit = false;
    std::string cache_key;       // hex of the content hash
};

// Compiles one compute shader. On failure throws adjoint::Error naming the kernel, with glslang's log,
// and the path where the failing source was written (ADJOINT_DUMP_DIR, else the system temp folder).
std::vector<uint32_t> compile_glsl(std::string_view glsl, std::string_view kernel_name, bool optimize);

// The glslang version string used in cache keys.
std::string compiler_version();

class ShaderCache {
public:
    // An empty `dir` means $ADJOINT_CACHE_DIR, else $XDG_CACHE_HOME/adjoint, else ~/.cache/adjoint.
    // ADJOINT_CACHE_DIR=off disables the disk cache (memory cache still applies).
    explicit ShaderCache(std::filesystem::path dir = {});
    // Looks up memory, then disk (key = hash of GLSL, compiler version, options, device key); compiles
    // on a miss and writes the SPIR-V to a temporary name, then renames it into place.
    CompileResult compile(std::string_view glsl, std::string_view kernel_name, const CompileOptions& options);
    uint64_t hits() const { return hits_; }
    uint64_t misses() const { return misses_; }
    const std::filesystem::path& dir() const { return dir_; }
    static std::filesystem::path default_dir();
    void clear_memory();         // forget the in-memory cache (so a lookup goes to disk), for tests and benches

private:
    std::filesystem::path dir_;
    bool disk_ = true;
    uint64_t hits_ = 0, misses_ = 0;
    std::vector<std::pair<std::string, std::vector<uint32_t>>> memory_;   // small; linear scan by key
};

// When ADJOINT_DUMP_DIR is set, writes <dir>/<kernel>.ir.txt and <dir>/<kernel>.glsl. Returns the folder
// written to, or empty when dumping is off.
std::filesystem::path dump_kernel(std::string_view kernel_name, std::string_view ir_text, std::string_view glsl);

} // namespace adjoint::compile
