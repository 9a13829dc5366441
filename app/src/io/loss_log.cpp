// loss.csv: formatting, parsing, resuming and throttled atomic rewrites of the per-iteration rows.
#include <adjoint/app/atomic_file.h>
#include <adjoint/app/loss_log.h>
#include <adjoint/core/error.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

namespace adjoint::app {
namespace {

double steady_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void put_double(std::string& out, double v) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest text that reads back as v
    out.append(buf, r.ptr);
}

void put_fixed3(std::string& out, double v) {
    char buf[400];
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, 3);
    out.append(buf, r.ptr);
}

std::vector<std::string_view> split(std::string_view line, char sep) {
    std::vector<std::string_view> parts;
    size_t start = 0;
    for (;;) {
        size_t end = line.find(sep, start);
        parts.push_back(line.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
        if (end == std::string_view::npos) return parts;
        start = end + 1;
    }
}

// A cell as it may be quoted in a message: printable ASCII kept, any other byte as \xNN (a damaged file must
// not put raw bytes on the terminal), at most 40 characters of it.
std::string quoted(std::string_view text) {
    static const char hex[] = "0123456789abcdef";
    std::string out;
    for (char c : text.substr(0, 40)) {
        const auto u = uint8_t(c);
        if (u >= 0x20 && u < 0x7f) out += c;
        else out += std::string("\\x") + hex[u >> 4] + hex[u & 15];
    }
    return out + (text.size() > 40 ? "..." : "");
}

std::string header_line(const std::vector<std::string>& error_columns) {
    std::string out = LossLog::header;
    for (const std::string& c : error_columns) out += "," + c;
    return out + '\n';
}

void put_row(std::string& out, const LossRow& row, size_t error_columns) {
    out += std::to_string(row.iteration);
    out += ',';
    put_double(out, row.loss);
    out += ',';
    put_double(out, row.image_psnr);
    out += ',';
    if (row.param_error) put_double(out, *row.param_error);
    out += ',';
    put_fixed3(out, row.ms);
    for (size_t i = 0; i < error_columns; ++i) {
        out += ',';
        if (i < row.errors.size() && row.errors[i]) put_double(out, *row.errors[i]);
    }
    out += '\n';
}

template <typename T>
T parse_number(std::string_view text, const std::string& what, size_t line, const char* column) {
    T value{};
    auto r = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size())
        fail(what, ": line ", line, ": column ", column, ": '", quoted(text), "' is not a number");
    return value;
}

} // namespace

// The background writer: one text waiting (a newer one replaces it: every text holds all rows so far), one
// being written; write_file_atomic from this thread, its failure kept for the owner's next call.
struct LossLog::Writer {
    explicit Writer(std::filesystem::path p) : path(std::move(p)), thread([this] { run(); }) {}
    ~Writer() {
        {
            std::lock_guard lock(m);
            stop = true;
        }
        cv.notify_all();
        thread.join();   // after the text still waiting, if any, is written
    }
    void submit(std::string text) {
        {
            std::lock_guard lock(m);
            pending = std::move(text);
        }
        cv.notify_all();
    }
    // Waits for every submitted text when `all`; rethrows a failed write, marking the owner's text `dirty` again:
    // the text never landed, so the next flush (the one after a failure) must write it.
    void settle(bool all, bool& dirty) {
        std::unique_lock lock(m);
        if (all) cv.wait(lock, [&] { return !pending && !busy; });
        if (error) {
            dirty = true;
            std::rethrow_exception(std::exchange(error, nullptr));
        }
    }

private:
    void run() {
        std::unique_lock lock(m);
        for (;;) {
            cv.wait(lock, [&] { return stop || pending; });
            if (!pending) return;
            std::string text = std::move(*pending);
            pending.reset();
            busy = true;
            lock.unlock();
            std::exception_ptr failed;
            try {
                write_file_atomic(path, text);
            } catch (...) {
                failed = std::current_exception();
            }
            lock.lock();
            busy = false;
            if (failed && !error) error = failed;
            cv.notify_all();
        }
    }

    std::filesystem::path path;
    std::mutex m;
    std::condition_variable cv;
    std::optional<std::string> pending;
    bool busy = false, stop = false;
    std::exception_ptr error;
    std::thread thread;   // last: starts once the members above exist
};

LossLog::LossLog(LossLog&&) noexcept = default;
LossLog& LossLog::operator=(LossLog&&) noexcept = default;
LossLog::~LossLog() = default;

LossLog::LossLog(std::filesystem::path path, double min_interval_s, std::function<double()> now_s)
    : LossLog(std::move(path), {}, min_interval_s, std::move(now_s), {}) {}

LossLog::LossLog(std::filesystem::path path, std::vector<std::string> error_columns, double min_interval_s,
                 std::function<double()> now_s)
    : LossLog(std::move(path), std::move(error_columns), min_interval_s, std::move(now_s), {}) {}

LossLog::LossLog(std::filesystem::path path, std::vector<std::string> error_columns, double min_interval_s,
                 std::function<double()> now_s, std::vector<LossRow> rows)
    : path_(std::move(path)), min_interval_s_(min_interval_s), now_s_(now_s ? std::move(now_s) : steady_seconds),
      columns_(std::move(error_columns)), rows_(std::move(rows)), text_(format(rows_, columns_)) {
    write();
}

