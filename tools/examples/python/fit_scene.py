#!/usr/bin/env python3
"""A torch optimizer driving Adjoint's renderer: recover material-light.json's sphere albedo and key light
intensity from a picture of the scene, with the loss and optimizer written in PyTorch.

    PYTHONPATH=build/python python3 tools/examples/python/fit_scene.py [--iterations 200] [--resolution 64]
"""
import argparse
import pathlib

import torch

import adjoint
import adjoint.torch

ROOT = pathlib.Path(__file__).resolve().parents[3]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--resolution", type=int, default=64)
    args = ap.parse_args()

    scene = adjoint.Scene(ROOT / "assets" / "scenes" / "material-light.json",
                          resolution=(args.resolution, args.resolution))
    truth = {"materials.ball.albedo": torch.tensor([0.8, 0.3, 0.2]), "lights.key.intensity": torch.tensor([8.0])}
    target = adjoint.torch.render(scene, truth)   # the picture to match (no gradient needed)

    albedo = torch.tensor([0.5, 0.5, 0.5], requires_grad=True)
    intensity = torch.tensor([4.0], requires_grad=True)
    optimizer = torch.optim.Adam([{"params": [albedo], "lr": 0.03}, {"params": [intensity], "lr": 0.3}])
    for it in range(args.iterations):
        optimizer.zero_grad()
        image = adjoint.torch.render(scene, {"materials.ball.albedo": albedo, "lights.key.intensity": intensity})
        loss = torch.nn.functional.mse_loss(image, target)
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            albedo.clamp_(0, 1)
            intensity.clamp_(min=0)
        if it % 20 == 0:
            print(f"iteration {it}: loss {loss.item():.3e} albedo {albedo.tolist()} intensity {intensity.item():.3f}")
    error = max((albedo - truth["materials.ball.albedo"]).abs().max().item(),
                (intensity - truth["lights.key.intensity"]).abs().item() / 8.0)
    print(f"final loss {loss.item():.3e} error {error:.4g} albedo {albedo.tolist()} intensity {intensity.item():.4f}")


if __name__ == "__main__":
    main()
