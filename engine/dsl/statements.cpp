// Recording of statements: control flow, callables and the checks that give DSL misuse its C++ line.
#include <adjoint/dsl/autodiff.h>

#include <adjoint/core/error.h>
#include <adjoint/ir/verify.h>
#include <adjoint/ir/walk.h>

#include <filesystem>

namespace adjoint::detail {

void check_recording(Recorder& r);

std::string name_from_location(const char* prefix, const std::source_location& loc) {
    std::string stem = std::filesystem::path(loc.file_name()).stem().string();
    std::string out = std::string(prefix) + "_" + stem + "_" + std::to_string(loc.line());
    for (char& c : out)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    return out;
}

void finish_recording(Recorder& r) {
    guarded_void([&] { check_recording(r); });
    if (is_outermost_recording()) throw_deferred_error();
}

void check_recording(Recorder& r) {
    if (r.autodiff) fail("internal: an $autodiff block was left open in ", r.function->name());
    ir::Function& f = *r.function;
    if (!f.is_kernel()) {
        // Every $return must give the callable's return type.
        ir::walk(f, f.body(), [&](ir::ValueId id) {
            const ir::Inst& in = f.inst(id);
            if (in.op != ir::Op::Return) return;
            const ir::Type* got = in.operands.empty() ? ir::Type::void_type() : f.type_of(in.operands[0]);
            if (got != f.return_type)
                fail("type error: $return of ", got->to_string(), " in a callable returning ",
                     f.return_type->to_string(), " at ", format_location(in.loc));
        });
    }
    ir::verify_or_throw(f, "recording");
}

ir::ValueId emit_call_checked(const std::shared_ptr<ir::Function>& callee, std::vector<ir::ValueId> args,
                              const std::source_location& loc);

ir::ValueId emit_call(const std::shared_ptr<ir::Function>& callee, std::vector<ir::ValueId> args,
                      const std::source_location& loc) {
    auto& r = Recorder::current(loc);
    const ir::Type* rt = callee->return_type ? callee->return_type : ir::Type::void_type();
    ir::ValueId fallback = rt->is_void() ? ir::kNoValue : r.b.zero(rt, loc);
    return guarded(fallback, [&] { return emit_call_checked(callee, std::move(args), loc); });
}

ir::ValueId emit_call_checked(const std::shared_ptr<ir::Function>& callee, std::vector<ir::ValueId> args,
                              const std::source_location& loc) {
    auto& r = Recorder::current(loc);
    if (Recorder::is_recording(callee.get()))
        fail("recursion: callable '", callee->name(), "' calls itself (directly or through other callables) at ",
             format_location(loc), "; callables are inlined and cannot recurse");
    if (args.size() != callee->params.size())
        fail("callable '", callee->name(), "' takes ", callee->params.size(), " arguments, got ", args.size(), " at ",
             format_location(loc));
    for (size_t i = 0; i < args.size(); ++i)
        if (r.b.type_of(args[i]) != callee->params[i])
            fail("type error: argument ", i, " of callable '", callee->name(), "' is ", callee->params[i]->to_string(),
                 ", got ", r.b.type_of(args[i])->to_string(), " at ", format_location(loc));
    ir::Inst inst;
    inst.op = ir::Op::Call;
    inst.type = callee->return_type ? callee->return_type : ir::Type::void_type();
    inst.operands = std::move(args);
    inst.callee = callee.get();
    inst.loc = loc;
    r.function->callees.push_back(callee);
    return r.b.append(std::move(inst));
}

// ---- control flow ---------------------------------------------------------------------------------------

IfStmt::IfStmt(const Expr<bool>& cond, std::source_location loc) : loc_(loc) {
    auto& r = Recorder::current(loc);
    id_ = r.b.if_(cond.id(), r.at(loc));
}

void open_loop(ir::ValueId loop, std::function<void()> on_continue) {
    auto& r = Recorder::current();
    r.loops.push_back(LoopFrame{std::move(on_continue)});
    r.b.function().inst(loop).imm = r.tape_capacity;   // read by autodiff when it tapes this loop
    r.breakables.push_back(true);
    r.b.push(*r.b.function().inst(loop).regions[0]);
}

void close_loop() {
    auto& r = Recorder::current();
    r.b.pop();
    r.breakables.pop_back();
    r.loops.pop_back();
}

void WhileStmt::exit_unless(ir::ValueId cond, const std::source_location& loc) {
    auto& r = Recorder::current(loc);
    ir::ValueId neg = r.b.unary(ir::Op::Not, cond, loc);
    ir::ValueId branch = r.b.if_(neg, loc);
    r.b.push(*r.b.function().inst(branch).regions[0]);
    r.b.break_(loc);
    r.b.pop();
}

std::vector<ir::ValueId>& SwitchStmt::switches() {
    thread_local std::vector<ir::ValueId> stack;
    return stack;
}

ir::Block& CaseStmt::open(Recorder& r) {
    try {
        return open_checked(r);
    } catch (const Error& e) {
        defer_error(e.what());
        r.scratch.push_back(std::make_unique<ir::Block>());
        return *r.scratch.back();
    }
}

ir::Block& CaseStmt::open_checked(Recorder& r) {
    auto& sw = SwitchStmt::switches();
    if (sw.empty() || r.breakables.empty() || r.breakables.back())
        fail(value_ ? "$case" : "$default", " outside a $switch at ", format_location(loc_));
    r.at(loc_);
    return r.b.add_case(sw.back(), value_);
}

void break_stmt(std::source_location loc) {
    guarded_void([&] {
    auto& r = Recorder::current(loc);
    if (r.breakables.empty()) fail("$break outside a loop or switch at ", format_location(loc));
    r.b.break_(r.at(loc));
    });
}

void continue_stmt(std::source_location loc) {
    guarded_void([&] {
    auto& r = Recorder::current(loc);
    if (r.loops.empty()) fail("$continue outside a loop at ", format_location(loc));
    if (!r.breakables.back())
        fail("$continue inside a $switch case at ", format_location(loc),
             " (directly or within an $if or a nested block there) is not supported; move it out of the switch");
    r.at(loc);
    if (r.loops.back().on_continue) r.loops.back().on_continue();
    r.b.continue_(loc);
    });
}

void check_return_allowed(Recorder& r, const std::source_location& loc) {
    if (r.function->is_kernel()) fail("$return inside a kernel at ", format_location(loc), "; it belongs in a Callable");
}

void return_void(std::source_location loc) {
    guarded_void([&] {
    auto& r = Recorder::current(loc);
    check_return_allowed(r, loc);
    r.b.emit(ir::Op::Return, {}, ir::Type::void_type(), 0, r.at(loc));
    });
}

void set_tape_capacity(uint32_t iterations, const std::source_location& loc) {
    guarded_void([&] {
    auto& r = Recorder::current(loc);
    if (iterations == 0) fail("tape_capacity(0) at ", format_location(loc), ": a tape holds at least one iteration");
    r.tape_capacity = iterations;
    });
}

// ---- autodiff -------------------------------------------------------------------------------------------

void AutodiffStmt::open(const std::source_location& loc) {
    auto& r = Recorder::current(loc);
    if (r.autodiff) {
        defer_error("nested $autodiff at " + format_location(loc) + "; one block cannot contain another");
        r.scratch.push_back(std::make_unique<ir::Block>());
        r.b.push(*r.scratch.back());
        ++r.refused_autodiff;
        return;
    }
    ir::Inst inst;
    inst.op = ir::Op::Autodiff;
    inst.type = ir::Type::void_type();
    inst.regions.push_back(std::make_unique<ir::Block>());
    inst.loc = loc;
    ir::ValueId id = r.b.append(std::move(inst));
    r.autodiff = std::make_unique<AutodiffFrame>();
    r.autodiff->scope = id;
    r.b.push(*r.b.function().inst(id).regions[0]);
}

void AutodiffStmt::close(const std::source_location& loc) {
    auto& r = Recorder::current(loc);
    r.b.pop();
    if (r.refused_autodiff > 0) {
        --r.refused_autodiff;
        return;
    }
    bool has_backward = r.autodiff->backward != ir::kNoValue;
    r.autodiff.reset();
    if (!has_backward) defer_error("$autodiff block at " + format_location(loc) + " has no backward(...)");
}

namespace {

std::vector<int64_t> const_path(Recorder& r, const Path& path, const char* what, const std::source_location& loc) {
    std::vector<int64_t> out;
    for (const PathElem& e : path) {
        if (e.dynamic != ir::kNoValue) {
            if (!ir::is_constant(r.b.function(), e.dynamic))
                fail(what, " of an element at a dynamic index at ", format_location(loc),
                     "; copy the element into a variable first");
            out.push_back(ir::const_int(r.b.function(), e.dynamic));
        } else {
            out.push_back(e.index);
        }
    }
    return out;
}

} // namespace

void mark_requires_grad(ir::ValueId local, const Path& path, const std::source_location& loc) {
    guarded_void([&] {
    auto& r = Recorder::current(loc);
    if (!r.autodiff) fail("requires_grad outside an $autodiff block at ", format_location(loc));
    if (r.autodiff->backward != ir::kNoValue) fail("requires_grad after backward at ", format_location(loc));
    auto cp = const_path(r, path, "requires_grad", loc);
    // grad(x) names one marker. Two marks of x where one sits in a branch or loop (say one per branch)
    // would leave it naming only one of them, so that is refused; at the top level the later mark wins.
    bool nested = &r.b.block() != r.b.function().inst(r.autodiff->scope).regions[0].get();
    for (auto& m : r.autodiff->marks)
        if (m.local == local && m.path == cp && (m.nested || nested))
            fail("requires_grad at ", format_location(loc), ": the variable is marked twice in one $autodiff block (",
                 "first at ", format_location(m.loc), ") and a mark inside a branch or loop cannot be combined with ",
                 "another; mark it once");
    auto idx = r.indices(path);
    ir::ValueId v = r.b.load(local, idx, loc);
    if (!r.b.type_of(v)->has_float())
        fail("requires_grad on a value of type ", r.b.type_of(v)->to_string(), " at ", format_location(loc),
             "; only float scalars, vectors, matrices, arrays and structs holding floats can carry gradients");
    ir::ValueId marker = r.b.emit(ir::Op::RequiresGrad, {v}, r.b.type_of(v), 0, loc);
    r.b.store(local, marker, idx, loc);
    r.autodiff->marks.push_back({local, std::move(cp), marker, nested, loc});
    });
}

void record_backward(ir::ValueId y, ir::ValueId seed, const std::source_location& loc) {
    guarded_void([&] {
    auto& r = Recorder::current(loc);
    if (!r.autodiff) fail("backward outside an $autodiff block at ", format_location(loc));
    if (r.autodiff->backward != ir::kNoValue)
        fail("a second backward in one $autodiff block at ", format_location(loc), " (the first is at ",
             format_location(r.autodiff->backward_loc), ")");
    if (!r.b.type_of(y)->has_float())
        fail("backward of a value of type ", r.b.type_of(y)->to_string(), " at ", format_location(loc),
             "; it must hold floats");
    if (&r.b.block() != r.b.function().inst(r.autodiff->scope).regions[0].get())
        fail("backward inside a branch or loop at ", format_location(loc),
             "; call it at the top level of the $autodiff block");
    // A scalar seed seeds every component of a vector or matrix y alike; any other seed has y's type (a
    // float seed for a float3 y seeded one component, or failed later with a message about indexing).
    const ir::Type* yt = r.b.type_of(y);
    const ir::Type* st = r.b.type_of(seed);
    if (st != yt && st == ir::Type::f32() && (yt->is_vector() || yt->is_matrix()) && yt->is_float()) {
        if (yt->is_vector()) {
            seed = r.b.construct(yt, {seed}, loc);
        } else {
            std::vector<ir::ValueId> cols(yt->dim(), r.b.construct(yt->element(), {seed}, loc));
            seed = r.b.construct(yt, cols, loc);
        }
    } else if (st != yt) {
        fail("backward(y, seed) at ", format_location(loc), ": the seed is ", st->to_string(), " and y is ",
             yt->to_string(), "; give a seed of y's type, or a float for every component");
    }
    r.autodiff->backward = r.b.emit(ir::Op::Backward, {y, seed}, ir::Type::void_type(), 0, loc);
    r.autodiff->backward_loc = loc;
    });
}

ir::ValueId record_grad_checked(ir::ValueId local, const Path& path, const std::source_location& loc);

ir::ValueId record_grad(ir::ValueId local, const Path& path, const std::source_location& loc) {
    auto& r = Recorder::current(loc);
    ir::ValueId fallback = r.b.load(local, r.indices(path), loc);   // same type as the gradient would have
    return guarded(fallback, [&] { return record_grad_checked(local, path, loc); });
}

ir::ValueId record_grad_checked(ir::ValueId local, const Path& path, const std::source_location& loc) {
    auto& r = Recorder::current(loc);
    if (!r.autodiff) fail("grad outside an $autodiff block at ", format_location(loc));
    auto cp = const_path(r, path, "grad", loc);
    const AutodiffFrame::Mark* found = nullptr;
    for (auto& m : r.autodiff->marks)
        if (m.local == local && m.path == cp) found = &m;
    if (!found) fail("grad of a value not marked with requires_grad at ", format_location(loc));
    if (r.autodiff->backward == ir::kNoValue) fail("grad before backward at ", format_location(loc));
    return r.b.emit(ir::Op::Grad, {found->marker}, r.b.type_of(found->marker), 0, r.at(loc));
}

} // namespace adjoint::detail
