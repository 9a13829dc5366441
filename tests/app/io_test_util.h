// Shared helpers for the io tests: a scratch folder removed afterwards, and expecting an adjoint::Error.
#pragma once
#include "support/error_text.h"

#include <adjoint/core/error.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

namespace adjoint::app::test {

// Starts `program` with `args` (no shell), its stderr into `err_file`. The child calls only async-signal-safe
// functions before exec: a test process that has run Vulkan has lavapipe's threads, and a child that allocated
// (fopen) could wait for ever on a lock one of them held at the fork.
inline pid_t spawn(const std::string& program, const std::vector<std::string>& args,
                   const std::filesystem::path& err_file) {
    std::vector<char*> argv{const_cast<char*>(program.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const std::string err = err_file.string();
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) ::dup2(fd, 2);
        ::execv(program.c_str(), argv.data());
        ::_exit(127);
    }
    return pid;
}

class TempDir {
public:
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "adjoint-io-XXXXXX").string();
        if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
        path_ = pattern;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
        std::filesystem::remove_all(path_, ec);
    }
    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
    // The names in the folder, sorted (to check that no temporary file was left behind).
    std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const auto& e : std::filesystem::directory_iterator(path_)) out.push_back(e.path().filename().string());
        std::sort(out.begin(), out.end());
        return out;
    }

private:
    std::filesystem::path path_;
};

// Runs `f`, which must throw adjoint::Error; returns its message (support/error_text.h).
using adjoint::test::error_of;

} // namespace adjoint::app::test
