#!/usr/bin/env bash
# Shared set-up for run.sh and test.sh: installs missing Debian packages, then configures and builds.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ADJOINT_BUILD_DIR:-$here/build}"

packages=(cmake g++ make pkg-config libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers glslang-dev glslang-tools
          spirv-tools libglfw3-dev libimgui-dev libtinyobjloader-dev libstb-dev libgtest-dev nlohmann-json3-dev
          libcli11-dev libbenchmark-dev libxxhash-dev xvfb xauth)
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

cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE="${ADJOINT_BUILD_TYPE:-RelWithDebInfo}" >/dev/null
cmake --build "$build" -j"$(nproc)"
