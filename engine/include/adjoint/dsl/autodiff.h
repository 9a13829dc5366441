// The $autodiff block and its calls: requires_grad, backward, grad, detach.
#pragma once
#include <adjoint/dsl/kernel.h>

namespace adjoint {

namespace detail {

class AutodiffStmt {
public:
    explicit AutodiffStmt(std::source_location loc = std::source_location::current()) : loc_(loc) {}
    template <typename F>
    void operator%(F&& body) && {
        open(loc_);
        body();
        close(loc_);
    }

private:
    static void open(const std::source_location& loc);
    static void close(const std::source_location& loc);
    std::source_location loc_;
};

void set_tape_capacity(uint32_t iterations, const std::source_location& loc);
void mark_requires_grad(ir::ValueId local, const Path& path, const std::source_location& loc);
void record_backward(ir::ValueId y, ir::ValueId seed, const std::source_location& loc);
ir::ValueId record_grad(ir::ValueId local, const Path& path, const std::source_location& loc);

} // namespace detail

// requires_grad(a, b, ...): marks variables (scalars, vectors, matrices, arrays, structs of floats).
// A macro forwards the caller's line, which a variadic function cannot take as a default argument.
template <typename... T>
void requires_grad_at(const std::source_location& loc, const Var<T>&... vars) {
    (detail::mark_requires_grad(vars.local(), vars.path(), loc), ...);
}

template <typename Y>
    requires detail::is_dsl_v<Y>
void backward(const Y& y, std::source_location loc = std::source_location::current()) {
    auto e = detail::as_expr(y);
    auto& r = detail::Recorder::current(loc);
    r.at(loc);
    detail::record_backward(e.id(), r.b.splat(type_of<detail::value_t<Y>>(), 1.0, loc), loc);
}

template <typename Y, typename S>
    requires detail::is_dsl_v<Y>
void backward(const Y& y, const S& seed, std::source_location loc = std::source_location::current()) {
    detail::Recorder::current(loc).at(loc);
    auto e = detail::as_expr(y);
    auto s = detail::lift<detail::value_t<Y>>(seed);
    detail::record_backward(e.id(), s.id(), loc);
}

template <typename T>
Expr<T> grad(const Var<T>& x, std::source_location loc = std::source_location::current()) {
    return Expr<T>(detail::FromId{}, detail::record_grad(x.local(), x.path(), loc));
}

// Loops recorded after this call, inside $autodiff, keep a tape of at most `iterations` iterations
// (the default is 1024 when the trip count is not a compile-time constant). Running past it is reported
// by the next synchronize() as an Error naming the kernel and the loop.
inline void tape_capacity(uint32_t iterations, std::source_location loc = std::source_location::current()) {
    detail::set_tape_capacity(iterations, loc);
}

template <typename X>
    requires detail::is_dsl_v<X>
auto detach(const X& x, std::source_location loc = std::source_location::current()) {
    return detail::call_op<detail::value_t<X>>(ir::Op::Detach, loc, detail::as_expr(x));
}

} // namespace adjoint

#define requires_grad(...) ::adjoint::requires_grad_at(std::source_location::current(), __VA_ARGS__)
#define $autodiff ::adjoint::detail::AutodiffStmt{} % [&]() noexcept
