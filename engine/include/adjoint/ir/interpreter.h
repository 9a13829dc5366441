// A host interpreter of the IR: runs a kernel over host memory, block by block. It is the oracle that
// codegen, the runtime and autodiff are tested against.
#pragma once
#include <adjoint/ir/eval.h>
#include <adjoint/ir/function.h>

#include <array>
#include <cstddef>
#include <map>
#include <vector>

namespace adjoint::ir {

// A buffer or image argument: bytes in the host layout (images: width*height float4 texels).
struct HostResource {
    std::byte* data = nullptr;
    size_t bytes = 0;
    uint32_t width = 0, height = 0;
};

struct HostArg {
    Lanes value;                      // for value arguments
    HostResource* resource = nullptr; // for buffers and images
};

// Threads run in groups, in lockstep: every instruction runs for all the group's active threads before
// the next one starts, and control flow splits and joins the active set as a GPU does (then-branch
// before else-branch; a loop runs until none of its threads is still in it). A kernel that uses shared
// memory, sync_block() or subgroup operations runs a whole block (work group) as one group, so that
// barriers and subgroups behave as on the device; other kernels run one thread per group.
//
// Subgroups are emulated: `subgroup_size` consecutive threads of a block in linear order (x fastest, then
// y, then z) form one subgroup; a block that is not a multiple leaves its last subgroup partial. Subgroup
// operations see the active threads of the subgroup at that instruction. Shared arrays hold zeros when a
// block starts (on the device their contents are undefined until written).
class Interpreter {
public:
    Interpreter(const Function& kernel, std::vector<HostArg> args, std::array<uint32_t, 3> dispatch_size);
    void run_all();                                  // every block of the dispatch, x fastest
    void run_block(std::array<uint32_t, 3> block);   // the threads of one block that lie in the dispatch
    // Set when a Trap ran (the code of the first one); 0 when none did.
    uint32_t trap_code() const { return trap_; }
    uint64_t steps() const { return steps_; }
    uint64_t step_limit = 100'000'000;   // guards tests against an endless loop (thread instructions)
    // Threads per emulated subgroup: a power of two from 1 to 128 (checked when a block starts).
    uint32_t subgroup_size = 32;
    // Does the kernel run a block per group (shared memory, barriers or subgroup operations)?
    bool runs_blocks_in_lockstep() const { return lockstep_; }

private:
    enum class Flow : uint8_t { Normal, Break, Continue, Return };
    using Mask = std::vector<uint8_t>;
    struct Thread {
        std::array<uint32_t, 3> global{}, local{};
        uint32_t linear = 0;          // index within the block (x fastest)
        uint32_t loop_mark = 0;       // the thread's LoopMark word
    };
    struct Frame {
        const Function* f;
        std::vector<std::vector<Lanes>> values;   // [thread][instruction]
        std::vector<std::vector<Lanes>> args;     // [thread][parameter] of a callee
        std::vector<Lanes> result;                // [thread]
    };
    void run_group(std::array<uint32_t, 3> block, const std::vector<Thread>& threads);
    void block(Frame& fr, const Block& b, Mask& mask);
    void group_inst(Frame& fr, ValueId id, Mask& mask);
    void thread_inst(Frame& fr, ValueId id, size_t t);
    void subgroup_inst(Frame& fr, ValueId id, const Mask& mask);
    HostResource& resource(Frame& fr, ValueId v);
    Lanes& shared(Frame& fr, ValueId decl);
    size_t element_offset(const Type* buffer_type, const HostResource& r, int64_t index, const Inst& in);

    const Function& kernel_;
    std::vector<HostArg> args_;
    std::array<uint32_t, 3> size_;
    bool lockstep_ = false;
    std::vector<Thread> threads_;                 // of the group running now
    std::vector<Flow> flow_;                      // per thread of the group
    std::array<uint32_t, 3> block_{};             // the block running now
    std::map<std::pair<const Function*, ValueId>, Lanes> shared_;   // the block's shared arrays
    std::vector<std::vector<Lanes>> values_;      // the kernel's values per thread, kept between groups
    uint32_t trap_ = 0;
    uint64_t steps_ = 0;
    std::vector<uint32_t> scratch_;   // the scratch buffer, grown on demand
};

} // namespace adjoint::ir
