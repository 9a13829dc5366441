// The host interpreter: a direct walk over structured blocks, one thread at a time.
#include <adjoint/ir/interpreter.h>

#include <adjoint/core/error.h>
#include <adjoint/ir/builder.h>

#include <cmath>
#include <cstring>
#include <utility>

namespace adjoint::ir {

Interpreter::Interpreter(const Function& kernel, std::vector<HostArg> args, std::array<uint32_t, 3> size)
    : kernel_(kernel), args_(std::move(args)), size_(size) {
    if (args_.size() != kernel.params.size())
        fail("interpreter: kernel '", kernel.name(), "' takes ", kernel.params.size(), " arguments, got ", args_.size());
}

void Interpreter::run_all() {
    for (uint32_t z = 0; z < size_[2]; ++z)
        for (uint32_t y = 0; y < size_[1]; ++y)
            for (uint32_t x = 0; x < size_[0]; ++x) run_thread({x, y, z});
}

void Interpreter::run_thread(std::array<uint32_t, 3> id) {
    tid_ = id;
    loop_mark_ = 0;
    Frame fr{&kernel_, std::vector<Lanes>(kernel_.inst_count()), {}, {}};
    block(fr, kernel_.body());
}

Interpreter::Flow Interpreter::block(Frame& fr, const Block& b) {
    for (ValueId id : b.insts) {
        Flow flow = inst(fr, id);
        if (flow != Flow::Normal) return flow;
    }
    return Flow::Normal;
}

HostResource& Interpreter::resource(Frame& fr, ValueId v) {
    const Inst& in = fr.f->inst(v);
    if (in.op != Op::Arg) fail("interpreter: resource operand is not a kernel argument");
    HostResource* r = args_.at(size_t(in.imm)).resource;
    if (!r) fail("interpreter: argument ", in.imm, " of '", kernel_.name(), "' has no resource bound");
    return *r;
}

size_t Interpreter::element_offset(const Type* bt, const HostResource& r, int64_t index, const Inst& in) {
    const Type* e = bt->element();
    size_t stride = (e->host_size() + e->host_align() - 1) / e->host_align() * e->host_align();
    if (index < 0 || size_t(index + 1) * stride > r.bytes)
        fail("interpreter: buffer index ", index, " out of range (", r.bytes / stride, " elements) at ",
             format_location(in.loc));
    return size_t(index) * stride;
}

namespace {
int64_t as_index(const Function& f, ValueId v, const Lanes& l) {
    return f.type_of(v)->scalar_kind() == ScalarKind::Int ? int64_t(int32_t(l[0])) : int64_t(l[0]);
}
} // namespace

Interpreter::Flow Interpreter::inst(Frame& fr, ValueId id) {
    if (++steps_ > step_limit) fail("interpreter: step limit exceeded in '", kernel_.name(), "' (endless loop?)");
    const Function& f = *fr.f;
    const Inst& in = f.inst(id);
    auto& V = fr.values;
    auto val = [&](size_t k) -> const Lanes& { return V[in.operands[k]]; };
    switch (in.op) {
    case Op::Arg: V[id] = args_.at(size_t(in.imm)).value; return Flow::Normal;
    case Op::Param: V[id] = fr.call_args.at(size_t(in.imm)); return Flow::Normal;
    case Op::Builtin: {
        auto bs = kernel_.block_size;
        switch (BuiltinId(in.imm)) {
        case BuiltinId::DispatchId: V[id] = {tid_[0], tid_[1], tid_[2]}; break;
        case BuiltinId::DispatchSize: V[id] = {size_[0], size_[1], size_[2]}; break;
        case BuiltinId::ThreadId: V[id] = {tid_[0] % bs[0], tid_[1] % bs[1], tid_[2] % bs[2]}; break;
        case BuiltinId::BlockId: V[id] = {tid_[0] / bs[0], tid_[1] / bs[1], tid_[2] / bs[2]}; break;
        }
        return Flow::Normal;
    }
    case Op::Local: V[id] = Lanes(in.type->lanes(), 0u); return Flow::Normal;
    case Op::Load: case Op::Store: {
        bool is_load = in.op == Op::Load;
        size_t first = is_load ? 1 : 2;
        std::vector<int64_t> path;
        const Type* t = f.type_of(in.operands[0]);
        for (size_t k = first; k < in.operands.size(); ++k) {
            int64_t idx = as_index(f, in.operands[k], val(k));
            uint32_t n = t->is_struct() ? uint32_t(t->members().size()) : t->dim();
            if (idx < 0 || idx >= int64_t(n))
                fail("interpreter: index ", idx, " out of range [0, ", n, ") at ", format_location(in.loc));
            path.push_back(idx);
            t = t->is_struct() ? t->members()[size_t(idx)] : t->element();
        }
        auto [lo, count] = lane_range(f.type_of(in.operands[0]), path);
        Lanes& var = V[in.operands[0]];
        if (is_load) V[id].assign(var.begin() + lo, var.begin() + lo + count);
        else std::copy(val(1).begin(), val(1).end(), var.begin() + lo);
        return Flow::Normal;
    }
    case Op::If:
        return block(fr, *in.regions[val(0)[0] ? 0 : 1]);
    case Op::Switch: {
        uint32_t v = val(0)[0];
        size_t chosen = in.regions.size();
        for (size_t r = 0; r < in.words.size(); ++r)
            if (in.words[r] == v) chosen = r;
        if (chosen == in.regions.size() && in.has_default) chosen = in.regions.size() - 1;
        if (chosen == in.regions.size()) return Flow::Normal;
        Flow flow = block(fr, *in.regions[chosen]);   // no fall-through: each case ends by itself
        return flow == Flow::Break ? Flow::Normal : flow;
    }
    case Op::Loop:
        for (;;) {
            Flow flow = block(fr, *in.regions[0]);
            if (flow == Flow::Break) return Flow::Normal;
            if (flow == Flow::Return) return flow;
        }
    case Op::Autodiff: return block(fr, *in.regions[0]);
    case Op::Break: return Flow::Break;
    case Op::Continue: return Flow::Continue;
    case Op::Return:
        if (!in.operands.empty()) fr.result = val(0);
        return Flow::Return;
    case Op::Call: {
        Frame callee{in.callee, std::vector<Lanes>(in.callee->inst_count()), {}, {}};
        for (size_t k = 0; k < in.operands.size(); ++k) callee.call_args.push_back(val(k));
        // Resources passed to callables are kernel arguments; the callee's Param of resource type reads
        // them through the caller's Arg, which the inliner resolves; the interpreter resolves it here.
        block(callee, in.callee->body());
        V[id] = callee.result;
        return Flow::Normal;
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
            uint32_t old;
            std::memcpy(&old, r.data + base, 4);
            uint32_t operand = val(2)[0], next = old;
            ScalarKind k = e->scalar_kind();
            switch (AtomicOp(in.imm)) {
            case AtomicOp::Add:
                next = k == ScalarKind::Float ? bits_of(float_of(old) + float_of(operand)) : old + operand;
                break;
            case AtomicOp::Min: case AtomicOp::Max: {
                bool less = k == ScalarKind::Float ? float_of(operand) < float_of(old)
                            : k == ScalarKind::Int ? int32_t(operand) < int32_t(old) : operand < old;
                bool take = AtomicOp(in.imm) == AtomicOp::Min ? less : (!less && operand != old);
                if (take) next = operand;
                break;
            }
            case AtomicOp::Exchange: next = operand; break;
            case AtomicOp::CompareExchange:
                // operands: buffer, index, expected, desired
                next = old == operand ? val(3)[0] : old;
                break;
            }
            std::memcpy(r.data + base, &next, 4);
            V[id] = {old};
        }
        return Flow::Normal;
    }
    case Op::BufferSize: {
        HostResource& r = resource(fr, in.operands[0]);
        const Type* e = f.type_of(in.operands[0])->element();
        size_t stride = (e->host_size() + e->host_align() - 1) / e->host_align() * e->host_align();
        V[id] = {uint32_t(r.bytes / stride)};
        return Flow::Normal;
    }
    case Op::ImageRead: case Op::ImageWrite: {
        HostResource& r = resource(fr, in.operands[0]);
        uint32_t x = val(1)[0], y = val(1)[1];
        if (x >= r.width || y >= r.height) {
            if (in.op == Op::ImageRead) V[id] = Lanes(4, 0u);   // out of range reads 0, as on the GPU
            return Flow::Normal;
        }
        std::byte* texel = r.data + (size_t(y) * r.width + x) * 16;
        if (in.op == Op::ImageRead) {
            Lanes out(4);
            std::memcpy(out.data(), texel, 16);
            V[id] = std::move(out);
        } else {
            std::memcpy(texel, val(2).data(), 16);
        }
        return Flow::Normal;
    }
    case Op::ImageSize: {
        HostResource& r = resource(fr, in.operands[0]);
        V[id] = {r.width, r.height};
        return Flow::Normal;
    }
    case Op::Trap:
        if (!trap_) trap_ = val(0)[0];
        return Flow::Normal;
    case Op::ScratchRead: case Op::ScratchWrite: {
        uint32_t offset = val(0)[0];
        if (offset >= scratch_.size()) scratch_.resize(size_t(offset) + 1, 0u);
        if (in.op == Op::ScratchRead) V[id] = {scratch_[offset]};
        else scratch_[offset] = val(1)[0];
        return Flow::Normal;
    }
    case Op::LoopMark: V[id] = {std::exchange(loop_mark_, val(0)[0])}; return Flow::Normal;
    case Op::RequiresGrad: case Op::Detach: V[id] = val(0); return Flow::Normal;
    case Op::Backward: case Op::Grad:
        fail("interpreter: '", name(in.op), "' found: run the autodiff pass before interpreting ", kernel_.name());
    default: break;
    }
    std::vector<const Lanes*> ops;
    ops.reserve(in.operands.size());
    for (ValueId o : in.operands) ops.push_back(&V[o]);
    if (!eval_pure(f, in, ops, V[id])) fail("interpreter: cannot evaluate ", name(in.op));
    return Flow::Normal;
}

} // namespace adjoint::ir
