#!/usr/bin/env python3
"""The cube fit's iteration (tools/examples/python/cube_fit.py) at 16x16 through adjoint.torch against the same
pipeline written in plain PyTorch, in one run; prints one JSON object.

The plain-PyTorch pipeline: rasterize as every pixel against every triangle (homogeneous barycentrics, the
nearest hit by z/w), interpolate by gathering the vertex colours, antialias as the same pixel-pair blend
(the occluder triangle's silhouette edge crossing the pair's segment; without adjoint's walk across
neighbouring triangles, which the cube's few large triangles rarely need), then the L2 loss, backward and an
Adam step, autograd doing the gradients. Run with PYTHONPATH=build/python:

    python3 tools/bench/torch_cube.py [iterations] [threads]
"""
import json
import pathlib
import sys
import time

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples" / "python"))
import cube_fit  # noqa: E402
import adjoint.torch as dr  # noqa: E402
from adjoint._antialias import _topology  # noqa: E402


def cross(a, b, c):
    return (b[..., 0] - a[..., 0]) * (c[..., 1] - a[..., 1]) - (b[..., 1] - a[..., 1]) * (c[..., 0] - a[..., 0])


def torch_rasterize(clip, tri, res):
    """(triangle index or -1 [B, P], barycentrics [B, P, 3], z/w [B, P]) per pixel, rows from the bottom."""
    c = (torch.arange(res, dtype=torch.float32) + 0.5) * 2 / res - 1
    q = torch.stack(torch.meshgrid(c, c, indexing="xy"), -1).reshape(-1, 2)           # [P, 2], row-major
    p = clip[:, tri]                                                                  # [B, T, 3, 4]
    a = p[:, :, None, :, :2] - q[None, None, :, None, :] * p[:, :, None, :, 3:]       # [B, T, P, 3, 2]
    cc = torch.stack([cross(torch.zeros_like(a[..., 1, :]), a[..., 1, :], a[..., 2, :]),
                      cross(torch.zeros_like(a[..., 2, :]), a[..., 2, :], a[..., 0, :]),
                      cross(torch.zeros_like(a[..., 0, :]), a[..., 0, :], a[..., 1, :])], -1)
    s = cc.sum(-1, keepdim=True)
    b = cc / torch.where(s != 0, s, torch.ones_like(s))
    w = (b * p[:, :, None, :, 3]).sum(-1)
    z = (b * p[:, :, None, :, 2]).sum(-1) / torch.where(w != 0, w, torch.ones_like(w))
    inside = (b >= 0).all(-1) & (w > 0) & (z >= -1) & (z <= 1) & (s[..., 0] != 0)
    zt = torch.where(inside, z, torch.full_like(z, float("inf"))).detach()
    best, idx = zt.min(1)                                                             # over triangles
    covered = torch.isfinite(best)
    bary = torch.gather(b, 1, idx[:, None, :, None].expand(-1, 1, -1, 3))[:, 0]
    return torch.where(covered, idx, -1), bary, torch.where(covered, best, 0)


def torch_interpolate(col, tri, idx, bary):
    verts = tri[idx.clamp(min=0)]                                                     # [B, P, 3]
    attr = torch.gather(col[:, None].expand(-1, verts.shape[1], -1, -1), 2, verts[..., None].expand(-1, -1, -1, 3))
    return (bary[..., None] * attr).sum(2) * (idx >= 0)[..., None]


