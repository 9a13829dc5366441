// The IR printer: stable, diff-friendly text used by dumps and golden tests.
#include <adjoint/ir/printer.h>

#include <adjoint/ir/builder.h>

#include <cstdio>
#include <sstream>

namespace adjoint::ir {

namespace {

std::string lane_text(ScalarKind k, uint32_t w) {
    char buf[32];
    switch (k) {
    case ScalarKind::Float: std::snprintf(buf, sizeof buf, "%.9g", double(float_of(w))); break;
    case ScalarKind::Int: std::snprintf(buf, sizeof buf, "%d", int32_t(w)); break;
    case ScalarKind::UInt: std::snprintf(buf, sizeof buf, "%uu", w); break;
    case ScalarKind::Bool: return w ? "true" : "false";
    case ScalarKind::UInt64: std::snprintf(buf, sizeof buf, "%uu", w); break;   // a word; constants print whole
    }
    return buf;
}

class Printer {
public:
    explicit Printer(const Function& f) : f_(f) {}

    std::string run() {
        os_ << (f_.is_kernel() ? "kernel " : "callable ") << f_.name() << "(";
        for (size_t i = 0; i < f_.params.size(); ++i) os_ << (i ? ", " : "") << f_.params[i]->to_string();
        os_ << ")";
        if (f_.is_kernel())
            os_ << " dim=" << f_.dimension << " block=(" << f_.block_size[0] << "," << f_.block_size[1] << ","
                << f_.block_size[2] << ")";
        else if (f_.return_type)
            os_ << " -> " << f_.return_type->to_string();
        os_ << " {\n";
        block(f_.body(), 1);
        os_ << "}\n";
        return os_.str();
    }

private:
    void block(const Block& b, int depth) {
        for (ValueId id : b.insts) inst(id, depth);
    }

    void inst(ValueId id, int depth) {
        const Inst& in = f_.inst(id);
        std::string pad(size_t(depth) * 2, ' ');
        os_ << pad;
        if (!in.type->is_void()) os_ << "%" << id << ": " << in.type->to_string() << " = ";
        os_ << name(in.op);
        switch (in.op) {
        case Op::Const: {
            os_ << " ";
            if (in.type->is_u64()) {
                os_ << uint64_of(in.words[0], in.words[1]) << "ul";
                break;
            }
            if (in.words.size() > 1) os_ << "(";
            for (uint32_t i = 0; i < in.words.size(); ++i)
                os_ << (i ? ", " : "") << lane_text(in.type->lane_kind(i), in.words[i]);
            if (in.words.size() > 1) os_ << ")";
            break;
        }
        case Op::Arg: case Op::Param: os_ << " " << in.imm; break;
        case Op::Builtin: {
            static const char* names[] = {"dispatch_id", "dispatch_size", "thread_id", "block_id", "block_size",
                                          "subgroup_size", "subgroup_invocation_id"};
            os_ << " " << names[in.imm];
            break;
        }
        case Op::BufferAtomic: case Op::SharedAtomic: {
            static const char* names[] = {"add", "min", "max", "exchange", "compare_exchange"};
            os_ << "." << names[in.imm];
            break;
        }
        case Op::Swizzle: {
            os_ << " ";
            int n = int(in.imm >> 16);
            for (int i = 0; i < n; ++i) os_ << "xyzw"[(in.imm >> (2 * i)) & 3];
            break;
        }
        case Op::Call: os_ << " @" << (in.callee ? in.callee->name() : "?"); break;
        case Op::Loop:   // tape_capacity(n): part of the kernel's identity (the shader cache keys on this text)
            if (in.imm != 0) os_ << " capacity " << in.imm;
            break;
        default: break;
        }
        for (size_t i = 0; i < in.operands.size(); ++i) os_ << (i || in.op == Op::Swizzle ? ", " : " ") << "%" << in.operands[i];
        if (in.op == Op::If) {
            os_ << " {\n";
            block(*in.regions[0], depth + 1);
            if (!in.regions[1]->insts.empty()) {
                os_ << pad << "} else {\n";
                block(*in.regions[1], depth + 1);
            }
            os_ << pad << "}";
        } else if (in.op == Op::Switch) {
            os_ << " {\n";
            for (size_t r = 0; r < in.regions.size(); ++r) {
                bool is_default = in.has_default && r + 1 == in.regions.size();
                os_ << pad << "case " << (is_default ? std::string("default") : std::to_string(int32_t(in.words[r])))
                    << ":\n";
                block(*in.regions[r], depth + 1);
            }
            os_ << pad << "}";
        } else if (!in.regions.empty()) {
            os_ << " {\n";
            block(*in.regions[0], depth + 1);
            os_ << pad << "}";
        }
        os_ << "\n";
    }

    const Function& f_;
    std::ostringstream os_;
};

} // namespace

std::string print(const Function& f) { return Printer(f).run(); }
std::string print_value(const Function& f, ValueId v) { return "%" + std::to_string(v); }

} // namespace adjoint::ir
