#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job: the studio where a display exists, otherwise
# the headless optimization of the bundled default scene.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ADJOINT_BUILD_DIR:-$here/build}"
"$here/tools/setup.sh"
if [ -x "$build/app/adjoint-studio" ] && [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec "$build/app/adjoint-studio" "$@"
elif [ -x "$build/app/adjoint-optimize" ]; then
  exec "$build/app/adjoint-optimize" "$@"
else
  # The app is not built yet: run the engine's seed example (x*sin(x) and its gradient on the device).
  exec "$build/tools/adjoint-seed-example" "$@"
fi
