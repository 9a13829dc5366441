#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (lavapipe + the Vulkan validation layer).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ADJOINT_BUILD_DIR:-$here/build}"
"$here/tools/setup.sh"
cd "$build"
ctest --output-on-failure -j"$(nproc)" --timeout 600
