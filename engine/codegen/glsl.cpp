// The GLSL emitter. Values are named v<id>, locals l<id>; constants are written inline; a value read
// outside the block that defines it (autodiff's reverse code does this) is declared at the top of main.
#include <adjoint/codegen/glsl.h>

#include <adjoint/core/error.h>
#include <adjoint/ir/builder.h>
#include <adjoint/ir/walk.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

namespace adjoint::codegen {

using namespace ir;

namespace {

// ops.def's glsl column: how an operation is spelled (see the column's description there).
enum class Form : uint8_t { Stmt, Fn, SpecialFn, Infix, Prefix, Compare, Special };
struct Spelling {
    Form form;
    const char* text = nullptr;          // the function or operator
    const char* vector_text = nullptr;   // Compare: the function on vectors
};
constexpr Spelling Fn(const char* f) { return {Form::Fn, f}; }
constexpr Spelling Infix(const char* op) { return {Form::Infix, op}; }
constexpr Spelling Prefix(const char* op) { return {Form::Prefix, op}; }
constexpr Spelling Compare(const char* op, const char* fn) { return {Form::Compare, op, fn}; }
constexpr Spelling SpecialFn{Form::SpecialFn}, Special{Form::Special}, Stmt{Form::Stmt};
constexpr Spelling kSpellings[] = {
#define ADJOINT_OP(name, arity, typing, domain, effect, ad, lanes, glsl) glsl,
#include <adjoint/ir/ops.def>
#undef ADJOINT_OP
};
static_assert(std::size(kSpellings) == op_count());
const Spelling& spelling(Op op) { return kSpellings[size_t(op)]; }

std::string scalar_prefix(ScalarKind k) {
    switch (k) {
    case ScalarKind::Float: return "";
    case ScalarKind::Int: return "i";
    case ScalarKind::UInt: return "u";
    case ScalarKind::Bool: return "b";
    case ScalarKind::UInt64: break;   // no uint64 vectors
    }
    return "";
}

std::string float_literal(float v) {
    if (std::isnan(v)) return "uintBitsToFloat(0x7fc00000u)";
    if (std::isinf(v)) return v > 0 ? "uintBitsToFloat(0x7f800000u)" : "uintBitsToFloat(0xff800000u)";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", double(v));
    std::string s = buf;
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    if (std::signbit(v) && v == 0.0f) s = "-0.0";
    return s;
}

// User struct and member names are C++ identifiers, which GLSL may reserve (a member `sample`, `input` or
// `patch`, a struct `Push` like the push-constant block) or cannot parse (`ns::Particle`, as ADJOINT_STRUCT
// writes a namespaced type). Prefixing them keeps them readable and out of GLSL's way.
std::string struct_name(const Type* s) {
    std::string out = "S_";
    for (char c : s->name()) {
        bool ok = std::isalnum(static_cast<unsigned char>(c));
        if (ok) out += c;
        else if (out.back() != '_') out += '_';
    }
    return out;
}

std::string member_name(const Type* s, size_t m) { return "m_" + s->member_names()[m]; }

bool holds_bool(const Type* t) {
    if (t->is_struct()) {
        for (auto* m : t->members())
            if (holds_bool(m)) return true;
        return false;
    }
    if (t->is_array()) return holds_bool(t->element());
    return t->is_bool();
}

bool holds_u64(const Type* t) {
    if (t->is_struct()) {
        for (auto* m : t->members())
            if (holds_u64(m)) return true;
        return false;
    }
    if (t->is_array()) return holds_u64(t->element());
    return t->is_u64();
}

// Host (C++) layout of a struct differs from GLSL's std430 where a member follows a vec3 at offset 12:
// pads bring each member to its C++ offset. Returns, per member, how many float pads go before it.
std::vector<uint32_t> struct_pads(const Type* s) {
    std::vector<uint32_t> pads;
    uint32_t offset = 0;
    for (size_t m = 0; m < s->members().size(); ++m) {
        const Type* t = s->members()[m];
        uint32_t align = t->host_align();
        uint32_t natural = (offset + align - 1) / align * align;   // where std430 would put it
        uint32_t want = s->member_offsets()[m];
        uint32_t n = 0;
        if (natural != want) {
            // Pad with floats from the unaligned end of the previous member.
            if (want < offset || (want - offset) % 4 != 0)
                fail("struct ", s->name(), ": member ", s->member_names()[m], " has a host offset GLSL cannot match");
            n = (want - offset) / 4;
        }
        pads.push_back(n);
        offset = want + t->host_size();
        if (t->is_vector() && t->dim() == 3) offset = want + 12;   // std430 packs a scalar after a vec3
    }
    return pads;
}

class Emitter {
public:
    Emitter(const Function& f, const GlslOptions& opt) : f_(f), opt_(opt) {}

