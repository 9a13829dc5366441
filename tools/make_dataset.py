#!/usr/bin/env python3
"""Makes assets/datasets/knot8: a NeRF-format dataset (transforms.json and 8 PNG views, 96x96) of a known scene,
rendered by adjoint-render --all-views, for assets/scenes/dataset.json to recover.

Usage: python3 tools/make_dataset.py [build/app/adjoint-render]. Python standard library only; the poses are
written here, the pictures are the renderer's (deterministic for a given device).
"""
import json
import math
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "assets" / "datasets" / "knot8"
COUNT, SIZE, FOV_X = 8, 96, math.radians(40)
# The scene the pictures show; dataset.json starts from other values and must find these.
TRUTH = {
    "format": 1,
    "camera": {"resolution": [SIZE, SIZE]},
    "background": [0.02, 0.02, 0.03],
    "materials": {"knot": {"albedo": [0.8, 0.35, 0.15], "specular": [0.3, 0.3, 0.3], "shininess": 40}},
    "meshes": [{"name": "knot", "file": str(ROOT / "assets" / "meshes" / "torus_knot.obj"), "material": "knot"}],
    "lights": [{"name": "key", "type": "point", "position": [1.5, 2.5, 2.0], "intensity": 9},
               {"name": "fill", "type": "ambient", "intensity": 0.2}],
    "views": {"nerf": "transforms.json"},
}


def camera_to_world(azimuth, elevation, distance):
    """OpenGL camera-to-world rows looking at the origin from the given angles (+y up)."""
    eye = (distance * math.cos(elevation) * math.sin(azimuth), distance * math.sin(elevation),
           distance * math.cos(elevation) * math.cos(azimuth))
    z = tuple(c / distance for c in eye)                   # the camera looks down -z, at the origin
    x = (z[2], 0.0, -z[0])
    n = math.hypot(x[0], x[2])
    x = (x[0] / n, 0.0, x[2] / n)
    y = (z[1] * x[2] - z[2] * x[1], z[2] * x[0] - z[0] * x[2], z[0] * x[1] - z[1] * x[0])
    return [[round(x[r], 6), round(y[r], 6), round(z[r], 6), round(eye[r], 6)] for r in range(3)] + [[0, 0, 0, 1]]


def main():
    render = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "build" / "app" / "adjoint-render")
    frames = [{"file_path": f"./r_{i}",
               "transform_matrix": camera_to_world(2 * math.pi * i / COUNT, math.radians(15 + 20 * (i % 2)), 3.4)}
              for i in range(COUNT)]
    transforms = {"camera_angle_x": round(FOV_X, 6), "w": SIZE, "h": SIZE, "frames": frames}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "transforms.json").write_text(json.dumps(transforms, indent=1) + "\n")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        shutil.copy(OUT / "transforms.json", tmp / "transforms.json")
        (tmp / "truth.json").write_text(json.dumps(TRUTH))
        subprocess.run([str(render), "--scene", str(tmp / "truth.json"), "--all-views", str(tmp / "views")], check=True)
        for i in range(COUNT):
            shutil.copy(tmp / "views" / f"view_{i}.png", OUT / f"r_{i}.png")


if __name__ == "__main__":
    main()
