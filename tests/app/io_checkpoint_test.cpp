// Checkpoints: exact round trips, and every truncation, flipped byte or inconsistent length is refused by name.
#include "app/io_test_util.h"

#include <adjoint/app/atomic_file.h>
#include <adjoint/app/checkpoint.h>
#include <adjoint/core/hash.h>

#include <cstring>
#include <limits>

using namespace adjoint::app;
using adjoint::app::test::error_of;
using adjoint::app::test::TempDir;

namespace {

Checkpoint sample() {
    Checkpoint c;
    c.iteration = 1234567890123ull;
    c.metadata = R"({"scene": "scenes/bunny.json", "resolution": [64, 64]})";
    c.rng_state = {0x0123456789abcdefull, 0ull, ~0ull};
    c.arrays.push_back({"param/lights.key.position", {3}, {0.5f, -0.0f, 1e-40f}});
    float nan_with_payload;
    uint32_t bits = 0x7fc12345u;
    std::memcpy(&nan_with_payload, &bits, 4);
    c.arrays.push_back({"adam.m/meshes.bunny.vertices", {2, 3}, {1, 2, 3, nan_with_payload, std::numeric_limits<float>::infinity(), -7.25f}});
    c.arrays.push_back({"scalar", {}, {42.0f}});
    c.arrays.push_back({"empty", {0, 4}, {}});
    return c;
}

void expect_same(const Checkpoint& a, const Checkpoint& b) {
    EXPECT_EQ(a.iteration, b.iteration);
    EXPECT_EQ(a.metadata, b.metadata);
    EXPECT_EQ(a.rng_state, b.rng_state);
    ASSERT_EQ(a.arrays.size(), b.arrays.size());
    for (size_t i = 0; i < a.arrays.size(); ++i) {
        EXPECT_EQ(a.arrays[i].name, b.arrays[i].name);
        EXPECT_EQ(a.arrays[i].shape, b.arrays[i].shape);
        ASSERT_EQ(a.arrays[i].data.size(), b.arrays[i].data.size());
        if (!a.arrays[i].data.empty()) {   // memcmp of an empty vector's null data is undefined
            EXPECT_EQ(std::memcmp(a.arrays[i].data.data(), b.arrays[i].data.data(), a.arrays[i].data.size() * 4), 0);
        }
    }
}

// Little-endian u64 into a byte string at `offset`.
void poke_u64(std::string& bytes, size_t offset, uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes[offset + size_t(i)] = char(uint8_t(v >> (8 * i)));
}

} // namespace

TEST(IoCheckpoint, RoundTripIsBitExact) {
    TempDir dir;
    write_checkpoint(dir / "checkpoint.bin", sample());
    Checkpoint back = read_checkpoint(dir / "checkpoint.bin");
    expect_same(back, sample());
    EXPECT_EQ(back.at("scalar").data, std::vector<float>{42.0f});
    EXPECT_EQ(back.find("nope"), nullptr);
    EXPECT_EQ(error_of([&] { back.at("adam.v/x", "ck.bin"); }), "ck.bin: checkpoint has no array 'adam.v/x'");
    expect_same(decode_checkpoint(encode_checkpoint(Checkpoint{}), "e"), Checkpoint{});
}

TEST(IoCheckpoint, EveryTruncationIsDetected) {
    const std::string bytes = encode_checkpoint(sample());
    for (size_t n = 0; n < bytes.size(); ++n) {
        std::string message = error_of([&] { decode_checkpoint(bytes.substr(0, n), "ck.bin"); });
        EXPECT_EQ(message.rfind("ck.bin: ", 0), 0u) << n << ": " << message;
    }
    EXPECT_EQ(error_of([&] { decode_checkpoint(bytes.substr(0, 100), "ck.bin"); }),
              "ck.bin: checkpoint is truncated: the header says " + std::to_string(bytes.size() - 32) +
                  " bytes of data, the file has 68");
    EXPECT_EQ(error_of([&] { decode_checkpoint(bytes.substr(0, 20), "ck.bin"); }),
              "ck.bin: checkpoint is truncated: 20 bytes, shorter than its 32-byte header");
    EXPECT_EQ(error_of([&] { decode_checkpoint("", "ck.bin"); }),
              "ck.bin: checkpoint is truncated: 0 bytes, shorter than its 32-byte header");
    EXPECT_EQ(error_of([&] { decode_checkpoint(bytes + "x", "ck.bin"); }),
              "ck.bin: checkpoint is damaged: the header says " + std::to_string(bytes.size() - 32) +
                  " bytes of data, the file has " + std::to_string(bytes.size() - 31));
}

