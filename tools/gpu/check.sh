#!/usr/bin/env bash
# The prepared GPU check: `--pack` (here, after a build) puts the build's test programs, programs and bench,
# stripped, with the few runtime libraries and the Vulkan validation layer they need, into gpu-pack.tar.xz;
# without it (on a machine with a Vulkan GPU, no network, no packages: the repository's working tree and the
# pack are all it has) it unpacks them, runs the test suite and the bench, and writes what they said to $OUT
# (summary.txt, a log per test shard, bench/<section>.json).
#
#   tools/gpu/check.sh --pack                     # here; then carry gpu-pack.tar.xz to the GPU machine
#   tools/gpu/check.sh [--budget SECONDS] [--filter GTEST_FILTER] [--bench-only]   # there, in the repo root
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${ADJOINT_BUILD_DIR:-$root/build}"
pack="$root/gpu-pack.tar.xz"
cd "$root"

# The test programs that need nothing but the GPU (the studio's need a display, the package's and Python's a
# compiler and an interpreter: they stay here), the programs the CLI tests run, and the bench.
programs=(tests/test_ir tests/test_compile tests/test_vulkan tests/test_codegen tests/test_dsl tests/test_autodiff
          tests/test_runtime tests/test_app app/adjoint-optimize app/adjoint-render tools/adjoint-bench)

if [ "${1:-}" = --pack ]; then
    stage="$(mktemp -d)"
    trap 'rm -rf "$stage"' EXIT
    mkdir -p "$stage/build" "$stage/gpu-lib" "$stage/gpu-layer"
    for p in "${programs[@]}"; do
        [ -x "$build/$p" ] || { echo "adjoint: error: $build/$p is missing: build first (tools/setup.sh)" >&2; exit 2; }
        mkdir -p "$stage/build/$(dirname "$p")"
        strip -o "$stage/build/$p" "$build/$p"
    done
    # GLVND's dispatch libraries: NVIDIA's Vulkan driver (libGLX_nvidia.so.0) found no vkCreateInstance on an
    # H200 machine whose image lacked them, and did with them. They are tiny and vendor-neutral.
    glvnd=()
    for l in libGLdispatch.so.0 libGLX.so.0 libEGL.so.1 libOpenGL.so.0 libGL.so.1; do
        f="/usr/lib/x86_64-linux-gnu/$l"
        [ -e "$f" ] && glvnd+=("$f")
    done
    # Every shared library they load but the C runtime's own (the GPU machine's glibc runs them).
    { for p in "${programs[@]}"; do ldd "$build/$p"; done; for l in "${glvnd[@]}"; do ldd "$l"; done; } |
        awk '$3 ~ /^\// {print $3}' | sort -u |
        grep -Ev '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' | while read -r lib; do
        cp -L "$lib" "$stage/gpu-lib/"
    done
    for l in "${glvnd[@]}"; do cp -L "$l" "$stage/gpu-lib/"; done
    # The validation layer, with its manifest pointing next to itself (the tests fail on any message).
    layer=/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json
    cp -L /usr/lib/x86_64-linux-gnu/libVkLayer_khronos_validation.so "$stage/gpu-layer/"
    sed 's|"library_path": *"[^"]*"|"library_path": "./libVkLayer_khronos_validation.so"|' "$layer" \
        > "$stage/gpu-layer/VkLayer_khronos_validation.json"
    # The tests find the sources and programs by the absolute paths this build was made at.
    printf '%s\n%s\n' "$root" "$build" > "$stage/gpu-paths.txt"
    git -C "$root" rev-parse HEAD > "$stage/gpu-commit.txt"
    tar -C "$stage" -cf - . | xz -T0 -6 > "$pack.tmp"
    mv "$pack.tmp" "$pack"
    echo "adjoint: $pack: $(du -h "$pack" | cut -f1) (commit $(cat "$stage/gpu-commit.txt"))"
    exit 0
fi

budget=540 filter='*' bench_only=0
while [ $# -gt 0 ]; do
    case "$1" in
        --budget) budget="$2"; shift 2 ;;
        --filter) filter="$2"; shift 2 ;;
        --bench-only) bench_only=1; shift ;;
        *) echo "adjoint: error: unknown option $1 (--pack, --budget S, --filter F, --bench-only)" >&2; exit 2 ;;
    esac
done
[ -f "$pack" ] || { echo "adjoint: error: $pack is missing: make it with tools/gpu/check.sh --pack" >&2; exit 2; }
out="${OUT:-$root/gpu-out}"
mkdir -p "$out"
start=$(date +%s)
left() { echo $((budget - ($(date +%s) - start))); }

