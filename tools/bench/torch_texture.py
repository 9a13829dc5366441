#!/usr/bin/env python3
"""The PyTorch peer of the bench's texture-recovery iteration (adjoint-bench section `renderer`).

Rasterization is precomputed once by adjoint-bench and handed over in a raw file (per-pixel texture
coordinates, world position, normal, coverage, target colour); each timed iteration then does what
Adjoint's iteration does: bilinear texture sampling (grid_sample), Lambert + Blinn-Phong shading with one
point light and an ambient term, the L2 loss, backward and an Adam step. Prints one JSON object.

Arguments: gbuffer file, iterations, threads, the model: `phong` (what Adjoint's iteration shades) or `lambert`
(diffuse and ambient only), and the pixels: `all` (every pixel, the mask multiplied in) or `covered` (only the
covered pixels, gathered once, as Adjoint's iteration does; the uncovered pixels' colour and target are both 0
and add nothing to the loss).
"""
import json
import struct
import sys
import time

try:
    import torch
except ImportError:
    print(json.dumps({"available": False, "reason": "python3-torch is not installed (apt-get install python3-torch)"}))
    sys.exit(0)


def main():
    path, iters = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 50
    torch.set_num_threads(int(sys.argv[3]) if len(sys.argv) > 3 else torch.get_num_threads())
    model = sys.argv[4] if len(sys.argv) > 4 else "phong"
    pixels = sys.argv[5] if len(sys.argv) > 5 else "all"
    if model not in ("phong", "lambert") or pixels not in ("all", "covered"):
        print(json.dumps({"available": False, "reason": "unknown model or pixels: " + model + " " + pixels}))
        sys.exit(0)
    with open(path, "rb") as f:
        w, h, tw, th = struct.unpack("<4I", f.read(16))
        light = struct.unpack("<8f", f.read(32))   # position xyz, intensity, eye xyz, ambient

        def arr(n):
            return torch.frombuffer(bytearray(f.read(4 * n)), dtype=torch.float32)
        uv = arr(w * h * 2).reshape(1, h, w, 2)
        pos = arr(w * h * 3).reshape(h * w, 3)
        nrm = arr(w * h * 3).reshape(h * w, 3)
        mask = arr(w * h).reshape(h * w, 1)
        target = arr(w * h * 3).reshape(h * w, 3)
    grid = uv * 2.0 - 1.0                       # grid_sample's [-1, 1] texel-centre convention
    lp, intensity = torch.tensor(light[0:3]), light[3]
    eye, ambient = torch.tensor(light[4:7]), light[7]
    if pixels == "covered":
        keep = mask.reshape(-1).nonzero().reshape(-1)
        count = keep.numel()
        grid = grid.reshape(h * w, 2)[keep].reshape(1, 1, count, 2)
        pos, nrm, target, mask = pos[keep], nrm[keep], target[keep], mask[keep]
    tex = torch.full((1, 3, th, tw), 0.5, requires_grad=True)
    opt = torch.optim.Adam([tex], lr=0.03)

    def iteration():
        opt.zero_grad(set_to_none=True)
        albedo = torch.nn.functional.grid_sample(tex, grid, mode="bilinear", padding_mode="border",
                                                 align_corners=False)[0].permute(1, 2, 0).reshape(-1, 3)
        d = lp - pos
        dist2 = (d * d).sum(1, keepdim=True)
        l = d / dist2.sqrt()
        if model == "lambert":
            ndl = (nrm * l).sum(1, keepdim=True)
            color = albedo * (ambient + intensity * ndl.clamp(min=0) / dist2)
            if pixels == "all":
                color = color * mask
            loss = ((color - target) ** 2).sum() / (3 * h * w)   # the mean over every pixel
            loss.backward()
            opt.step()
            return loss
        v = torch.nn.functional.normalize(eye - pos, dim=1)
        hv = torch.nn.functional.normalize(l + v, dim=1)
        ndl = (nrm * l).sum(1, keepdim=True)
        spec = torch.where(ndl > 0, (nrm * hv).sum(1, keepdim=True).clamp(min=0) ** 32, torch.zeros_like(ndl))
        color = albedo * (ambient + intensity * ndl.clamp(min=0) / dist2) + 0.04 * spec * intensity / dist2
        if pixels == "all":
            color = color * mask
        loss = ((color - target) ** 2).sum() / (3 * h * w)
        loss.backward()
        opt.step()
        return loss

    for _ in range(5):
        iteration()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        iteration()
        times.append((time.perf_counter() - t0) * 1000.0)
    times.sort()
    print(json.dumps({"available": True, "torch": torch.__version__, "threads": torch.get_num_threads(), "model": model, "pixels": pixels,
                      "ms_median": times[len(times) // 2], "ms_min": times[0], "ms_max": times[-1],
                      "iterations": iters}))


if __name__ == "__main__":
    main()