    GlslKernel run() {
        if (!f_.is_kernel()) fail("internal: GLSL emission of a callable '", f_.name(), "'");
        note_types(f_.body());
        layout();
        std::ostringstream body;
        out_ = &body;
        indent_ = 1;
        if (f_.dimension == 1) {
            // A 1D dispatch larger than the device's group limit in x runs as rows of groups in y; the
            // thread's index is linear again here, so dispatch(n) takes any n. The last row's surplus groups
            // stop before their index is formed: past 2^32 threads it would wrap to a low index and run
            // that thread twice (runtime/dispatch_grid.h plans the rows).
            const std::string block = std::to_string(f_.block_size[0]) + "u";
            line("const uint adjoint_group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;");
            line("if (adjoint_group > (pc.dispatch_size.x - 1u) / " + block + ") return;");
            line("const uvec3 adjoint_id = uvec3(adjoint_group * " + block + " + gl_LocalInvocationID.x, 0u, 0u);");
            line("if (adjoint_id.x >= pc.dispatch_size.x) return;");
        } else {
            line("if (any(greaterThanEqual(gl_GlobalInvocationID, pc.dispatch_size))) return;");
        }
        block(f_.body());
        std::ostringstream src;
        src << "#version 450\n";
        if (need_atomic_float_) src << "#extension GL_EXT_shader_atomic_float : require\n";
        if (need_atomic_float2_) src << "#extension GL_EXT_shader_atomic_float2 : require\n";
        if (need_int64_) src << "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n";
        if (need_atomic_int64_) src << "#extension GL_EXT_shader_atomic_int64 : require\n";
        if (subgroup_features_ & kSubgroupBasic) src << "#extension GL_KHR_shader_subgroup_basic : require\n";
        if (subgroup_features_ & kSubgroupVote) src << "#extension GL_KHR_shader_subgroup_vote : require\n";
        if (subgroup_features_ & kSubgroupArithmetic) src << "#extension GL_KHR_shader_subgroup_arithmetic : require\n";
        if (subgroup_features_ & kSubgroupBallot) src << "#extension GL_KHR_shader_subgroup_ballot : require\n";
        src << "// kernel " << f_.name() << "\n";
        src << "layout(local_size_x = " << f_.block_size[0] << ", local_size_y = " << f_.block_size[1]
            << ", local_size_z = " << f_.block_size[2] << ") in;\n";
        for (const Type* s : structs_) emit_struct(src, s);
        src << resources_.str();
        src << "void main() {\n" << body.str() << "}\n";
        result_.source = src.str();
        result_.traps = f_.traps;
        return std::move(result_);
    }

private:
    // ---- analysis -------------------------------------------------------------------------------------
    // Structs are declared in the order the kernel first uses them.
    void note_types(const Block& root) {
        walk(f_, root, [&](ValueId id) { note_type(f_.type_of(id)); });
    }

    void note_type(const Type* t) {
        if (t->is_array() || t->kind() == Type::Kind::Buffer) note_type(t->element());
        if (t->is_struct()) {
            for (auto* m : t->members()) note_type(m);
            if (std::find(structs_.begin(), structs_.end(), t) == structs_.end()) structs_.push_back(t);
        }
    }

    void emit_struct(std::ostream& os, const Type* s) {
        auto pads = struct_pads(s);
        os << "struct " << struct_name(s) << " {\n";
        for (size_t m = 0; m < s->members().size(); ++m) {
            for (uint32_t p = 0; p < pads[m]; ++p) os << "    float _pad" << m << "_" << p << ";\n";
            os << "    " << declare(s->members()[m], member_name(s, m)) << ";\n";
        }
        os << "};\n";
    }

    // GLSL, like C, lists array sizes outermost first after the name: float t[CAP][N] for array<array<float,N>,CAP>.
    static std::string declare(const Type* t, const std::string& name) {
        std::string dims;
        while (t->is_array()) {
            dims += "[" + std::to_string(t->dim()) + "]";
            t = t->element();
        }
        return glsl_type(t) + " " + name + dims;
    }

