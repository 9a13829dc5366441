// adjoint-optimize: runs a scene's optimize block headless and writes its outputs (app-contract.md).
#include <adjoint/app/interrupt.h>
#include <adjoint/app/run.h>

#include <iostream>

int main(int argc, char** argv) {
    using namespace adjoint::app;
    try {
        // First: a SIGINT/SIGTERM from here on ends the run at its next check with exit 130, never mid-write.
        InterruptGuard guard;
        OptimizeOptions o = parse_optimize_args(argc, argv);
        if (o.help) {
            std::cout << o.help_text;
            return exit_ok;
        }
        return run_optimize(o, std::cerr);
    } catch (...) {   // anything the run did not handle, out of memory included: a clear line, never abort()
        return report_current_exception(std::cerr);
    }
}
