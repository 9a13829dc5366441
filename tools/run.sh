#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job on the bundled default scene: the studio where a
# display exists, otherwise the headless optimization (outputs in ./adjoint-out, replaced run after run:
# --force). Arguments are passed on.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ADJOINT_BUILD_DIR:-$here/build}"
"$here/tools/setup.sh"
scene="$here/assets/scenes/default.json"
if [ -x "$build/app/adjoint-studio" ] && [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec "$build/app/adjoint-studio" --scene "$scene" "$@"
fi
echo "adjoint: no display: optimizing $scene headless; outputs in ./adjoint-out (report.png shows the run)" >&2
exec "$build/app/adjoint-optimize" --scene "$scene" --out adjoint-out --force "$@"
