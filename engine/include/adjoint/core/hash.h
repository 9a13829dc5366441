// Content hashing (xxHash64) for cache keys and IR de-duplication.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace adjoint {

uint64_t hash_bytes(const void* data, size_t size, uint64_t seed = 0);
inline uint64_t hash_string(std::string_view s, uint64_t seed = 0) { return hash_bytes(s.data(), s.size(), seed); }
std::string hex64(uint64_t value);

} // namespace adjoint