# Unpacked under a folder of its own; the build's recorded paths are made to lead here.
unpacked="$root/gpu-unpacked"
rm -rf "$unpacked"
mkdir -p "$unpacked"
xz -dc "$pack" | tar -C "$unpacked" -xf -
{ read -r src; read -r bin; } < "$unpacked/gpu-paths.txt"
link() {   # link <recorded path> <here>: the recorded path leads here (a link of an earlier check is renewed)
    [ "$(realpath -m "$1")" = "$(realpath -m "$2")" ] && return 0
    [ -L "$1" ] && rm "$1"
    if [ -e "$1" ]; then
        echo "adjoint: error: $1 exists on this machine (a build or sources of its own): run the check in a" \
             "copy of the repository whose build/ folder is not a build, on a machine without $1" >&2
        exit 2
    fi
    mkdir -p "$(dirname "$1")"
    ln -s "$2" "$1"
}
link "$src" "$root"
case "$bin/" in
    "$src"/*) # the build inside the sources (build/): that folder here leads to the unpacked one
        link "$root/${bin#"$src"/}" "$unpacked/build" ;;
    *) link "$bin" "$unpacked/build" ;;
esac
export LD_LIBRARY_PATH="$unpacked/gpu-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export VK_LAYER_PATH="$unpacked/gpu-layer" ADJOINT_VALIDATION=1 ADJOINT_CACHE_DIR="$out/cache"
# Death tests re-run the test program rather than fork a process that holds a GPU driver's threads (a shard of
# test_app hung at one on an H200).
export GTEST_DEATH_TEST_STYLE=threadsafe

{
    echo "commit $(cat "$unpacked/gpu-commit.txt"), checked $(date -u +%FT%TZ) on $(uname -n): $(nproc) cores"
    "$bin/tools/adjoint-bench" --quick --only tiny_dispatches 2> /dev/null | grep -m1 '"device"' || true
} | tee "$out/summary.txt"

status=0
if [ "$bench_only" = 0 ]; then
    # Every test program at once, the large ones split in shards, each with a share of the budget.
    shards=$(( $(nproc) > 2 ? $(nproc) / 2 : 1 ))
    pids=()
    for t in "${programs[@]}"; do
        case "$t" in tests/*) ;; *) continue ;; esac
        n=1
        case "$t" in tests/test_app|tests/test_runtime|tests/test_autodiff) n=$shards ;; esac
        for ((i = 0; i < n; ++i)); do
            log="$out/$(basename "$t").$i.log"
            (cd "$bin/tests" && GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$i timeout $(( $(left) * 2 / 3 )) \
                "$bin/$t" --gtest_filter="$filter" --gtest_brief=1 > "$log" 2>&1) &
            pids+=($!)
        done
    done
    for p in "${pids[@]}"; do wait "$p" || status=1; done
    {
        grep -h '^\[  PASSED  \] [0-9]' "$out"/test_*.log | awk '{s += $4} END {print "tests passed:", s + 0}'
        grep -h '^\[  FAILED  \] [A-Za-z_]' "$out"/test_*.log | sort -u | sed 's/^/failed: /' || true
        for log in "$out"/test_*.log; do   # a shard that never finished (timed out or crashed)
            grep -q '^\[==========\] [0-9]* tests\? from .* ran' "$log" || echo "unfinished: $(basename "$log")"
        done
        echo "test time: $(( $(date +%s) - start )) s"
    } | tee -a "$out/summary.txt"
fi
# The bench section by section (each its own JSON, so that what finished survives a timeout), the cheap ones
# first, each at its full sizes while there is time and --quick when little is left.
mkdir -p "$out/bench"
for section in elementwise tiny_dispatches compile autodiff autodiff_loop reduce renderer shadows visibility; do
    if [ "$(left)" -le 20 ]; then
        echo "bench $section: not run, no time left" | tee -a "$out/summary.txt"
        continue
    fi
    mode=""
    [ "$(left)" -lt 120 ] && mode=--quick
    # Without the validation layer: it costs time, and the tests above ran with it.
    if ADJOINT_VALIDATION=0 timeout "$(left)" "$bin/tools/adjoint-bench" $mode --only "$section" > "$out/bench/$section.json.tmp" \
        2>> "$out/bench.log"; then
        mv "$out/bench/$section.json.tmp" "$out/bench/$section.json"
        echo "bench $section${mode:+ ($mode)}: $out/bench/$section.json" | tee -a "$out/summary.txt"
    else
        rm -f "$out/bench/$section.json.tmp"
        echo "bench $section: did not finish (see bench.log)" | tee -a "$out/summary.txt"
        status=1
    fi
done
echo "total: $(( $(date +%s) - start )) s, status $status" | tee -a "$out/summary.txt"
exit $status
