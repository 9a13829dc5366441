// write_file_atomic: complete content or the previous file, never a partial one, and no stray temporaries.
#include "app/io_test_util.h"

#include <adjoint/app/atomic_file.h>

#include <csignal>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
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

TEST(IoAtomicFile, TargetThatIsAFolderIsRefusedAndCleansUp) {
    TempDir dir;
    std::filesystem::create_directory(dir / "sub");
    std::string message = error_of([&] { write_file_atomic(dir / "sub", std::string_view("x")); });
    EXPECT_NE(message.find("cannot write " + (dir / "sub").string()), std::string::npos) << message;
    EXPECT_NE(message.find(": it is a folder"), std::string::npos) << message;
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
    EXPECT_EQ(error_of([&] { ensure_directory(""); }), "the folder's name is empty");   // --out ""
}

// Issue 21: temp-and-rename replaced a symlink, a FIFO or a device named as an output. Now refused, the link
// and what it points at untouched, no temporary file left.
TEST(IoAtomicFile, NeverReplacesWhatIsNotARegularFile) {
    TempDir dir;
    write_file_atomic(dir / "real.txt", std::string_view("kept"));
    std::filesystem::create_symlink(dir / "real.txt", dir / "link.txt");
    std::filesystem::create_symlink(dir / "nowhere.txt", dir / "dangling.txt");
    ASSERT_EQ(::mkfifo((dir / "fifo.txt").c_str(), 0600), 0);
    EXPECT_EQ(error_of([&] { write_file_atomic(dir / "link.txt", std::string_view("x")); }),
              "cannot write " + (dir / "link.txt").string() + ": it is a symbolic link");
    EXPECT_EQ(error_of([&] { write_file_atomic(dir / "dangling.txt", std::string_view("x")); }),
              "cannot write " + (dir / "dangling.txt").string() + ": it is a symbolic link");
    EXPECT_EQ(error_of([&] { write_file_atomic(dir / "fifo.txt", std::string_view("x")); }),
              "cannot write " + (dir / "fifo.txt").string() + ": it is not a regular file");
    EXPECT_EQ(error_of([&] { check_writable(dir / "link.txt"); }),
              "cannot write " + (dir / "link.txt").string() + ": it is a symbolic link");
    EXPECT_EQ(error_of([&] { check_replaceable("/dev/null"); }), "cannot write /dev/null: it is not a regular file");
    EXPECT_NO_THROW(check_replaceable(dir / "real.txt"));
    EXPECT_NO_THROW(check_replaceable(dir / "new.txt"));
    EXPECT_TRUE(std::filesystem::is_symlink(dir / "link.txt"));
    EXPECT_EQ(read_file(dir / "real.txt"), "kept");
    EXPECT_FALSE(std::filesystem::exists(dir / "nowhere.txt"));
    EXPECT_EQ(dir.names(), (std::vector<std::string>{"dangling.txt", "fifo.txt", "link.txt", "real.txt"}));
}

// An output folder's lock: exclusive (also against a second lock in this process), released by its holder's
// end, and a lock file left by a process killed while holding it never blocks.
TEST(IoFolderLock, IsExclusiveAndDiesWithItsHolder) {
    TempDir dir;
    {
        FolderLock first(dir.path());
        EXPECT_EQ(error_of([&] { FolderLock second(dir.path()); }),
                  dir.path().string() + " is in use by another run (it holds " + (dir / ".adjoint.lock").string() +
                      "); wait for it or choose another folder");
    }
    EXPECT_NO_THROW(FolderLock again(dir.path()));
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    // The child takes the lock as FolderLock does (flock on .adjoint.lock), says so, and waits to be killed. It calls
    // only async-signal-safe functions: a test process that has run Vulkan has lavapipe's threads, and a child that
    // allocated (a FolderLock's paths) could wait for ever on a lock one of them held at the fork.
    const std::string lock_file = (dir / ".adjoint.lock").string();
    const pid_t child = ::fork();
    if (child == 0) {
        const int fd = ::open(lock_file.c_str(), O_RDWR | O_CREAT, 0666);
        if (fd < 0 || ::flock(fd, LOCK_EX) != 0) ::_exit(1);
        (void)!::write(ready[1], "x", 1);
        ::pause();
        ::_exit(0);
    }
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    EXPECT_NE(error_of([&] { FolderLock busy(dir.path()); }).find("is in use by another run"), std::string::npos);
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_TRUE(std::filesystem::exists(dir / ".adjoint.lock"));   // left behind, and no obstacle
    EXPECT_NO_THROW(FolderLock after(dir.path()));
    ::close(ready[0]);
    ::close(ready[1]);
    EXPECT_NE(error_of([&] { FolderLock missing(dir / "missing"); }).find("cannot lock " + (dir / "missing").string()),
              std::string::npos);
}

// What the scene loader reads is recorded with its content's hash while a recorder lives, and only then.
TEST(IoReadRecorder, RecordsEveryWholeReadWithItsHash) {
    TempDir dir;
    write_file_atomic(dir / "a.txt", std::string_view("alpha"));
    write_file_atomic(dir / "b.txt", std::string_view("beta"));
    (void)read_file(dir / "a.txt");
    std::vector<ReadRecorder::Entry> seen;
    {
        ReadRecorder recorder;
        (void)read_file(dir / "a.txt");
        (void)read_file(dir / "b.txt");
        EXPECT_THROW(read_file(dir / "missing.txt"), adjoint::Error);   // a failed read is not recorded
        EXPECT_THROW(ReadRecorder second, adjoint::Error);
        seen = recorder.entries();
    }
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].path, dir / "a.txt");
    EXPECT_EQ(seen[1].shown, (dir / "b.txt").string());
    EXPECT_NE(seen[0].hash, seen[1].hash);
    ReadRecorder later;   // the first one is gone: a new one starts empty
    EXPECT_TRUE(later.entries().empty());
}
