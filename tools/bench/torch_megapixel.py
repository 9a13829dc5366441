#!/usr/bin/env python3
"""adjoint.torch's nvdiffrast ops at a megapixel: rasterize, interpolate and antialias of a 6,400-triangle sphere
at 1024x1024 (about half the pixels covered), forward and backward, as a user's training step calls them; then
texture: a 512x512 RGB texture magnified onto the same pixels, bilinear and trilinear (uv_da given: level 0 and 1
blended), forward and backward; then interpolate's image-space derivatives: the sphere's uv with rast_db and
diff_attrs='all', as nvdiffrast's textured pipeline takes them for its uv_da, forward and backward. Prints one JSON
object: the wall time of each op and of the backward (median of the iterations after a warm-up one) and each
kernel's device time a call (the engine's timestamps). Run with PYTHONPATH=build/python:

    python3 tools/bench/torch_megapixel.py [iterations] [resolution]
"""
import json
import statistics
import sys
import time

import numpy as np
import torch

import adjoint.torch as dr
from adjoint import _adjoint


def sphere(rings=40):
    """A UV sphere of radius 1: rings x 2 rings quads, two triangles each, counter-clockwise from outside."""
    theta = np.linspace(0, np.pi, rings + 1)
    phi = np.linspace(0, 2 * np.pi, 2 * rings, endpoint=False)
    v = np.array([[np.sin(t) * np.cos(p), np.cos(t), np.sin(t) * np.sin(p)] for t in theta for p in phi], np.float32)
    m, f = len(phi), []
    for i in range(rings):
        for j in range(m):
            a, b = i * m + j, i * m + (j + 1) % m
            f += [[a, a + m, b], [b, a + m, b + m]]
    return v, np.array(f, np.int32)


def main():
    iters = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    res = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    torch.set_num_threads(1)
    v, f = sphere()
    proj = torch.tensor([[2.5, 0, 0, 0], [0, 2.5, 0, 0], [0, 0, -1.2, -2.2], [0, 0, -1, 0]])
    pos = torch.from_numpy(v)
    pos[:, 2] -= 3.0
    clip = (torch.cat([pos, torch.ones_like(pos[:, :1])], -1) @ proj.T)[None].contiguous().requires_grad_(True)
    tri = torch.from_numpy(f)
    col = torch.rand(1, len(v), 3, generator=torch.Generator().manual_seed(0)).requires_grad_(True)
    ctx = dr.RasterizeCudaContext()
    topo = dr.antialias_construct_topology_hash(tri)
    walls = {k: [] for k in ("rasterize", "interpolate", "antialias", "backward", "total")}
    profiled = hasattr(_adjoint, "_set_kernel_profiling")   # an older build's module has no kernel times
    for it in range(iters + 1):
        if it == 1 and profiled:
            _adjoint._set_kernel_profiling(True)
            _adjoint._kernel_times()   # clears
        t0 = time.perf_counter()
        rast, _ = dr.rasterize(ctx, clip, tri, [res, res])
        t1 = time.perf_counter()
        color, _ = dr.interpolate(col, rast, tri)
        t2 = time.perf_counter()
        out = dr.antialias(color.contiguous(), rast, clip, tri, topology_hash=topo)
        t3 = time.perf_counter()
        (out ** 2).sum().backward()
        t4 = time.perf_counter()
        if it:
            for k, t in zip(walls, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0)):
                walls[k].append(t * 1e3)
    kernels = {name: round(ms / n, 2) for name, n, ms in _adjoint._kernel_times()} if profiled else {}
    textures = texture_times(iters, res, profiled)
    derivatives = derivative_times(iters, res, profiled, clip.detach(), tri, ctx)
    if profiled:
        _adjoint._set_kernel_profiling(False)
    covered = float((rast[..., 3] > 0).float().mean())
    print(json.dumps({"benchmark": f"nvdiffrast ops, {len(f)} triangles at {res}x{res}, forward + backward",
                      "device": _adjoint.device_name(), "iterations": iters, "covered_fraction": round(covered, 3),
                      "wall_ms_median": {k: round(statistics.median(t), 1) for k, t in walls.items()},
                      "kernel_ms_per_call": kernels,
                      "kernel_ms_total": round(sum(kernels.values()), 1),
                      "texture": textures, "interpolate_derivatives": derivatives}, indent=1))


