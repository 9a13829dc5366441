// The operation table itself, expanded from ops.def.
#include <adjoint/ir/op.h>

#include <array>
#include <cctype>
#include <string>

namespace adjoint::ir {

namespace {

// "BufferRead" -> "buffer_read", computed once so that the printer and errors share one spelling.
std::string snake(std::string_view camel) {
    std::string out;
    for (size_t i = 0; i < camel.size(); ++i) {
        char c = camel[i];
        if (std::isupper(static_cast<unsigned char>(c))) {
            if (i > 0) out += '_';
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        } else {
            out += c;
        }
    }
    return out;
}

struct Table {
    std::array<std::string, op_count()> names;
    std::array<OpInfo, op_count()> infos;
    Table() {
        size_t i = 0;
        constexpr bool C = true, X = false;   // the lanes column
#define ADJOINT_OP(name, arity, typing, domain, effect, ad, lanes, glsl)                                  \
    names[i] = snake(#name);                                                                             \
    infos[i] = OpInfo{names[i], arity, Typing::typing, Domain::domain, Effect::effect, AdClass::ad, lanes}; \
    ++i;
#include <adjoint/ir/ops.def>
#undef ADJOINT_OP
    }
};

} // namespace

const OpInfo& info(Op op) {
    static const Table table;
    return table.infos[static_cast<size_t>(op)];
}

} // namespace adjoint::ir
