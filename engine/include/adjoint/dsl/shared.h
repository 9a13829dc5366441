// Shared<T>: an array in work-group (block) memory, one per block, shared by the block's threads.
#pragma once
#include <adjoint/dsl/resources.h>

namespace adjoint {

namespace detail {
// The declaration (an ir::Op::Shared of array<T, n>), and the check that a use is in the kernel or callable
// that declared it (a lambda may capture the array into another one).
ir::ValueId declare_shared(const ir::Type* element, uint32_t n, const std::source_location& loc);
bool check_shared_use(const ir::Function* owner, const std::source_location& declared, const std::source_location& loc);
} // namespace detail

// Declared inside a kernel (or a Callable, each inlined call then having its own array):
//     Shared<float> partial(256);
//     partial.write(thread_id().x, v);
//     sync_block();
//     Float left = partial.read(thread_id().x ^ 1u);
// Elements may be any DSL value type; their contents are undefined until written (the interpreter starts
// them at zero). float, int, uint and uint64 elements take atomics: partial.atomic(i).fetch_add(v). Reads
// are constants to autodiff, as buffer reads are. The size counts against the device's shared memory
// (maxComputeSharedMemorySize: 32 KiB on lavapipe), checked when the kernel is compiled.
template <typename T>
class Shared {
    static_assert(DslValue<T>, "a Shared array holds DSL values (float, int3, structs, ...)");

public:
    using element_type = T;
    explicit Shared(uint32_t n, std::source_location loc = std::source_location::current())
        : decl_(detail::declare_shared(type_of<T>(), n, loc)), n_(n), loc_(loc),
          owner_(detail::Recorder::current(loc).function.get()) {}

    template <typename I>
    Expr<T> read(const I& index, std::source_location loc = std::source_location::current()) const {
        auto& r = detail::Recorder::current(loc);
        r.at(loc);
        if (!detail::check_shared_use(owner_, loc_, loc)) return Expr<T>(detail::FromId{}, r.b.zero(type_of<T>(), loc));
        return Expr<T>(detail::FromId{},
                       r.b.emit(ir::Op::SharedRead, {decl_, detail::index_value(index, loc)}, type_of<T>(), 0, loc));
    }
    template <typename I, typename V>
    void write(const I& index, const V& value, std::source_location loc = std::source_location::current()) const {
        auto& r = detail::Recorder::current(loc);
        r.at(loc);
        if (!detail::check_shared_use(owner_, loc_, loc)) return;
        ir::ValueId v = detail::lift<T>(value).id();
        if (r.b.type_of(v) != type_of<T>()) {
            detail::defer_error("type error: writing " + r.b.type_of(v)->to_string() + " into a shared array of " +
                                type_of<T>()->to_string() + " at " + format_location(loc));
            return;
        }
        r.b.emit(ir::Op::SharedWrite, {decl_, detail::index_value(index, loc), v}, ir::Type::void_type(), 0, loc);
    }
    template <typename I>
    AtomicRef<T> atomic(const I& index, std::source_location loc = std::source_location::current()) const {
        auto& r = detail::Recorder::current(loc);
        r.at(loc);
        ir::ValueId target = decl_;
        // A use elsewhere is reported; the atomic then goes to a fresh array of this function.
        if (!detail::check_shared_use(owner_, loc_, loc)) target = detail::declare_shared(type_of<T>(), n_, loc);
        return AtomicRef<T>(target, detail::index_value(index, loc), ir::Op::SharedAtomic);
    }
    uint32_t size() const { return n_; }   // elements, a C++ number
    ir::ValueId id() const { return decl_; }

private:
    ir::ValueId decl_;
    uint32_t n_;
    std::source_location loc_;
    const ir::Function* owner_;
};

} // namespace adjoint
