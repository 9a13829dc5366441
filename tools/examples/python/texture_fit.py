#!/usr/bin/env python3
"""nvdiffrast's texture-fit sample against adjoint.torch: recover a sphere's texture (assets/textures/
colourful_128.png on assets/meshes/uv_sphere.obj) from rendered views, with trilinear mipmapped lookups whose
level comes from interpolate's uv derivatives, an L2 loss and Adam. Prints the PSNR of the views.

    PYTHONPATH=build/python python3 tools/examples/python/texture_fit.py [--iterations 300] [--resolution 64]

The views are rasterized once (a pool of random rotations); each iteration textures one of them with the
current estimate. The texture starts grey; texels no view sees stay so (the PSNR is measured on the views).
"""
import argparse
import json
import pathlib
import struct
import zlib

import numpy as np
import torch

import adjoint.torch as dr

ROOT = pathlib.Path(__file__).resolve().parents[3]


def read_png(path):
    """An 8-bit RGB or RGBA, non-interlaced PNG as float32 [H, W, 3] in [0, 1] (no PIL in Debian's minimal set)."""
    data = pathlib.Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    pos, chunks, header = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + n
    w, h, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"{path}: only 8-bit RGB/RGBA non-interlaced PNGs are read here")
    bpp = 3 if colour == 2 else 4
    raw = np.frombuffer(zlib.decompress(b"".join(chunks)), np.uint8).reshape(h, 1 + w * bpp)
    out, prev = np.zeros((h, w * bpp), np.int32), np.zeros(w * bpp, np.int32)
    for y in range(h):
        kind, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        if kind == 2:
            line = (line + prev) & 255
        elif kind in (1, 3, 4):                     # these filters depend on the bytes just decoded: one by one
            line = line.copy()
            for x in range(w * bpp):
                a = line[x - bpp] if x >= bpp else 0
                c = prev[x - bpp] if x >= bpp else 0
                b = prev[x]
                if kind == 1:
                    p = a
                elif kind == 3:
                    p = (a + b) // 2
                else:
                    e = a + b - c
                    pa, pb, pc = abs(e - a), abs(e - b), abs(e - c)
                    p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + p) & 255
        out[y], prev = line, line
    return (out.reshape(h, w, bpp)[..., :3] / 255.0).astype(np.float32)


def read_obj(path):
    """Positions [V, 3], texture coordinates [V, 2] (one vertex per distinct position/uv pair), triangles [T, 3]."""
    pos, uv, verts, tris, index = [], [], [], [], {}
    for line in pathlib.Path(path).read_text().splitlines():
        f = line.split()
        if not f:
            continue
        if f[0] == "v":
            pos.append([float(x) for x in f[1:4]])
        elif f[0] == "vt":
            uv.append([float(x) for x in f[1:3]])
        elif f[0] == "f":
            ids = []
            for corner in f[1:]:
                p, t = (corner.split("/") + [""])[:2]
                key = (int(p) - 1, int(t) - 1)
                if key not in index:
                    index[key] = len(verts)
                    verts.append(key)
                ids.append(index[key])
            tris += [[ids[0], ids[k], ids[k + 1]] for k in range(1, len(ids) - 1)]
    pos, uv = np.array(pos, np.float32), np.array(uv, np.float32)
    return (pos[[v[0] for v in verts]], uv[[v[1] for v in verts]], np.array(tris, np.int32))


def views(pos, count, rng, distance=3.2, fov=45.0):
    """Clip-space positions [count, V, 4] of the mesh under random rotations, in front of a perspective camera."""
    f = 1.0 / np.tan(np.radians(fov) / 2)
    proj = np.array([[f, 0, 0, 0], [0, f, 0, 0], [0, 0, -1.02, -0.202], [0, 0, -1, 0]], np.float32)
    out = []
    for _ in range(count):
        q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        cam = pos @ q.T.astype(np.float32) - np.array([0, 0, distance], np.float32)
        out.append(np.c_[cam, np.ones(len(cam), np.float32)] @ proj.T)
    return np.stack(out).astype(np.float32)


def psnr(a, b):
    return float(10 * torch.log10(1.0 / torch.mean((a - b) ** 2)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--resolution", type=int, default=64)
    ap.add_argument("--views", type=int, default=16)
    ap.add_argument("--lr", type=float, default=0.05)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(1)

    truth = torch.from_numpy(read_png(ROOT / "assets" / "textures" / "colourful_128.png"))[None].contiguous()
    pos, uv, tri = read_obj(ROOT / "assets" / "meshes" / "uv_sphere.obj")
    tri, uv = torch.from_numpy(tri), torch.from_numpy(uv)
    ctx = dr.RasterizeCudaContext()
    res = (args.resolution, args.resolution)
    pool = []
    for clip in views(pos, args.views, rng):
        rast, rast_db = dr.rasterize(ctx, torch.from_numpy(clip)[None].contiguous(), tri, res)
        texc, texd = dr.interpolate(uv, rast, tri, rast_db=rast_db, diff_attrs="all")
        mask = (rast[..., 3:] > 0).float()
        target = dr.texture(truth, texc, texd, filter_mode="linear-mipmap-linear") * mask
        pool.append((texc, texd, mask, target))

    tex = torch.full_like(truth, 0.5).requires_grad_(True)
    opt = torch.optim.Adam([tex], lr=args.lr)
    for it in range(args.iterations):
        texc, texd, mask, target = pool[it % len(pool)]
        image = dr.texture(tex, texc, texd, filter_mode="linear-mipmap-linear") * mask
        loss = torch.mean((image - target) ** 2)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if it % 50 == 0:
            print(f"iteration {it}: loss {float(loss):.6f}", flush=True)
    with torch.no_grad():
        scores = [psnr(dr.texture(tex, c, d, filter_mode="linear-mipmap-linear") * m, t) for c, d, m, t in pool]
    result = {"iterations": args.iterations, "resolution": args.resolution, "psnr_db": float(np.mean(scores)),
              "psnr_start_db": float(np.mean([psnr(0.5 * m, t) for _, _, m, t in pool]))}
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