    void layout() {
        // Which buffers/images are written, and which float buffers need CAS atomics.
        std::function<void(const Block&)> scan = [&](const Block& b) {
            for (ValueId id : b.insts) {
                const Inst& in = f_.inst(id);
                if (in.op == Op::BufferWrite || in.op == Op::BufferAtomic || in.op == Op::ImageWrite)
                    written_.insert(f_.inst(in.operands[0]).imm);
                if (in.op == Op::BufferAtomic && in.type->is_float()) {
                    auto op = AtomicOp(in.imm);
                    bool native = op == AtomicOp::Add ? opt_.float_atomic_add : opt_.float_atomic_min_max;
                    if (!native) cas_buffers_.insert(f_.inst(in.operands[0]).imm);
                    else if (op == AtomicOp::Add) need_atomic_float_ = true;
                    else need_atomic_float2_ = true;
                }
                if (in.op == Op::SharedAtomic && in.type->is_float()) {
                    auto op = AtomicOp(in.imm);
                    bool native = op == AtomicOp::Add ? opt_.shared_float_atomic_add : opt_.shared_float_atomic_min_max;
                    if (!native) cas_shared_.insert(in.operands[0]);
                    else if (op == AtomicOp::Add) need_atomic_float_ = true;
                    else need_atomic_float2_ = true;
                }
                if ((in.op == Op::BufferAtomic || in.op == Op::SharedAtomic) && in.type->is_u64()) {
                    bool shared = in.op == Op::SharedAtomic;
                    if (!(shared ? opt_.shared_int64_atomics : opt_.int64_atomics))
                        refuse(in, shared ? "a uint64 atomic on shared memory" : "a uint64 atomic on a buffer",
                               shared ? "shaderSharedInt64Atomics" : "shaderBufferInt64Atomics");
                    need_atomic_int64_ = true;
                }
                if (holds_u64(in.type)) use_int64(in);
                if (in.op == Op::Shared) {
                    shared_.push_back(id);
                    const Type* e = in.type->element();
                    uint32_t stride = (e->host_size() + e->host_align() - 1) / e->host_align() * e->host_align();
                    result_.shared_bytes += stride * in.type->dim();
                }
                if (in.op == Op::Barrier && result_.barrier_at.empty()) {
                    result_.barrier_at = format_location(in.loc);
                    if (result_.barrier_at.empty()) result_.barrier_at = "an unknown line";
                }
                if (is_subgroup_op(in.op)) use_subgroup(in, subgroup_feature(in.op), std::string(ir::name(in.op)));
                if (in.op == Op::Builtin && BuiltinId(in.imm) == BuiltinId::SubgroupSize)
                    use_subgroup(in, kSubgroupBasic, "subgroup_size");
                if (in.op == Op::Builtin && BuiltinId(in.imm) == BuiltinId::SubgroupInvocationId)
                    use_subgroup(in, kSubgroupBasic, "subgroup_invocation_id");
                if (in.op == Op::Trap) result_.uses_status = true;
                if (in.op == Op::LoopMark) uses_loop_mark_ = true;
                if (in.op == Op::ScratchRead || in.op == Op::ScratchWrite) result_.uses_scratch = true;
                for (auto& r : in.regions) scan(*r);
            }
        };
        scan(f_.body());
        std::sort(shared_.begin(), shared_.end());
        uint32_t buffers = 0;
        for (auto* t : f_.params) {
            if (t->kind() == Type::Kind::Buffer) ++buffers;
            note_type(t->kind() == Type::Kind::Buffer ? t->element() : t);
            if (holds_u64(t->kind() == Type::Kind::Buffer ? t->element() : t)) use_int64(f_, t);
        }
        std::ostringstream push;
        push << "layout(push_constant, std430) uniform Push {\n    layout(offset = 0) uvec3 dispatch_size;\n";
        uint32_t offset = 12;
        uint32_t next_buffer = 0;
        uint32_t next_image = buffers + (result_.uses_status ? 1 : 0) + (result_.uses_scratch ? 1 : 0);
        for (size_t k = 0; k < f_.params.size(); ++k) {
            const Type* t = f_.params[k];
            ArgSlot slot{ArgSlot::Kind::Push};
            slot.type = t;
            slot.written = written_.count(int64_t(k)) > 0;
            if (t->kind() == Type::Kind::Buffer) {
                slot.kind = ArgSlot::Kind::Buffer;
                slot.binding = next_buffer++;
                bool as_uint = cas_buffers_.count(int64_t(k)) > 0;
                if (t->element()->is_bool()) fail("buffers of bool are not supported (kernel ", f_.name(), ")");
                if (holds_bool(t->element()))
                    fail("argument ", k, " of kernel '", f_.name(), "': a buffer of ", t->element()->to_string(),
                         ", which holds a bool: C++ stores a bool in 1 byte and GLSL in 4, so the padding bytes "
                         "would be read as part of it; use an int or uint member");
                resources_ << "layout(std430, set = 0, binding = " << slot.binding << ") buffer Buffer" << k << " { "
                           << declare(as_uint ? Type::u32() : t->element(), "b" + std::to_string(k) + "[]") << "; };\n";
            } else if (t->kind() == Type::Kind::Image) {
                slot.kind = ArgSlot::Kind::Image;
                slot.binding = next_image++;
                resources_ << "layout(set = 0, binding = " << slot.binding << ", rgba32f) uniform image2D img" << k << ";\n";
            } else {
                // A bool argument alone is widened to 4 bytes by the runtime; inside a vector or struct the
                // C++ bytes (1 per bool) cannot be what GLSL reads (4 per bool).
                if (holds_bool(t) && !t->is_scalar())
                    fail("argument ", k, " of kernel '", f_.name(), "' is a ", t->to_string(),
                         ", which holds bools: C++ stores a bool in 1 byte and GLSL in 4; pass ints or uints");
                uint32_t align = t->host_align();
                offset = (offset + align - 1) / align * align;
                slot.offset = offset;
                push << "    layout(offset = " << offset << ") " << declare(t, "a" + std::to_string(k)) << ";\n";
                offset += t->host_size();
            }
            result_.args.push_back(slot);
        }
        push << "} pc;\n";
        result_.buffer_count = buffers;
        if (result_.uses_status) {
            result_.status_binding = buffers;
            result_.buffer_count = buffers + 1;
            resources_ << "layout(std430, set = 0, binding = " << buffers << ") buffer Status { uint adjoint_status[]; };\n";
        }
        if (result_.uses_scratch) {
            result_.scratch_binding = result_.buffer_count++;
            result_.scratch_words_per_thread = f_.scratch_words_per_thread;
            resources_ << "layout(std430, set = 0, binding = " << result_.scratch_binding
                       << ") buffer Scratch { uint adjoint_scratch[]; };\n";
        }
        if (uses_loop_mark_) {
            // One word per thread of the work group; atomics, so that no compiler reasons it away.
            uint32_t threads = f_.block_size[0] * f_.block_size[1] * f_.block_size[2];
            resources_ << "shared uint adjoint_loop_mark[" << threads << "];\n";
            result_.shared_bytes += 4 * threads;
        }
        // The kernel's shared arrays (wherever they were declared, callables included): one per block.
        // Float arrays that take compare-and-swap atomics hold the floats' bits as uints.
        for (ValueId s : shared_) {
            const Type* t = f_.type_of(s);
            const Type* e = cas_shared_.count(s) ? Type::u32() : t->element();
            resources_ << "shared " << declare(Type::array(e, t->dim()), name(s)) << ";\n";
        }
        result_.image_count = images_count();
        result_.push_bytes = (offset + 15) / 16 * 16;
        resources_ << push.str();
    }

