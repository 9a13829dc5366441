// What the GLSL emitter's files share: op spellings from ops.def's glsl column, type spellings, and the Emitter
// with its state. Its members are defined by concept: glsl.cpp (the module), features.cpp (what the kernel
// uses and the device must have), types.cpp (types and constants), resources.cpp (buffers, images, shared
// memory, status and scratch: declared from the binding layout, and accessed), statements.cpp (instructions
// that are statements or named directly, control flow), expressions.cpp (the rest: one expression each).
#pragma once
#include <adjoint/codegen/glsl.h>

#include <adjoint/ir/builder.h>

#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace adjoint::codegen::emit {

using ir::Inst;
using ir::Op;
using ir::Type;
using ir::ValueId;

// ops.def's glsl column: how an operation is spelled (see the column's description there).
enum class Form : uint8_t { Stmt, Fn, SpecialFn, Infix, Prefix, Compare, Special };
struct Spelling {
    Form form;
    const char* text = nullptr;          // the function or operator
    const char* vector_text = nullptr;   // Compare: the function on vectors
};
const Spelling& spelling(Op op);

// ---- types.cpp ----
std::string float_literal(float v);
// User struct and member names, prefixed out of GLSL's way (S_Particle, m_sample).
std::string struct_name(const Type* s);
std::string member_name(const Type* s, size_t m);
// Per struct member, how many float pads bring it to its host (C++) offset.
std::vector<uint32_t> struct_pads(const Type* s);
// "T name[N]...": GLSL, like C, lists array sizes outermost first after the name.
std::string declare(const Type* t, const std::string& name);
// A GLSL value of type t from its scalars, `scalar(type, lane)` giving each one's expression at its flattened lane
// (counted from `first`): constructors nested as t's members and elements are, struct pads filled with 0.0.
template <typename Scalar>
std::string compose(const Type* t, size_t first, const Scalar& scalar) {
    if (t->is_scalar()) return scalar(t, first);
    std::string s = glsl_type(t) + "(";
    if (t->is_struct()) {
        auto pads = struct_pads(t);
        size_t lane = first;
        for (size_t m = 0; m < t->members().size(); ++m) {
            for (uint32_t p = 0; p < pads[m]; ++p) s += "0.0, ";
            s += compose(t->members()[m], lane, scalar) + (m + 1 < t->members().size() ? ", " : "");
            lane += t->members()[m]->lanes();
        }
        return s + ")";
    }
    const Type* e = t->element();
    for (uint32_t i = 0; i < t->dim(); ++i)
        s += compose(e, first + i * e->lanes(), scalar) + (i + 1 < t->dim() ? ", " : "");
    return s + ")";
}
// Whether a leaf of t (t itself, or a member or element at any depth) satisfies `leaf`.
template <typename Leaf>
bool holds(const Type* t, const Leaf& leaf) {
    if (t->is_struct()) {
        for (auto* m : t->members())
            if (holds(m, leaf)) return true;
        return false;
    }
    if (t->is_array()) return holds(t->element(), leaf);
    return leaf(t);
}
inline bool holds_u64(const Type* t) { return holds(t, [](const Type* l) { return l->is_u64(); }); }

class Emitter {
public:
    Emitter(const ir::Function& f, const GlslOptions& opt) : f_(f), opt_(opt) {}
    GlslKernel run();

private:
    // ---- features.cpp: what the kernel uses, refused where the device lacks it ----
    void scan_features();
    void note_types(const ir::Block& root);
    void note_type(const Type* t);
    [[noreturn]] void refuse(const Inst& in, const std::string& what, const std::string& feature) const;
    void use_atomic(const Inst& in);
    void use_int64(const Inst& in);
    void use_int64(const Type* param);
    void use_subgroup(const Inst& in, uint32_t feature, const std::string& what);
    void write_extensions(std::ostream& os) const;

