// Atomic file output (temporary file, fsync, rename) and the plain file helpers the outputs share.
#include <adjoint/app/atomic_file.h>
#include <adjoint/core/error.h>
#include <adjoint/core/hash.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <fcntl.h>
#include <sys/file.h>
#include <memory>
#include <mutex>
#include <streambuf>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace adjoint::app {
namespace {

std::string reason(int err) { return std::generic_category().message(err); }

// A stream buffer over a file descriptor that remembers the first write error (errno), so the caller
// can name the real cause (ENOSPC, EIO, ...) rather than a stream's "bad bit".
class FdBuf : public std::streambuf {
public:
    explicit FdBuf(int fd) : fd_(fd), buf_(new char[buffer_size]) { setp(buf_.get(), buf_.get() + buffer_size); }
    int error() const { return error_; }

protected:
    int_type overflow(int_type ch) override {
        if (!drain()) return traits_type::eof();
        if (!traits_type::eq_int_type(ch, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(ch);
            pbump(1);
        }
        return traits_type::not_eof(ch);
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        if (n <= epptr() - pptr()) {
            traits_type::copy(pptr(), s, size_t(n));
            pbump(int(n));
            return n;
        }
        // Large writes (a PNG, an array) bypass the buffer.
        if (!drain() || !write_all(s, size_t(n))) return 0;
        return n;
    }
    int sync() override { return drain() ? 0 : -1; }

private:
    bool drain() {
        size_t n = size_t(pptr() - pbase());
        if (n > 0 && !write_all(pbase(), n)) return false;
        setp(buf_.get(), buf_.get() + buffer_size);
        return true;
    }
    bool write_all(const char* p, size_t n) {
        if (error_ != 0) return false;
        while (n > 0) {
            ssize_t w = ::write(fd_, p, n);
            if (w < 0) {
                if (errno == EINTR) continue;
                error_ = errno;
                return false;
            }
            p += w;
            n -= size_t(w);
        }
        return true;
    }

    static constexpr size_t buffer_size = size_t(1) << 16;
    int fd_;
    int error_ = 0;
    std::unique_ptr<char[]> buf_;  // on the heap: callers may run on small thread stacks
};

std::atomic<uint64_t> temp_counter{0};

// The active ReadRecorder's entries (null when none records); the loader may read from several threads.
std::mutex recorder_mutex;
std::vector<ReadRecorder::Entry>* recorded = nullptr;

void record_read(const std::filesystem::path& path, const std::string& shown, const std::string& content) {
    std::lock_guard<std::mutex> lock(recorder_mutex);
    if (recorded) recorded->push_back({path, shown, hash_bytes(content.data(), content.size())});
}

std::filesystem::path temp_name_for(const std::filesystem::path& path) {
    // Hidden, in the same folder (rename must not cross file systems), unique per process and call.
    std::string name = "." + path.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" +
                       std::to_string(temp_counter.fetch_add(1));
    return path.parent_path() / name;
}

// Makes the rename itself durable; a folder that cannot be opened or synced (some file systems refuse)
// does not make the write fail: the file's content is already synced and the rename is atomic.
void sync_folder(const std::filesystem::path& path) {
    std::filesystem::path dir = path.parent_path();
    if (dir.empty()) dir = ".";
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    (void)::fsync(fd);
    ::close(fd);
}

} // namespace

void write_file_atomic(const std::filesystem::path& path, const std::function<void(std::ostream&)>& writer) {
    if (path.filename().empty()) fail("cannot write '", path.string(), "': not a file name");
    const std::filesystem::path temp = temp_name_for(path);
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) fail("cannot write ", path.string(), ": ", reason(errno));
    try {
        FdBuf buf(fd);
        std::ostream os(&buf);
        writer(os);
        os.flush();
        if (buf.error() != 0) fail("cannot write ", path.string(), ": ", reason(buf.error()));
        if (!os) fail("cannot write ", path.string(), ": the output stream failed");
        if (::fsync(fd) != 0) fail("cannot write ", path.string(), ": ", reason(errno));
        check_replaceable(path);   // checked again last: something may have been put there since the start
        int closed = ::close(fd);
        fd = -1;
        if (closed != 0) fail("cannot write ", path.string(), ": ", reason(errno));
        if (::rename(temp.c_str(), path.c_str()) != 0) fail("cannot write ", path.string(), ": ", reason(errno));
    } catch (...) {
        if (fd >= 0) ::close(fd);
        ::unlink(temp.c_str());
        throw;
    }
    sync_folder(path);
}

