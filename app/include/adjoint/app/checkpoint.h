// Checkpoints: a versioned, hashed binary snapshot of an optimization (iteration, RNG, named arrays, metadata).
//
// Layout (all integers little-endian):
//   header  "ADJCKPT\0" (8 bytes) | u32 version (1) | u32 reserved (0) | u64 payload size | u64 xxHash64 of payload
//   payload u64 iteration
//           u32 n, n bytes   metadata (free text; the programs store JSON: scene path, settings)
//           u32 n, n x u64   rng state
//           u32 n arrays, each: u32 len, name bytes | u32 rank, rank x u64 dims | f32 data (product of dims)
// Floats are stored bit for bit (NaN payloads too), so a round trip is exact. The payload must end
// exactly at the file's end.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace adjoint::app {

struct NamedArray {
    std::string name;             // e.g. "param/lights.key.position", "adam.m/lights.key.position"
    std::vector<uint64_t> shape;  // the product of the dims is data.size(); rank 0 holds one value
    std::vector<float> data;
};

struct Checkpoint {
    static constexpr uint32_t version = 1;

    uint64_t iteration = 0;
    std::string metadata;
    std::vector<uint64_t> rng_state;
    std::vector<NamedArray> arrays;

    // The array of that name, or nullptr.
    const NamedArray* find(const std::string& name) const;
    // The array of that name; adjoint::Error naming it (and `what`, e.g. the file) when it is absent.
    const NamedArray& at(const std::string& name, const std::string& what = "checkpoint") const;
};

// The file's bytes. adjoint::Error for duplicate or empty array names or a shape that does not match
// the data's size.
std::string encode_checkpoint(const Checkpoint& checkpoint);
// Parses and verifies bytes from encode_checkpoint: magic, version, sizes, hash and every length. Any
// damage gives an adjoint::Error starting with `what` (the file's name) and saying what is wrong.
Checkpoint decode_checkpoint(const std::string& bytes, const std::string& what);

// encode_checkpoint written atomically; read_file + decode_checkpoint.
void write_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint);
Checkpoint read_checkpoint(const std::filesystem::path& path);

} // namespace adjoint::app
