// Atomic file output: every file the programs write appears complete or not at all (app-contract.md).
#pragma once
#include <filesystem>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

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

// Files are read whole (scenes, meshes, images, checkpoints) up to this size: 1 GiB.
inline constexpr uint64_t max_read_file_size = uint64_t(1) << 30;

// The whole content of a regular file, or nullopt and `reason` saying why, naming the file as `shown`:
// "cannot read <shown>: <the system's reason>", "<shown> is not a regular file" (a FIFO, a device such as
// /dev/zero, a socket: refused before any read, so nothing blocks or reads forever), or "<shown> is larger
// than 1 GiB, the most a file read whole may be".
std::optional<std::string> try_read_file(const std::filesystem::path& path, const std::string& shown,
                                         std::string& reason);

// Throws the adjoint::Error write_file_atomic(path, ...) would for a reason of the path's own (its folder
// missing or read-only, `path` a folder or something else that is not a regular file), writing nothing that
// stays: a program checks its output before any work, so an unwritable output is bad input.
void check_writable(const std::filesystem::path& path);

// The whole content of a file; adjoint::Error with try_read_file's reason (naming `path`) when it cannot be read.
std::string read_file(const std::filesystem::path& path);

// `path`'s extension in lower case, dot included ("" when none): formats are chosen by it in any case.
std::string lowercase_extension(const std::filesystem::path& path);

// Throws the adjoint::Error write_file_atomic(path, ...) would for an existing `path` that is not a regular
// file ("cannot write <path>: it is a symbolic link" / "it is a folder" / "it is not a regular file"): an
// output never replaces a symlink, a FIFO or a device (the rename would put a file where the user's link was).
void check_replaceable(const std::filesystem::path& path);

// An exclusive advisory lock (flock) on `<dir>/.adjoint.lock`, held while the object lives, so two runs never
// write into one output folder at once. The kernel drops it when its holder exits or dies (SIGKILL included):
// a lock file left behind by a dead run never blocks. The lock file itself stays (removing it would race a
// third run that opened it).
class FolderLock {
public:
    static constexpr const char* file_name = ".adjoint.lock";
    // Takes the lock without waiting; adjoint::Error "<dir> is in use by another run (it holds <dir>/.adjoint.lock)"
    // when another holder has it (another process, or another FolderLock of this one), or the system's reason
    // when the lock file cannot be opened. `dir` must exist.
    explicit FolderLock(const std::filesystem::path& dir);
    ~FolderLock();
    FolderLock(const FolderLock&) = delete;
    FolderLock& operator=(const FolderLock&) = delete;

private:
    int fd_ = -1;
};

// While alive, remembers every file try_read_file (and so read_file and the scene loader) reads whole, with
// its content's hash, in order: what a scene was loaded from, for --resume to compare. One at a time.
class ReadRecorder {
public:
    struct Entry {
        std::filesystem::path path;
        std::string shown;   // the name the reader gave it (as the scene file writes it)
        uint64_t hash = 0;
    };
    ReadRecorder();
    ~ReadRecorder();
    ReadRecorder(const ReadRecorder&) = delete;
    ReadRecorder& operator=(const ReadRecorder&) = delete;
    std::vector<Entry> entries() const;
};

// Creates `dir` and its missing parents (an existing folder is fine); adjoint::Error naming it otherwise.
void ensure_directory(const std::filesystem::path& dir);

} // namespace adjoint::app
