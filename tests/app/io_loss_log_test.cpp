// loss.csv: exact text, round trips, throttled atomic rewrites, resume truncation and named parse errors.
#include "app/io_test_util.h"

#include <adjoint/app/atomic_file.h>
#include <adjoint/app/loss_log.h>

#include <cmath>
#include <limits>
#include <random>

using namespace adjoint::app;
using adjoint::app::test::error_of;
using adjoint::app::test::TempDir;

namespace {
LossRow row(int64_t it, double loss, double psnr, std::optional<double> err, double ms) { return {it, loss, psnr, err, ms}; }
bool same(const LossRow& a, const LossRow& b) {
    return a.iteration == b.iteration && a.loss == b.loss && a.image_psnr == b.image_psnr && a.param_error == b.param_error &&
           a.ms == b.ms;
}
} // namespace

TEST(IoLossLog, FormatIsTheContractsCsv) {
    std::vector<LossRow> rows = {row(0, 0.5, 20, std::nullopt, 12.3456), row(1, 0.25, INFINITY, 0.125, 3),
                                 row(2, 1e-7, 31.5, 2.5e-3, 0.0004)};
    EXPECT_EQ(LossLog::format(rows), "iteration,loss,image_psnr,param_error,ms\n"
                                     "0,0.5,20,,12.346\n"
                                     "1,0.25,inf,0.125,3.000\n"
                                     "2,1e-07,31.5,0.0025,0.000\n");
}

TEST(IoLossLog, ParseInvertsFormatExactly) {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-10, 10);
    std::vector<LossRow> rows;
    for (int i = 0; i < 500; ++i) {
        double ms = std::round(std::abs(u(rng)) * 1000.0) / 1000.0;
        std::optional<double> err;
        if (i % 3) err = std::pow(10.0, u(rng));
        rows.push_back(row(i, std::pow(10.0, u(rng)), u(rng) * 5, err, ms));
    }
    std::vector<LossRow> back = LossLog::parse(LossLog::format(rows), "mem");
    ASSERT_EQ(back.size(), rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
        // ms is written with 3 decimals: compare its text; everything else exactly.
        LossRow expected = rows[i];
        expected.ms = back[i].ms;
        EXPECT_TRUE(same(back[i], expected)) << i;
        EXPECT_NEAR(back[i].ms, rows[i].ms, 5e-4);
    }
    EXPECT_EQ(LossLog::format(back), LossLog::format(rows));
}

TEST(IoLossLog, EveryRowIsOnDiskWhenTheIntervalIsZero) {
    TempDir dir;
    LossLog log(dir / "loss.csv", 0.0);
    EXPECT_EQ(read_file(dir / "loss.csv"), "iteration,loss,image_psnr,param_error,ms\n");
    log.append(row(0, 1, 10, 0.5, 1));
    EXPECT_EQ(read_file(dir / "loss.csv"), "iteration,loss,image_psnr,param_error,ms\n0,1,10,0.5,1.000\n");
    log.append(row(1, 0.5, 11, std::nullopt, 2));
    EXPECT_EQ(read_file(dir / "loss.csv"), LossLog::format(log.rows()));
    EXPECT_EQ(dir.names(), std::vector<std::string>{"loss.csv"});
}

TEST(IoLossLog, RewritesAreThrottledAndFlushWritesTheRest) {
    TempDir dir;
    double now = 0.0;
    LossLog log(dir / "loss.csv", 1.0, [&] { return now; });
    now = 0.5;
    log.append(row(0, 1, 10, std::nullopt, 1));
    EXPECT_EQ(LossLog::parse(read_file(dir / "loss.csv"), "f").size(), 0u);  // too soon
    now = 1.0;
    log.append(row(1, 1, 10, std::nullopt, 1));
    EXPECT_EQ(LossLog::parse(read_file(dir / "loss.csv"), "f").size(), 2u);  // a second after the last write
    now = 1.2;
    log.append(row(2, 1, 10, std::nullopt, 1));
    EXPECT_EQ(LossLog::parse(read_file(dir / "loss.csv"), "f").size(), 2u);
    log.flush();
    EXPECT_EQ(LossLog::parse(read_file(dir / "loss.csv"), "f").size(), 3u);
}

TEST(IoLossLog, ResumeKeepsRowsThroughTheCheckpointAndDropsLaterOnes) {
    TempDir dir;
    {
        LossLog log(dir / "loss.csv", 0.0);
        for (int i = 0; i < 10; ++i) log.append(row(i, 1.0 / (i + 1), 10 + i, std::nullopt, 1));
    }
    LossLog resumed = LossLog::resume(dir / "loss.csv", 4, 0.0);
    ASSERT_EQ(resumed.rows().size(), 5u);
    EXPECT_EQ(resumed.rows().back().iteration, 4);
    EXPECT_EQ(LossLog::parse(read_file(dir / "loss.csv"), "f").size(), 5u);  // the dropped rows are gone on disk too
    resumed.append(row(5, 0.1, 20, std::nullopt, 1));
    EXPECT_EQ(LossLog::parse(read_file(dir / "loss.csv"), "f").back().iteration, 5);

    EXPECT_EQ(error_of([&] { LossLog::resume(dir / "loss.csv", 12); }),
              (dir / "loss.csv").string() +
                  ": cannot resume: the rows end at iteration 5 but the checkpoint's last is iteration 12 (rows count "
                  "from 0)");
    EXPECT_EQ(LossLog::resume(dir / "loss.csv", -1).rows().size(), 0u);
    EXPECT_NE(error_of([&] { LossLog::resume(dir / "missing.csv", 3); }).find("missing.csv: No such file"), std::string::npos);
}

