#!/usr/bin/env bash
# The `ms` column of adjoint-optimize's loss.csv against adjoint-bench's texture iteration, side by side: the bench's
# renderer_texture section and adjoint-optimize on the same scene (tools/bench/texture_5k_256.json), alternately,
# several rounds, so a change in the machine's load hits both; prints one JSON document with both medians and the ratio.
#   tools/bench/loss_csv_vs_bench.sh [--build DIR] [--optimize PROGRAM] [--rounds N] [--iters N] [--lp-threads N]
# (--optimize: another adjoint-optimize, e.g. an older build's, against this build's bench; --lp-threads: sets
# LP_NUM_THREADS for both, 0 runs lavapipe's shaders inline, which a loaded machine's scheduler disturbs less.)
# The samples are pooled over the rounds: the bench's timed iterations (20 a round, after 3 untimed), and loss.csv's
# ms cells after each run's first 3. Besides the medians, the 10th percentiles: on a shared machine stalls from other
# processes inflate medians, the fast end shows what an iteration costs when it runs. loop_ms: per round, the loop's
# wall time per iteration from adjoint-optimize's summary line ("N/N iterations in S s (R it/s)"), host work included;
# host_ms_per_iteration: per round, loop_ms less the mean of the run's ms cells, the loop's work outside the iterations.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build rounds=6 iters=150 optimize=
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --optimize) optimize=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --lp-threads) export LP_NUM_THREADS=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--optimize PROGRAM] [--rounds N] [--iters N] [--lp-threads N]" >&2; exit 2 ;;
    esac
done
bench=$build/tools/adjoint-bench optimize=${optimize:-$build/app/adjoint-optimize}
for p in "$bench" "$optimize"; do [ -x "$p" ] || { echo "$0: $p: not built" >&2; exit 2; }; done
work=$(mktemp -d /tmp/loss-csv-vs-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((i = 0; i < rounds; ++i)); do
    "$bench" --only renderer_texture > "$work/bench_$i.json" 2>/dev/null || true
    "$optimize" --scene "$root/tools/bench/texture_5k_256.json" --out "$work/out_$i" --iters "$iters" --quiet \
        2> "$work/optimize_$i.txt" > /dev/null
    cp "$work/out_$i/loss.csv" "$work/loss_$i.csv"
    rm -rf "$work/out_$i"
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$work" "$rounds" "$iters" "$load_before" "$load_after" "$optimize" "${LP_NUM_THREADS-unset}" <<'PY'
import csv, json, re, statistics, sys
work, rounds, iters, before, after, optimize, lp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:8]
bench, csv_ms, loop_ms, host_ms, bench_rounds, csv_rounds = [], [], [], [], [], []
for i in range(rounds):
    b = json.load(open(f"{work}/bench_{i}.json"))["sections"]["renderer_texture"]["iteration"]["samples_ms"]
    every = [float(r["ms"]) for r in csv.DictReader(open(f"{work}/loss_{i}.csv"))]
    c = every[3:]
    bench += b
    csv_ms += c
    bench_rounds.append(round(statistics.median(b), 2))
    csv_rounds.append(round(statistics.median(c), 2))
    m = re.search(r"iterations in [0-9.]+ s \(([0-9.]+) it/s\)", open(f"{work}/optimize_{i}.txt").read())
    if m:
        loop_ms.append(1000 / float(m.group(1)))
        host_ms.append(loop_ms[-1] - statistics.mean(every))
p10 = lambda xs: statistics.quantiles(xs, n=10)[0]
bm, cm, bp, cp = statistics.median(bench), statistics.median(csv_ms), p10(bench), p10(csv_ms)
print(json.dumps({
    "what": "adjoint-bench --only renderer_texture (the iteration's samples) against loss.csv's ms column of "
            "adjoint-optimize on tools/bench/texture_5k_256.json, alternately, pooled over the rounds",
    "optimize": optimize, "LP_NUM_THREADS": lp, "rounds": rounds, "iterations_per_run": iters, "load_before": before, "load_after": after,
    "bench_samples": len(bench), "loss_csv_samples": len(csv_ms),
    "bench_median_ms": round(bm, 3), "loss_csv_median_ms": round(cm, 3),
    "ratio_loss_csv_over_bench": round(cm / bm, 3),
    "bench_p10_ms": round(bp, 3), "loss_csv_p10_ms": round(cp, 3), "ratio_p10": round(cp / bp, 3),
    "bench_median_ms_per_round": bench_rounds, "loss_csv_median_ms_per_round": csv_rounds,
    "loop_ms_per_round": [round(x, 2) for x in loop_ms],
    "loop_median_ms": round(statistics.median(loop_ms), 3) if loop_ms else None,
    "ratio_loop_over_bench": round(statistics.median(loop_ms) / bm, 3) if loop_ms else None,
    "host_ms_per_iteration_per_round": [round(x, 3) for x in host_ms],
    "within_20_percent": abs(cm / bm - 1) <= 0.2}, indent=2))
PY
