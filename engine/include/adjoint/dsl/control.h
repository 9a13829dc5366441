// Structured control flow: $if $elif $else $for $while $loop $break $continue $switch $case $default $return.
// Each macro builds a statement object and hands it the body lambda, which runs once, recording into the
// statement's region. The operators % * / chain the parts left to right, as in LuisaCompute.
#pragma once
#include <adjoint/dsl/expr.h>

#include <functional>
#include <optional>

namespace adjoint::detail {

class IfStmt {
public:
    explicit IfStmt(const Expr<bool>& cond, std::source_location loc = std::source_location::current());
    template <typename F>
    IfStmt&& operator%(F&& then_body) && {
        run(0, std::forward<F>(then_body));
        return std::move(*this);
    }
    template <typename F>
    void operator/(F&& else_body) && { run(1, std::forward<F>(else_body)); }
    // $elif: the condition is evaluated inside the else region.
    template <typename F>
    IfStmt operator*(F&& cond) && {
        auto& r = Recorder::current();
        r.b.push(*r.b.function().inst(id_).regions[1]);
        IfStmt nested(cond(), loc_);
        r.b.pop();
        return nested;
    }

private:
    template <typename F>
    void run(size_t region, F&& body) {
        auto& r = Recorder::current();
        r.b.push(*r.b.function().inst(id_).regions[region]);
        body();
        r.b.pop();
    }
    ir::ValueId id_;
    std::source_location loc_;
};

// Opens a loop: pushes its frame and region; the destructor-free protocol keeps ordering explicit.
void open_loop(ir::ValueId loop, std::function<void()> on_continue);
void close_loop();

class LoopStmt {
public:
    explicit LoopStmt(std::source_location loc = std::source_location::current()) : loc_(loc) {}
    template <typename F>
    void operator%(F&& body) && {
        auto& r = Recorder::current(loc_);
        ir::ValueId loop = r.b.loop(r.at(loc_));
        open_loop(loop, nullptr);
        body();
        close_loop();
    }

private:
    std::source_location loc_;
};

class WhileStmt {
public:
    template <typename C>
    explicit WhileStmt(C&& cond, std::source_location loc = std::source_location::current())
        : cond_(std::forward<C>(cond)), loc_(loc) {}
    template <typename F>
    void operator%(F&& body) && {
        auto& r = Recorder::current(loc_);
        ir::ValueId loop = r.b.loop(r.at(loc_));
        open_loop(loop, nullptr);
        exit_unless(cond_().id(), loc_);
        body();
        close_loop();
    }
    static void exit_unless(ir::ValueId cond, const std::source_location& loc);

private:
    std::function<Expr<bool>()> cond_;
    std::source_location loc_;
};

// $for (i, n), $for (i, begin, end), $for (i, begin, end, step): the counter is an int or uint (a float bound or
// step is a compile error: it was truncated, and a step of 0.25 ran no iteration); the end and step are evaluated
// once, before the loop. `i` is the counter's value at the top of the iteration. A negative step counts down
// (i > end), for a uint counter too (it wrapped to a huge step, and the loop ran no iteration).
template <typename T>
class ForStmt {
public:
    template <typename E>
    explicit ForStmt(const E& end, std::source_location loc = std::source_location::current())
        : ForStmt(T(0), end, T(1), loc) {}
    template <typename B, typename E>
    ForStmt(const B& begin, const E& end, std::source_location loc = std::source_location::current())
        : ForStmt(begin, end, T(1), loc) {}
    template <typename B, typename E, typename S>
    ForStmt(const B& begin, const E& end, const S& step, std::source_location loc = std::source_location::current())
        : loc_(loc) {
        static_assert(!std::is_floating_point_v<value_t<B>> && !std::is_floating_point_v<value_t<E>> &&
                          !std::is_floating_point_v<value_t<S>>,
                      "$for counts with an int or uint: its begin, end and step cannot be floats");
        auto& r = Recorder::current(loc);
        r.at(loc);
        if constexpr (std::is_same_v<T, uint32_t> && std::is_signed_v<value_t<S>>) {
            // A signed step for a uint counter: its sign, known now (a literal) or at run time (an Int).
            if constexpr (is_dsl_v<S>) signed_step_ = lift<int32_t>(step).id();
            else descending_ = step < 0;
        }
        begin_ = lift<T>(begin).id();
        end_ = lift<T>(end).id();
        step_ = lift<T>(step).id();
        if (r.b.type_of(begin_) != type_of<T>()) begin_ = r.b.cast(type_of<T>(), begin_, loc);
        if (r.b.type_of(end_) != type_of<T>()) end_ = r.b.cast(type_of<T>(), end_, loc);
        if (r.b.type_of(step_) != type_of<T>()) step_ = r.b.cast(type_of<T>(), step_, loc);
    }
    template <typename F>
    void operator%(F&& body) && {
        auto& r = Recorder::current(loc_);
        ir::ValueId counter = r.b.local(type_of<T>(), loc_);
        // Marks the counter: each iteration adds `step` exactly once, so autodiff can recompute its value
        // at iteration k as begin + k * step instead of taping it.
        r.b.function().inst(counter).imm = ir::kForCounter;
        r.b.store(counter, begin_, {}, loc_);
        ir::ValueId loop = r.b.loop(loc_);
        auto step = step_;
        auto loc = loc_;
        auto increment = [counter, step, loc] {
            auto& rr = Recorder::current();
            ir::ValueId v = rr.b.load(counter, {}, loc);
            rr.b.store(counter, rr.b.binary(ir::Op::Add, v, step, loc), {}, loc);
        };
        open_loop(loop, increment);
        ir::ValueId i = r.b.load(counter, {}, loc_);
        ir::ValueId cond;
        if constexpr (std::is_same_v<T, uint32_t>) {
            // Counting down, the uint step wraps (i + 0xffffffff is i - 1), and so does a step past 0: 10, 7, 4, 1
            // went on at 4294967294 towards an end of 0. So the counter must also be at most where it began.
            ir::ValueId up = r.b.binary(ir::Op::Lt, i, end_, loc_);
            auto down = [&] {
                return r.b.binary(ir::Op::And, r.b.binary(ir::Op::Gt, i, end_, loc_),
                                  r.b.binary(ir::Op::Le, i, begin_, loc_), loc_);
            };
            if (descending_) cond = down();
            else if (signed_step_ == ir::kNoValue) cond = up;
            else cond = r.b.select(r.b.binary(ir::Op::Gt, signed_step_, r.b.i32(0, loc_), loc_), up, down(), loc_);
        } else {
            // A negative step counts down: i > end.
            ir::ValueId up = r.b.binary(ir::Op::Lt, i, end_, loc_);
            ir::ValueId down = r.b.binary(ir::Op::Gt, i, end_, loc_);
            ir::ValueId positive = r.b.binary(ir::Op::Gt, step_, r.b.i32(0, loc_), loc_);
            cond = r.b.select(positive, up, down, loc_);
        }
        WhileStmt::exit_unless(cond, loc_);
        body(Expr<T>(FromId{}, i));
        increment();
        close_loop();
    }

private:
    ir::ValueId begin_ = ir::kNoValue, end_ = ir::kNoValue, step_ = ir::kNoValue;
    ir::ValueId signed_step_ = ir::kNoValue;   // a uint counter's Int step, tested for its sign
    bool descending_ = false;                   // a uint counter's negative literal step
    std::source_location loc_;
};

template <typename X>
using for_index_t = std::conditional_t<std::is_same_v<value_t<X>, uint32_t> || std::is_same_v<value_t<X>, unsigned>,
                                       uint32_t, int32_t>;
template <typename E>
ForStmt(const E&) -> ForStmt<for_index_t<E>>;
template <typename E>
ForStmt(const E&, std::source_location) -> ForStmt<for_index_t<E>>;
template <typename B, typename E>
ForStmt(const B&, const E&) -> ForStmt<std::conditional_t<is_dsl_v<B>, for_index_t<B>, for_index_t<E>>>;
template <typename B, typename E, typename S>
ForStmt(const B&, const E&, const S&) -> ForStmt<std::conditional_t<is_dsl_v<B>, for_index_t<B>, for_index_t<E>>>;

class SwitchStmt {
public:
    template <typename V>
    explicit SwitchStmt(const V& value, std::source_location loc = std::source_location::current())
        : value_(lift<int32_t>(value).id()), loc_(loc) {}
    template <typename F>
    void operator%(F&& body) && {
        auto& r = Recorder::current(loc_);
        // A switch on a float is refused when the recording ends, the statement skipped (a throw here, inside
        // the user's noexcept lambda, terminated the program).
        const ir::ValueId sw = guarded(ir::kNoValue, [&] { return r.b.switch_(value_, r.at(loc_)); });
        if (sw == ir::kNoValue) return;
        switches().push_back(sw);
        r.breakables.push_back(false);
        body();   // records the $case / $default statements
        r.breakables.pop_back();
        switches().pop_back();
    }
    static std::vector<ir::ValueId>& switches();

private:
    ir::ValueId value_;
    std::source_location loc_;
};

class CaseStmt {
public:
    explicit CaseStmt(std::optional<int64_t> value, std::source_location loc = std::source_location::current())
        : value_(value), loc_(loc) {}
    template <typename F>
    void operator%(F&& body) && {
        auto& r = Recorder::current(loc_);
        ir::Block& block = open(r);
        r.b.push(block);
        body();
        r.b.pop();
    }

private:
    ir::Block& open(Recorder& r);
    ir::Block& open_checked(Recorder& r);
    std::optional<int64_t> value_;
    std::source_location loc_;
};

void break_stmt(std::source_location loc = std::source_location::current());
void continue_stmt(std::source_location loc = std::source_location::current());
void return_void(std::source_location loc);
ir::ValueId current_return_local(const ir::Type* type, const std::source_location& loc);

void check_return_allowed(Recorder& r, const std::source_location& loc);   // not in a kernel

template <typename X>
void return_stmt(const X& value, std::source_location loc = std::source_location::current()) {
    guarded_void([&] {   // deferred: $return sits inside noexcept lambdas
    auto& r = Recorder::current(loc);
    r.at(loc);
    check_return_allowed(r, loc);
    ir::ValueId v;
    const ir::Type* want = r.function->return_type;
    if constexpr (std::is_arithmetic_v<X>) {
        // A plain number takes the callable's scalar return type, so that $return(0) works in an int
        // callable (lifting it as a float made that a type error).
        switch (want && want->is_scalar() ? want->scalar_kind() : ir::ScalarKind::Float) {
        case ir::ScalarKind::Int: v = literal(static_cast<int32_t>(value)); break;
        case ir::ScalarKind::UInt: v = literal(static_cast<uint32_t>(value)); break;
        case ir::ScalarKind::Bool: v = literal(static_cast<bool>(value)); break;
        default: v = literal(static_cast<float>(value)); break;
        }
    } else {
        v = lift<float>(value).id();
    }
    r.b.emit(ir::Op::Return, {v}, ir::Type::void_type(), 0, loc);
    });
}
inline void return_stmt(std::source_location loc = std::source_location::current()) { return_void(loc); }

} // namespace adjoint::detail

#define $if(...) ::adjoint::detail::IfStmt{::adjoint::detail::lift<bool>(__VA_ARGS__)} % [&]() noexcept
#define $elif(...) * ([&]() noexcept { return ::adjoint::detail::lift<bool>(__VA_ARGS__); }) % [&]() noexcept
#define $else / [&]() noexcept
#define $loop ::adjoint::detail::LoopStmt{} % [&]() noexcept
#define $while(...) ::adjoint::detail::WhileStmt{[&]() noexcept { return ::adjoint::detail::lift<bool>(__VA_ARGS__); }} % [&]() noexcept
#define $for(x, ...) ::adjoint::detail::ForStmt{__VA_ARGS__} % [&](auto x) noexcept
#define $break ::adjoint::detail::break_stmt()
#define $continue ::adjoint::detail::continue_stmt()
#define $switch(...) ::adjoint::detail::SwitchStmt{__VA_ARGS__} % [&]() noexcept
#define $case(...) ::adjoint::detail::CaseStmt{int64_t(__VA_ARGS__)} % [&]() noexcept
#define $default ::adjoint::detail::CaseStmt{std::nullopt} % [&]() noexcept
#define $return(...) ::adjoint::detail::return_stmt(__VA_ARGS__)