    uint32_t images_count() const {
        uint32_t n = 0;
        for (auto* t : f_.params) n += t->kind() == Type::Kind::Image;
        return n;
    }

    // ---- emission -------------------------------------------------------------------------------------
    void line(const std::string& s) { *out_ << std::string(size_t(indent_) * 4, ' ') << s << "\n"; }

    std::string name(ValueId v) const {
        const Inst& in = f_.inst(v);
        switch (in.op) {
        case Op::Const: return constant(in.type, in.words);
        case Op::Arg: return "pc.a" + std::to_string(in.imm);
        case Op::Local: return "l" + std::to_string(v);
        case Op::Shared: return "s" + std::to_string(v);
        default: return "v" + std::to_string(v);
        }
    }

    std::string constant(const Type* t, const std::vector<uint32_t>& w, size_t first = 0) const {
        if (t->is_scalar()) {
            uint32_t x = w[first];
            switch (t->scalar_kind()) {
            case ScalarKind::Float: return float_literal(float_of(x));
            case ScalarKind::Int: return int32_t(x) == INT32_MIN ? "(-2147483647 - 1)" : std::to_string(int32_t(x));
            case ScalarKind::UInt: return std::to_string(x) + "u";
            case ScalarKind::Bool: return x ? "true" : "false";
            case ScalarKind::UInt64: return std::to_string(uint64_of(x, w[first + 1])) + "ul";
            }
        }
        std::string s = glsl_type(t) + "(";
        if (t->is_struct()) {
            auto pads = struct_pads(t);
            size_t lane = first;
            for (size_t m = 0; m < t->members().size(); ++m) {
                for (uint32_t p = 0; p < pads[m]; ++p) s += "0.0, ";
                s += constant(t->members()[m], w, lane) + (m + 1 < t->members().size() ? ", " : "");
                lane += t->members()[m]->lanes();
            }
            return s + ")";
        }
        const Type* e = t->element();
        for (uint32_t i = 0; i < t->dim(); ++i)
            s += constant(e, w, first + i * e->lanes()) + (i + 1 < t->dim() ? ", " : "");
        return s + ")";
    }

    std::string decl(ValueId id) const {
        const Type* t = f_.type_of(id);
        return declare(t, name(id));
    }

    // "const T vN = expr;": the IR is strictly scoped (ir::scope_values), so each value is declared where it is made.
    void define(ValueId id, const std::string& expr) { line("const " + decl(id) + " = " + expr + ";"); }

    // An operand, splatted to `want` when it is a scalar feeding a vector op (GLSL functions need that).
    std::string arg(ValueId v, const Type* want) const {
        const Type* t = f_.type_of(v);
        if (want && t != want && t->is_scalar() && want->is_vector()) return glsl_type(want) + "(" + name(v) + ")";
        return name(v);
    }

    std::string access(ValueId base_type_holder, const Type* t, const std::vector<ValueId>& path, size_t first) const {
        std::string s;
        for (size_t k = first; k < path.size(); ++k) {
            ValueId idx = path[k];
            if (t->is_struct()) {
                auto m = size_t(const_int(f_, idx));
                s += "." + member_name(t, m);
                t = t->members()[m];
            } else if (t->is_vector() && is_constant(f_, idx) && const_int(f_, idx) >= 0 && const_int(f_, idx) < 4) {
                s += std::string(".") + "xyzw"[const_int(f_, idx)];
                t = t->element();
            } else {
                s += "[" + name(idx) + "]";
                t = t->element();
            }
        }
        (void)base_type_holder;
        return s;
    }

    void block(const Block& b) {
        for (ValueId id : b.insts) inst(id);
    }