TEST(IoCheckpoint, EveryFlippedByteIsDetected) {
    const std::string bytes = encode_checkpoint(sample());
    for (size_t i = 0; i < bytes.size(); ++i)
        for (uint8_t mask : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xff)}) {
            std::string damaged = bytes;
            damaged[i] = char(uint8_t(damaged[i]) ^ mask);
            std::string message = error_of([&] { decode_checkpoint(damaged, "ck.bin"); });
            EXPECT_EQ(message.rfind("ck.bin: ", 0), 0u) << i << ": " << message;
        }
    std::string payload_flip = bytes;
    payload_flip[40] ^= 1;
    EXPECT_EQ(error_of([&] { decode_checkpoint(payload_flip, "ck.bin"); }), "ck.bin: checkpoint is damaged: its content hash does not match");
    std::string magic_flip = bytes;
    magic_flip[0] ^= 1;
    EXPECT_EQ(error_of([&] { decode_checkpoint(magic_flip, "ck.bin"); }),
              "ck.bin: not an Adjoint checkpoint (the file does not start with ADJCKPT)");
    std::string version = bytes;
    version[8] = 2;
    EXPECT_EQ(error_of([&] { decode_checkpoint(version, "ck.bin"); }),
              "ck.bin: checkpoint format version 2 is not supported (this build reads version 1)");
}

// A payload whose hash is right but whose lengths lie (a broken writer) is refused, not read past its end.
TEST(IoCheckpoint, LyingLengthsWithAValidHashAreRefused) {
    Checkpoint c;
    c.arrays.push_back({"a", {2}, {1.0f, 2.0f}});
    std::string bytes = encode_checkpoint(c);
    // payload: u64 iteration | u32 0 metadata | u32 0 rng | u32 1 arrays | u32 1 'a' | u32 1 rank | u64 dim | 2 floats
    const size_t dim_offset = 32 + 8 + 4 + 4 + 4 + 4 + 1 + 4;
    poke_u64(bytes, dim_offset, 1ull << 40);
    poke_u64(bytes, 24, adjoint::hash_bytes(bytes.data() + 32, bytes.size() - 32));
    EXPECT_EQ(error_of([&] { decode_checkpoint(bytes, "ck.bin"); }),
              "ck.bin: checkpoint is damaged: array 'a' claims more values than the file holds");
    poke_u64(bytes, dim_offset, 1);  // now one value short of the data: trailing bytes
    poke_u64(bytes, 24, adjoint::hash_bytes(bytes.data() + 32, bytes.size() - 32));
    EXPECT_EQ(error_of([&] { decode_checkpoint(bytes, "ck.bin"); }), "ck.bin: checkpoint is damaged: 4 unexpected bytes after the data");
}

TEST(IoCheckpoint, EncoderRefusesInconsistentArrays) {
    Checkpoint c;
    c.arrays.push_back({"a", {2, 2}, {1, 2, 3}});
    EXPECT_EQ(error_of([&] { encode_checkpoint(c); }), "checkpoint: array 'a' has 3 values but its shape holds 4");
    c.arrays = {{"a", {1}, {1}}, {"a", {1}, {2}}};
    EXPECT_EQ(error_of([&] { encode_checkpoint(c); }), "checkpoint: array 'a' is given twice");
    TempDir dir;
    EXPECT_NE(error_of([&] { read_checkpoint(dir / "none.bin"); }).find("none.bin: No such file"), std::string::npos);
}

// What the encoder refuses, the decoder refuses too, even under a valid hash: an array with an empty name
// (it decoded, then could not be written back: the round trip tools/fuzz/fuzz_checkpoint checks) and a name
// given twice.
TEST(IoCheckpoint, DecoderRefusesWhatTheEncoderRefuses) {
    Checkpoint c;
    c.arrays = {{"a", {1}, {1.0f}}, {"b", {1}, {2.0f}}};
    std::string bytes = encode_checkpoint(c);
    // payload: u64 iteration | u32 0 metadata | u32 0 rng | u32 2 arrays | u32 1 'a' | u32 1 | u64 1 | f32 | u32 1 'b'
    const size_t first_name = 32 + 8 + 4 + 4 + 4 + 4, second_name = first_name + 1 + 4 + 8 + 4 + 4;
    ASSERT_EQ(bytes[first_name], 'a');
    ASSERT_EQ(bytes[second_name], 'b');
    auto rehash = [](std::string& b) {
        poke_u64(b, 16, b.size() - 32);
        poke_u64(b, 24, adjoint::hash_bytes(b.data() + 32, b.size() - 32));
    };
    std::string twice = bytes;
    twice[second_name] = 'a';
    rehash(twice);
    EXPECT_EQ(error_of([&] { decode_checkpoint(twice, "ck.bin"); }), "ck.bin: checkpoint is damaged: array 'a' appears twice");
    std::string empty = bytes;
    empty.erase(second_name, 1);
    empty[second_name - 4] = 0;   // the name's length
    rehash(empty);
    EXPECT_EQ(error_of([&] { decode_checkpoint(empty, "ck.bin"); }), "ck.bin: checkpoint is damaged: array 1 has an empty name");
    rehash(bytes);   // the untouched file still decodes
    EXPECT_EQ(decode_checkpoint(bytes, "ck.bin").arrays.size(), 2u);
}
