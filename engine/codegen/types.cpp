// How the emitter spells types, struct declarations and constants.
#include "codegen/emitter.h"

#include <adjoint/core/error.h>

#include <cctype>
#include <cmath>
#include <cstdio>

namespace adjoint::codegen {

using namespace ir;

namespace emit {

namespace {

std::string scalar_prefix(ScalarKind k) {
    switch (k) {
    case ScalarKind::Float: return "";
    case ScalarKind::Int: return "i";
    case ScalarKind::UInt: return "u";
    case ScalarKind::Bool: return "b";
    case ScalarKind::UInt64: break;   // no uint64 vectors
    }
    return "";
}

} // namespace

std::string float_literal(float v) {
    if (std::isnan(v)) return "uintBitsToFloat(0x7fc00000u)";
    if (std::isinf(v)) return v > 0 ? "uintBitsToFloat(0x7f800000u)" : "uintBitsToFloat(0xff800000u)";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", double(v));
    std::string s = buf;
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    if (std::signbit(v) && v == 0.0f) s = "-0.0";
    return s;
}

// User struct and member names are C++ identifiers, which GLSL may reserve (a member `sample`, `input` or
// `patch`, a struct `Push` like the push-constant block) or cannot parse (`ns::Particle`, as ADJOINT_STRUCT
// writes a namespaced type). Prefixing them keeps them readable and out of GLSL's way.
std::string struct_name(const Type* s) {
    std::string out = "S_";
    for (char c : s->name()) {
        bool ok = std::isalnum(static_cast<unsigned char>(c));
        if (ok) out += c;
        else if (out.back() != '_') out += '_';
    }
    return out;
}

std::string member_name(const Type* s, size_t m) { return "m_" + s->member_names()[m]; }


// Host (C++) layout of a struct differs from GLSL's std430 where a member follows a vec3 at offset 12:
// pads bring each member to its C++ offset. Returns, per member, how many float pads go before it.
std::vector<uint32_t> struct_pads(const Type* s) {
    std::vector<uint32_t> pads;
    uint32_t offset = 0;
    for (size_t m = 0; m < s->members().size(); ++m) {
        const Type* t = s->members()[m];
        uint32_t align = t->host_align();
        uint32_t natural = (offset + align - 1) / align * align;   // where std430 would put it
        uint32_t want = s->member_offsets()[m];
        uint32_t n = 0;
        if (natural != want) {
            // Pad with floats from the unaligned end of the previous member.
            if (want < offset || (want - offset) % 4 != 0)
                fail("struct ", s->name(), ": member ", s->member_names()[m], " has a host offset GLSL cannot match");
            n = (want - offset) / 4;
        }
        pads.push_back(n);
        offset = want + t->host_size();
        if (t->is_vector() && t->dim() == 3) offset = want + 12;   // std430 packs a scalar after a vec3
    }
    return pads;
}

std::string declare(const Type* t, const std::string& name) {
    std::string dims;
    while (t->is_array()) {
        dims += "[" + std::to_string(t->dim()) + "]";
        t = t->element();
    }
    return glsl_type(t) + " " + name + dims;
}

void Emitter::emit_struct(std::ostream& os, const Type* s) const {
    auto pads = struct_pads(s);
    os << "struct " << struct_name(s) << " {\n";
    for (size_t m = 0; m < s->members().size(); ++m) {
        for (uint32_t p = 0; p < pads[m]; ++p) os << "    float _pad" << m << "_" << p << ";\n";
        os << "    " << declare(s->members()[m], member_name(s, m)) << ";\n";
    }
    os << "};\n";
}

// The constant of type t whose lanes start at w[first].
std::string Emitter::constant(const Type* t, const std::vector<uint32_t>& w, size_t first) const {
    return compose(t, first, [&](const Type* s, size_t lane) -> std::string {
        uint32_t x = w[lane];
        switch (s->scalar_kind()) {
        case ScalarKind::Float: return float_literal(float_of(x));
        case ScalarKind::Int: return int32_t(x) == INT32_MIN ? "(-2147483647 - 1)" : std::to_string(int32_t(x));
        case ScalarKind::UInt: return std::to_string(x) + "u";
        case ScalarKind::Bool: return x ? "true" : "false";
        case ScalarKind::UInt64: return std::to_string(uint64_of(x, w[lane + 1])) + "ul";
        }
        return {};
    });
}

} // namespace emit

std::string glsl_type(const Type* t) {
    switch (t->kind()) {
    case Type::Kind::Void: return "void";
    case Type::Kind::Scalar:
        switch (t->scalar_kind()) {
        case ScalarKind::Float: return "float";
        case ScalarKind::Int: return "int";
        case ScalarKind::UInt: return "uint";
        case ScalarKind::Bool: return "bool";
        case ScalarKind::UInt64: return "uint64_t";
        }
        break;
    case Type::Kind::Vector: return emit::scalar_prefix(t->scalar_kind()) + "vec" + std::to_string(t->dim());
    case Type::Kind::Matrix: return "mat" + std::to_string(t->dim());
    case Type::Kind::Array: {
        std::string dims;
        while (t->is_array()) {
            dims += "[" + std::to_string(t->dim()) + "]";
            t = t->element();
        }
        return glsl_type(t) + dims;
    }
    case Type::Kind::Struct: return emit::struct_name(t);
    default: break;
    }
    fail("internal: no GLSL type for ", t->to_string());
}

} // namespace adjoint::codegen
