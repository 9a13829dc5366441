// write_file_atomic: complete content or the previous file, never a partial one, and no stray temporaries.
#include "app/io_test_util.h"

#include <adjoint/app/atomic_file.h>

#include <csignal>
#include <sys/resource.h>

using namespace adjoint::app;
using adjoint::app::test::error_of;
using adjoint::app::test::TempDir;

TEST(IoAtomicFile, WritesAndReplacesLeavingNoTemporary) {
    TempDir dir;
    write_file_atomic(dir / "a.txt", std::string_view("first"));
    EXPECT_EQ(read_file(dir / "a.txt"), "first");
    write_file_atomic(dir / "a.txt", std::string_view("second, longer"));
    EXPECT_EQ(read_file(dir / "a.txt"), "second, longer");
    EXPECT_EQ(dir.names(), std::vector<std::string>{"a.txt"});
}

TEST(IoAtomicFile, WriterCallbackStreamsLargeContentExactly) {
    TempDir dir;
    std::string expected;
    for (int i = 0; i < 300000; ++i) expected += char('a' + i % 26);
    write_file_atomic(dir / "big.bin", [&](std::ostream& os) {
        os.write(expected.data(), 10);                                   // buffered
        for (size_t i = 10; i < 70010; ++i) os.put(expected[i]);         // fills the buffer past its end
        os.write(expected.data() + 70010, std::streamsize(expected.size() - 70010));  // bypasses it
    });
    EXPECT_EQ(read_file(dir / "big.bin"), expected);
    EXPECT_EQ(dir.names(), std::vector<std::string>{"big.bin"});
}

TEST(IoAtomicFile, ThrowingWriterKeepsTheOldFileAndRemovesTheTemporary) {
    TempDir dir;
    write_file_atomic(dir / "a.txt", std::string_view("old"));
    EXPECT_THROW(write_file_atomic(dir / "a.txt",
                                   [](std::ostream& os) {
                                       os << "half of the new content";
                                       throw std::logic_error("writer failed");
                                   }),
                 std::logic_error);
    EXPECT_EQ(read_file(dir / "a.txt"), "old");
    EXPECT_EQ(dir.names(), std::vector<std::string>{"a.txt"});
}

TEST(IoAtomicFile, MissingFolderIsAnErrorNamingThePath) {
    TempDir dir;
    std::string message = error_of([&] { write_file_atomic(dir / "nope" / "a.txt", std::string_view("x")); });
    EXPECT_NE(message.find("cannot write " + (dir / "nope" / "a.txt").string()), std::string::npos) << message;
    EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
}

TEST(IoAtomicFile, TargetThatIsAFolderFailsAtRenameAndCleansUp) {
    TempDir dir;
    std::filesystem::create_directory(dir / "sub");
    std::string message = error_of([&] { write_file_atomic(dir / "sub", std::string_view("x")); });
    EXPECT_NE(message.find("cannot write " + (dir / "sub").string()), std::string::npos) << message;
    EXPECT_NE(message.find("Is a directory"), std::string::npos) << message;
    EXPECT_EQ(dir.names(), std::vector<std::string>{"sub"});
}

// A write that fails part way (here the file size limit: EFBIG, standing in for a full disk) names the
// cause, keeps the old file and removes the temporary. Run in a child: it changes process limits.
namespace {
void write_beyond_the_size_limit(const TempDir& dir) {
    std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {100000, 100000};
    setrlimit(RLIMIT_FSIZE, &limit);
    std::string message = error_of([&] { write_file_atomic(dir / "a.bin", std::string(200000, 'x')); });
    if (message.find("cannot write " + (dir / "a.bin").string() + ": File too large") == std::string::npos) std::exit(1);
    if (read_file(dir / "a.bin") != "old") std::exit(2);
    if (dir.names() != std::vector<std::string>{"a.bin"}) std::exit(3);
    std::exit(0);
}
} // namespace

TEST(IoAtomicFile, FailedWriteNamesTheCauseAndKeepsTheOldFile) {
    TempDir dir;
    write_file_atomic(dir / "a.bin", std::string_view("old"));
    EXPECT_EXIT(write_beyond_the_size_limit(dir), ::testing::ExitedWithCode(0), "");
}

TEST(IoAtomicFile, ReadFileNamesAMissingFile) {
    TempDir dir;
    std::string message = error_of([&] { read_file(dir / "missing.txt"); });
    EXPECT_EQ(message, "cannot read " + (dir / "missing.txt").string() + ": No such file or directory");
}

TEST(IoAtomicFile, EnsureDirectoryMakesParentsAndRefusesAFile) {
    TempDir dir;
    ensure_directory(dir / "a" / "b" / "c");
    EXPECT_TRUE(std::filesystem::is_directory(dir / "a" / "b" / "c"));
    ensure_directory(dir / "a" / "b" / "c");  // existing: fine
    write_file_atomic(dir / "file", std::string_view("x"));
    std::string message = error_of([&] { ensure_directory(dir / "file"); });
    EXPECT_NE(message.find("cannot create folder " + (dir / "file").string()), std::string::npos) << message;
}
