// The IR proper: a function is a flat table of instructions (SSA values addressed by 32-bit ids) arranged
// in structured blocks; if, switch, loop and autodiff own nested blocks (regions).
#pragma once
#include <adjoint/ir/op.h>
#include <adjoint/ir/type.h>

#include <array>
#include <deque>
#include <map>
#include <cstdint>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

namespace adjoint::ir {

using ValueId = uint32_t;
inline constexpr ValueId kNoValue = ~0u;
// Inst::imm of a Local recorded as a $for counter (see autodiff's tape-free loops).
inline constexpr int64_t kForCounter = 1;

struct Block {
    std::vector<ValueId> insts;   // in execution order
};

class Function;

// A kernel's trap messages by the code its Trap instructions write (ir/trap.h).
using TrapTable = std::map<uint32_t, std::string>;

// A kernel argument the user passes as one value although it binds several parameters (a texture: its texels
// and its level table). The runtime checks and names it as one argument of kind `kind`.
struct ArgBundle {
    uint32_t argument = 0;      // the user's argument index
    uint32_t first_param = 0;   // its parameters: [first_param, first_param + params)
    uint32_t params = 0;
    std::string kind;           // "texture<float3>", ...
};

struct Inst {
    Op op = Op::Const;
    const Type* type = nullptr;              // void for statements
    std::vector<ValueId> operands;
    std::vector<std::unique_ptr<Block>> regions;
    int64_t imm = 0;                         // arg/param index, builtin id, swizzle code, atomic op
    std::vector<uint32_t> words;             // constant lanes (bit patterns); switch case values
    bool has_default = false;                // switch: the last region is the default
    const Function* callee = nullptr;        // call
    std::source_location loc;                // the C++ line of the DSL call that recorded it
    bool dead = false;                       // removed by a pass; ids are never reused
};

// What every copy of an instruction starts from: its own fields (op, type, imm, words, has_default, callee,
// loc) and one empty block per region; operands and the dead mark are the copier's.
inline Inst copy_header(const Inst& in) {
    Inst copy;
    copy.op = in.op;
    copy.type = in.type;
    copy.imm = in.imm;
    copy.words = in.words;
    copy.has_default = in.has_default;
    copy.callee = in.callee;
    copy.loc = in.loc;
    for (size_t r = 0; r < in.regions.size(); ++r) copy.regions.push_back(std::make_unique<Block>());
    return copy;
}

class Function {
public:
    enum class Kind : uint8_t { Kernel, Callable };

    Function(Kind kind, std::string name) : kind_(kind), name_(std::move(name)) {}
    Function(const Function&) = delete;
    Function& operator=(const Function&) = delete;

    Kind kind() const { return kind_; }
    bool is_kernel() const { return kind_ == Kind::Kernel; }
    const std::string& name() const { return name_; }
    void set_name(std::string n) { name_ = std::move(n); }

    // Kernel: 1, 2 or 3 dispatch dimensions and the work-group size; callable: the return type.
    uint32_t dimension = 1;
    std::array<uint32_t, 3> block_size{256, 1, 1};
    std::source_location block_loc;          // where set_block_size() chose block_size (line 0: the default)
    const Type* return_type = nullptr;
    std::vector<const Type*> params;         // kernel arguments / callable parameters, in order
    std::vector<ArgBundle> bundles;          // kernel: arguments that bind several params (not in the IR text)
    std::source_location loc;                // where the kernel or callable was defined
    // 32-bit words of the runtime-managed scratch buffer each thread uses (autodiff's large tapes).
    uint32_t scratch_words_per_thread = 0;
    // The messages of this function's Trap instructions (ir::add_trap): data of the kernel, not of the process.
    TrapTable traps;

    Block& body() { return body_; }
    const Block& body() const { return body_; }
    Inst& inst(ValueId id) { return insts_[id]; }
    const Inst& inst(ValueId id) const { return insts_[id]; }
    const Type* type_of(ValueId id) const { return insts_[id].type; }
    size_t inst_count() const { return insts_.size(); }

    // Appends a new instruction to the table (not to any block) and returns its id.
    ValueId add(Inst inst) {
        insts_.push_back(std::move(inst));
        return static_cast<ValueId>(insts_.size() - 1);
    }

    // Callables this function calls (kept alive by the front end); used for recursion checks.
    std::vector<std::shared_ptr<const Function>> callees;

private:
    Kind kind_;
    std::string name_;
    // A deque keeps references to instructions valid while passes append new ones.
    std::deque<Inst> insts_;
    Block body_;
};

// Helpers over instructions.
inline bool is_constant(const Function& f, ValueId v) { return f.inst(v).op == Op::Const; }
float const_float(const Function& f, ValueId v);          // lane 0 as float (the value must be a float const)
int64_t const_int(const Function& f, ValueId v);          // lane 0 as int or uint
bool const_is(const Function& f, ValueId v, double x);    // every lane equals x (float or int constants)

} // namespace adjoint::ir