    void inst(ValueId id) {
        const Inst& in = f_.inst(id);
        auto op = [&](size_t k) { return name(in.operands[k]); };
        auto a = [&](size_t k) { return arg(in.operands[k], in.type); };
        const Type* t0 = in.operands.empty() ? nullptr : f_.type_of(in.operands[0]);
        switch (in.op) {
        case Op::Const: case Op::Arg: return;
        case Op::Param: case Op::Call: case Op::Return:
            fail("internal: '", ir::name(in.op), "' reached GLSL emission; callables must be inlined first");
        case Op::Autodiff: case Op::RequiresGrad: case Op::Backward: case Op::Grad:
            fail("internal: '", ir::name(in.op), "' reached GLSL emission; run the autodiff pass first");
        case Op::Builtin: {
            static const char* names[] = {"gl_GlobalInvocationID", "pc.dispatch_size", "gl_LocalInvocationID",
                                          "gl_WorkGroupID", "gl_WorkGroupSize", "gl_SubgroupSize",
                                          "gl_SubgroupInvocationID"};
            static const char* names_1d[] = {"adjoint_id", "pc.dispatch_size", "gl_LocalInvocationID",
                                             "uvec3(adjoint_group, 0u, 0u)", "gl_WorkGroupSize", "gl_SubgroupSize",
                                             "gl_SubgroupInvocationID"};
            define(id, (f_.dimension == 1 ? names_1d : names)[in.imm]);
            return;
        }
        case Op::Local: line(decl(id) + ";"); return;
        case Op::Shared: return;   // declared at module scope
        case Op::SharedRead: {
            std::string e = name(in.operands[0]) + "[" + op(1) + "]";
            define(id, cas_shared_.count(in.operands[0]) ? "uintBitsToFloat(" + e + ")" : e);
            return;
        }
        case Op::SharedWrite: {
            std::string v = cas_shared_.count(in.operands[0]) ? "floatBitsToUint(" + op(2) + ")" : op(2);
            line(name(in.operands[0]) + "[" + op(1) + "] = " + v + ";");
            return;
        }
        case Op::SharedAtomic: atomic(id, in); return;
        case Op::Barrier:
            // sync_block(): shared-memory writes before it are visible to the block's threads after it.
            line("memoryBarrierShared();");
            line("barrier();");
            return;
        case Op::Load: define(id, op(0) + access(id, t0, in.operands, 1)); return;
        case Op::Store: line(op(0) + access(id, t0, in.operands, 2) + " = " + op(1) + ";"); return;
        case Op::Extract: define(id, op(0) + access(id, t0, in.operands, 1)); return;
        case Op::Insert:
            // The copy is modified in place, so it cannot be const.
            line(decl(id) + " = " + op(0) + ";");
            line(name(id) + access(id, t0, in.operands, 2) + " = " + op(1) + ";");
            return;
        case Op::Swizzle: {
            std::string s;
            for (int i = 0; i < int(in.imm >> 16); ++i) s += "xyzw"[(in.imm >> (2 * i)) & 3];
            define(id, op(0) + "." + s);
            return;
        }
        case Op::Construct: {
            std::string s = glsl_type(in.type) + "(";
            auto pads = in.type->is_struct() ? struct_pads(in.type) : std::vector<uint32_t>{};
            for (size_t k = 0; k < in.operands.size(); ++k) {
                if (!pads.empty())
                    for (uint32_t p = 0; p < pads[k]; ++p) s += "0.0, ";
                s += op(k) + (k + 1 < in.operands.size() ? ", " : "");
            }
            define(id, s + ")");
            return;
        }
        case Op::Cast: define(id, glsl_type(in.type) + "(" + op(0) + ")"); return;
        case Op::If:
            line("if (" + op(0) + ") {");
            ++indent_;
            block(*in.regions[0]);
            --indent_;
            if (!in.regions[1]->insts.empty()) {
                line("} else {");
                ++indent_;
                block(*in.regions[1]);
                --indent_;
            }
            line("}");
            return;
        case Op::Loop:
            line("while (true) {");
            ++indent_;
            block(*in.regions[0]);
            --indent_;
            line("}");
            return;
        case Op::Switch: {
            line("switch (" + op(0) + ") {");
            bool is_uint = t0->scalar_kind() == ScalarKind::UInt;
            for (size_t r = 0; r < in.regions.size(); ++r) {
                bool is_default = in.has_default && r + 1 == in.regions.size();
                line(is_default ? std::string("default: {")
                                : "case " + (is_uint ? std::to_string(in.words[r]) + "u" : std::to_string(int32_t(in.words[r]))) + ": {");
                ++indent_;
                block(*in.regions[r]);
                --indent_;
                line("} break;");
            }
            line("}");
            return;
        }
        case Op::Break: line("break;"); return;
        case Op::Continue: line("continue;"); return;
        case Op::BufferRead: {
            int64_t k = f_.inst(in.operands[0]).imm;
            std::string e = "b" + std::to_string(k) + "[" + op(1) + "]";
            define(id, cas_buffers_.count(k) ? "uintBitsToFloat(" + e + ")" : e);
            return;
        }
        case Op::BufferWrite: {
            int64_t k = f_.inst(in.operands[0]).imm;
            std::string v = cas_buffers_.count(k) ? "floatBitsToUint(" + op(2) + ")" : op(2);
            line("b" + std::to_string(k) + "[" + op(1) + "] = " + v + ";");
            return;
        }
        case Op::BufferSize: define(id, "uint(b" + std::to_string(f_.inst(in.operands[0]).imm) + ".length())"); return;
        case Op::BufferAtomic: atomic(id, in); return;
        case Op::ImageRead:
            define(id, "imageLoad(img" + std::to_string(f_.inst(in.operands[0]).imm) + ", ivec2(" + op(1) + "))");
            return;
        case Op::ImageWrite:
            line("imageStore(img" + std::to_string(f_.inst(in.operands[0]).imm) + ", ivec2(" + op(1) + "), " + op(2) + ");");
            return;
        case Op::ImageSize:
            define(id, "uvec2(imageSize(img" + std::to_string(f_.inst(in.operands[0]).imm) + "))");
            return;
        case Op::Trap: line("atomicCompSwap(adjoint_status[0], 0u, " + op(0) + ");"); return;
        case Op::ScratchRead: define(id, "adjoint_scratch[" + op(0) + "]"); return;
        case Op::LoopMark:
            define(id, "atomicExchange(adjoint_loop_mark[gl_LocalInvocationIndex], " + op(0) + ")");
            return;
        case Op::ScratchWrite: line("adjoint_scratch[" + op(0) + "] = " + op(1) + ";"); return;
        case Op::Bitcast: {
            ScalarKind from = t0->scalar_kind(), to = in.type->scalar_kind();
            // Through uint (or uvecN: vectors need the vector constructors and comparisons).
            const std::string u = glsl_type(in.type->with_scalar(ScalarKind::UInt));
            std::string e = op(0);
            if (from == ScalarKind::Float) e = "floatBitsToUint(" + e + ")";
            else if (from == ScalarKind::Bool) e = u + "(" + e + ")";
            else if (from == ScalarKind::Int) e = u + "(" + e + ")";
            // e is now a uint
            if (to == ScalarKind::Float) e = "uintBitsToFloat(" + e + ")";
            else if (to == ScalarKind::Bool) e = in.type->is_vector() ? "notEqual(" + e + ", " + u + "(0u))" : "(" + e + " != 0u)";
            else if (to == ScalarKind::Int) e = glsl_type(in.type) + "(" + e + ")";
            define(id, e);
            return;
        }
        case Op::Detach: define(id, op(0)); return;
        default: break;
        }
        if (is_subgroup_op(in.op)) {
            define(id, std::string(spelling(in.op).text) + "(" + (in.operands.empty() ? std::string() : op(0)) + ")");
            return;
        }
        define(id, expression(in, op, a, t0));
    }

