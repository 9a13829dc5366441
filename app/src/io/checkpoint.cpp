// Checkpoint encoding and verified decoding (layout in checkpoint.h).
#include <adjoint/app/atomic_file.h>
#include <adjoint/app/checkpoint.h>
#include <adjoint/core/error.h>
#include <adjoint/core/hash.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <set>

namespace adjoint::app {
namespace {

constexpr char magic[8] = {'A', 'D', 'J', 'C', 'K', 'P', 'T', '\0'};
constexpr size_t header_size = 8 + 4 + 4 + 8 + 8;

void put_u32(std::string& out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out += char(uint8_t(v >> (8 * i)));
}
void put_u64(std::string& out, uint64_t v) {
    for (int i = 0; i < 8; ++i) out += char(uint8_t(v >> (8 * i)));
}
void put_bytes(std::string& out, const std::string& s) {
    put_u32(out, uint32_t(s.size()));
    out += s;
}

uint64_t element_count(const std::vector<uint64_t>& shape, bool* overflow) {
    uint64_t n = 1;
    *overflow = false;
    for (uint64_t d : shape) {
        if (d != 0 && n > UINT64_MAX / d) *overflow = true;
        n *= d;
    }
    return n;
}

// Reads the payload with a bound check before every field, so a damaged length is reported as such
// instead of reading past the end or allocating wildly.
class Reader {
public:
    Reader(const std::string& bytes, size_t pos, const std::string& what) : bytes_(bytes), pos_(pos), what_(what) {}

