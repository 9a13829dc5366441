// Atomic file output: every file the programs write appears complete or not at all (app-contract.md).
#pragma once
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace adjoint::app {

// Writes `bytes` to a temporary file beside `path` (same folder, name unique per process and call),
// fsyncs it, renames it over `path` and fsyncs the folder, so a reader (or a kill at any moment) sees
// either the previous complete file or the new complete one. On any failure the temporary file is
// removed and an adjoint::Error naming `path` and the system's reason is thrown; `path` is untouched.
// The folder must exist (see ensure_directory).
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

// The same, with the content produced by `writer` into a stream that goes straight to the temporary
// file (nothing is buffered whole in memory). If `writer` throws, the temporary file is removed, `path`
// is untouched and the exception propagates unchanged.
void write_file_atomic(const std::filesystem::path& path, const std::function<void(std::ostream&)>& writer);

// The whole content of a file; adjoint::Error naming `path` and the reason when it cannot be read.
std::string read_file(const std::filesystem::path& path);

// Creates `dir` and its missing parents (an existing folder is fine); adjoint::Error naming it otherwise.
void ensure_directory(const std::filesystem::path& dir);

} // namespace adjoint::app
