#!/usr/bin/env bash
# Shared set-up for run.sh and test.sh: installs missing Debian packages, then configures and builds
# (with --packages-only, only installs).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ADJOINT_BUILD_DIR:-$here/build}"

# The package list lives in tools/packages.txt (CI checks it against what the build and tests use).
mapfile -t packages < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$here/tools/packages.txt")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "adjoint: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ "${1:-}" = --packages-only ] && exit 0

cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE="${ADJOINT_BUILD_TYPE:-RelWithDebInfo}" >/dev/null
cmake --build "$build" -j"$(nproc)"
