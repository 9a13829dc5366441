// libFuzzer target: checkpoint.bin (adjoint-optimize --resume). Each input is decoded as it is, and again
// with the header's payload size and content hash made to match (else almost every mutation would stop at
// the hash). What decodes must encode back to the same bytes: a checkpoint the reader accepts is one the
// writer could have written.
#include <adjoint/app/checkpoint.h>
#include <adjoint/core/error.h>
#include <adjoint/core/hash.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

void decode(const std::string& bytes) {
    adjoint::app::Checkpoint c;
    try {
        c = adjoint::app::decode_checkpoint(bytes, "checkpoint.bin");
    } catch (const adjoint::Error&) {
        return;
    }
    std::string again;
    try {
        again = adjoint::app::encode_checkpoint(c);
    } catch (const adjoint::Error& e) {
        std::fprintf(stderr, "decoded, but cannot be encoded again: %s\n", e.what());
        std::abort();
    }
    if (again != bytes) {
        std::fprintf(stderr, "decoded, but encodes to other bytes\n");
        std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string bytes(reinterpret_cast<const char*>(data), size);
    decode(bytes);
    constexpr size_t header = 32;   // magic, version, reserved, payload size, hash
    if (size < header) return 0;
    const uint64_t payload = size - header;
    const uint64_t hash = adjoint::hash_bytes(bytes.data() + header, payload);
    std::memcpy(bytes.data() + 16, &payload, 8);   // little-endian, as the format
    std::memcpy(bytes.data() + 24, &hash, 8);
    decode(bytes);
    return 0;
}