def torch_antialias(color, idx, z, clip, tri, topo, res):
    """color [B, res, res, C] -> blended, the pixel-pair scheme of adjoint's antialias without its walk."""
    B, C = color.shape[0], color.shape[-1]
    pix = (clip[..., :2] / clip[..., 3:] * 0.5 + 0.5) * res                         # [B, V, 2]
    ids, zz = idx.reshape(B, res, res), z.reshape(B, res, res)
    grid = torch.stack(torch.meshgrid(torch.arange(res), torch.arange(res), indexing="ij"), -1)  # (row, col)
    centre = torch.stack([grid[..., 1], grid[..., 0]], -1).float() + 0.5
    flat = grid[..., 0] * res + grid[..., 1]
    out = color.reshape(B, res * res, C)
    add = torch.zeros_like(out)
    for horizontal in (True, False):
        sl_a = (slice(None), slice(None), slice(0, -1)) if horizontal else (slice(None), slice(0, -1), slice(None))
        sl_b = (slice(None), slice(None), slice(1, None)) if horizontal else (slice(None), slice(1, None), slice(None))
        ta, tb, za, zb = ids[sl_a], ids[sl_b], zz[sl_a], zz[sl_b]
        at_a = (ta >= 0) & ((tb < 0) | (za < zb))
        occ = torch.where(at_a, ta, tb).clamp(min=0)
        ci = torch.where(at_a[..., None], centre[sl_a[1:]], centre[sl_b[1:]])
        co = torch.where(at_a[..., None], centre[sl_b[1:]], centre[sl_a[1:]])
        ii = torch.where(at_a, flat[sl_a[1:]], flat[sl_b[1:]])
        io = torch.where(at_a, flat[sl_b[1:]], flat[sl_a[1:]])
        bi = torch.arange(B)[:, None, None].expand_as(occ)
        v = pix[bi[..., None], tri[occ]]                                              # [B, h, w, 3, 2]
        o = torch.sign(cross(v[..., 0, :], v[..., 1, :], v[..., 2, :])).detach()
        best_s = torch.full(occ.shape, 2.0)
        weight_s, found = torch.zeros(occ.shape), torch.zeros(occ.shape, dtype=torch.bool)
        for k in range(3):
            e0, e1 = v[..., (k + 1) % 3, :], v[..., (k + 2) % 3, :]
            ei, eo = cross(e0, e1, ci) * o, cross(e0, e1, co) * o
            s = ei / torch.where(ei != eo, ei - eo, torch.ones_like(ei))
            first = (ei >= 0) & (eo < 0) & (s.detach() < best_s)
            x = topo[occ, 3 + k]
            xp = pix[bi, x.clamp(min=0)]
            silhouette = (x < 0) | (cross(e0, e1, xp) * o > 0)
            d = (e1 - e0).abs()
            direction = (d[..., 1] >= d[..., 0]) if horizontal else (d[..., 0] > d[..., 1])
            best_s = torch.where(first, s.detach(), best_s)
            found = torch.where(first, silhouette & direction, found)
            weight_s = torch.where(first, s, weight_s)
        found = found & (ta != tb)
        s = weight_s.clamp(0, 1)
        target = torch.where(s > 0.5, io, ii)
        source = torch.where(s > 0.5, ii, io)
        weight = torch.where(s > 0.5, s - 0.5, 0.5 - s) * found
        src = torch.gather(out, 1, source.reshape(B, -1, 1).expand(-1, -1, C))
        dst = torch.gather(out, 1, target.reshape(B, -1, 1).expand(-1, -1, C))
        add = add.scatter_add(1, target.reshape(B, -1, 1).expand(-1, -1, C), weight.reshape(B, -1, 1) * (src - dst))
    return (out + add).reshape(color.shape)


def torch_render(mvp, pos, col, tri, topo, res):
    clip = torch.cat([pos, torch.ones_like(pos[..., :1])], -1) @ mvp.transpose(1, 2)
    idx, bary, z = torch_rasterize(clip, tri, res)
    color = torch_interpolate(col, tri, idx, bary).reshape(pos.shape[0], res, res, 3)
    return torch_antialias(color, idx, z, clip, tri, topo, res)


def timed(render, iters, views=4, res=16):
    rng = np.random.default_rng(0)
    target_pos = torch.from_numpy(cube_fit.CUBE_POS)
    target_col = torch.rand(8, 3)
    pos = (target_pos + 0.3 * torch.rand(8, 3) - 0.15).requires_grad_(True)
    col = torch.rand(8, 3).requires_grad_(True)
    opt = torch.optim.Adam([pos, col], lr=0.01)

    def iteration():
        mvp = torch.from_numpy(cube_fit.random_views(rng, views))
        both_pos = torch.cat([target_pos.expand(views, 8, 3), pos.expand(views, 8, 3)])
        both_col = torch.cat([target_col.expand(views, 8, 3), col.expand(views, 8, 3)])
        image = render(torch.cat([mvp, mvp]), both_pos, both_col)
        loss = ((image[views:] - image[:views].detach()) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for _ in range(3):
        iteration()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        iteration()
        times.append((time.perf_counter() - t0) * 1000.0)
    times.sort()
    return {"ms_median": times[len(times) // 2], "ms_min": times[0], "ms_max": times[-1]}


def main():
    iters = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    torch.set_num_threads(int(sys.argv[2]) if len(sys.argv) > 2 else torch.get_num_threads())
    ctx = dr.RasterizeCudaContext()
    tri32 = torch.from_numpy(cube_fit.CUBE_TRI)
    topo32 = dr.antialias_construct_topology_hash(tri32)
    tri = tri32.long()
    topo = torch.from_numpy(_topology(cube_fit.CUBE_TRI.astype(np.uint32), 8).view(np.int32)).long()
    adj = timed(lambda m, p, c: cube_fit.render(ctx, m, p, c, tri32, topo32, 16), iters)
    ref = timed(lambda m, p, c: torch_render(m, p, c, tri, topo, 16), iters)
    print(json.dumps({"benchmark": "cube fit iteration, 16x16, 4 views + 4 targets per batch",
                      "device": dr._adjoint.device_name(), "torch": torch.__version__,
                      "threads": torch.get_num_threads(), "iterations": iters,
                      "adjoint_torch": adj, "plain_pytorch": ref,
                      "plain_over_adjoint": ref["ms_median"] / adj["ms_median"]}))


if __name__ == "__main__":
    main()