void write_file_atomic(const std::filesystem::path& path, std::string_view bytes) {
    write_file_atomic(path, [&](std::ostream& os) { os.write(bytes.data(), std::streamsize(bytes.size())); });
}

void check_replaceable(const std::filesystem::path& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return;   // nothing there (or nothing we can see): a new file
    if (S_ISLNK(st.st_mode)) fail("cannot write ", path.string(), ": it is a symbolic link");
    if (S_ISDIR(st.st_mode)) fail("cannot write ", path.string(), ": it is a folder");
    if (!S_ISREG(st.st_mode)) fail("cannot write ", path.string(), ": it is not a regular file");
}

void check_writable(const std::filesystem::path& path) {
    if (path.filename().empty()) fail("cannot write '", path.string(), "': not a file name");
    check_replaceable(path);
    // The temporary file write_file_atomic would create, created and removed at once.
    const std::filesystem::path temp = temp_name_for(path);
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) fail("cannot write ", path.string(), ": ", reason(errno));
    ::close(fd);
    ::unlink(temp.c_str());
}

std::optional<std::string> try_read_file(const std::filesystem::path& path, const std::string& shown,
                                         std::string& why) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below like any non-regular file.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        why = "cannot read " + shown + ": " + reason(errno);
        return std::nullopt;
    }
    struct stat st {};
    std::optional<std::string> result;
    if (::fstat(fd, &st) != 0) {
        why = "cannot read " + shown + ": " + reason(errno);
    } else if (S_ISDIR(st.st_mode)) {
        why = "cannot read " + shown + ": " + reason(EISDIR);
    } else if (!S_ISREG(st.st_mode)) {
        why = shown + " is not a regular file";
    } else if (uint64_t(st.st_size) > max_read_file_size) {
        why = shown + " is larger than 1 GiB, the most a file read whole may be";
    } else {
        std::string content;
        content.reserve(size_t(st.st_size));
        std::vector<char> buf(size_t(1) << 16);
        for (;;) {
            ssize_t n = ::read(fd, buf.data(), buf.size());
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                why = "cannot read " + shown + ": " + reason(errno);
                break;
            }
            if (n == 0) {
                record_read(path, shown, content);
                result = std::move(content);
                break;
            }
            content.append(buf.data(), size_t(n));
            if (content.size() > max_read_file_size) {   // it grew while being read
                why = shown + " is larger than 1 GiB, the most a file read whole may be";
                break;
            }
        }
    }
    ::close(fd);
    return result;
}

std::string lowercase_extension(const std::filesystem::path& path) {
    std::string ext = path.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return ext;
}

std::string read_file(const std::filesystem::path& path) {
    std::string why;
    std::optional<std::string> content = try_read_file(path, path.string(), why);
    if (!content) fail(why);
    return std::move(*content);
}

FolderLock::FolderLock(const std::filesystem::path& dir) {
    const std::filesystem::path file = dir / file_name;
    // O_NOFOLLOW: a symlink put in the lock file's place is not followed (and not written through).
    fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd_ < 0) fail("cannot lock ", dir.string(), ": cannot open ", file.string(), ": ", reason(errno));
    int r = 0;
    while ((r = ::flock(fd_, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {}
    if (r != 0) {
        const int why = errno;
        ::close(fd_);
        fd_ = -1;
        if (why == EWOULDBLOCK)
            fail(dir.string(), " is in use by another run (it holds ", file.string(), "); wait for it or choose another folder");
        fail("cannot lock ", dir.string(), ": ", reason(why));
    }
}

FolderLock::~FolderLock() {
    if (fd_ >= 0) ::close(fd_);   // closing the only descriptor releases the flock
}

ReadRecorder::ReadRecorder() {
    std::lock_guard<std::mutex> lock(recorder_mutex);
    if (recorded) fail("ReadRecorder: a recorder is already active");
    recorded = new std::vector<Entry>();
}

ReadRecorder::~ReadRecorder() {
    std::lock_guard<std::mutex> lock(recorder_mutex);
    delete recorded;
    recorded = nullptr;
}

std::vector<ReadRecorder::Entry> ReadRecorder::entries() const {
    std::lock_guard<std::mutex> lock(recorder_mutex);
    return *recorded;
}

void ensure_directory(const std::filesystem::path& dir) {
    if (dir.empty()) fail("the folder's name is empty");
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) fail("cannot create folder ", dir.string(), ": ", ec.message());
    if (!std::filesystem::is_directory(dir, ec)) fail("cannot create folder ", dir.string(), ": a file of that name exists");
}

} // namespace adjoint::app
