#!/usr/bin/env bash
# CI's sanitizer job: an ASan + UBSan build of the engine and the tests in build-asan, then the whole suite.
#
#   tools/ci/sanitize.sh [build|test]      (both when none is given; packages come from tools/setup.sh)
#
# -O1 keeps the build and the run quick enough for CI with usable stacks; the benchmark is not built (its
# smoke test times, it checks nothing a sanitizer would add to). Any sanitizer report fails the test that hit it (the options are in the top-level
# CMakeLists.txt, ADJOINT_SANITIZE); leaks inside Mesa and the Vulkan loader are suppressed by tests/lsan.supp.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${ADJOINT_ASAN_BUILD_DIR:-$here/build-asan}"
what="${1:-all}"

if [ "$what" = build ] || [ "$what" = all ]; then
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
        -DADJOINT_SANITIZE=address,undefined -DADJOINT_BUILD_TOOLS=OFF -DADJOINT_BUILD_APP=ON >/dev/null
  cmake --build "$build" -j"$(nproc)"
fi
if [ "$what" = test ] || [ "$what" = all ]; then
  cd "$build"
  # The studio's window tests run here too: tests/studio gives the ASan preload to the studio alone, not to
  # xvfb-run and its helpers (under LeakSanitizer mktemp and xauth exit with 1, which ended xvfb-run before
  # the studio started).
  # The Python package's tests run here too, the interpreter given the ASan runtime (the top-level
  # CMakeLists.txt, ADJOINT_SANITIZE_PYTHON_TEST_ENVIRONMENT): about 3 minutes on two cores.
  # The demos (whole optimizations, minutes each under ASan) and the package tests (an install and a consumer
  # build: no code of ours that the other tests do not run) run in the normal job only; the code the demos
  # drive runs here through the stage, gradient, renderer and CLI tests. This keeps CI within 30 minutes on
  # two cores.
  ctest --output-on-failure -j"$(nproc)" --timeout 900 -E '^(GeometryDemos|EnvironmentDemos|AssetDemos|Demos)\.|^Package\.'
fi