    // ---- types.cpp ----
    void emit_struct(std::ostream& os, const Type* s) const;
    std::string constant(const Type* t, const std::vector<uint32_t>& w, size_t first = 0) const;
    // A value of type t from its lanes' 32-bit words (lane i: word(first + i), a uint expression): compose()
    // with word reads where constant() composes literals.
    template <typename Word>
    std::string from_words(const Type* t, const Word& word, size_t first = 0) const;

    // ---- resources.cpp ----
    void declare_resources();
    void declare_parameter(size_t k, const ArgSlot& slot, std::ostream& push);
    void memory(ValueId id, const Inst& in);
    void atomic(ValueId id, const Inst& in);
    void cas_loop(ValueId id, const Inst& in, const std::string& target);
    std::string buffer(const Inst& in) const;   // "b<k>" of a buffer instruction's parameter
    const ArgSlot& slot(const Inst& in) const;  // the binding-layout slot of a buffer instruction's parameter
    void texel_read(ValueId id, const Inst& in, uint32_t words);
    std::string index(const Inst& in);          // a memory access's index operand, as GLSL accepts it

    // ---- statements.cpp ----
    void line(const std::string& s);
    std::string name(ValueId v) const;
    std::string decl(ValueId id) const;
    void define(ValueId id, const std::string& expr);
    std::string arg(ValueId v, const Type* want) const;
    std::string access(const Type* t, const std::vector<ValueId>& path, size_t first);
    std::string index(ValueId idx, int64_t limit);   // an index in [0, limit) as is, any other constant by a variable
    void block(const ir::Block& b);
    void nested(const ir::Block& b);
    void inst(ValueId id);
    void value(ValueId id, const Inst& in);
    void control(const Inst& in);
    std::string bitcast(const Inst& in) const;
    std::string convert(const Inst& in) const;

    // ---- expressions.cpp ----
    std::string operand(const Inst& in, size_t k, int column) const;
    std::string fn_arg(const Inst& in, size_t k, int column) const;
    std::string call(const Inst& in, const std::string& fn, int column) const;
    std::string expression(const Inst& in, int column = -1);   // column >= 0: that column of a matrix op
    std::string columns(const Inst& in);
    std::string special(const Inst& in, int column);
    std::string round(const std::string& x, const Type* t) const;
    std::string defined_everywhere(const Inst& in, int column);
    std::string integer_division(const Inst& in);
    std::string sigmoid_softplus(Op op, const std::string& x, const Type* t);
    std::string temp(const std::string& type, const std::string& expr, bool precise);

    const ir::Function& f_;
    GlslOptions opt_;
    GlslKernel result_;                 // the binding layout first (binding_layout()), then the rest
    std::ostringstream resources_;
    std::ostream* out_ = nullptr;
    int indent_ = 0;
    std::vector<const Type*> structs_;  // in the order the kernel first uses them
    std::set<int64_t> cas_buffers_;     // float buffers that take compare-and-swap atomics
    std::set<ValueId> cas_shared_;      // shared float arrays that take compare-and-swap atomics
    std::vector<ValueId> shared_;       // shared array declarations, in id order
    bool need_atomic_float_ = false, need_atomic_float2_ = false;
    bool need_int64_ = false, need_atomic_int64_ = false;
    uint32_t subgroup_features_ = 0;
    bool uses_loop_mark_ = false;
    uint32_t temps_ = 0;
};

template <typename Word>
std::string Emitter::from_words(const Type* t, const Word& word, size_t first) const {
    return compose(t, first, [&](const Type* s, size_t lane) {
        const std::string w = word(lane);
        switch (s->scalar_kind()) {
        case ir::ScalarKind::Float: return "uintBitsToFloat(" + w + ")";
        case ir::ScalarKind::Int: return "int(" + w + ")";
        default: return w;   // uint (bools and uint64 are never read as words: texel_words_for)
        }
    });
}

} // namespace adjoint::codegen::emit
