// How adjoint-optimize and adjoint-render end on an error: one line on stderr and the exit code it means.
#pragma once
#include <adjoint/app/cli.h>

#include <ostream>

namespace adjoint::app {

// Writes "adjoint: error: <what>" to `err` and returns the exit code: exit_bad_input for a SceneError (the
// input is at fault, whatever the stage), `code` for any other Error.
inline int report_error(std::ostream& err, const Error& e, int code) {
    err << "adjoint: error: " << e.what() << "\n";
    return dynamic_cast<const SceneError*>(&e) ? exit_bad_input : code;
}

} // namespace adjoint::app
