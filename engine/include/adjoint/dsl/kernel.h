// Kernel1D/2D/3D and Callable: record a C++ lambda once into an IR function.
#pragma once
#include <adjoint/dsl/control.h>
#include <adjoint/dsl/resources.h>

#include <memory>
#include <tuple>
#include <utility>

namespace adjoint {

namespace detail {

template <typename F>
struct LambdaTraits : LambdaTraits<decltype(&std::remove_cvref_t<F>::operator())> {};
#define ADJOINT_LAMBDA_TRAITS(qual)                                                                          \
    template <typename C, typename R, typename... A>                                                         \
    struct LambdaTraits<R (C::*)(A...) qual> {                                                               \
        using ret = R;                                                                                       \
        using params = std::tuple<std::remove_cvref_t<A>...>;                                                \
    };
ADJOINT_LAMBDA_TRAITS()
ADJOINT_LAMBDA_TRAITS(const)
ADJOINT_LAMBDA_TRAITS(noexcept)
ADJOINT_LAMBDA_TRAITS(const noexcept)
#undef ADJOINT_LAMBDA_TRAITS

// How a lambda parameter type becomes IR parameters and back. Most types are one parameter; a bundle (a
// texture: its texels and its level table) is several, passed by the user as one argument: `count` says how
// many and `bundle` names what the runtime expects there ("" for a single parameter).
template <typename P>
struct ParamKind {
    using value = value_t<P>;
    static constexpr size_t count = 1;
    static constexpr const char* bundle = "";
    static void types(std::vector<const ir::Type*>& out) { out.push_back(type_of<value>()); }
    static P make(const ir::ValueId* ids) { return P(Expr<value>(FromId{}, ids[0])); }
};
template <typename T>
struct ParamKind<BufferVar<T>> {
    using value = BufferVar<T>;
    static constexpr size_t count = 1;
    static constexpr const char* bundle = "";
    static void types(std::vector<const ir::Type*>& out) { out.push_back(ir::Type::buffer(type_of<T>())); }
    static BufferVar<T> make(const ir::ValueId* ids) { return BufferVar<T>(ids[0]); }
};
template <typename T>
struct ParamKind<DiffBufferVar<T>> {
    using value = DiffBufferVar<T>;
    static constexpr size_t count = 1;
    static constexpr const char* bundle = "";
    static void types(std::vector<const ir::Type*>& out) { out.push_back(ir::Type::diff_buffer(type_of<T>())); }
    static DiffBufferVar<T> make(const ir::ValueId* ids) { return DiffBufferVar<T>(ids[0]); }
};
template <>
struct ParamKind<ImageVar> {
    using value = ImageVar;
    static constexpr size_t count = 1;
    static constexpr const char* bundle = "";
    static void types(std::vector<const ir::Type*>& out) { out.push_back(ir::Type::image()); }
    static ImageVar make(const ir::ValueId* ids) { return ImageVar(ids[0]); }
};

template <typename R>
struct ReturnKind { using value = value_t<R>; };
template <>
struct ReturnKind<void> { using value = void; };

std::string name_from_location(const char* prefix, const std::source_location& loc);
void finish_recording(Recorder& r);   // checks what must be closed and verifies the function

template <typename Params>
struct ParamList;
template <typename... P>
struct ParamList<std::tuple<P...>> {
    // Where each lambda parameter's IR parameters start (a bundle takes several), and how many there are.
    static constexpr std::array<size_t, sizeof...(P) + 1> first = [] {
        std::array<size_t, sizeof...(P) + 1> o{};
        size_t i = 0;
        ((o[i + 1] = o[i] + ParamKind<P>::count, ++i), ...);
        return o;
    }();
    static std::vector<const ir::Type*> types() {
        std::vector<const ir::Type*> t;
        (ParamKind<P>::types(t), ...);
        return t;
    }
    // The lambda parameters that are bundles, for the runtime's argument checks.
    static std::vector<ir::ArgBundle> bundles() {
        std::vector<ir::ArgBundle> b;
        size_t i = 0;
        ((ParamKind<P>::count > 1 || *ParamKind<P>::bundle
              ? b.push_back({uint32_t(i), uint32_t(first[i]), uint32_t(ParamKind<P>::count), ParamKind<P>::bundle})
              : void(),
          ++i),
         ...);
        return b;
    }
    template <typename F>
    static decltype(auto) invoke(Recorder& r, ir::Op op, F& f, const std::source_location& loc) {
        return invoke_impl(r, op, f, loc, std::index_sequence_for<P...>{});
    }
    template <typename F, size_t... I>
    static decltype(auto) invoke_impl(Recorder& r, ir::Op op, F& f, const std::source_location& loc, std::index_sequence<I...>) {
        std::vector<const ir::Type*> t = types();
        std::array<ir::ValueId, first.back() + 1> ids{};   // + 1: no zero-length array for no parameters
        for (size_t k = 0; k < t.size(); ++k) ids[k] = r.b.emit(op, {}, t[k], int64_t(k), loc);
        return f(ParamKind<P>::make(ids.data() + first[I])...);
    }
};

template <uint32_t Dim, typename F>
std::shared_ptr<ir::Function> record_kernel(F& f, const std::source_location& loc) {
    using Traits = LambdaTraits<F>;
    static_assert(std::is_void_v<typename Traits::ret>, "a kernel returns nothing");
    auto fn = std::make_shared<ir::Function>(ir::Function::Kind::Kernel, name_from_location("kernel", loc));
    fn->dimension = Dim;
    fn->block_size = Dim == 1 ? std::array<uint32_t, 3>{256, 1, 1}
                     : Dim == 2 ? std::array<uint32_t, 3>{16, 16, 1} : std::array<uint32_t, 3>{8, 8, 4};
    fn->params = ParamList<typename Traits::params>::types();
    fn->bundles = ParamList<typename Traits::params>::bundles();
    fn->loc = loc;
    RecordScope scope(fn);
    scope.recorder().last_loc = loc;
    ParamList<typename Traits::params>::invoke(scope.recorder(), ir::Op::Arg, f, loc);
    finish_recording(scope.recorder());
    return fn;
}

template <uint32_t Dim, typename... P>
class KernelBase {
public:
    static constexpr uint32_t dimension = Dim;
    template <typename F>
    KernelBase(F&& f, std::source_location loc) : function_(record_kernel<Dim>(f, loc)) {}
    const std::shared_ptr<ir::Function>& function() const { return function_; }
    const std::string& name() const { return function_->name(); }
    void set_name(std::string n) { function_->set_name(std::move(n)); }

private:
    std::shared_ptr<ir::Function> function_;
};

template <typename F>
struct KernelSig;
template <typename... P>
struct KernelSig<std::tuple<P...>> { using type = void(P...); };
template <typename F>
using kernel_sig_t = typename KernelSig<typename LambdaTraits<F>::params>::type;

template <typename R, typename Params>
struct CallableSig;
template <typename R, typename... P>
struct CallableSig<R, std::tuple<P...>> { using type = typename ReturnKind<R>::value(typename ParamKind<P>::value...); };
template <typename F>
using callable_sig_t = typename CallableSig<typename LambdaTraits<F>::ret, typename LambdaTraits<F>::params>::type;

ir::ValueId emit_call(const std::shared_ptr<ir::Function>& callee, std::vector<ir::ValueId> args,
                      const std::source_location& loc);

template <typename V, typename A>
std::array<ir::ValueId, ParamKind<V>::count> call_arg(const A& a) {
    if constexpr (ParamKind<V>::count > 1) return a.ids();
    else if constexpr (std::is_same_v<V, ImageVar> || requires { typename V::element_type; }) return {a.id()};
    else return {lift<V>(a).id()};
}

// One argument of a Callable call. It is converted where the call is written, so its default argument
// captures the caller's line (a defaulted source_location cannot follow a parameter pack); error messages
// about the call (argument types, recursion) then name that line rather than the last recorded one.
template <typename V>
struct CallArg {
    template <typename A>
    CallArg(const A& a, std::source_location l = std::source_location::current()) : loc(l) {
        Recorder::current(l).at(l);
        ids = call_arg<V>(a);
    }
    std::array<ir::ValueId, ParamKind<V>::count> ids{};
    std::source_location loc;
};

} // namespace detail

#define ADJOINT_KERNEL_CLASS(K, D)                                                                           \
    template <typename Sig>                                                                                  \
    class K;                                                                                                 \
    template <typename... P>                                                                                 \
    class K<void(P...)> : public detail::KernelBase<D, P...> {                                               \
    public:                                                                                                  \
        template <typename F>                                                                                \
        K(F&& f, std::source_location loc = std::source_location::current())                                 \
            : detail::KernelBase<D, P...>(std::forward<F>(f), loc) {}                                        \
    };                                                                                                       \
    template <typename F>                                                                                    \
    K(F&&) -> K<detail::kernel_sig_t<F>>;
ADJOINT_KERNEL_CLASS(Kernel1D, 1)
ADJOINT_KERNEL_CLASS(Kernel2D, 2)
ADJOINT_KERNEL_CLASS(Kernel3D, 3)
#undef ADJOINT_KERNEL_CLASS

template <typename Sig>
class Callable;

// A device function; calls are inlined into kernels. The lambda is recorded once, at construction.
template <typename R, typename... V>
class Callable<R(V...)> {
public:
    template <typename F>
    Callable(F&& f, std::source_location loc = std::source_location::current()) {
        using Traits = detail::LambdaTraits<F>;
        function_ = std::make_shared<ir::Function>(ir::Function::Kind::Callable, detail::name_from_location("callable", loc));
        function_->params = detail::ParamList<std::tuple<V...>>::types();
        // `if constexpr`: a plain conditional would instantiate type_of<void> for void callables.
        if constexpr (std::is_void_v<R>) function_->return_type = ir::Type::void_type();
        else function_->return_type = type_of<R>();
        function_->loc = loc;
        detail::RecordScope scope(function_);
        auto& r = scope.recorder();
        r.last_loc = loc;
        if constexpr (std::is_void_v<typename Traits::ret>) {
            detail::ParamList<typename Traits::params>::invoke(r, ir::Op::Param, f, loc);
        } else {
            auto result = detail::ParamList<typename Traits::params>::invoke(r, ir::Op::Param, f, loc);
            if constexpr (!std::is_void_v<R>) {
                ir::ValueId v = detail::lift<R>(result).id();
                r.b.emit(ir::Op::Return, {v}, ir::Type::void_type(), 0, r.last_loc);
            }
        }
        detail::finish_recording(r);
    }

    auto operator()(detail::CallArg<V>... args) const {
        auto& rec = detail::Recorder::current();
        std::source_location loc = rec.last_loc;
        if constexpr (sizeof...(V) > 0) loc = std::get<0>(std::forward_as_tuple(args...)).loc;
        std::vector<ir::ValueId> ids;
        (ids.insert(ids.end(), args.ids.begin(), args.ids.end()), ...);
        ir::ValueId v = detail::emit_call(function_, std::move(ids), loc);
        if constexpr (std::is_void_v<R>) return;
        else return Expr<R>(detail::FromId{}, v);
    }

    const std::shared_ptr<ir::Function>& function() const { return function_; }

private:
    std::shared_ptr<ir::Function> function_;
};

template <typename F>
Callable(F&&) -> Callable<detail::callable_sig_t<F>>;

} // namespace adjoint
