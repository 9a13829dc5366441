// The recording context: which function the DSL is writing into right now, and its open statements.
#pragma once
#include <adjoint/core/error.h>
#include <adjoint/ir/builder.h>

#include <functional>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

namespace adjoint::detail {

// One step of an access path into a variable: a constant index (members, swizzle components) or a
// dynamic one (an integer value), materialized into IR values only when the access is recorded.
struct PathElem {
    ir::ValueId dynamic = ir::kNoValue;
    int64_t index = 0;
};
using Path = std::vector<PathElem>;

struct LoopFrame {
    std::function<void()> on_continue;   // what `$continue` must run first (a $for's increment)
};

// What an open $autodiff block knows: the variables marked so far and whether backward ran.
struct AutodiffFrame {
    ir::ValueId scope = ir::kNoValue;
    struct Mark {
        ir::ValueId local;
        std::vector<int64_t> path;       // constant path only (marks on dynamic elements are refused)
        ir::ValueId marker;              // the RequiresGrad value
        bool nested;                     // inside a branch or loop of the block
        std::source_location loc;
    };
    std::vector<Mark> marks;
    ir::ValueId backward = ir::kNoValue;
    std::source_location backward_loc;
};

class Recorder {
public:
    explicit Recorder(std::shared_ptr<ir::Function> f) : function(std::move(f)), b(*function) {
        b.share_constants(true);   // one instruction per distinct constant in scope
    }

    // The innermost recording; throws adjoint::Error naming `loc` when no kernel or callable is recording.
    // Callers pass the user's line where they have it (a defaulted source_location of the DSL function or
    // constructor the user called); a line in an engine header would only mislead, so none is the default.
    static Recorder& current(const std::source_location& loc = {});
    static Recorder* top();
    static bool is_recording(const ir::Function* f);   // is f on the recording stack (recursion check)

    std::shared_ptr<ir::Function> function;
    ir::Builder b;
    std::vector<LoopFrame> loops;
    std::vector<bool> breakables;        // open loops (true) and switches (false), innermost last
    std::unique_ptr<AutodiffFrame> autodiff;
    int refused_autodiff = 0;            // nested $autodiff blocks refused (recorded into scratch blocks)
    std::vector<std::unique_ptr<ir::Block>> scratch;   // where refused statements' bodies are recorded
    std::source_location last_loc;       // the latest DSL call with a known line, for operators
    uint32_t tape_capacity = 0;          // autodiff tape capacity for loops recorded next (0: the default)

    // Materializes a path as index values (constants are int).
    std::vector<ir::ValueId> indices(const Path& path);
    // The location to attach: `loc` when known, else the latest known one.
    std::source_location at(const std::source_location& loc) {
        if (loc.line() != 0) last_loc = loc;
        return last_loc;
    }
};

// Pushes a recorder for the lifetime of the scope.
class RecordScope {
public:
    explicit RecordScope(std::shared_ptr<ir::Function> f);
    ~RecordScope();
    RecordScope(const RecordScope&) = delete;
    RecordScope& operator=(const RecordScope&) = delete;
    Recorder& recorder() { return *recorder_; }

private:
    Recorder* recorder_;
};

inline ir::Builder& builder() { return Recorder::current().b; }

// Errors found while a user's lambda is being recorded (kernel lambdas are often noexcept, and so are the
// bodies of $if and friends) are kept, the statement is skipped, and the first error is thrown as an
// adjoint::Error when the outermost recording ends, outside every user lambda.
void defer_error(const std::string& message);
void throw_deferred_error();   // called by the outermost recording when it ends
// An operator's type error ("... at f.cpp:6"), its place said as "at or after" the last line recorded, `last`.
std::string operator_error(std::string message, const std::source_location& last);
bool is_outermost_recording();

// Runs fn; an adjoint::Error it throws is deferred and `fallback` returned instead.
template <typename T, typename F>
T guarded(T fallback, F&& fn) {
    try {
        return fn();
    } catch (const Error& e) {
        defer_error(e.what());
        return fallback;
    }
}
template <typename F>
void guarded_void(F&& fn) {
    try {
        fn();
    } catch (const Error& e) {
        defer_error(e.what());
    }
}

} // namespace adjoint::detail
