// The host interpreter: a walk over structured blocks for a group of threads in lockstep (interpreter.h);
// the instructions each thread runs by itself are in interpreter_thread.cpp.
#include <adjoint/ir/interpreter.h>

#include <adjoint/core/error.h>
#include <adjoint/ir/builder.h>
#include <adjoint/ir/walk.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

namespace adjoint::ir {

namespace {

bool any(const std::vector<uint8_t>& m) { return std::find(m.begin(), m.end(), 1) != m.end(); }

// Does the kernel (or a callable it calls) need its blocks run in lockstep?
bool needs_lockstep(const Function& f) {
    return any_inst(f, f.body(), [&](ValueId id) {
        const Inst& in = f.inst(id);
        return in.op == Op::Shared || in.op == Op::Barrier || is_subgroup_op(in.op) ||
               (in.op == Op::Builtin && (BuiltinId(in.imm) == BuiltinId::SubgroupSize ||
                                         BuiltinId(in.imm) == BuiltinId::SubgroupInvocationId)) ||
               (in.op == Op::Call && in.callee && needs_lockstep(*in.callee));
    });
}

const Inst* find_barrier(const Function& f, const Block& b) {
    const Inst* found = nullptr;
    any_inst(f, b, [&](ValueId id) {
        const Inst& in = f.inst(id);
        if (in.op == Op::Barrier) found = &in;
        else if (in.op == Op::Call && in.callee) found = find_barrier(*in.callee, in.callee->body());
        return found != nullptr;
    });
    return found;
}

} // namespace

Interpreter::Interpreter(const Function& kernel, std::vector<HostArg> args, std::array<uint32_t, 3> size)
    : kernel_(kernel), args_(std::move(args)), size_(size) {
    if (args_.size() != kernel.params.size())
        fail("interpreter: kernel '", kernel.name(), "' takes ", kernel.params.size(), " arguments, got ", args_.size());
    lockstep_ = needs_lockstep(kernel);
    // As the runtime refuses it: a block cut by the dispatch's edge would have threads that never reach
    // the barrier the others wait at.
    if (const Inst* barrier = find_barrier(kernel, kernel.body())) {
        const auto& bs = kernel.block_size;
        for (int i = 0; i < 3; ++i)
            if (size_[size_t(i)] % bs[size_t(i)] != 0)
                fail("interpreter: kernel '", kernel.name(), "' calls sync_block() (at ", format_location(barrier->loc),
                     "), so its dispatch size must be a multiple of its block size in each dimension: ", size_[0],
                     " x ", size_[1], " x ", size_[2], " is not a multiple of ", bs[0], " x ", bs[1], " x ", bs[2]);
    }
}

void Interpreter::run_all() {
    const auto& bs = kernel_.block_size;
    if (!lockstep_) {
        // One thread per group, in the order of their dispatch ids.
        std::vector<Thread> one(1);
        for (uint32_t z = 0; z < size_[2]; ++z)
            for (uint32_t y = 0; y < size_[1]; ++y)
                for (uint32_t x = 0; x < size_[0]; ++x) {
                    Thread& t = one[0];
                    t.global = {x, y, z};
                    t.local = {x % bs[0], y % bs[1], z % bs[2]};
                    t.linear = t.local[0] + bs[0] * (t.local[1] + bs[1] * t.local[2]);
                    run_group({x / bs[0], y / bs[1], z / bs[2]}, one);
                }
        return;
    }
    std::array<uint64_t, 3> blocks{};
    for (size_t i = 0; i < 3; ++i) blocks[i] = (uint64_t(size_[i]) + bs[i] - 1) / bs[i];
    for (uint64_t z = 0; z < blocks[2]; ++z)
        for (uint64_t y = 0; y < blocks[1]; ++y)
            for (uint64_t x = 0; x < blocks[0]; ++x) run_block({uint32_t(x), uint32_t(y), uint32_t(z)});
}

void Interpreter::run_block(std::array<uint32_t, 3> blk) {
    const auto& bs = kernel_.block_size;
    std::vector<Thread> threads;
    for (uint32_t z = 0; z < bs[2]; ++z)
        for (uint32_t y = 0; y < bs[1]; ++y)
            for (uint32_t x = 0; x < bs[0]; ++x) {
                Thread t;
                t.local = {x, y, z};
                t.linear = x + bs[0] * (y + bs[1] * z);
                for (size_t i = 0; i < 3; ++i) t.global[i] = blk[i] * bs[i] + t.local[i];
                threads.push_back(t);
            }
    if (!lockstep_) {
        std::vector<Thread> one(1);
        for (const Thread& t : threads) {
            if (t.global[0] >= size_[0] || t.global[1] >= size_[1] || t.global[2] >= size_[2]) continue;
            one[0] = t;
            run_group(blk, one);
        }
        return;
    }
    run_group(blk, threads);
}

void Interpreter::run_group(std::array<uint32_t, 3> blk, const std::vector<Thread>& threads) {
    if (subgroup_size == 0 || subgroup_size > 128 || (subgroup_size & (subgroup_size - 1)) != 0)
        fail("interpreter: subgroup_size must be a power of two from 1 to 128, not ", subgroup_size);
    threads_ = threads;
    block_ = blk;
    shared_.clear();
    const size_t n = threads_.size();
    flow_.assign(n, Flow::Normal);
    // Threads outside the dispatch leave at once, as the generated code's bounds check makes them.
    Mask mask(n, 0);
    for (size_t t = 0; t < n; ++t) {
        const auto& g = threads_[t].global;
        mask[t] = g[0] < size_[0] && g[1] < size_[1] && g[2] < size_[2];
    }
    // The values of the previous group are reused: every value is computed before it is read.
    Frame fr{&kernel_, std::move(values_), {}, {}};
    fr.values.resize(n);
    for (auto& v : fr.values) v.resize(kernel_.inst_count());
    block(fr, kernel_.body(), mask);
    values_ = std::move(fr.values);
}

void Interpreter::block(Frame& fr, const Block& b, Mask& mask) {
    for (ValueId id : b.insts) {
        if (!any(mask)) return;
        group_inst(fr, id, mask);
    }
}

// Control flow, calls, barriers and subgroup operations act on the group; everything else per thread.
void Interpreter::group_inst(Frame& fr, ValueId id, Mask& mask) {
    const Function& f = *fr.f;
    const Inst& in = f.inst(id);
    const size_t n = mask.size();
    auto cond = [&](size_t t) { return fr.values[t][in.operands[0]][0] != 0; };
    switch (in.op) {
    case Op::If: {
        Mask then_mask(n, 0), else_mask(n, 0);
        for (size_t t = 0; t < n; ++t)
            if (mask[t]) (cond(t) ? then_mask : else_mask)[t] = 1;
        if (any(then_mask)) block(fr, *in.regions[0], then_mask);
        if (any(else_mask)) block(fr, *in.regions[1], else_mask);
        for (size_t t = 0; t < n; ++t) mask[t] = then_mask[t] | else_mask[t];
        return;
    }
    case Op::Loop: {
        Mask looping = mask, left(n, 0);
        while (any(looping)) {
            Mask body = looping;
            block(fr, *in.regions[0], body);
            for (size_t t = 0; t < n; ++t) {
                if (!looping[t] || body[t]) continue;   // not in the loop, or at the end of the body: go on
                switch (flow_[t]) {
                case Flow::Continue: flow_[t] = Flow::Normal; break;
                case Flow::Break: flow_[t] = Flow::Normal; looping[t] = 0; left[t] = 1; break;
                case Flow::Return: looping[t] = 0; break;
                case Flow::Normal: break;
                }
            }
        }
        mask = left;
        return;
    }
    case Op::Switch: {
        Mask after(n, 0);
        std::vector<size_t> chosen(n, in.regions.size());
        for (size_t t = 0; t < n; ++t) {
            if (!mask[t]) continue;
            uint32_t v = fr.values[t][in.operands[0]][0];
            for (size_t r = 0; r < in.words.size(); ++r)
                if (in.words[r] == v) chosen[t] = r;
            if (chosen[t] == in.regions.size() && in.has_default) chosen[t] = in.regions.size() - 1;
            if (chosen[t] == in.regions.size()) after[t] = 1;   // no case: straight on
        }
        for (size_t r = 0; r < in.regions.size(); ++r) {
            Mask m(n, 0);
            for (size_t t = 0; t < n; ++t) m[t] = mask[t] && chosen[t] == r;
            if (!any(m)) continue;
            Mask entered = m;
            block(fr, *in.regions[r], m);   // no fall-through: each case ends by itself
            for (size_t t = 0; t < n; ++t) {
                if (!entered[t]) continue;
                if (m[t] || flow_[t] == Flow::Break) {   // a break leaves the switch
                    flow_[t] = Flow::Normal;
                    after[t] = 1;
                }
            }
        }
        mask = after;
        return;
    }
    case Op::Autodiff: block(fr, *in.regions[0], mask); return;
    case Op::Break: case Op::Continue: case Op::Return:
        for (size_t t = 0; t < n; ++t) {
            if (!mask[t]) continue;
            if (in.op == Op::Return && !in.operands.empty()) fr.result[t] = fr.values[t][in.operands[0]];
            flow_[t] = in.op == Op::Break ? Flow::Break : in.op == Op::Continue ? Flow::Continue : Flow::Return;
            mask[t] = 0;
        }
        return;
    case Op::Call: {
        // Resources passed to callables are kernel arguments; the callee's Param of resource type reads
        // them through the caller's Arg, which the inliner resolves; the interpreter resolves it here.
        Frame callee{in.callee, std::vector<std::vector<Lanes>>(n), std::vector<std::vector<Lanes>>(n),
                     std::vector<Lanes>(n)};
        for (size_t t = 0; t < n; ++t) {
            if (!mask[t]) continue;
            callee.values[t].resize(in.callee->inst_count());
            for (ValueId o : in.operands) callee.args[t].push_back(fr.values[t][o]);
        }
        Mask m = mask;
        block(callee, in.callee->body(), m);
        for (size_t t = 0; t < n; ++t) {
            if (!mask[t]) continue;
            if (flow_[t] == Flow::Return) flow_[t] = Flow::Normal;
            fr.values[t][id] = callee.result[t];
        }
        return;
    }
    case Op::Barrier: {
        size_t arrived = 0, live = 0;
        for (size_t t = 0; t < n; ++t) {
            const auto& g = threads_[t].global;
            live += g[0] < size_[0] && g[1] < size_[1] && g[2] < size_[2];
            arrived += mask[t];
        }
        if (arrived != live)
            fail("sync_block() at ", format_location(in.loc), " in kernel '", kernel_.name(), "' was reached by ",
                 arrived, " of the ", live, " threads of block (", block_[0], ", ", block_[1], ", ", block_[2],
                 "): every thread of a block must reach it together, not inside a branch or loop that only some "
                 "of them run");
        steps_ += arrived;
        return;
    }
    default: break;
    }
    if (is_subgroup_op(in.op)) {
        subgroup_inst(fr, id, mask);
        return;
    }
    for (size_t t = 0; t < n; ++t)
        if (mask[t]) thread_inst(fr, id, t);
}

// One subgroup operation for every subgroup of the group, over its active threads in invocation order.
void Interpreter::subgroup_inst(Frame& fr, ValueId id, const Mask& mask) {
    const Function& f = *fr.f;
    const Inst& in = f.inst(id);
    const size_t n = mask.size();
    const uint32_t S = subgroup_size;
    const Type* t0 = in.operands.empty() ? nullptr : f.type_of(in.operands[0]);
    auto value = [&](size_t t) -> const Lanes& { return fr.values[t][in.operands[0]]; };
    // Lane j of `a op b` for the reductions, in the operand's component kind.
    auto combine = [&](Op op, uint32_t a, uint32_t b) -> uint32_t {
        ScalarKind k = t0->scalar_kind();
        switch (k) {
        case ScalarKind::Float: {
            float x = float_of(a), y = float_of(b);
            return bits_of(op == Op::SubgroupMin ? (y < x ? y : x) : op == Op::SubgroupMax ? (x < y ? y : x) : x + y);
        }
        case ScalarKind::Int:
            return op == Op::SubgroupMin ? uint32_t(std::min(int32_t(a), int32_t(b)))
                   : op == Op::SubgroupMax ? uint32_t(std::max(int32_t(a), int32_t(b))) : a + b;
        default:
            return op == Op::SubgroupMin ? std::min(a, b) : op == Op::SubgroupMax ? std::max(a, b) : a + b;
        }
    };
    steps_ += std::count(mask.begin(), mask.end(), 1);
    for (size_t first = 0; first < n; first += S) {
        std::vector<size_t> members;   // active threads of this subgroup, by invocation id
        for (size_t t = first; t < std::min<size_t>(first + S, n); ++t)
            if (mask[t]) members.push_back(t);
        if (members.empty()) continue;
        auto set_all = [&](const Lanes& v) {
            for (size_t t : members) fr.values[t][id] = v;
        };
        switch (in.op) {
        case Op::SubgroupElect:
            for (size_t t : members) fr.values[t][id] = {t == members.front() ? 1u : 0u};
            break;
        case Op::SubgroupAll: case Op::SubgroupAny: {
            bool all = true, some = false;
            for (size_t t : members) {
                all = all && value(t)[0];
                some = some || value(t)[0];
            }
            set_all({uint32_t(in.op == Op::SubgroupAll ? all : some)});
            break;
        }
        case Op::SubgroupAllEqual: {
            // Equal as values: 0.0 equals -0.0 and a NaN equals nothing, as GLSL compares.
            bool equal = true;
            const Lanes& a = value(members.front());
            for (size_t t : members)
                for (size_t j = 0; j < a.size(); ++j) {
                    const uint32_t x = a[j], y = value(t)[j];
                    equal = equal && (t0->scalar_kind() == ScalarKind::Float ? float_of(x) == float_of(y) : x == y);
                }
            set_all({uint32_t(equal)});
            break;
        }
        case Op::SubgroupBallot: {
            Lanes bits(4, 0u);
            for (size_t t : members)
                if (value(t)[0]) bits[(t - first) / 32] |= 1u << ((t - first) % 32);
            set_all(bits);
            break;
        }
        case Op::SubgroupAdd: case Op::SubgroupMin: case Op::SubgroupMax: {
            Lanes acc = value(members.front());
            for (size_t k = 1; k < members.size(); ++k)
                for (size_t j = 0; j < acc.size(); ++j) acc[j] = combine(in.op, acc[j], value(members[k])[j]);
            set_all(acc);
            break;
        }
        case Op::SubgroupExclusiveAdd: {
            Lanes acc(in.type->lanes(), t0->scalar_kind() == ScalarKind::Float ? bits_of(0.0f) : 0u);
            for (size_t t : members) {
                Lanes mine = value(t);
                fr.values[t][id] = acc;
                for (size_t j = 0; j < acc.size(); ++j) acc[j] = combine(Op::SubgroupAdd, acc[j], mine[j]);
            }
            break;
        }
        case Op::SubgroupBroadcastFirst: set_all(value(members.front())); break;
        default: fail("internal: interpreter has no rule for ", name(in.op));
        }
    }
}

} // namespace adjoint::ir
