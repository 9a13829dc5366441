#!/usr/bin/env python3
"""nvdiffrast's cube-fit sample idea on adjoint.torch: a cube's 8 vertex positions and colours recovered from
random starts (positions off by up to ±0.5 per coordinate, colours uniform) by rasterize + interpolate +
antialias and an L2 loss to target images of random views, with Adam. Only the silhouettes' antialiasing
gives the positions a gradient (the colours are flat inside the cube's faces).

    PYTHONPATH=build/python python3 tools/examples/python/cube_fit.py --resolution 16 --iterations 600

Prints the mean vertex error (mean Euclidean distance to the target vertices) as it goes and one JSON line
at the end. The target images are rendered by the same ops, as in nvdiffrast's sample.
"""
import argparse
import json
import time

import numpy as np
import torch

import adjoint.torch as dr

CUBE_POS = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)], np.float32)
# Two triangles per face, counter-clockwise seen from outside.
CUBE_TRI = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                     [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]], np.int32)


def projection(x=0.4, near=1.0, far=10.0):
    """A perspective frustum with half-width x at the near plane (nvdiffrast's samples' util.projection)."""
    return np.array([[near / x, 0, 0, 0], [0, near / x, 0, 0],
                     [0, 0, -(far + near) / (far - near), -2 * far * near / (far - near)], [0, 0, -1, 0]], np.float32)


def random_rotation(rng):
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y), 0],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x), 0],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y), 0], [0, 0, 0, 1]], np.float32)


def random_views(rng, count):
    """Clip-from-object matrices [count, 4, 4]: the cube 3.5 units in front of the camera, rotated at random."""
    translate = np.eye(4, dtype=np.float32)
    translate[2, 3] = -3.5
    return np.stack([projection() @ translate @ random_rotation(rng) for _ in range(count)])


def render(ctx, mvp, pos, col, tri, topology, resolution):
    """Colours [B, res, res, 3] of vertices pos [B, V, 3] with colours col [B, V, 3] under mvp [B, 4, 4]."""
    clip = torch.cat([pos, torch.ones_like(pos[..., :1])], -1) @ mvp.transpose(1, 2)
    clip = clip.contiguous()
    rast, _ = dr.rasterize(ctx, clip, tri, [resolution, resolution])
    color, _ = dr.interpolate(col.contiguous(), rast, tri)
    return dr.antialias(color.contiguous(), rast, clip, tri, topology_hash=topology)


def fit(resolution=16, iterations=600, views=4, seed=0, lr=0.03, log=None):
    """Runs the fit; returns a dict with the final mean vertex error, colour error and timings."""
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    ctx = dr.RasterizeCudaContext()
    tri = torch.from_numpy(CUBE_TRI)
    topology = dr.antialias_construct_topology_hash(tri)
    target_pos = torch.from_numpy(CUBE_POS)
    target_col = torch.from_numpy(rng.uniform(0, 1, (8, 3)).astype(np.float32))
    pos = (target_pos + torch.from_numpy(rng.uniform(-0.5, 0.5, (8, 3)).astype(np.float32))).requires_grad_(True)
    col = torch.from_numpy(rng.uniform(0, 1, (8, 3)).astype(np.float32)).requires_grad_(True)
    opt = torch.optim.Adam([pos, col], lr=lr)
    # nvdiffrast's sample ramps the rate down tenfold over its run.
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: max(0.1, 10 ** (-i / iterations)))
    start = time.perf_counter()
    for it in range(iterations):
        mvp = torch.from_numpy(random_views(rng, views))
        # One batch: the target's views and the current estimate's, so each op runs once per iteration.
        both_pos = torch.cat([target_pos.expand(views, 8, 3), pos.expand(views, 8, 3)])
        both_col = torch.cat([target_col.expand(views, 8, 3), col.expand(views, 8, 3)])
        image = render(ctx, torch.cat([mvp, mvp]), both_pos, both_col, tri, topology, resolution)
        loss = ((image[views:] - image[:views].detach()) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if log and (it % 250 == 0 or it == iterations - 1):
            log(f"iteration {it}: loss {loss.item():.3e}, mean vertex error {vertex_error(pos, target_pos):.4f}")
    seconds = time.perf_counter() - start
    return {"resolution": resolution, "iterations": iterations, "views_per_iteration": views,
            "mean_vertex_error": vertex_error(pos, target_pos),
            "mean_colour_error": float((col.detach() - target_col).abs().mean()),
            "ms_per_iteration": 1000.0 * seconds / max(iterations, 1)}


def vertex_error(pos, target):
    return float((pos.detach() - target).norm(dim=1).mean())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resolution", type=int, default=16)
    parser.add_argument("--iterations", type=int, default=600)
    parser.add_argument("--views", type=int, default=4, help="random views per iteration")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    result = fit(args.resolution, args.iterations, args.views, args.seed, log=print)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
