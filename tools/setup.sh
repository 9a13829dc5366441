#!/usr/bin/env bash
# Shared set-up for run.sh and test.sh: installs missing Debian packages, then configures and builds
# (with --packages-only, only installs; --fuzz first adds the fuzzing packages, for tools/fuzz/run.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ADJOINT_BUILD_DIR:-$here/build}"

# The Debian 12 packages the project needs (with --no-install-recommends): the one list. CI's
# tools/ci/check-packages.sh fails when the build or the tests use a package that neither this list nor
# what it depends on brings in; --list-packages prints it, one a line.
packages=(
  cmake g++ make pkg-config                                   # toolchain
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers   # loader and headers, lavapipe, validation layer
  glslang-dev glslang-tools spirv-tools                       # glslang's CMake config imports glslangValidator
  libgtest-dev libgmock-dev                                   # GTest's CMake config reads GMock's targets too
  nlohmann-json3-dev libbenchmark-dev libxxhash-dev
  libglfw3-dev libimgui-dev libtinyobjloader-dev libstb-dev libcli11-dev   # the app and the studio
  libopenexr-dev                                              # the app's HDR images (OpenEXR, every compression)
  blender-data                                                # test data: Blender's CC0 HDRIs (DWAB-compressed EXR)
  libtinygltf-dev                                             # the app's glTF 2.0 meshes
  assimp-testmodels                                           # test data: glTF 2.0 samples, sound and broken
  xvfb xauth                                                  # the studio's tests
  pybind11-dev python3-dev                                    # the Python package adjoint (app/python)
  python3-pytest python3-numpy python3-torch                  # its tests, arrays and adjoint.torch
)
# Fuzzing (tools/fuzz/run.sh, which asks for them with --fuzz): clang 16 with libFuzzer and llvm-symbolizer.
# The build and the tests do not use them (the test suite replays the fuzz corpora with g++), so CI has none.
fuzz_packages=(clang-16 libclang-rt-16-dev llvm-16)
if [ "${1:-}" = --list-packages ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi
if [ "${1:-}" = --fuzz ]; then
  packages+=("${fuzz_packages[@]}")
  shift
fi
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

# Line tables only (-g1), not CMake's -g: backtraces and profiles keep their files and lines, and compiling is
# faster (one test file: 5.3 s against 7.0), which keeps CI's build and tests inside their 30 minutes on two cores
# (27.5 minutes with -g in stop 46's run).
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE="${ADJOINT_BUILD_TYPE:-RelWithDebInfo}" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null
cmake --build "$build" -j"$(nproc)"
