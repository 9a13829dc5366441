#!/usr/bin/env python3
"""Runs a pose scene (default assets/scenes/pose.json) from N random starts with adjoint-optimize and reports,
per start and in total, the rotation error (degrees) and the translation error (fraction of the mesh's
bounding-box diagonal), and how many starts reach both thresholds (< 1 degree, < 0.5 %).

  tools/pose_starts.py --optimize build/app/adjoint-optimize [--scene S] [--starts 10] [--visibility antialias] [--jobs 2]
Prints one JSON object. Uses the Python standard library only.
"""
import argparse
import concurrent.futures
import json
import math
import pathlib
import subprocess
import tempfile


def bbox_diagonal(obj_path, scale):
    lo, hi = [math.inf] * 3, [-math.inf] * 3
    for line in pathlib.Path(obj_path).read_text().splitlines():
        if line.startswith("v "):
            p = [float(c) for c in line.split()[1:4]]
            lo = [min(a, b) for a, b in zip(lo, p)]
            hi = [max(a, b) for a, b in zip(hi, p)]
    return math.sqrt(sum(((h - l) * s) ** 2 for h, l, s in zip(hi, lo, scale)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--optimize", required=True)
    ap.add_argument("--scene", default=str(pathlib.Path(__file__).resolve().parent.parent / "assets/scenes/pose.json"))
    ap.add_argument("--starts", type=int, default=10)
    ap.add_argument("--visibility", default=None)
    ap.add_argument("--iters", type=int, default=None)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    scene_path = pathlib.Path(args.scene).resolve()
    scene = json.loads(scene_path.read_text())
    if args.visibility:
        scene.setdefault("render", {})["visibility"] = args.visibility
    mesh = scene["meshes"][0]
    scale = mesh.get("scale", 1.0)
    scale = [scale] * 3 if isinstance(scale, (int, float)) else scale
    diagonal = bbox_diagonal(scene_path.parent / mesh["file"], scale)
    # The run's copy of the scene lives in a temporary folder: its files are named by absolute paths.
    for m in scene["meshes"]:
        m["file"] = str(scene_path.parent / m["file"])
    for m in scene.get("materials", {}).values():
        if "albedo_texture" in m:
            m["albedo_texture"] = str(scene_path.parent / m["albedo_texture"])
    with tempfile.TemporaryDirectory() as tmp:
        run_scene = pathlib.Path(tmp) / "scene.json"
        run_scene.write_text(json.dumps(scene))
        def one_start(seed):
            out = pathlib.Path(tmp) / f"seed{seed}"
            cmd = [args.optimize, "--scene", str(run_scene), "--out", str(out), "--seed", str(seed), "--quiet"]
            if args.iters:
                cmd += ["--iters", str(args.iters)]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            params = json.loads((out / "params.json").read_text())["parameters"]
            rot = params[f"meshes.{mesh['name']}.rotation"]
            tr = params[f"meshes.{mesh['name']}.translation"]
            degrees = math.degrees(rot["error"])
            shift = math.dist(tr["value"], tr["true_value"]) / diagonal
            return {"seed": seed, "rotation_degrees": round(degrees, 4), "translation_of_diagonal": round(shift, 6),
                    "converged": degrees < 1.0 and shift < 0.005}

        # Each start is its own process; --jobs runs that many at once (results in seed order either way).
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(one_start, range(1, args.starts + 1)))
    print(json.dumps({"scene": str(scene_path), "visibility": scene["render"]["visibility"],
                      "converged": sum(r["converged"] for r in results), "starts": len(results), "runs": results}, indent=1))


if __name__ == "__main__":
    main()
