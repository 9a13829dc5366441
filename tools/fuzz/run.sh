#!/usr/bin/env bash
# Builds the libFuzzer targets (clang 16, ASan + UBSan) in build-fuzz and runs each on its corpus.
#
#   tools/fuzz/run.sh [--runs N | --seconds S] [TARGET...]     (default: --seconds 20, every target)
#
# TARGET is a name below (scene_json, obj_mtl, ...). Seeds: tools/fuzz/corpus/<target>; what a run adds goes to
# build-fuzz/corpus/<target>, a finding to build-fuzz/findings/ (crash-, leak-, timeout-, oom-<hash>). Any
# finding, a crash, a sanitizer report, a leak, an input slower than 10 s or over 2 GB, fails the script.
# Each target prints its executions and exec/s at the end (libFuzzer's final stats).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
"$here/tools/setup.sh" --fuzz --packages-only   # clang 16, libFuzzer, llvm-symbolizer
build="${ADJOINT_FUZZ_BUILD_DIR:-$here/build-fuzz}"
limit=(-max_total_time=20)
if [ "${1:-}" = --runs ]; then limit=(-runs="$2"); shift 2
elif [ "${1:-}" = --seconds ]; then limit=(-max_total_time="$2"); shift 2; fi
# Each target's longest input: room for the seeds and their mutations, short enough to stay fast.
declare -A max_len=([scene_json]=8192 [obj_mtl]=8192 [image]=16384 [params_json]=4096 [checkpoint]=4096
                    [gltf]=65536 [ply]=16384 [views]=16384)
declare -A dict=([scene_json]=json [params_json]=json [gltf]=json [views]=json [obj_mtl]=obj)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(scene_json obj_mtl image params_json checkpoint gltf ply views)

launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# CMake would take ld.lld where one is installed (lld is not in setup's list): binutils' ld, as the compiler
# driver links with anyway. llvm-16 gives the archiver and the symbolizer of the sanitizers' stacks.
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-16 \
      -DCMAKE_CXX_COMPILER=clang++-16 -DCMAKE_LINKER=/usr/bin/ld "${launcher[@]}" -DADJOINT_FUZZ=ON \
      -DADJOINT_BUILD_TESTS=OFF -DADJOINT_BUILD_TOOLS=OFF -DADJOINT_BUILD_PYTHON=OFF > /dev/null
cmake --build "$build" -j"$(nproc)" --target "${targets[@]/#/fuzz_}"

failed=()
mkdir -p "$build/findings"
for t in "${targets[@]}"; do
  [ -n "${max_len[$t]:-}" ] || { echo "fuzz: no target $t" >&2; exit 2; }
  mkdir -p "$build/corpus/$t"
  extra=()
  [ -z "${dict[$t]:-}" ] || extra=(-dict="$here/tools/fuzz/${dict[$t]}.dict")
  echo "=== fuzz_$t ${limit[*]}"
  start=$SECONDS
  if ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
     ASAN_SYMBOLIZER_PATH=/usr/bin/llvm-symbolizer-16 UBSAN_SYMBOLIZER_PATH=/usr/bin/llvm-symbolizer-16 \
     "$build/tools/fuzz/fuzz_$t" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len="${max_len[$t]}" \
       -print_final_stats=1 -artifact_prefix="$build/findings/$t-" "${extra[@]}" \
       "$build/corpus/$t" "$here/tools/fuzz/corpus/$t" > "$build/fuzz_$t.log" 2>&1; then
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/fuzz_$t.log")"
    echo "fuzz_$t: ok: $runs inputs in $((SECONDS - start)) s ($(sed -n 's/^stat::average_exec_per_sec: *//p' \
         "$build/fuzz_$t.log") exec/s), $(grep -c . <(ls "$build/corpus/$t")) in its corpus"
  else
    tail -40 "$build/fuzz_$t.log"
    echo "fuzz_$t: FAILED (log: $build/fuzz_$t.log; the input is in $build/findings/)"
    failed+=("$t")
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz: findings in ${failed[*]}"; exit 1; }
