// A host interpreter of the IR: runs a kernel for chosen thread ids over host memory. It is the oracle
// that codegen, the runtime and autodiff are tested against.
#pragma once
#include <adjoint/ir/eval.h>
#include <adjoint/ir/function.h>

#include <array>
#include <cstddef>
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

class Interpreter {
public:
    Interpreter(const Function& kernel, std::vector<HostArg> args, std::array<uint32_t, 3> dispatch_size);
    void run_thread(std::array<uint32_t, 3> id);
    void run_all();
    // Set when a Trap ran (the code of the first one); 0 when none did.
    uint32_t trap_code() const { return trap_; }
    uint64_t steps() const { return steps_; }
    uint64_t step_limit = 100'000'000;   // guards tests against an endless loop

private:
    enum class Flow { Normal, Break, Continue, Return };
    struct Frame {
        const Function* f;
        std::vector<Lanes> values;
        std::vector<Lanes> call_args;     // callee parameters
        Lanes result;
    };
    Flow block(Frame& fr, const Block& b);
    Flow inst(Frame& fr, ValueId id);
    HostResource& resource(Frame& fr, ValueId v);
    size_t element_offset(const Type* buffer_type, const HostResource& r, int64_t index, const Inst& in);

    const Function& kernel_;
    std::vector<HostArg> args_;
    std::array<uint32_t, 3> size_;
    std::array<uint32_t, 3> tid_{};
    uint32_t trap_ = 0;
    uint32_t loop_mark_ = 0;          // the thread's LoopMark word
    uint64_t steps_ = 0;
    std::vector<uint32_t> scratch_;   // the scratch buffer, grown on demand
};

} // namespace adjoint::ir