def timed_passes(iters, profiled, forward, loss, clear):
    """forward() (the ops), then loss(its outputs) and its backward, then clear() (the leaves' gradients), iters + 1
    times: the median wall ms of the forward and of the loss with its backward after the first (a warm-up), and each
    kernel's device ms a call."""
    fw, bw = [], []
    for it in range(iters + 1):
        if it == 1 and profiled:
            _adjoint._kernel_times()   # clears
        t0 = time.perf_counter()
        out = forward()
        t1 = time.perf_counter()
        loss(out).backward()
        t2 = time.perf_counter()
        clear()
        if it:
            fw.append((t1 - t0) * 1e3)
            bw.append((t2 - t1) * 1e3)
    kernels = {name: round(ms / iters, 2) for name, _, ms in _adjoint._kernel_times()} if profiled else {}
    return {"forward_ms": round(statistics.median(fw), 1), "backward_ms": round(statistics.median(bw), 1),
            "kernel_ms_per_call": kernels}


def texture_times(iters, res, profiled):
    """texture of a 512x512x3 map over res x res pixels (uv a slightly warped grid, so neighbouring pixels share
    texels): each filter's forward and backward wall time (median) and kernel times a call (mip levels summed)."""
    gen = torch.Generator().manual_seed(1)
    tex = torch.rand(1, 512, 512, 3, generator=gen).requires_grad_(True)
    ys, xs = torch.meshgrid(torch.arange(res), torch.arange(res), indexing="ij")
    uv = torch.stack([(xs + 0.5) / res, (ys + 0.5) / res], -1)[None].float() * 0.9 + 0.05
    uv = (uv + 0.01 * torch.sin(uv * 40)).contiguous().requires_grad_(True)
    # Level 0.5: 0.9 * 512 / res texels a pixel, times 2**0.5 * res / 512 / 0.9.
    da = torch.zeros(1, res, res, 4)
    da[..., 0] = da[..., 3] = 2 ** 0.5 / 512
    weights = torch.rand(1, res, res, 3, generator=gen)
    result = {}
    for mode in ("linear", "linear-mipmap-linear"):
        def forward():
            return dr.texture(tex, uv, uv_da=da if "mipmap" in mode else None, filter_mode=mode)

        def clear():
            tex.grad = uv.grad = None
        result[mode] = timed_passes(iters, profiled, forward, lambda out: (out * weights).sum(), clear)
    return result


def derivative_times(iters, res, profiled, clip, tri, ctx):
    """interpolate of the sphere's (u, v) with rast_db and diff_attrs='all' (nvdiffrast's textured pipeline's uv_da):
    the forward (rasterize with grad_db, interpolate) and backward wall times (median) and kernel times a call."""
    v = clip[0, :, :3] / clip[0, :, 3:]
    uv = torch.stack([torch.atan2(v[:, 2], v[:, 0]), v[:, 1]], -1)[None].contiguous().requires_grad_(True)
    pos = clip.clone().requires_grad_(True)
    gen = torch.Generator().manual_seed(2)
    weights = torch.rand(1, res, res, 2, generator=gen), torch.rand(1, res, res, 4, generator=gen)

    def forward():
        rast, rast_db = dr.rasterize(ctx, pos, tri, [res, res], grad_db=True)
        return dr.interpolate(uv, rast, tri, rast_db=rast_db, diff_attrs="all")

    def clear():
        uv.grad = pos.grad = None
    def loss(out):
        return (out[0] * weights[0]).sum() + (out[1] * weights[1]).sum()
    return timed_passes(iters, profiled, forward, loss, clear)


if __name__ == "__main__":
    main()
