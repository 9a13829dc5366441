// Blocks and subgroups in the DSL: set_block_size, sync_block, shared arrays and the subgroup built-ins.
#include <adjoint/dsl/shared.h>

namespace adjoint::detail {

void record_block_size(std::array<uint32_t, 3> size, const std::source_location& loc) {
    guarded_void([&] {
        auto& r = Recorder::current(loc);
        r.at(loc);
        ir::Function& f = *r.function;
        const std::string at = format_location(loc);
        if (!f.is_kernel())
            fail("set_block_size at ", at, " inside callable '", f.name(), "': the block size belongs to the kernel");
        if (size[0] == 0 || size[1] == 0 || size[2] == 0)
            fail("set_block_size(", size[0], ", ", size[1], ", ", size[2], ") at ", at, ": each dimension needs at least 1 thread");
        if ((f.dimension == 1 && (size[1] != 1 || size[2] != 1)) || (f.dimension == 2 && size[2] != 1))
            fail("set_block_size(", size[0], ", ", size[1], ", ", size[2], ") at ", at, " in a ", f.dimension,
                 "D kernel: its block is 1 in ", f.dimension == 1 ? "y and z" : "z");
        if (f.block_loc.line() != 0 && f.block_size != size)
            fail("set_block_size at ", at, " sets another size than the call at ", format_location(f.block_loc));
        f.block_size = size;
        f.block_loc = loc;
    });
}

void record_sync_block(const std::source_location& loc) {
    guarded_void([&] {
        auto& r = Recorder::current(loc);
        r.b.emit(ir::Op::Barrier, {}, ir::Type::void_type(), 0, r.at(loc));
    });
}

Expr<uint32_t> subgroup_builtin(ir::BuiltinId which, const std::source_location& loc) {
    auto& r = Recorder::current(loc);
    return Expr<uint32_t>(FromId{}, r.b.emit(ir::Op::Builtin, {}, ir::Type::u32(), int64_t(which), r.at(loc)));
}

Expr<bool> subgroup_elect_at(const std::source_location& loc) {
    auto& r = Recorder::current(loc);
    return Expr<bool>(FromId{}, r.b.emit(ir::Op::SubgroupElect, {}, ir::Type::boolean(), 0, r.at(loc)));
}

ir::ValueId declare_shared(const ir::Type* element, uint32_t n, const std::source_location& loc) {
    auto& r = Recorder::current(loc);
    r.at(loc);
    if (n == 0) {
        defer_error("a Shared array of 0 elements at " + format_location(loc) + "; it needs at least one");
        n = 1;
    }
    return r.b.emit(ir::Op::Shared, {}, ir::Type::array(element, n), 0, loc);
}

bool check_shared_use(const ir::Function* owner, const std::source_location& declared, const std::source_location& loc) {
    auto& r = Recorder::current(loc);
    if (r.function.get() == owner) return true;
    defer_error("a Shared array declared at " + format_location(declared) + " is used at " + format_location(loc) +
                " in '" + r.function->name() + "', another kernel or callable; declare it where it is used (each "
                "inlined call of a callable then has its own)");
    return false;
}

} // namespace adjoint::detail
