// Builder: appends type-checked instructions at the current insertion point.
#include <adjoint/ir/builder.h>

#include <adjoint/core/error.h>

#include <algorithm>
#include <bit>
#include <cmath>

namespace adjoint::ir {

uint32_t bits_of(float v) { return std::bit_cast<uint32_t>(v); }
float float_of(uint32_t bits) { return std::bit_cast<float>(bits); }

float const_float(const Function& f, ValueId v) { return float_of(f.inst(v).words.at(0)); }

int64_t const_int(const Function& f, ValueId v) {
    const Inst& in = f.inst(v);
    if (in.type->scalar_kind() == ScalarKind::UInt64) return int64_t(uint64_of(in.words.at(0), in.words.at(1)));
    return in.type->scalar_kind() == ScalarKind::Int ? int64_t(int32_t(in.words.at(0))) : int64_t(in.words.at(0));
}

bool const_is(const Function& f, ValueId v, double x) {
    const Inst& in = f.inst(v);
    if (in.op != Op::Const) return false;
    for (uint32_t i = 0; i < in.words.size(); ++i) {
        double lane = 0;
        switch (in.type->lane_kind(i)) {
        case ScalarKind::Float: lane = float_of(in.words[i]); break;
        case ScalarKind::Int: lane = int32_t(in.words[i]); break;
        case ScalarKind::UInt64: lane = double(uint64_of(in.words[i], in.words[i + 1])); ++i; break;
        default: lane = in.words[i]; break;
        }
        if (lane != x) return false;
    }
    return true;
}

ValueId Builder::place(Inst&& inst) {
    ValueId id = f_->add(std::move(inst));
    auto& [block, index] = blocks_.back();
    if (index == npos) {
        block->insts.push_back(id);
    } else {
        block->insts.insert(block->insts.begin() + long(index), id);
        ++index;
    }
    return id;
}

ValueId Builder::append(Inst inst) { return place(std::move(inst)); }

ValueId Builder::emit(Op op, std::vector<ValueId> operands, const Type* type, int64_t imm, std::source_location loc) {
    if (op == Op::Bitcast && type) {
        const Type* from = f_->type_of(operands.at(0));
        if (from->lanes() != type->lanes() || from->is_u64() || type->is_u64() || !from->is_basic() || !type->is_basic())
            fail("type error: cannot bitcast ", from->to_string(), " to ", type->to_string(), " at ", format_location(loc));
    }
    if (!type) {
        std::vector<const Type*> types;
        types.reserve(operands.size());
        for (ValueId v : operands) types.push_back(f_->type_of(v));
        type = infer_type(op, types, loc);
    }
    Inst inst;
    inst.op = op;
    inst.type = type;
    inst.operands = std::move(operands);
    inst.imm = imm;
    inst.loc = loc;
    return place(std::move(inst));
}

bool Builder::is_open(const Block* b) const {
    for (const auto& level : blocks_)
        if (level.first == b) return true;
    return false;
}

ValueId Builder::hoisted(ValueId after, const std::function<ValueId()>& record, const Block** placed) {
    // Walk out while the statement that opened the level was placed after `after`.
    size_t level = blocks_.size() - 1;
    size_t open_at = 0;   // position of that statement in the enclosing block
    while (level > 0) {
        const Block& outer = *blocks_[level - 1].first;
        const Block* inner = blocks_[level].first;
        size_t k = outer.insts.size();
        while (k > 0) {   // the opening statement is the last one or close to it
            const Inst& in = f_->inst(outer.insts[k - 1]);
            if (std::any_of(in.regions.begin(), in.regions.end(), [&](auto& r) { return r.get() == inner; })) break;
            --k;
        }
        if (k == 0 || outer.insts[k - 1] < after) break;   // a scratch block (no opener), or `after` is outside
        --level;
        open_at = k - 1;
    }
    *placed = blocks_[level].first;
    if (level + 1 == blocks_.size()) return record();
    push(*blocks_[level].first);
    set_insert_index(open_at);
    ValueId v = record();
    pop();
    return v;
}

ValueId Builder::constant(const Type* type, std::vector<uint32_t> lanes, std::source_location loc) {
    const bool share = share_constants_ && blocks_.back().second == npos;
    auto key = std::make_pair(type, lanes);
    if (share)
        for (size_t level = constants_.size(); level-- > 0;) {
            auto it = constants_[level].find(key);
            if (it != constants_[level].end() && !f_->inst(it->second).dead) return it->second;
        }
    Inst inst;
    inst.op = Op::Const;
    inst.type = type;
    inst.words = std::move(lanes);
    inst.loc = loc;
    ValueId id = place(std::move(inst));
    if (share) constants_.back().emplace(std::move(key), id);
    return id;
}

ValueId Builder::f32(float v, std::source_location loc) { return constant(Type::f32(), {bits_of(v)}, loc); }
ValueId Builder::i32(int32_t v, std::source_location loc) { return constant(Type::i32(), {uint32_t(v)}, loc); }
ValueId Builder::u32(uint32_t v, std::source_location loc) { return constant(Type::u32(), {v}, loc); }
ValueId Builder::boolean(bool v, std::source_location loc) { return constant(Type::boolean(), {v ? 1u : 0u}, loc); }
ValueId Builder::u64(uint64_t v, std::source_location loc) {
    return constant(Type::u64(), {uint32_t(v), uint32_t(v >> 32)}, loc);
}

ValueId Builder::zero(const Type* type, std::source_location loc) {
    return constant(type, std::vector<uint32_t>(type->lanes(), 0u), loc);
}

ValueId Builder::splat(const Type* type, double value, std::source_location loc) {
    std::vector<uint32_t> lanes(type->lanes());
    for (uint32_t i = 0; i < lanes.size(); ++i) {
        switch (type->lane_kind(i)) {
        case ScalarKind::Float: lanes[i] = bits_of(float(value)); break;
        case ScalarKind::Int: lanes[i] = uint32_t(int32_t(value)); break;
        case ScalarKind::UInt: lanes[i] = uint32_t(value); break;
        case ScalarKind::Bool: lanes[i] = value != 0; break;
        case ScalarKind::UInt64: {
            uint64_t u = uint64_t(value);
            lanes[i] = uint32_t(u);
            lanes[++i] = uint32_t(u >> 32);
            break;
        }
        }
    }
    return constant(type, std::move(lanes), loc);
}

ValueId Builder::local(const Type* type, std::source_location loc) {
    if (!type->is_value()) fail("a local variable holds a value, not ", type->to_string(), " at ", format_location(loc));
    return emit(Op::Local, {}, type, 0, loc);
}

ValueId Builder::load(ValueId var, std::span<const ValueId> path, std::source_location loc) {
    const Type* t = access_type(*f_, type_of(var), path, loc);
    std::vector<ValueId> ops{var};
    ops.insert(ops.end(), path.begin(), path.end());
    return emit(Op::Load, std::move(ops), t, 0, loc);
}

void Builder::store(ValueId var, ValueId value, std::span<const ValueId> path, std::source_location loc) {
    const Type* t = access_type(*f_, type_of(var), path, loc);
    if (t != type_of(value))
        fail("type error: cannot assign ", type_of(value)->to_string(), " to a variable of type ", t->to_string(),
             " at ", format_location(loc));
    std::vector<ValueId> ops{var, value};
    ops.insert(ops.end(), path.begin(), path.end());
    emit(Op::Store, std::move(ops), Type::void_type(), 0, loc);
}

ValueId Builder::extract(ValueId value, std::span<const ValueId> path, std::source_location loc) {
    const Type* t = access_type(*f_, type_of(value), path, loc);
    std::vector<ValueId> ops{value};
    ops.insert(ops.end(), path.begin(), path.end());
    return emit(Op::Extract, std::move(ops), t, 0, loc);
}

ValueId Builder::extract(ValueId value, uint32_t index, std::source_location loc) {
    ValueId idx = i32(int32_t(index), loc);
    return extract(value, std::span<const ValueId>(&idx, 1), loc);
}

ValueId Builder::insert(ValueId value, ValueId element, std::span<const ValueId> path, std::source_location loc) {
    const Type* t = access_type(*f_, type_of(value), path, loc);
    if (t != type_of(element))
        fail("type error: cannot insert ", type_of(element)->to_string(), " where ", t->to_string(), " is expected at ",
             format_location(loc));
    std::vector<ValueId> ops{value, element};
    ops.insert(ops.end(), path.begin(), path.end());
    return emit(Op::Insert, std::move(ops), type_of(value), 0, loc);
}

ValueId Builder::construct(const Type* type, std::vector<ValueId> parts, std::source_location loc) {
    // A construct takes either one scalar (splat) or exactly the type's immediate parts:
    // vector: scalars; matrix: columns; array: elements; struct: members.
    bool ok = true;
    if (parts.size() == 1 && type_of(parts[0])->is_scalar() && (type->is_vector() || type->is_matrix()) &&
        type_of(parts[0])->scalar_kind() == type->scalar_kind()) {
        ok = !type->is_matrix();   // a matrix from one scalar is ambiguous (diagonal in GLSL); not allowed
    } else {
        size_t n = type->is_struct() ? type->members().size() : type->dim();
        if (parts.size() != n) ok = false;
        for (size_t i = 0; ok && i < parts.size(); ++i) {
            const Type* want = type->is_struct() ? type->members()[i] : type->element();
            if (type_of(parts[i]) != want) ok = false;
        }
    }
    if (!ok) {
        std::string got;
        for (auto p : parts) got += (got.empty() ? "" : ", ") + type_of(p)->to_string();
        fail("type error: cannot construct ", type->to_string(), " from (", got, ") at ", format_location(loc));
    }
    return emit(Op::Construct, std::move(parts), type, 0, loc);
}

ValueId Builder::cast(const Type* type, ValueId value, std::source_location loc) {
    const Type* from = type_of(value);
    if (from == type) return value;
    bool ok = from->is_basic() && type->is_basic() && !from->is_matrix() && !type->is_matrix() &&
              (from->is_scalar() ? type->is_scalar() : type->dim() == from->dim());
    if (!ok) fail("type error: cannot cast ", from->to_string(), " to ", type->to_string(), " at ", format_location(loc));
    return emit(Op::Cast, {value}, type, 0, loc);
}

ValueId Builder::swizzle(ValueId value, std::span<const uint32_t> components, std::source_location loc) {
    const Type* t = type_of(value);
    if (!t->is_vector()) fail("type error: swizzle of ", t->to_string(), " at ", format_location(loc));
    int64_t code = 0;
    for (size_t i = 0; i < components.size(); ++i) {
        if (components[i] >= t->dim()) fail("swizzle component out of range at ", format_location(loc));
        code |= int64_t(components[i]) << (2 * i);
    }
    return emit(Op::Swizzle, {value}, Type::vector(t->scalar_kind(), uint32_t(components.size())),
                code | (int64_t(components.size()) << 16), loc);
}

ValueId Builder::unary(Op op, ValueId a, std::source_location loc) { return emit(op, {a}, nullptr, 0, loc); }
ValueId Builder::binary(Op op, ValueId a, ValueId b, std::source_location loc) { return emit(op, {a, b}, nullptr, 0, loc); }
ValueId Builder::ternary(Op op, ValueId a, ValueId b, ValueId c, std::source_location loc) {
    return emit(op, {a, b, c}, nullptr, 0, loc);
}
ValueId Builder::select(ValueId cond, ValueId a, ValueId b, std::source_location loc) {
    std::vector<const Type*> types{type_of(cond), type_of(a), type_of(b)};
    return emit(Op::Select, {cond, a, b}, infer_type(Op::Select, types, loc), 0, loc);
}

ValueId Builder::if_(ValueId cond, std::source_location loc) {
    if (type_of(cond) != Type::boolean())
        fail("type error: an if condition must be a bool, not ", type_of(cond)->to_string(), " at ", format_location(loc));
    Inst inst;
    inst.op = Op::If;
    inst.type = Type::void_type();
    inst.operands = {cond};
    inst.regions.push_back(std::make_unique<Block>());
    inst.regions.push_back(std::make_unique<Block>());
    inst.loc = loc;
    return place(std::move(inst));
}

ValueId Builder::loop(std::source_location loc) {
    Inst inst;
    inst.op = Op::Loop;
    inst.type = Type::void_type();
    inst.regions.push_back(std::make_unique<Block>());
    inst.loc = loc;
    return place(std::move(inst));
}

ValueId Builder::switch_(ValueId value, std::source_location loc) {
    const Type* t = type_of(value);
    if (!t->is_index())
        fail("type error: a switch value must be an int or uint, not ", t->to_string(), " at ", format_location(loc));
    Inst inst;
    inst.op = Op::Switch;
    inst.type = Type::void_type();
    inst.operands = {value};
    inst.loc = loc;
    return place(std::move(inst));
}

Block& Builder::add_case(ValueId sw, std::optional<int64_t> value) {
    Inst& inst = f_->inst(sw);
    if (inst.has_default) fail("$default must be the last case of a $switch at ", format_location(inst.loc));
    if (value) {
        for (uint32_t w : inst.words)
            if (int64_t(int32_t(w)) == *value) fail("duplicate $case ", *value, " in $switch at ", format_location(inst.loc));
        inst.words.push_back(uint32_t(*value));
    } else {
        inst.has_default = true;
    }
    inst.regions.push_back(std::make_unique<Block>());
    return *inst.regions.back();
}

void Builder::break_(std::source_location loc) { emit(Op::Break, {}, Type::void_type(), 0, loc); }
void Builder::continue_(std::source_location loc) { emit(Op::Continue, {}, Type::void_type(), 0, loc); }

} // namespace adjoint::ir
