// Helpers for IR tests: a function under construction with its builder, and small queries over it.
#pragma once
#include <adjoint/core/error.h>
#include <adjoint/ir/builder.h>
#include <adjoint/ir/interpreter.h>
#include <adjoint/ir/printer.h>
#include <adjoint/ir/verify.h>

#include <gtest/gtest.h>

#include <cmath>

#include <cstring>
#include <functional>
#include <memory>
#include <vector>

namespace adjoint::ir::test {

// A kernel (or callable) being built by hand. Parameters are declared up front.
struct Fn {
    std::unique_ptr<Function> f;
    std::unique_ptr<Builder> b;
    explicit Fn(std::vector<const Type*> params = {}, Function::Kind kind = Function::Kind::Kernel,
                const Type* ret = nullptr) {
        f = std::make_unique<Function>(kind, kind == Function::Kind::Kernel ? "k" : "c");
        f->params = std::move(params);
        f->return_type = ret ? ret : Type::void_type();
        b = std::make_unique<Builder>(*f);
    }
    ValueId arg(uint32_t i) {
        return b->emit(f->is_kernel() ? Op::Arg : Op::Param, {}, f->params.at(i), int64_t(i));
    }
    // Emits the instructions of `body` into region r of control instruction `id`.
    void in(ValueId id, size_t r, const std::function<void()>& body) {
        b->push(*f->inst(id).regions.at(r));
        body();
        b->pop();
    }
    std::string text() const { return print(*f); }
    std::string verify() const { return ir::verify(*f); }
};

// Placed (live) instructions of an op, counted over all blocks.
inline size_t count_op(const Function& f, Op op) {
    size_t n = 0;
    std::function<void(const Block&)> walk = [&](const Block& b) {
        for (ValueId id : b.insts) {
            if (f.inst(id).op == op) ++n;
            for (auto& r : f.inst(id).regions) walk(*r);
        }
    };
    walk(f.body());
    return n;
}

inline size_t count_placed(const Function& f) {
    size_t n = 0;
    std::function<void(const Block&)> walk = [&](const Block& b) {
        for (ValueId id : b.insts) {
            ++n;
            for (auto& r : f.inst(id).regions) walk(*r);
        }
    };
    walk(f.body());
    return n;
}

// Runs kernel f (one thread per element of `size`) over the given buffers (bytes in host layout).
struct Run {
    std::vector<std::vector<uint32_t>> buffers;   // 32-bit words
    std::vector<HostResource> resources;
    uint32_t trap = 0;
};

inline Run run(const Function& f, std::vector<std::vector<uint32_t>> buffers, std::vector<Lanes> values = {},
               std::array<uint32_t, 3> size = {1, 1, 1}) {
    Run r;
    r.buffers = std::move(buffers);
    r.resources.resize(r.buffers.size());
    std::vector<HostArg> args;
    size_t nb = 0, nv = 0;
    for (const Type* t : f.params) {
        HostArg a;
        if (t->kind() == Type::Kind::Buffer) {
            auto& res = r.resources[nb];
            res.data = reinterpret_cast<std::byte*>(r.buffers[nb].data());
            res.bytes = r.buffers[nb].size() * 4;
            a.resource = &res;
            ++nb;
        } else {
            a.value = values.at(nv++);
        }
        args.push_back(a);
    }
    Interpreter interp(f, std::move(args), size);
    interp.run_all();
    r.trap = interp.trap_code();
    return r;
}

inline uint32_t fbits(float v) { return bits_of(v); }

} // namespace adjoint::ir::test