std::string LossLog::error_column(const std::string& path, const char* unit) {
    std::string name = path;
    for (char& c : name)
        if (c == ',' || c == '\n' || c == '\r' || c == '"') c = '_';
    return name + ".error_" + unit;
}

LossLog LossLog::resume(std::filesystem::path path, int64_t last_iteration, double min_interval_s,
                        std::function<double()> now_s) {
    return resume(std::move(path), last_iteration, {}, min_interval_s, std::move(now_s));
}

LossLog LossLog::resume(std::filesystem::path path, int64_t last_iteration, std::vector<std::string> error_columns,
                        double min_interval_s, std::function<double()> now_s) {
    std::vector<std::string> file_columns;
    std::vector<LossRow> rows = parse(read_file(path), path.string(), &file_columns);
    if (file_columns != error_columns) {
        std::string want;
        for (const std::string& c : error_columns) want += "," + c;
        fail(path.string(), ": cannot resume: the header is not '", header, want,
             "' (the error columns of this run's free parameters)");
    }
    std::vector<LossRow> kept;
    for (const LossRow& row : rows)
        if (row.iteration <= last_iteration) kept.push_back(row);
    if (last_iteration >= 0 && (kept.empty() || kept.back().iteration != last_iteration))
        fail(path.string(), ": cannot resume: the rows end at ",
             kept.empty() ? std::string("(none)") : "iteration " + std::to_string(kept.back().iteration),
             " but the checkpoint's last is iteration ", last_iteration, " (rows count from 0)");
    return LossLog(std::move(path), std::move(error_columns), min_interval_s, std::move(now_s), std::move(kept));
}

void LossLog::append(const LossRow& row) {
    if (writer_) writer_->settle(false, dirty_);
    if (!rows_.empty() && row.iteration <= rows_.back().iteration)
        fail(path_.string(), ": iteration ", row.iteration, " logged after iteration ", rows_.back().iteration);
    rows_.push_back(row);
    put_row(text_, row, columns_.size());
    dirty_ = true;
    if (now_s_() - last_write_s_ >= min_interval_s_) write();
}

void LossLog::flush() {
    if (dirty_) write();
    if (writer_) writer_->settle(true, dirty_);
}

void LossLog::write_in_background() {
    if (!writer_) writer_ = std::make_unique<Writer>(path_);
}

void LossLog::write() {
    if (writer_) writer_->submit(text_);
    else write_file_atomic(path_, text_);
    last_write_s_ = now_s_();
    dirty_ = false;
}

std::string LossLog::format(const std::vector<LossRow>& rows, const std::vector<std::string>& error_columns) {
    std::string out = header_line(error_columns);
    for (const LossRow& row : rows) put_row(out, row, error_columns.size());
    return out;
}

std::vector<LossRow> LossLog::parse(const std::string& text, const std::string& what,
                                    std::vector<std::string>* error_columns) {
    std::vector<std::string_view> lines = split(text, '\n');
    if (!lines.empty() && lines.back().empty()) lines.pop_back();  // the final line end
    for (std::string_view& line : lines)
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string_view first = header;
    if (lines.empty() || lines[0].substr(0, first.size()) != first ||
        (lines[0].size() > first.size() && lines[0][first.size()] != ','))
        fail(what, ": line 1: expected the header '", header, "' (then any error columns)");
    std::vector<std::string_view> columns = split(lines[0], ',');
    columns.erase(columns.begin(), columns.begin() + 5);
    if (error_columns) error_columns->assign(columns.begin(), columns.end());
    const size_t width = 5 + columns.size();
    std::vector<LossRow> rows;
    for (size_t i = 1; i < lines.size(); ++i) {
        const size_t line = i + 1;
        std::vector<std::string_view> f = split(lines[i], ',');
        if (f.size() != width) fail(what, ": line ", line, ": expected ", width, " columns, found ", f.size());
        LossRow row;
        row.iteration = parse_number<int64_t>(f[0], what, line, "iteration");
        row.loss = parse_number<double>(f[1], what, line, "loss");
        row.image_psnr = parse_number<double>(f[2], what, line, "image_psnr");
        if (!f[3].empty()) row.param_error = parse_number<double>(f[3], what, line, "param_error");
        row.ms = parse_number<double>(f[4], what, line, "ms");
        for (size_t c = 0; c < columns.size(); ++c)
            row.errors.push_back(f[5 + c].empty() ? std::nullopt
                                                  : std::optional<double>(parse_number<double>(
                                                        f[5 + c], what, line, std::string(columns[c]).c_str())));
        // Rows are every iteration from 0 in order: a gap (a row lost or cut out) would carry into a resumed run.
        const int64_t expected = rows.empty() ? 0 : rows.back().iteration + 1;
        if (row.iteration != expected)
            fail(what, ": line ", line, ": iteration ", row.iteration, " where iteration ", expected, " belongs");
        // A run stops at a loss that is not finite, before its row: NaN is damage. (PSNR may be inf: no error.)
        if (!std::isfinite(row.loss) || row.loss < 0 || std::isnan(row.image_psnr) || !std::isfinite(row.ms) ||
            (row.param_error && std::isnan(*row.param_error)) ||
            std::any_of(row.errors.begin(), row.errors.end(), [](const auto& e) { return e && std::isnan(*e); }))
            fail(what, ": line ", line, ": a value that is not a number, or a loss that is not finite and >= 0");
        rows.push_back(row);
    }
    return rows;
}

} // namespace adjoint::app