    // ---- features ---------------------------------------------------------------------------------------
    [[noreturn]] void refuse(const Inst& in, const std::string& what, const std::string& feature) const {
        std::string at = format_location(in.loc);
        fail("kernel '", f_.name(), "': ", what, " at ", at.empty() ? std::string("an unknown line") : at,
             " needs the device feature ", feature, ", which this device does not have");
    }

    void use_int64(const Inst& in) {
        if (!opt_.int64) refuse(in, "a uint64 value", "shaderInt64");
        need_int64_ = true;
    }
    void use_int64(const Function& f, const Type* param) {
        if (!opt_.int64)
            fail("kernel '", f.name(), "': a ", param->to_string(), " argument needs the device feature shaderInt64, ",
                 "which this device does not have");
        need_int64_ = true;
    }

    static uint32_t subgroup_feature(Op op) {
        switch (op) {
        case Op::SubgroupElect: return kSubgroupBasic;
        case Op::SubgroupAll: case Op::SubgroupAny: case Op::SubgroupAllEqual: return kSubgroupVote;
        case Op::SubgroupBallot: case Op::SubgroupBroadcastFirst: return kSubgroupBallot;
        default: return kSubgroupArithmetic;
        }
    }
    void use_subgroup(const Inst& in, uint32_t feature, const std::string& what) {
        static const char* names[] = {"basic", "vote", "arithmetic", "ballot"};
        const char* kind = names[feature == kSubgroupBasic ? 0 : feature == kSubgroupVote ? 1
                                 : feature == kSubgroupArithmetic ? 2 : 3];
        if (!(opt_.subgroup_features & feature))
            refuse(in, what, std::string("subgroup ") + kind + " operations in compute shaders " +
                                 "(VkPhysicalDeviceSubgroupProperties)");
        subgroup_features_ |= feature;
        // Every subgroup extension builds on the basic one.
        subgroup_features_ |= kSubgroupBasic;
    }

    // Functions that act component by component: GLSL has them for scalars and vectors only, so on a
    // matrix (which the type rules allow: sin(m), min(m, 0.5)) they are written column by column.
    static bool column_wise(Op op) {
        Form form = spelling(op).form;
        return ir::info(op).componentwise && (form == Form::Fn || form == Form::SpecialFn);
    }

