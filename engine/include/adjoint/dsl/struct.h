// ADJOINT_STRUCT(Name, member...): registers a plain C++ struct as a DSL type with named members.
#pragma once
#include <adjoint/dsl/expr.h>

#include <cstddef>

#define ADJOINT_PP_NARG(...) ADJOINT_PP_NARG_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
#define ADJOINT_PP_NARG_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, N, ...) N
#define ADJOINT_PP_CAT(a, b) ADJOINT_PP_CAT_(a, b)
#define ADJOINT_PP_CAT_(a, b) a##b
#define ADJOINT_FOR_EACH(M, S, ...) ADJOINT_PP_CAT(ADJOINT_FE_, ADJOINT_PP_NARG(__VA_ARGS__))(M, S, 0, __VA_ARGS__)
#define ADJOINT_FE_1(M, S, i, x) M(S, i, x)
#define ADJOINT_FE_2(M, S, i, x, ...) M(S, i, x) ADJOINT_FE_1(M, S, i + 1, __VA_ARGS__)
#define ADJOINT_FE_3(M, S, i, x, ...) M(S, i, x) ADJOINT_FE_2(M, S, i + 1, __VA_ARGS__)
#define ADJOINT_FE_4(M, S, i, x, ...) M(S, i, x) ADJOINT_FE_3(M, S, i + 1, __VA_ARGS__)
#define ADJOINT_FE_5(M, S, i, x, ...) M(S, i, x) ADJOINT_FE_4(M, S, i + 1, __VA_ARGS__)
#define ADJOINT_FE_6(M, S, i, x, ...) M(S, i, x) ADJOINT_FE_5(M, S, i + 1, __VA_ARGS__)
#define ADJOINT_FE_7(M, S, i, x, ...) M(S, i, x) ADJOINT_FE_6(M, S, i + 1, __VA_ARGS__)
#define ADJOINT_FE_8(M, S, i, x, ...) M(S, i, x) ADJOINT_FE_7(M, S, i + 1, __VA_ARGS__)
#define ADJOINT_FE_9(M, S, i, x, ...) M(S, i, x) ADJOINT_FE_8(M, S, i + 1, __VA_ARGS__)
#define ADJOINT_FE_10(M, S, i, x, ...) M(S, i, x) ADJOINT_FE_9(M, S, i + 1, __VA_ARGS__)
#define ADJOINT_FE_11(M, S, i, x, ...) M(S, i, x) ADJOINT_FE_10(M, S, i + 1, __VA_ARGS__)
#define ADJOINT_FE_12(M, S, i, x, ...) M(S, i, x) ADJOINT_FE_11(M, S, i + 1, __VA_ARGS__)
#define ADJOINT_FE_13(M, S, i, x, ...) M(S, i, x) ADJOINT_FE_12(M, S, i + 1, __VA_ARGS__)
#define ADJOINT_FE_14(M, S, i, x, ...) M(S, i, x) ADJOINT_FE_13(M, S, i + 1, __VA_ARGS__)
#define ADJOINT_FE_15(M, S, i, x, ...) M(S, i, x) ADJOINT_FE_14(M, S, i + 1, __VA_ARGS__)
#define ADJOINT_FE_16(M, S, i, x, ...) M(S, i, x) ADJOINT_FE_15(M, S, i + 1, __VA_ARGS__)

#define ADJOINT_STRUCT_TYPE(S, i, m) ::adjoint::type_of<decltype(S::m)>(),
#define ADJOINT_STRUCT_NAME(S, i, m) #m,
#define ADJOINT_STRUCT_OFFSET(S, i, m) uint32_t(offsetof(S, m)),
#define ADJOINT_STRUCT_EXPR_DECL(S, i, m) ::adjoint::Expr<decltype(S::m)> m;
#define ADJOINT_STRUCT_EXPR_INIT(S, i, m) , m(::adjoint::detail::MemberTag{}, v.child(i))
#define ADJOINT_STRUCT_VAR_DECL(S, i, m) ::adjoint::Var<decltype(S::m)> m;
#define ADJOINT_STRUCT_VAR_INIT(S, i, m) , m(::adjoint::detail::RefTag{}, l, ::adjoint::detail::extend(p, i))

#define ADJOINT_STRUCT(S, ...)                                                                               \
    template <>                                                                                              \
    struct adjoint::detail::TypeDesc<S> {                                                                    \
        static constexpr bool valid = true;                                                                  \
        static constexpr bool is_scalar = false, is_vector = false, is_matrix = false;                       \
        static constexpr size_t dim = 0;                                                                     \
        static const ::adjoint::ir::Type* type() {                                                           \
            static const ::adjoint::ir::Type* t = ::adjoint::ir::Type::structure(                            \
                #S, {ADJOINT_FOR_EACH(ADJOINT_STRUCT_TYPE, S, __VA_ARGS__)},                                 \
                {ADJOINT_FOR_EACH(ADJOINT_STRUCT_NAME, S, __VA_ARGS__)},                                     \
                {ADJOINT_FOR_EACH(ADJOINT_STRUCT_OFFSET, S, __VA_ARGS__)}, uint32_t(sizeof(S)),              \
                uint32_t(alignof(S)));                                                                       \
            return t;                                                                                        \
        }                                                                                                    \
    };                                                                                                       \
    template <>                                                                                              \
    struct adjoint::detail::ExprMembers<S> {                                                                 \
        struct Init {};                                                                                      \
        explicit ExprMembers(const ::adjoint::detail::MemberRef& v)                                         \
            : init_{} ADJOINT_FOR_EACH(ADJOINT_STRUCT_EXPR_INIT, S, __VA_ARGS__) {}                          \
        Init init_;                                                                                          \
        ADJOINT_FOR_EACH(ADJOINT_STRUCT_EXPR_DECL, S, __VA_ARGS__)                                           \
    };                                                                                                       \
    template <>                                                                                              \
    struct adjoint::detail::VarMembers<S> {                                                                  \
        struct Init {};                                                                                      \
        VarMembers(::adjoint::ir::ValueId l, const ::adjoint::detail::Path& p)                               \
            : init_{} ADJOINT_FOR_EACH(ADJOINT_STRUCT_VAR_INIT, S, __VA_ARGS__) {}                           \
        Init init_;                                                                                          \
        ADJOINT_FOR_EACH(ADJOINT_STRUCT_VAR_DECL, S, __VA_ARGS__)                                            \
    };
