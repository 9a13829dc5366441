// The $autodiff block and its calls: requires_grad, backward, grad, detach.
#pragma once
#include <adjoint/dsl/kernel.h>

#include <string>
#include <vector>

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

// Values held for the caller inside $autodiff: hold(v) takes the next of `capacity` variables, assigns it v
// detached, marks it requires_grad and returns it; after backward(), grad(value(k)) is the k-th held value's
// gradient (0 where that hold did not run: a branch not taken), for the caller to add where it likes. The
// holder is made in the block (or in a loop body inside it) and takes values at the same loop depth: one in a
// loop nested deeper would keep only the last iteration's. A hold there, in another kernel, outside $autodiff or
// past the capacity defers an error ("<name>: <item> ..." and the hold's line) and returns v detached. The
// variables are made up front (a Var copied on reallocation would be a new variable). HeldTexels (texture.h)
// adds each read's address.
template <typename T>
class HeldValues {
public:
    explicit HeldValues(int capacity, std::string name = "held values", std::string item = "a value held",
                        std::source_location loc = std::source_location::current())
        : recorder_(&detail::Recorder::current(loc)), loops_(recorder_->loops.size()), name_(std::move(name)),
          item_(std::move(item)) {
        value_.reserve(size_t(capacity));
        for (int k = 0; k < capacity; ++k) value_.emplace_back(loc);   // a Var starts at zero
    }
    HeldValues(const HeldValues&) = delete;
    HeldValues& operator=(const HeldValues&) = delete;

    int capacity() const { return int(value_.size()); }
    int used() const { return used_; }
    const Var<T>& value(int k) const { return value_.at(size_t(k)); }

    Expr<T> hold(const Expr<T>& v, const std::source_location& loc = std::source_location::current()) {
        detail::Recorder& r = detail::Recorder::current(loc);
        Expr<T> plain = detail::call_op<T>(ir::Op::Detach, loc, v);
        const char* wrong = &r != recorder_          ? "in another kernel or callable than its holder"
                            : r.loops.size() != loops_ ? "in a loop nested deeper than its holder's"
                            : !r.autodiff              ? "outside $autodiff"
                            : used_ == capacity()      ? "past its holder's capacity"
                                                       : nullptr;
        if (wrong) {
            detail::defer_error(name_ + ": " + item_ + " " + wrong + " (capacity " + std::to_string(capacity()) +
                                ") at " + format_location(loc));
            return plain;
        }
        Var<T>& x = value_[size_t(used_++)];
        x = plain;
        requires_grad_at(loc, x);
        return x;
    }

private:
    const detail::Recorder* recorder_;
    size_t loops_;
    std::string name_, item_;
    std::vector<Var<T>> value_;
    int used_ = 0;
};

} // namespace adjoint

#define requires_grad(...) ::adjoint::requires_grad_at(std::source_location::current(), __VA_ARGS__)
#define $autodiff ::adjoint::detail::AutodiffStmt{} % [&]() noexcept
