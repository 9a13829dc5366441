// Type rules of the op table: what each typing class accepts and what it yields.
#include <adjoint/core/error.h>
#include <adjoint/ir/builder.h>

#include <sstream>

namespace adjoint::ir {

namespace {

[[noreturn]] void type_error(Op op, std::span<const Type* const> types, const std::source_location& loc,
                             std::string_view why) {
    std::ostringstream os;
    os << "type error: " << name(op) << "(";
    for (size_t i = 0; i < types.size(); ++i) os << (i ? ", " : "") << types[i]->to_string();
    os << "): " << why;
    auto where = format_location(loc);
    if (!where.empty()) os << " at " << where;
    throw Error(os.str());
}

bool domain_ok(Domain d, const Type* t) {
    switch (d) {
    case Domain::A: return t->is_value();
    case Domain::F: return t->is_float();
    case Domain::N: return t->is_float() || t->is_int_like();
    case Domain::I: return t->is_int_like();
    case Domain::B: return t->is_bool();
    }
    return false;
}

// Same type, or a scalar broadcast against a vector/matrix of the same component kind.
const Type* unify(const Type* a, const Type* b) {
    if (a == b) return a;
    if (a->is_scalar() && (b->is_vector() || b->is_matrix()) && b->scalar_kind() == a->scalar_kind()) return b;
    if (b->is_scalar() && (a->is_vector() || a->is_matrix()) && a->scalar_kind() == b->scalar_kind()) return a;
    return nullptr;
}

} // namespace

const Type* infer_type(Op op, std::span<const Type* const> t, const std::source_location& loc) {
    const OpInfo& oi = info(op);
    if (oi.arity >= 0 && t.size() != size_t(oi.arity)) type_error(op, t, loc, "wrong number of operands");
    switch (op) {
    case Op::MatMul: {
        auto *a = t[0], *b = t[1];
        if (a->is_matrix() && b->is_matrix() && a == b) return a;
        if (a->is_matrix() && b->is_vector() && b->is_float() && a->dim() == b->dim()) return b;
        if (a->is_vector() && a->is_float() && b->is_matrix() && a->dim() == b->dim()) return a;
        type_error(op, t, loc, "expects matrix*matrix, matrix*vector or vector*matrix of matching size");
    }
    case Op::Select: {
        auto *c = t[0], *a = t[1], *b = t[2];
        if (a != b) type_error(op, t, loc, "both sides must have the same type");
        if (c == Type::boolean()) return a;
        if (c->is_vector() && c->is_bool() && a->is_vector() && a->dim() == c->dim()) return a;
        type_error(op, t, loc, "the condition must be a bool, or a bool vector as wide as the values");
    }
    case Op::Any: case Op::All:
        if (!t[0]->is_bool()) type_error(op, t, loc, "expects a bool vector");
        return Type::boolean();
    case Op::Cross:
        if (t[0] != Type::vector(ScalarKind::Float, 3) || t[1] != t[0]) type_error(op, t, loc, "expects two float3");
        return t[0];
    case Op::Determinant: case Op::Inverse: case Op::Transpose:
        if (!t[0]->is_matrix()) type_error(op, t, loc, "expects a matrix");
        return op == Op::Determinant ? Type::f32() : t[0];
    case Op::Normalize: case Op::Reflect:
        if (!t[0]->is_vector() || !t[0]->is_float()) type_error(op, t, loc, "expects float vectors");
        break;
    case Op::SubgroupElect: return Type::boolean();
    case Op::SubgroupAll: case Op::SubgroupAny:
        if (t[0] != Type::boolean()) type_error(op, t, loc, "expects a bool");
        return t[0];
    case Op::SubgroupAllEqual: case Op::SubgroupBallot: case Op::SubgroupAdd: case Op::SubgroupMin:
    case Op::SubgroupMax: case Op::SubgroupExclusiveAdd: case Op::SubgroupBroadcastFirst:
        // GLSL's subgroup functions take scalars and vectors of 32-bit kinds (no matrices, no uint64).
        if (!(t[0]->is_scalar() || t[0]->is_vector()) || t[0]->is_u64())
            type_error(op, t, loc, "expects a scalar or vector of float, int, uint or bool");
        if (op == Op::SubgroupAllEqual) return Type::boolean();
        if (op == Op::SubgroupBallot) {
            if (t[0] != Type::boolean()) type_error(op, t, loc, "expects a bool");
            return Type::vector(ScalarKind::UInt, 4);
        }
        break;
    case Op::Shl: case Op::Shr:
        if (!t[0]->is_int_like() || !t[1]->is_int_like()) type_error(op, t, loc, "expects integers");
        if (t[1] != t[0] && !(t[1]->is_scalar())) type_error(op, t, loc, "shift count must match or be scalar");
        return t[0];
    default: break;
    }
    for (auto* ty : t)
        if (!domain_ok(oi.domain, ty)) {
            static const char* names[] = {"float", "numeric", "integer", "bool", "value"};
            type_error(op, t, loc, std::string("expects ") + names[int(oi.domain)] + " operands");
        }
    switch (oi.typing) {
    case Typing::Unary: return t[0];
    case Typing::Binary: {
        const Type* r = unify(t[0], t[1]);
        if (!r) type_error(op, t, loc, "operand types differ");
        return r;
    }
    case Typing::Ternary: {
        const Type* r = unify(t[0], t[1]);
        if (r) r = unify(r, t[2]);
        if (!r) type_error(op, t, loc, "operand types differ");
        return r;
    }
    case Typing::Compare: {
        const Type* r = unify(t[0], t[1]);
        if (!r || r->is_matrix() || !r->is_basic()) type_error(op, t, loc, "operands must be scalars or vectors of one type");
        return r->with_scalar(ScalarKind::Bool);
    }
    case Typing::Scalar:
        if (t.size() == 2 && t[0] != t[1]) type_error(op, t, loc, "operand types differ");
        if (!t[0]->is_scalar() && !t[0]->is_vector()) type_error(op, t, loc, "expects vectors");
        return Type::scalar(t[0]->scalar_kind());
    case Typing::Void: return Type::void_type();
    case Typing::Explicit: type_error(op, t, loc, "needs an explicit result type");
    }
    return nullptr;
}

const Type* access_type(const Function& f, const Type* base, std::span<const ValueId> path,
                        const std::source_location& loc) {
    const Type* t = base;
    for (ValueId idx : path) {
        const Type* it = f.type_of(idx);
        if (!it->is_index())
            fail("an index must be an int or uint, not ", it->to_string(), " at ", format_location(loc));
        switch (t->kind()) {
        case Type::Kind::Vector: case Type::Kind::Matrix: case Type::Kind::Array: t = t->element(); break;
        case Type::Kind::Struct: {
            if (!is_constant(f, idx)) fail("a struct member index must be constant at ", format_location(loc));
            auto m = const_int(f, idx);
            if (m < 0 || size_t(m) >= t->members().size()) fail("no member ", m, " in ", t->to_string());
            t = t->members()[size_t(m)];
            break;
        }
        default: fail("cannot index into ", t->to_string(), " at ", format_location(loc));
        }
    }
    return t;
}

} // namespace adjoint::ir