    void need(uint64_t n, const char* field) {
        if (n > bytes_.size() - pos_)
            fail(what_, ": checkpoint is damaged: ", field, " needs ", n, " bytes at offset ", pos_, " but only ",
                 bytes_.size() - pos_, " remain");
    }
    uint32_t u32(const char* field) {
        need(4, field);
        uint32_t v = 0;
        for (int i = 0; i < 4; ++i) v |= uint32_t(uint8_t(bytes_[pos_ + i])) << (8 * i);
        pos_ += 4;
        return v;
    }
    uint64_t u64(const char* field) {
        need(8, field);
        uint64_t v = 0;
        for (int i = 0; i < 8; ++i) v |= uint64_t(uint8_t(bytes_[pos_ + i])) << (8 * i);
        pos_ += 8;
        return v;
    }
    std::string bytes(const char* field) {
        uint32_t n = u32(field);
        need(n, field);
        std::string s = bytes_.substr(pos_, n);
        pos_ += n;
        return s;
    }
    size_t pos() const { return pos_; }
    size_t remaining() const { return bytes_.size() - pos_; }

private:
    const std::string& bytes_;
    size_t pos_;
    const std::string& what_;
};

} // namespace

const NamedArray* Checkpoint::find(const std::string& name) const {
    for (const NamedArray& a : arrays)
        if (a.name == name) return &a;
    return nullptr;
}

const NamedArray& Checkpoint::at(const std::string& name, const std::string& what) const {
    const NamedArray* a = find(name);
    if (!a) fail(what, ": checkpoint has no array '", name, "'");
    return *a;
}

std::string encode_checkpoint(const Checkpoint& c) {
    std::string payload;
    put_u64(payload, c.iteration);
    if (c.metadata.size() > UINT32_MAX) fail("checkpoint: metadata is too large");
    put_bytes(payload, c.metadata);
    put_u32(payload, uint32_t(c.rng_state.size()));
    for (uint64_t s : c.rng_state) put_u64(payload, s);
    put_u32(payload, uint32_t(c.arrays.size()));
    std::set<std::string> names;
    for (const NamedArray& a : c.arrays) {
        if (a.name.empty()) fail("checkpoint: an array has an empty name");
        if (!names.insert(a.name).second) fail("checkpoint: array '", a.name, "' is given twice");
        bool overflow = false;
        uint64_t count = element_count(a.shape, &overflow);
        if (overflow || count != a.data.size())
            fail("checkpoint: array '", a.name, "' has ", a.data.size(), " values but its shape holds ", count);
        put_bytes(payload, a.name);
        put_u32(payload, uint32_t(a.shape.size()));
        for (uint64_t d : a.shape) put_u64(payload, d);
        for (float v : a.data) put_u32(payload, std::bit_cast<uint32_t>(v));
    }

    std::string out(magic, sizeof magic);
    put_u32(out, Checkpoint::version);
    put_u32(out, 0);
    put_u64(out, payload.size());
    put_u64(out, hash_bytes(payload.data(), payload.size()));
    out += payload;
    return out;
}

Checkpoint decode_checkpoint(const std::string& bytes, const std::string& what) {
    if (std::memcmp(bytes.data(), magic, std::min(bytes.size(), sizeof magic)) != 0)
        fail(what, ": not an Adjoint checkpoint (the file does not start with ADJCKPT)");
    if (bytes.size() < header_size)
        fail(what, ": checkpoint is truncated: ", bytes.size(), " bytes, shorter than its ", header_size, "-byte header");
    Reader header(bytes, sizeof magic, what);
    uint32_t version = header.u32("version");
    if (version != Checkpoint::version)
        fail(what, ": checkpoint format version ", version, " is not supported (this build reads version ",
             Checkpoint::version, ")");
    if (header.u32("reserved") != 0) fail(what, ": checkpoint is damaged: reserved header field is not zero");
    uint64_t payload_size = header.u64("payload size");
    uint64_t hash = header.u64("hash");
    if (payload_size != bytes.size() - header_size)
        fail(what, ": checkpoint is ", payload_size > bytes.size() - header_size ? "truncated" : "damaged", ": the header says ",
             payload_size, " bytes of data, the file has ", bytes.size() - header_size);
    if (hash_bytes(bytes.data() + header_size, payload_size) != hash)
        fail(what, ": checkpoint is damaged: its content hash does not match");

    // The hash matched, so what follows only fails for a file written by a broken encoder; still, every
    // length is checked rather than trusted.
    Checkpoint c;
    Reader r(bytes, header_size, what);
    c.iteration = r.u64("iteration");
    c.metadata = r.bytes("metadata");
    uint32_t rng_count = r.u32("rng state count");
    r.need(uint64_t(rng_count) * 8, "rng state");
    for (uint32_t i = 0; i < rng_count; ++i) c.rng_state.push_back(r.u64("rng state"));
    uint32_t array_count = r.u32("array count");
    std::set<std::string> names;   // a set, not c.find: a file of a million tiny arrays must not take hours
    for (uint32_t i = 0; i < array_count; ++i) {
        NamedArray a;
        a.name = r.bytes("array name");
        // What encode_checkpoint refuses to write is refused here too (the round trip fuzz_checkpoint checks).
        if (a.name.empty()) fail(what, ": checkpoint is damaged: array ", i, " has an empty name");
        uint32_t rank = r.u32("array rank");
        r.need(uint64_t(rank) * 8, "array shape");
        for (uint32_t d = 0; d < rank; ++d) a.shape.push_back(r.u64("array shape"));
        bool overflow = false;
        uint64_t count = element_count(a.shape, &overflow);
        if (overflow || count > r.remaining() / 4)
            fail(what, ": checkpoint is damaged: array '", a.name, "' claims more values than the file holds");
        a.data.resize(count);
        for (float& v : a.data) v = std::bit_cast<float>(r.u32("array data"));
        if (!names.insert(a.name).second) fail(what, ": checkpoint is damaged: array '", a.name, "' appears twice");
        c.arrays.push_back(std::move(a));
    }
    if (r.remaining() != 0) fail(what, ": checkpoint is damaged: ", r.remaining(), " unexpected bytes after the data");
    return c;
}

void write_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint) {
    write_file_atomic(path, encode_checkpoint(checkpoint));
}

Checkpoint read_checkpoint(const std::filesystem::path& path) {
    return decode_checkpoint(read_file(path), path.string());
}

} // namespace adjoint::app
