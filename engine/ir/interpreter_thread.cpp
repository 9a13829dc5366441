// The host interpreter's per-thread instructions: values, locals, resources, shared memory and atomics.
#include <adjoint/ir/interpreter.h>

#include <adjoint/core/error.h>
#include <adjoint/ir/builder.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

namespace adjoint::ir {

namespace {

int64_t as_index(const Function& f, ValueId v, const Lanes& l) {
    return f.type_of(v)->scalar_kind() == ScalarKind::Int ? int64_t(int32_t(l[0])) : int64_t(l[0]);
}

// An atomic read-modify-write of one scalar of kind k at `at` (4 bytes, or 8 for a uint64); returns the
// old contents as lanes. operands: the value, and for compare-exchange the desired value after it.
Lanes atomic_update(std::byte* at, ScalarKind k, AtomicOp op, const Lanes& value, const Lanes* desired) {
    if (k == ScalarKind::UInt64) {
        uint64_t old;
        std::memcpy(&old, at, 8);
        uint64_t v = uint64_of(value[0], value[1]), next = old;
        switch (op) {
        case AtomicOp::Add: next = old + v; break;
        case AtomicOp::Min: next = std::min(old, v); break;
        case AtomicOp::Max: next = std::max(old, v); break;
        case AtomicOp::Exchange: next = v; break;
        case AtomicOp::CompareExchange: next = old == v ? uint64_of((*desired)[0], (*desired)[1]) : old; break;
        }
        std::memcpy(at, &next, 8);
        return {uint32_t(old), uint32_t(old >> 32)};
    }
    uint32_t old;
    std::memcpy(&old, at, 4);
    uint32_t operand = value[0], next = old;
    switch (op) {
    case AtomicOp::Add:
        next = k == ScalarKind::Float ? bits_of(float_of(old) + float_of(operand)) : old + operand;
        break;
    case AtomicOp::Min: case AtomicOp::Max: {
        bool less = k == ScalarKind::Float ? float_of(operand) < float_of(old)
                    : k == ScalarKind::Int ? int32_t(operand) < int32_t(old) : operand < old;
        bool take = op == AtomicOp::Min ? less : (!less && operand != old);
        if (take) next = operand;
        break;
    }
    case AtomicOp::Exchange: next = operand; break;
    case AtomicOp::CompareExchange: next = old == operand ? (*desired)[0] : old; break;
    }
    std::memcpy(at, &next, 4);
    return {old};
}

} // namespace

HostResource& Interpreter::resource(Frame& fr, ValueId v) {
    const Inst& in = fr.f->inst(v);
    if (in.op != Op::Arg) fail("interpreter: resource operand is not a kernel argument");
    HostResource* r = args_.at(size_t(in.imm)).resource;
    if (!r) fail("interpreter: argument ", in.imm, " of '", kernel_.name(), "' has no resource bound");
    return *r;
}

Lanes& Interpreter::shared(Frame& fr, ValueId decl) {
    const Inst& in = fr.f->inst(decl);
    if (in.op != Op::Shared) fail("interpreter: shared-memory operand is not a shared array declaration");
    auto [it, fresh] = shared_.try_emplace({fr.f, decl});
    if (fresh) it->second.assign(in.type->lanes(), 0u);
    return it->second;
}

size_t Interpreter::element_offset(const Type* bt, const HostResource& r, int64_t index, const Inst& in) {
    const Type* e = bt->element();
    size_t stride = (e->host_size() + e->host_align() - 1) / e->host_align() * e->host_align();
    if (index < 0 || size_t(index + 1) * stride > r.bytes)
        fail("interpreter: buffer index ", index, " out of range (", r.bytes / stride, " elements) at ",
             format_location(in.loc));
    return size_t(index) * stride;
}

void Interpreter::thread_inst(Frame& fr, ValueId id, size_t t) {
    if (++steps_ > step_limit) fail("interpreter: step limit exceeded in '", kernel_.name(), "' (endless loop?)");
    const Function& f = *fr.f;
    const Inst& in = f.inst(id);
    auto& V = fr.values[t];
    Thread& th = threads_[t];
    auto val = [&](size_t k) -> const Lanes& { return V[in.operands[k]]; };
    switch (in.op) {
    case Op::Arg: V[id] = args_.at(size_t(in.imm)).value; return;
    case Op::Param: V[id] = fr.args[t].at(size_t(in.imm)); return;
    case Op::Builtin: {
        const auto& bs = kernel_.block_size;
        switch (BuiltinId(in.imm)) {
        case BuiltinId::DispatchId: V[id] = {th.global[0], th.global[1], th.global[2]}; break;
        case BuiltinId::DispatchSize: V[id] = {size_[0], size_[1], size_[2]}; break;
        case BuiltinId::ThreadId: V[id] = {th.local[0], th.local[1], th.local[2]}; break;
        case BuiltinId::BlockId: V[id] = {th.global[0] / bs[0], th.global[1] / bs[1], th.global[2] / bs[2]}; break;
        case BuiltinId::BlockSize: V[id] = {bs[0], bs[1], bs[2]}; break;
        case BuiltinId::SubgroupSize: V[id] = {subgroup_size}; break;
        case BuiltinId::SubgroupInvocationId: V[id] = {th.linear % subgroup_size}; break;
        }
        return;
    }
    case Op::Local: V[id] = Lanes(in.type->lanes(), 0u); return;
    case Op::Shared: return;   // the block's array is made on first use
    case Op::Load: case Op::Store: {
        bool is_load = in.op == Op::Load;
        size_t first = is_load ? 1 : 2;
        std::vector<int64_t> path;
        const Type* ty = f.type_of(in.operands[0]);
        for (size_t k = first; k < in.operands.size(); ++k) {
            int64_t idx = as_index(f, in.operands[k], val(k));
            uint32_t count = ty->is_struct() ? uint32_t(ty->members().size()) : ty->dim();
            if (idx < 0 || idx >= int64_t(count))
                fail("interpreter: index ", idx, " out of range [0, ", count, ") at ", format_location(in.loc));
            path.push_back(idx);
            ty = ty->is_struct() ? ty->members()[size_t(idx)] : ty->element();
        }
        auto [lo, count] = lane_range(f.type_of(in.operands[0]), path);
        Lanes& var = V[in.operands[0]];
        if (is_load) V[id].assign(var.begin() + lo, var.begin() + lo + count);
        else std::copy(val(1).begin(), val(1).end(), var.begin() + lo);
        return;
    }
    case Op::SharedRead: case Op::SharedWrite: case Op::SharedAtomic: {
        Lanes& array = shared(fr, in.operands[0]);
        const Type* at = f.type_of(in.operands[0]);
        int64_t index = as_index(f, in.operands[1], val(1));
        if (index < 0 || index >= int64_t(at->dim()))
            fail("interpreter: shared array index ", index, " out of range [0, ", at->dim(), ") at ",
                 format_location(in.loc));
        const uint32_t lanes = at->element()->lanes(), lo = uint32_t(index) * lanes;
        if (in.op == Op::SharedRead) V[id].assign(array.begin() + lo, array.begin() + lo + lanes);
        else if (in.op == Op::SharedWrite) std::copy(val(2).begin(), val(2).end(), array.begin() + lo);
        else
            V[id] = atomic_update(reinterpret_cast<std::byte*>(array.data() + lo), at->element()->scalar_kind(),
                                  AtomicOp(in.imm), val(2), in.operands.size() > 3 ? &val(3) : nullptr);
        return;
    }
    case Op::BufferRead: case Op::BufferWrite: case Op::BufferAtomic: {
        HostResource& r = resource(fr, in.operands[0]);
        const Type* bt = f.type_of(in.operands[0]);
        const Type* e = bt->element();
        size_t base = element_offset(bt, r, as_index(f, in.operands[1], val(1)), in);
        if (in.op == Op::BufferRead) {
            Lanes out(e->lanes());
            for (uint32_t i = 0; i < e->lanes(); ++i) std::memcpy(&out[i], r.data + base + e->lane_offset(i), 4);
            V[id] = std::move(out);
        } else if (in.op == Op::BufferWrite) {
            for (uint32_t i = 0; i < e->lanes(); ++i) std::memcpy(r.data + base + e->lane_offset(i), &val(2)[i], 4);
        } else {
            // operands: buffer, index, value (compare-exchange: expected, desired)
            V[id] = atomic_update(r.data + base, e->scalar_kind(), AtomicOp(in.imm), val(2),
                                  in.operands.size() > 3 ? &val(3) : nullptr);
        }
        return;
    }
    case Op::BufferSize: {
        HostResource& r = resource(fr, in.operands[0]);
        const Type* e = f.type_of(in.operands[0])->element();
        size_t stride = (e->host_size() + e->host_align() - 1) / e->host_align() * e->host_align();
        V[id] = {uint32_t(r.bytes / stride)};
        return;
    }
    case Op::ImageRead: case Op::ImageWrite: {
        HostResource& r = resource(fr, in.operands[0]);
        uint32_t x = val(1)[0], y = val(1)[1];
        if (x >= r.width || y >= r.height) {
            if (in.op == Op::ImageRead) V[id] = Lanes(4, 0u);   // out of range reads 0, as on the GPU
            return;
        }
        std::byte* texel = r.data + (size_t(y) * r.width + x) * 16;
        if (in.op == Op::ImageRead) {
            Lanes out(4);
            std::memcpy(out.data(), texel, 16);
            V[id] = std::move(out);
        } else {
            std::memcpy(texel, val(2).data(), 16);
        }
        return;
    }
    case Op::ImageSize: {
        HostResource& r = resource(fr, in.operands[0]);
        V[id] = {r.width, r.height};
        return;
    }
    case Op::Trap:
        if (!trap_) trap_ = val(0)[0];
        return;
    case Op::ScratchRead: case Op::ScratchWrite: {
        uint32_t offset = val(0)[0];
        if (offset >= scratch_.size()) scratch_.resize(size_t(offset) + 1, 0u);
        if (in.op == Op::ScratchRead) V[id] = {scratch_[offset]};
        else scratch_[offset] = val(1)[0];
        return;
    }
    case Op::LoopMark: V[id] = {std::exchange(th.loop_mark, val(0)[0])}; return;
    case Op::RequiresGrad: case Op::Detach: V[id] = val(0); return;
    case Op::Backward: case Op::Grad:
        fail("interpreter: '", name(in.op), "' found: run the autodiff pass before interpreting ", kernel_.name());
    default: break;
    }
    std::vector<const Lanes*> ops;
    ops.reserve(in.operands.size());
    for (ValueId o : in.operands) ops.push_back(&V[o]);
    if (!eval_pure(f, in, ops, V[id])) fail("interpreter: cannot evaluate ", name(in.op));
}

} // namespace adjoint::ir