TEST(IoLossLog, ParseErrorsNameLineAndColumn) {
    EXPECT_EQ(error_of([] { LossLog::parse("iteration,loss\n", "loss.csv"); }),
              "loss.csv: line 1: expected the header 'iteration,loss,image_psnr,param_error,ms' (then any error columns)");
    EXPECT_EQ(error_of([] { LossLog::parse("iteration,loss,image_psnr,param_error,msx\n", "loss.csv"); }),
              "loss.csv: line 1: expected the header 'iteration,loss,image_psnr,param_error,ms' (then any error columns)");
    const std::string h = "iteration,loss,image_psnr,param_error,ms\n";
    EXPECT_EQ(error_of([&] { LossLog::parse(h + "0,1,2,,3\n1,2,3\n", "loss.csv"); }),
              "loss.csv: line 3: expected 5 columns, found 3");
    EXPECT_EQ(error_of([&] { LossLog::parse(h + "0,abc,2,,3\n", "loss.csv"); }),
              "loss.csv: line 2: column loss: 'abc' is not a number");
    EXPECT_EQ(error_of([&] { LossLog::parse(h + "0,1,2,,3\n0,1,2,,3\n", "loss.csv"); }),
              "loss.csv: line 3: iteration 0 where iteration 1 belongs");
    // Every iteration from 0, in order: a row cut out or a file that starts late is damage, as is a NaN.
    EXPECT_EQ(error_of([&] { LossLog::parse(h + "0,1,2,,3\n2,1,2,,3\n", "loss.csv"); }),
              "loss.csv: line 3: iteration 2 where iteration 1 belongs");
    EXPECT_EQ(error_of([&] { LossLog::parse(h + "1,1,2,,3\n", "loss.csv"); }),
              "loss.csv: line 2: iteration 1 where iteration 0 belongs");
    for (const char* bad : {"0,nan,2,,3\n", "0,inf,2,,3\n", "0,-1,2,,3\n", "0,1,nan,,3\n", "0,1,2,nan,3\n"})
        EXPECT_EQ(error_of([&] { LossLog::parse(h + bad, "loss.csv"); }),
                  "loss.csv: line 2: a value that is not a number, or a loss that is not finite and >= 0") << bad;
    EXPECT_EQ(LossLog::parse(h + "0,0,inf,,3\n", "loss.csv").size(), 1u);   // an exact match's PSNR
    EXPECT_EQ(error_of([&] { LossLog::parse(h + "0,1,2,,3x\n", "loss.csv"); }),
              "loss.csv: line 2: column ms: '3x' is not a number");
    // A damaged file's bytes are not copied raw into the message (issue 21: stderr was not even UTF-8).
    EXPECT_EQ(error_of([&] { LossLog::parse(h + "0,0.5\x12\xe6\xab,2,,3\n", "loss.csv"); }),
              "loss.csv: line 2: column loss: '0.5\\x12\\xe6\\xab' is not a number");
    EXPECT_EQ(error_of([&] { LossLog::parse(h + "0," + std::string(50, '7') + "z,2,,3\n", "loss.csv"); }),
              "loss.csv: line 2: column loss: '" + std::string(40, '7') + "...' is not a number");
    EXPECT_EQ(LossLog::parse(h + "0,1,2,,3\r\n", "loss.csv").size(), 1u);  // CRLF from an editor is fine
}

TEST(IoLossLog, AppendRefusesIterationsOutOfOrder) {
    TempDir dir;
    LossLog log(dir / "loss.csv", 0.0);
    log.append(row(3, 1, 1, std::nullopt, 1));
    EXPECT_NE(error_of([&] { log.append(row(3, 1, 1, std::nullopt, 1)); }).find("iteration 3 logged after iteration 3"),
              std::string::npos);
}

