// xxHash64 wrappers used for content-keyed caches.
#include <adjoint/core/hash.h>

#include <cstdio>
#include <xxhash.h>

namespace adjoint {

uint64_t hash_bytes(const void* data, size_t size, uint64_t seed) { return XXH64(data, size, seed); }

std::string hex64(uint64_t value) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
    return buf;
}

} // namespace adjoint
