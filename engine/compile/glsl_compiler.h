// GLSL -> SPIR-V with glslang in-process, behind a content-addressed disk cache. Knows no IR, no Vulkan.
#pragma once
#include "compile/lru_cache.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
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

// Thread-safe: one cache serves every thread of a device. Disk entries are checked when read (a header
// with the SPIR-V's size and a hash of its words and key); a damaged entry is compiled again and rewritten.
class ShaderCache {
public:
    static constexpr size_t kDefaultMemoryEntries = 256;

    // An empty `dir` means $ADJOINT_CACHE_DIR, else $XDG_CACHE_HOME/adjoint, else ~/.cache/adjoint.
    // ADJOINT_CACHE_DIR=off disables the disk cache (memory cache still applies).
    explicit ShaderCache(std::filesystem::path dir = {});
    // Looks up memory, then disk (key = hash of GLSL, compiler version, options, device key); compiles
    // on a miss and writes the entry to a temporary name, then renames it into place.
    CompileResult compile(std::string_view glsl, std::string_view kernel_name, const CompileOptions& options);
    uint64_t hits() const { return hits_; }
    uint64_t misses() const { return misses_; }
    uint64_t damaged() const { return damaged_; }   // disk entries that failed the check and were rewritten
    const std::filesystem::path& dir() const { return dir_; }
    static std::filesystem::path default_dir();
    void clear_memory();         // forget the in-memory cache (so a lookup goes to disk)
    // The in-memory cache keeps at most this many modules, least recently used forgotten first.
    void set_memory_capacity(size_t entries) { memory_.set_capacity(entries); }
    size_t memory_size() const { return memory_.size(); }

private:
    std::filesystem::path dir_;
    std::atomic<bool> disk_ = true;
    std::atomic<uint64_t> hits_ = 0, misses_ = 0, damaged_ = 0;
    LruCache<std::string, std::shared_ptr<const std::vector<uint32_t>>> memory_{kDefaultMemoryEntries};
};

// The bytes of a disk-cache entry for `spirv` under `key`, and the check that reverses it: the SPIR-V when
// `file` is a whole, undamaged entry for `key`, else none. Exposed for tests.
std::string encode_cache_entry(std::string_view key, const std::vector<uint32_t>& spirv);
std::optional<std::vector<uint32_t>> decode_cache_entry(std::string_view key, std::string_view file);

// When ADJOINT_DUMP_DIR is set, writes <dir>/<kernel>.ir.txt and <dir>/<kernel>.glsl. Returns the folder
// written to, or empty when dumping is off.
std::filesystem::path dump_kernel(std::string_view kernel_name, std::string_view ir_text, std::string_view glsl);

} // namespace adjoint::compile