// One error column per free parameter after the first five: its path and unit in the header, empty cells
// where the error is unknown; parse returns the columns; resume refuses a file with other columns.
TEST(IoLossLog, ErrorColumnsFollowTheFirstFive) {
    const std::vector<std::string> columns = {LossLog::error_column("meshes.bunny.rotation", "deg"),
                                              LossLog::error_column("lights.a,b.position", "scene_units")};
    EXPECT_EQ(columns[0], "meshes.bunny.rotation.error_deg");
    EXPECT_EQ(columns[1], "lights.a_b.position.error_scene_units");
    LossRow a = row(0, 0.5, 20, 0.25, 1), b = row(1, 0.25, 21, 0.125, 2);
    a.errors = {12.5, std::nullopt};
    b.errors = {1.25, 0.0625};
    const std::string text = LossLog::format({a, b}, columns);
    EXPECT_EQ(text, "iteration,loss,image_psnr,param_error,ms,meshes.bunny.rotation.error_deg,"
                    "lights.a_b.position.error_scene_units\n"
                    "0,0.5,20,0.25,1.000,12.5,\n"
                    "1,0.25,21,0.125,2.000,1.25,0.0625\n");
    std::vector<std::string> back_columns;
    const auto back = LossLog::parse(text, "f", &back_columns);
    EXPECT_EQ(back_columns, columns);
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0].errors, a.errors);
    EXPECT_EQ(back[1].errors, b.errors);
    EXPECT_EQ(error_of([&] { LossLog::parse(text + "2,1,1,,1,1\n", "loss.csv"); }), "loss.csv: line 4: expected 7 columns, found 6");
    EXPECT_EQ(error_of([&] { LossLog::parse(text + "2,1,1,,1,x,1\n", "loss.csv"); }),
              "loss.csv: line 4: column meshes.bunny.rotation.error_deg: 'x' is not a number");

    TempDir dir;
    {
        LossLog log(dir / "loss.csv", columns, 0.0);
        log.append(a);
        log.append(b);
    }
    EXPECT_EQ(read_file(dir / "loss.csv"), text);
    EXPECT_EQ(LossLog::resume(dir / "loss.csv", 1, columns, 0.0).rows().size(), 2u);
    EXPECT_EQ(error_of([&] { LossLog::resume(dir / "loss.csv", 1, 0.0); }),
              (dir / "loss.csv").string() + ": cannot resume: the header is not 'iteration,loss,image_psnr,param_error,ms' "
                                            "(the error columns of this run's free parameters)");
}

// write_in_background (the optimization loop's mode): every version a reader finds on disk while rows come is
// complete and a prefix of the rows; after flush() the file is exactly format(rows), no temporary file left.
TEST(IoLossLog, BackgroundRewritesAreCompletePrefixesAndFlushWaitsForThem) {
    const std::vector<std::string> columns = {LossLog::error_column("materials.m.albedo", "relative")};
    TempDir dir;
    LossLog log(dir / "loss.csv", columns, 0.0);
    log.write_in_background();
    std::vector<LossRow> rows;
    for (int i = 0; i < 300; ++i) {
        LossRow r = row(i, 1.0 / (i + 1), 10 + 0.01 * i, i % 2 ? std::optional<double>(0.5 / (i + 1)) : std::nullopt,
                        0.125 * i);
        r.errors = {i % 3 ? std::optional<double>(0.25 * i) : std::nullopt};
        log.append(r);
        rows.push_back(r);
        if (i % 10 == 0) {   // a reader meanwhile: a whole file whose rows are the first ones appended
            std::vector<std::string> file_columns;
            const std::vector<LossRow> seen = LossLog::parse(read_file(dir / "loss.csv"), "loss.csv", &file_columns);
            EXPECT_EQ(file_columns, columns);
            ASSERT_LE(seen.size(), rows.size());
            EXPECT_EQ(LossLog::format(seen, columns), LossLog::format({rows.begin(), rows.begin() + seen.size()}, columns));
        }
    }
    log.flush();
    EXPECT_EQ(read_file(dir / "loss.csv"), LossLog::format(rows, columns));
    EXPECT_EQ(dir.names(), std::vector<std::string>{"loss.csv"});
    // Throttled (an injected clock that never moves): nothing after the first row until flush().
    TempDir dir2;
    LossLog slow(dir2 / "loss.csv", columns, 10.0, [] { return 100.0; });
    slow.write_in_background();
    slow.append(rows[0]);
    slow.append(rows[1]);
    slow.flush();
    EXPECT_EQ(read_file(dir2 / "loss.csv"), LossLog::format({rows[0], rows[1]}, columns));
}

// A background write that fails (its folder is gone) is reported, naming the file, by the next flush(); the
// flush after it writes the text again (it had counted as written: a run's flush after a failure of the log's
// own write left loss.csv as it was before).
TEST(IoLossLog, AFailedBackgroundWriteIsThrownByTheNextFlushAndWrittenByTheOneAfter) {
    TempDir dir;
    const std::filesystem::path sub = dir / "out";
    std::filesystem::create_directory(sub);
    LossLog log(sub / "loss.csv", 0.0);
    log.write_in_background();
    std::filesystem::remove_all(sub);
    log.append(row(0, 1, 10, std::nullopt, 1));
    const std::string message = error_of([&] { log.flush(); });
    EXPECT_NE(message.find((sub / "loss.csv").string()), std::string::npos) << message;
    std::filesystem::create_directory(sub);
    EXPECT_NO_THROW(log.flush());
    EXPECT_EQ(LossLog::parse(read_file(sub / "loss.csv"), "f").size(), 1u);
}