    template <typename OpFn, typename ArgFn>
    std::string expression(const Inst& in, OpFn op, ArgFn a, const Type* t0, bool in_column = false) {
        if (!in_column && in.type->is_matrix() && column_wise(in.op)) {
            const Type* col = in.type->element();
            std::string s = glsl_type(in.type) + "(";
            for (uint32_t c = 0; c < in.type->dim(); ++c) {
                std::string index = "[" + std::to_string(c) + "]";
                // std::function: one instantiation of this template serves every column.
                std::function<std::string(size_t)> column = [&](size_t k) {
                    ValueId v = in.operands[k];
                    return f_.type_of(v)->is_matrix() ? name(v) + index : name(v);
                };
                std::function<std::string(size_t)> column_arg = [&](size_t k) {
                    ValueId v = in.operands[k];
                    return f_.type_of(v)->is_matrix() ? name(v) + index : arg(v, col);
                };
                s += expression(in, column, column_arg, col, true) + (c + 1 < in.type->dim() ? ", " : "");
            }
            return s + ")";
        }
        auto call = [&](const char* fn) {
            std::string s = std::string(fn) + "(";
            for (size_t k = 0; k < in.operands.size(); ++k) s += a(k) + (k + 1 < in.operands.size() ? ", " : "");
            return s + ")";
        };
        auto infix = [&](const char* sym) { return op(0) + " " + sym + " " + op(1); };
        // A vector comparison takes two vectors of the operands' kind (the result is a bool vector, so
        // `a` would splat a scalar operand to the wrong type): x > 20.0 becomes greaterThan(x, vec3(20.0)).
        auto compare = [&](const char* fn) {
            const Type* operand = in.type->with_scalar(t0->scalar_kind());
            return std::string(fn) + "(" + arg(in.operands[0], operand) + ", " + arg(in.operands[1], operand) + ")";
        };
        bool vec = t0 && t0->is_vector();
        const Spelling& sp = spelling(in.op);
        switch (sp.form) {
        case Form::Fn: return call(sp.text);
        case Form::Infix: return infix(sp.text);
        case Form::Prefix: return sp.text + op(0);
        case Form::Compare: return in.type->is_vector() ? compare(sp.vector_text) : infix(sp.text);
        case Form::SpecialFn: case Form::Special: break;
        case Form::Stmt: fail("internal: no GLSL spelling for '", ir::name(in.op), "'");
        }
        switch (in.op) {
        case Op::Mul:
            if (t0->is_matrix() && f_.type_of(in.operands[1])->is_matrix()) return call("matrixCompMult");
            return infix("*");
        case Op::And: case Op::Or:
            if (in.type->is_vector()) {
                std::string u = "uvec" + std::to_string(in.type->dim());
                return glsl_type(in.type) + "(" + u + "(" + a(0) + ")" + (in.op == Op::And ? " & " : " | ") + u + "(" + a(1) + "))";
            }
            return infix(in.op == Op::And ? "&&" : "||");
        case Op::Not: return vec ? "not(" + op(0) + ")" : "!" + op(0);
        case Op::Select:
            if (t0->is_vector()) return "mix(" + op(2) + ", " + op(1) + ", " + op(0) + ")";
            return op(0) + " ? " + op(1) + " : " + op(2);
        case Op::Abs:   // GLSL has no abs(uint); it is the identity
            if (t0->scalar_kind() == ScalarKind::UInt || t0->scalar_kind() == ScalarKind::UInt64) return op(0);
            return call("abs");
        case Op::Round: {
            // Halves away from zero, as std::round (GLSL's round() leaves halves to the driver). Not
            // floor(abs(x) + 0.5): that sum rounds 0.49999997 up to 1. x - trunc(x) is exact, and picking
            // trunc(x) unchanged keeps -0.0 and -0.3 at -0.0.
            std::string t = "trunc(" + op(0) + ")";
            std::string frac = "abs(" + op(0) + " - " + t + ")";
            if (vec)
                return "mix(" + t + ", " + t + " + sign(" + op(0) + "), greaterThanEqual(" + frac + ", " +
                       glsl_type(t0) + "(0.5)))";
            return "(" + frac + " >= 0.5 ? " + t + " + sign(" + op(0) + ") : " + t + ")";
        }
        case Op::Log10: return "log2(" + op(0) + ") * 0.301029995663981";
        case Op::Sigmoid: case Op::Softplus: {
            // Through e = exp(-|x|) <= 1, as engine/ir/eval.cpp computes them; vectors select with mix.
            const std::string type = glsl_type(t0), x = op(0);
            std::string e = temp(type, "exp(-abs(" + x + "))", false);
            std::string one = vec ? type + "(1.0)" : "1.0";
            if (in.op == Op::Sigmoid) {
                std::string pos = "1.0 / (1.0 + " + e + ")", neg = e + " / (1.0 + " + e + ")";
                if (!vec) return "(" + x + " >= 0.0 ? " + pos + " : " + neg + ")";
                return "mix(" + neg + ", " + pos + ", greaterThanEqual(" + x + ", " + type + "(0.0)))";
            }
            // log(1 + e) = e log(u) / (u - 1): precise, or the compiler rewrites (1 + e) - 1 as e.
            std::string u = temp(type, "1.0 + " + e, true), d = temp(type, u + " - " + one, true);
            std::string ratio = e + " * log(" + u + ") / " + d;
            std::string log1p = vec ? "mix(" + ratio + ", " + e + ", equal(" + u + ", " + one + "))"
                                    : "(" + u + " == 1.0 ? " + e + " : " + ratio + ")";
            return "max(" + x + ", 0.0) + " + log1p;
        }
        case Op::Saturate: return "clamp(" + op(0) + ", 0.0, 1.0)";
        case Op::Fmod: return a(0) + " - " + a(1) + " * trunc(" + a(0) + " / " + a(1) + ")";
        case Op::LengthSquared: return "dot(" + op(0) + ", " + op(0) + ")";
        // GLSL's any/all take bool vectors only; of one bool they are that bool.
        case Op::Any: return vec ? call("any") : op(0);
        case Op::All: return vec ? call("all") : op(0);
        default: break;
        }
        fail("internal: no GLSL spelling for '", ir::name(in.op), "'");
    }

