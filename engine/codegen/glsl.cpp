// The GLSL emitter's entry point: one compute shader module from an inlined kernel. Values are named v<id>,
// locals l<id>, shared arrays s<id>; constants are written inline; the IR is strictly scoped, so each value
// is declared where it is made (the other parts of the emitter: emitter.h).
#include "codegen/emitter.h"

#include <adjoint/core/error.h>

#include <iterator>

namespace adjoint::codegen {

namespace emit {

namespace {

constexpr Spelling Fn(const char* f) { return {Form::Fn, f}; }
constexpr Spelling Infix(const char* op) { return {Form::Infix, op}; }
constexpr Spelling Prefix(const char* op) { return {Form::Prefix, op}; }
constexpr Spelling Compare(const char* op, const char* fn) { return {Form::Compare, op, fn}; }
constexpr Spelling SpecialFn{Form::SpecialFn}, Special{Form::Special}, Stmt{Form::Stmt};
constexpr Spelling kSpellings[] = {
#define ADJOINT_OP(name, arity, typing, domain, effect, ad, lanes, glsl) glsl,
#include <adjoint/ir/ops.def>
#undef ADJOINT_OP
};
static_assert(std::size(kSpellings) == ir::op_count());

} // namespace

const Spelling& spelling(Op op) { return kSpellings[size_t(op)]; }

GlslKernel Emitter::run() {
    if (!f_.is_kernel()) fail("internal: GLSL emission of a callable '", f_.name(), "'");
    note_types(f_.body());
    scan_features();
    static_cast<BindingLayout&>(result_) = binding_layout(f_, opt_.texel_reads);
    declare_resources();
    std::ostringstream body;
    out_ = &body;
    indent_ = 1;
    for (const std::string& s : dispatch_prologue(f_.dimension, f_.block_size[0])) line(s);
    block(f_.body());
    std::ostringstream src;
    src << "#version 450\n";
    write_extensions(src);
    src << "// kernel " << f_.name() << "\n";
    src << "layout(local_size_x = " << f_.block_size[0] << ", local_size_y = " << f_.block_size[1]
        << ", local_size_z = " << f_.block_size[2] << ") in;\n";
    for (const Type* s : structs_) emit_struct(src, s);
    src << resources_.str();
    src << "void main() {\n" << body.str() << "}\n";
    result_.source = src.str();
    result_.traps = f_.traps;
    return std::move(result_);
}

} // namespace emit

GlslKernel emit_glsl(const ir::Function& f, const GlslOptions& options) { return emit::Emitter(f, options).run(); }

} // namespace adjoint::codegen
