#!/usr/bin/env bash
# Tests tools/ci/check-packages.sh: with a package taken out of a copy of setup's list, it must fail and name it.
#
#   tools/ci/test-check-packages.sh [BUILD_DIR]      (a configured and built folder; default build)
#
# glslang-tools is the miss that broke a fresh machine (glslang's CMake config imports glslangValidator);
# mesa-vulkan-drivers is only needed at run time (lavapipe), so it tests the run-time half of the check.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$here/build}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

failures=0
"$here/tools/setup.sh" --list-packages > "$tmp/all.txt"
for package in glslang-tools mesa-vulkan-drivers; do
  grep -v -x -e "$package" "$tmp/all.txt" > "$tmp/packages.txt" || true
  if cmp -s "$tmp/all.txt" "$tmp/packages.txt"; then
    echo "test-check-packages: FAILED: $package is not in tools/setup.sh's list"
    failures=$((failures + 1)); continue
  fi
  status=0
  "$here/tools/ci/check-packages.sh" "$build" "$tmp/packages.txt" > "$tmp/out" 2>&1 || status=$?
  if [ "$status" -eq 1 ] && grep -q -x "  missing package: $package" "$tmp/out"; then
    echo "test-check-packages: ok: without $package the check fails and names it"
  else
    echo "test-check-packages: FAILED: without $package the check exited $status and said:"
    sed 's/^/    /' "$tmp/out"
    failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ]