    // A named intermediate (t0, t1, ... within the kernel), declared on its own line before the value that
    // uses it; `precise` forbids the compiler's algebraic rewrites of the expressions that compute it.
    std::string temp(const std::string& type, const std::string& expr, bool precise) {
        std::string n = "t" + std::to_string(temps_++);
        line(std::string(precise ? "precise " : "const ") + type + " " + n + " = " + expr + ";");
        return n;
    }

    void atomic(ValueId id, const Inst& in) {
        const bool shared = in.op == Op::SharedAtomic;
        int64_t k = f_.inst(in.operands[0]).imm;
        std::string target = (shared ? name(in.operands[0]) : "b" + std::to_string(k)) + "[" + name(in.operands[1]) + "]";
        auto op = AtomicOp(in.imm);
        if (shared ? cas_shared_.count(in.operands[0]) > 0 : cas_buffers_.count(k) > 0) {
            // Compare-and-swap loop on the float's bits, for devices without native float atomics.
            std::string v = name(id), old = v + "_old", prev = v + "_prev", x = name(in.operands[2]);
            std::string next = op == AtomicOp::Add ? "uintBitsToFloat(" + old + ") + " + x
                               : op == AtomicOp::Min ? "min(uintBitsToFloat(" + old + "), " + x + ")"
                                                     : "max(uintBitsToFloat(" + old + "), " + x + ")";
            line("uint " + old + " = " + target + ";");
            line("while (true) {");
            ++indent_;
            line("uint " + prev + " = atomicCompSwap(" + target + ", " + old + ", floatBitsToUint(" + next + "));");
            line("if (" + prev + " == " + old + ") break;");
            line(old + " = " + prev + ";");
            --indent_;
            line("}");
            define(id, "uintBitsToFloat(" + old + ")");
            return;
        }
        switch (op) {
        case AtomicOp::Add: define(id, "atomicAdd(" + target + ", " + name(in.operands[2]) + ")"); return;
        case AtomicOp::Min: define(id, "atomicMin(" + target + ", " + name(in.operands[2]) + ")"); return;
        case AtomicOp::Max: define(id, "atomicMax(" + target + ", " + name(in.operands[2]) + ")"); return;
        case AtomicOp::Exchange: define(id, "atomicExchange(" + target + ", " + name(in.operands[2]) + ")"); return;
        case AtomicOp::CompareExchange:
            define(id, "atomicCompSwap(" + target + ", " + name(in.operands[2]) + ", " + name(in.operands[3]) + ")");
            return;
        }
    }

    const Function& f_;
    GlslOptions opt_;
    GlslKernel result_;
    std::ostringstream resources_;
    std::ostream* out_ = nullptr;
    int indent_ = 0;
    std::vector<const Type*> structs_;
    std::set<int64_t> written_, cas_buffers_;
    std::set<ValueId> cas_shared_;      // shared float arrays that take compare-and-swap atomics
    std::vector<ValueId> shared_;       // shared array declarations, in id order
    bool need_atomic_float_ = false, need_atomic_float2_ = false;
    bool need_int64_ = false, need_atomic_int64_ = false;
    uint32_t subgroup_features_ = 0;
    bool uses_loop_mark_ = false;
    uint32_t temps_ = 0;
};

} // namespace

std::string glsl_type(const Type* t) {
    switch (t->kind()) {
    case Type::Kind::Void: return "void";
    case Type::Kind::Scalar:
        switch (t->scalar_kind()) {
        case ScalarKind::Float: return "float";
        case ScalarKind::Int: return "int";
        case ScalarKind::UInt: return "uint";
        case ScalarKind::Bool: return "bool";
        case ScalarKind::UInt64: return "uint64_t";
        }
        break;
    case Type::Kind::Vector: return scalar_prefix(t->scalar_kind()) + "vec" + std::to_string(t->dim());
    case Type::Kind::Matrix: return "mat" + std::to_string(t->dim());
    case Type::Kind::Array: {
        std::string dims;
        while (t->is_array()) {
            dims += "[" + std::to_string(t->dim()) + "]";
            t = t->element();
        }
        return glsl_type(t) + dims;
    }
    case Type::Kind::Struct: return struct_name(t);
    default: break;
    }
    fail("internal: no GLSL type for ", t->to_string());
}

GlslKernel emit_glsl(const Function& f, const GlslOptions& options) { return Emitter(f, options).run(); }

} // namespace adjoint::codegen
