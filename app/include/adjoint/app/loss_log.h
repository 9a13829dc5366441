// loss.csv: one row per optimization iteration, kept whole in memory and rewritten atomically.
//
// Why rewrite rather than append: appending a row and flushing leaves a partial last line when the
// process is killed mid-write, and the contract wants every output to be a complete old or new version.
// The rows are few (thousands at most, ~50 bytes each), so the whole file is rebuilt from memory and
// written through write_file_atomic. To keep the fsync cost bounded however fast the iterations are,
// append() rewrites only when `min_interval_s` has passed since the last write; flush() always writes.
// The optimization loop calls flush() before each checkpoint and at the end, so the file on disk always
// holds every iteration that the latest checkpoint covers, and --resume never finds a gap.
// The text is kept formatted as the rows come (a row costs its own formatting, not the whole file's), and
// write_in_background() moves the rewrites off the optimization loop: an fsync waits for the disk, which
// other processes may keep busy for a second or more, and the loop's iterations must not wait with it.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace adjoint::app {

struct LossRow {
    int64_t iteration = 0;
    double loss = 0.0;
    double image_psnr = 0.0;
    std::optional<double> param_error;  // empty when the target has no truth
    double ms = 0.0;                    // wall time of the iteration, written with 3 decimals
    std::vector<std::optional<double>> errors = {};  // one per error column (empty cells: unknown)
};

class LossLog {
public:
    // The first columns, always in this order; a run with free parameters adds one error column per
    // parameter after them (error_column), each parameter's error in its units.
    static constexpr const char* header = "iteration,loss,image_psnr,param_error,ms";
    // "meshes.bunny.rotation" in degrees -> "meshes.bunny.rotation.error_deg" (a ',' or line end in a
    // path becomes '_', so the header stays one line of cells).
    static std::string error_column(const std::string& path, const char* unit);

    // A new, empty log at `path`; writes the header-only file at once (replacing an older one).
    // `now_s` (seconds, monotonic) can be injected for tests.
    explicit LossLog(std::filesystem::path path, double min_interval_s = 0.25,
                     std::function<double()> now_s = nullptr);
    // The same with error columns after the first five (every row then has as many `errors`).
    LossLog(std::filesystem::path path, std::vector<std::string> error_columns, double min_interval_s = 0.25,
            std::function<double()> now_s = nullptr);

    // For --resume: reads the existing file at `path`, keeps the rows with iteration <= `last_iteration`
    // and drops later ones (they belong to iterations the checkpoint does not cover), and rewrites it.
    // adjoint::Error naming the file when it is missing, malformed (header, row and column named), not in
    // increasing iteration order, or does not reach `last_iteration` (a gap the loss curve cannot have).
    // last_iteration < 0 keeps nothing.
    static LossLog resume(std::filesystem::path path, int64_t last_iteration, double min_interval_s = 0.25,
                          std::function<double()> now_s = nullptr);
    // The same for a run with error columns: the file's must be these (Error naming the file otherwise).
    static LossLog resume(std::filesystem::path path, int64_t last_iteration, std::vector<std::string> error_columns,
                          double min_interval_s = 0.25, std::function<double()> now_s = nullptr);

    LossLog(LossLog&&) noexcept;
    LossLog& operator=(LossLog&&) noexcept;
    ~LossLog();   // a rewrite handed to the background writer is finished; rows not flushed are not written

    // Adds a row (its iteration must be greater than the last row's) and rewrites the file if
    // min_interval_s has passed since the last write.
    void append(const LossRow& row);
    // Rewrites the file now if rows were added since the last write; returns when the file holds every row.
    void flush();
    // From now on append() hands its rewrites to a thread of the log's own and returns without waiting for
    // them (the newest text replaces one still waiting; the file is always a complete version); flush() still
    // returns only when the file holds every row. A failed background write is thrown (adjoint::Error naming
    // the file) by the next append() or flush().
    void write_in_background();

    const std::vector<LossRow>& rows() const { return rows_; }
    const std::filesystem::path& path() const { return path_; }

    // The file's text for these rows (header first, "\n" line ends), and its parser (which names
    // `what`, the file, in its errors). Shortest round-trip number formatting: parse(format(r)) == r
    // except ms, rounded to 3 decimals.
    // The error columns follow the first five (`error_columns` of format; parse returns the file's in
    // *error_columns when given, and accepts any).
    static std::string format(const std::vector<LossRow>& rows, const std::vector<std::string>& error_columns = {});
    static std::vector<LossRow> parse(const std::string& text, const std::string& what,
                                      std::vector<std::string>* error_columns = nullptr);
    const std::vector<std::string>& error_columns() const { return columns_; }

private:
    LossLog(std::filesystem::path path, std::vector<std::string> error_columns, double min_interval_s,
            std::function<double()> now_s, std::vector<LossRow> rows);
    void write();
    struct Writer;

    std::filesystem::path path_;
    double min_interval_s_;
    std::function<double()> now_s_;
    std::vector<std::string> columns_;
    std::vector<LossRow> rows_;
    double last_write_s_ = 0.0;
    bool dirty_ = false;
    std::string text_;                 // format(rows_, columns_), kept up to date by append()
    std::unique_ptr<Writer> writer_;   // set by write_in_background()
};

} // namespace adjoint::app
