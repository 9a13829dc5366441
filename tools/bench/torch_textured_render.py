#!/usr/bin/env python3
"""Bench: a 512x512 textured render, forward and backward (d loss / d texture), through adjoint.torch
(rasterize + interpolate + texture) and through the same pipeline in plain PyTorch (edge-function
rasterization, perspective-correct interpolation, grid_sample), in one run. Prints one JSON object.

    PYTHONPATH=build/python python3 tools/bench/torch_textured_render.py [--resolution 512] [--iterations 5]

The mesh is a cube with a texture per face (12 triangles, assets/textures/colourful_256.png): the brute-force
rasterizers of both sides test every triangle at every pixel, so the texture lookup is a real share of the time.
"""
import argparse
import json
import pathlib
import sys
import time

import numpy as np
import torch

import adjoint
import adjoint.torch as dr

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "examples" / "python"))
from texture_fit import read_png  # noqa: E402


def cube():
    """24 vertices (4 per face, uv over the whole texture) and 12 triangles."""
    pos, uv, tri = [], [], []
    for axis in range(3):
        for sign in (1.0, -1.0):
            n = np.eye(3)[axis] * sign
            a, b = np.eye(3)[(axis + 1) % 3], np.eye(3)[(axis + 2) % 3] * sign
            base = len(pos)
            for s, t in ((0, 0), (1, 0), (1, 1), (0, 1)):
                pos.append(0.5 * n + (s - 0.5) * a + (t - 0.5) * b)
                uv.append((s, t))
            tri += [[base, base + 1, base + 2], [base, base + 2, base + 3]]
    return np.array(pos, np.float32), np.array(uv, np.float32), np.array(tri, np.int32)


def clip_positions(pos):
    rot = torch.tensor(np.linalg.qr(np.random.default_rng(3).normal(size=(3, 3)))[0], dtype=torch.float32)
    cam = torch.from_numpy(pos) @ rot.T - torch.tensor([0.0, 0.0, 2.2])
    f = 1.0 / np.tan(np.radians(45.0) / 2)
    proj = torch.tensor([[f, 0, 0, 0], [0, f, 0, 0], [0, 0, -1.02, -0.202], [0, 0, -1, 0]], dtype=torch.float32)
    return torch.cat([cam, torch.ones(len(cam), 1)], 1) @ proj.T


def torch_pipeline(clip, uv, tri, tex, res):
    """The same render in plain PyTorch: rows from the bottom (nvdiffrast's), pixel centres at +0.5."""
    h, w = res
    ys, xs = torch.meshgrid((torch.arange(h) + 0.5) * 2 / h - 1, (torch.arange(w) + 0.5) * 2 / w - 1, indexing="ij")
    p = clip[tri.long()]                                      # [T, 3, 4]
    ndc = p[..., :2] / p[..., 3:]
    def edge(a, b):                                           # [T, H, W]
        return ((b[:, 0] - a[:, 0])[:, None, None] * (ys - a[:, 1, None, None]) -
                (b[:, 1] - a[:, 1])[:, None, None] * (xs - a[:, 0, None, None]))
    e = torch.stack([edge(ndc[:, 1], ndc[:, 2]), edge(ndc[:, 2], ndc[:, 0]), edge(ndc[:, 0], ndc[:, 1])], -1)
    area = e.sum(-1, keepdim=True)
    lin = e / area                                            # screen-space barycentrics
    inside = (lin >= 0).all(-1)
    persp = lin / p[:, None, None, :, 3]
    persp = persp / persp.sum(-1, keepdim=True)               # perspective-correct barycentrics
    depth = (persp * p[:, None, None, :, 2]).sum(-1) / (persp * p[:, None, None, :, 3]).sum(-1)
    depth = torch.where(inside, depth, torch.full_like(depth, 2.0))
    best = depth.argmin(0)                                    # [H, W]
    covered = torch.gather(inside, 0, best[None])[0]
    b = torch.gather(persp, 0, best[None, ..., None].expand(1, h, w, 3))[0]
    tuv = uv[tri.long()][best]                                # [H, W, 3, 2]
    texc = (b[..., None] * tuv).sum(-2)
    grid = (texc * 2 - 1)[None]
    img = torch.nn.functional.grid_sample(tex.permute(0, 3, 1, 2), grid, mode="bilinear", padding_mode="border",
                                          align_corners=False)[0].permute(1, 2, 0)
    return img * covered[..., None]


def adjoint_pipeline(clip, uv, tri, tex, res, ctx):
    rast, _ = dr.rasterize(ctx, clip[None].contiguous(), tri, res)
    texc, _ = dr.interpolate(uv, rast, tri)
    return dr.texture(tex, texc, filter_mode="linear", boundary_mode="clamp")[0] * (rast[0, ..., 3:] > 0)


def timed(fn, tex, weights, iterations):
    times = []
    for k in range(iterations + 1):
        tex.grad = None
        t0 = time.perf_counter()
        img = fn(tex)
        (img * weights).sum().backward()
        if k:
            times.append((time.perf_counter() - t0) * 1000.0)   # the first run compiles / warms up
    times.sort()
    return {"ms_median": times[len(times) // 2], "ms_min": times[0], "ms_max": times[-1]}, img.detach()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resolution", type=int, default=512)
    ap.add_argument("--iterations", type=int, default=5)
    args = ap.parse_args()
    res = (args.resolution, args.resolution)
    pos, uv, tri = cube()
    clip, uv, tri = clip_positions(pos), torch.from_numpy(uv), torch.from_numpy(tri)
    tex = torch.from_numpy(read_png(ROOT / "assets" / "textures" / "colourful_256.png"))[None].contiguous()
    tex.requires_grad_(True)
    weights = torch.from_numpy(np.random.default_rng(0).random((*res, 3), np.float32))
    ctx = dr.RasterizeCudaContext()
    ours, img_a = timed(lambda t: adjoint_pipeline(clip, uv, tri, t, res, ctx), tex, weights, args.iterations)
    grad_a = tex.grad.clone()
    peer, img_t = timed(lambda t: torch_pipeline(clip, uv, tri, t, res), tex, weights, args.iterations)
    grad_t = tex.grad.clone()
    both = (img_a.abs().sum(-1) > 0) & (img_t.abs().sum(-1) > 0)
    print(json.dumps({
        "bench": "textured render, forward + backward to the texture", "resolution": list(res),
        "triangles": int(tri.shape[0]), "texture": list(tex.shape), "device": adjoint.device_name(),
        "adjoint_torch": ours, "plain_pytorch": {**peer, "torch": torch.__version__, "threads": torch.get_num_threads()},
        "image_mean_abs_difference": float((img_a - img_t).abs()[both].mean()),
        "covered_pixels": [int((img_a.abs().sum(-1) > 0).sum()), int((img_t.abs().sum(-1) > 0).sum())],
        "texture_gradient_relative_difference": float((grad_a - grad_t).norm() / grad_t.norm())}))


if __name__ == "__main__":
    main()
