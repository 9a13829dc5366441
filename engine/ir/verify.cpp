// Verifier: walks the structured blocks once, tracking which values are visible at each point.
#include <adjoint/ir/verify.h>

#include <adjoint/core/error.h>
#include <adjoint/ir/builder.h>
#include <adjoint/ir/printer.h>
#include <adjoint/ir/walk.h>

#include <sstream>
#include <vector>

namespace adjoint::ir {

namespace {

class Verifier {
public:
    explicit Verifier(const Function& f) : f_(f), placed_(f.inst_count(), 0), visible_(f.inst_count(), 0) {}

    std::string run() {
        try {
            int loops = 0, switches = 0;
            walk(f_, f_.body(), [&](ValueId id) {
                check(id, loops, switches);
                loops += f_.inst(id).op == Op::Loop;
                switches += f_.inst(id).op == Op::Switch;
            }, [&](ValueId id) {
                const Inst& in = f_.inst(id);
                loops -= in.op == Op::Loop;
                switches -= in.op == Op::Switch;
                // Leaving its regions: their values are no longer visible.
                for (auto& r : in.regions)
                    for (ValueId x : r->insts) visible_[x] = 0;
                visible_[id] = 1;
            });
        } catch (const Error& e) {
            return e.what();
        }
        return {};
    }

private:
    [[noreturn]] void bad(ValueId id, const std::string& why) {
        std::ostringstream os;
        os << "IR verifier: %" << id << " (" << name(f_.inst(id).op) << "): " << why;
        auto where = format_location(f_.inst(id).loc);
        if (!where.empty()) os << " [recorded at " << where << "]";
        throw Error(os.str());
    }

    // One instruction, before its regions are walked.
    void check(ValueId id, int loops, int switches) {
        if (id >= f_.inst_count()) throw Error("IR verifier: block holds unknown id " + std::to_string(id));
        if (placed_[id]++) bad(id, "appears in more than one place");
        const Inst& in = f_.inst(id);
        if (in.dead) bad(id, "is marked dead but still placed");
        for (ValueId o : in.operands) {
            if (o >= f_.inst_count()) bad(id, "operand %" + std::to_string(o) + " does not exist");
            // Grad names its requires_grad marker (which may sit in a branch or loop of the block)
            // rather than reading its value; autodiff replaces it by a load of the marker's adjoint.
            if (!visible_[o] && !(in.op == Op::Grad && placed_[o]))
                bad(id, "operand %" + std::to_string(o) + " is not defined before this use");
            if (f_.inst(o).type->is_void()) bad(id, "operand %" + std::to_string(o) + " has no value");
        }
        check_types(id, in, loops, switches);
    }

    void check_types(ValueId id, const Inst& in, int loops, int switches) {
        const OpInfo& oi = info(in.op);
        if (oi.arity >= 0 && in.operands.size() != size_t(oi.arity))
            bad(id, "has " + std::to_string(in.operands.size()) + " operands, the table says " + std::to_string(oi.arity));
        if (oi.typing != Typing::Explicit && oi.typing != Typing::Void && in.op != Op::Shl && in.op != Op::Shr) {
            std::vector<const Type*> types;
            for (ValueId o : in.operands) types.push_back(f_.type_of(o));
            const Type* want = infer_type(in.op, types, in.loc);
            if (want != in.type) bad(id, "has type " + in.type->to_string() + ", the rules give " + want->to_string());
        }
        switch (in.op) {
        case Op::If: if (in.regions.size() != 2) bad(id, "needs two regions"); break;
        case Op::Loop: case Op::Autodiff: if (in.regions.size() != 1) bad(id, "needs one region"); break;
        case Op::Switch:
            if (in.regions.size() != in.words.size() + (in.has_default ? 1 : 0)) bad(id, "case count mismatch");
            break;
        case Op::Break: if (!loops && !switches) bad(id, "break outside a loop or switch"); break;
        case Op::Continue: if (!loops) bad(id, "continue outside a loop"); break;
        case Op::Return: if (f_.is_kernel()) bad(id, "return in a kernel"); break;
        case Op::Const: if (in.words.size() != in.type->lanes()) bad(id, "constant lane count mismatch"); break;
        case Op::Store: case Op::Load:
            if (f_.inst(in.operands[0]).op != Op::Local) bad(id, "does not access a local variable");
            break;
        case Op::Shared:
            if (!in.type->is_array()) bad(id, "declares a " + in.type->to_string() + ", not an array");
            break;
        case Op::SharedRead: case Op::SharedWrite: case Op::SharedAtomic: {
            const Inst& s = f_.inst(in.operands[0]);
            if (s.op != Op::Shared) bad(id, "does not access a shared array");
            if (!f_.type_of(in.operands[1])->is_index()) bad(id, "has an index that is not an int or uint");
            const Type* e = s.type->element();
            if (in.op == Op::SharedWrite && f_.type_of(in.operands[2]) != e) bad(id, "writes a value of another type");
            if (in.op != Op::SharedWrite && in.type != e) bad(id, "has type " + in.type->to_string() + ", not the element's");
            if (in.op == Op::SharedAtomic && !(e->is_scalar() && (e->is_float() || e->is_int_like())))
                bad(id, "is an atomic on " + e->to_string());
            break;
        }
        default:
            if (!in.regions.empty()) bad(id, "has regions but is not a control-flow op");
        }
    }

    const Function& f_;
    std::vector<uint8_t> placed_;
    std::vector<uint8_t> visible_;
};

} // namespace

std::string verify(const Function& f) { return Verifier(f).run(); }

void verify_or_throw(const Function& f, const char* after_pass) {
    std::string msg = verify(f);
    if (!msg.empty()) fail("internal error after pass '", after_pass, "' in '", f.name(), "': ", msg, "\n", print(f));
}

} // namespace adjoint::ir
