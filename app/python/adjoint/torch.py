"""Adjoint's renderer as a torch operation.

    import adjoint, adjoint.torch
    scene = adjoint.Scene("assets/scenes/material-light.json", resolution=(64, 64))
    albedo = torch.tensor([0.5, 0.5, 0.5], requires_grad=True)
    image = adjoint.torch.render(scene, {"materials.ball.albedo": albedo})   # [H, W, 3], differentiable
    loss = ((image - target) ** 2).mean(); loss.backward()                  # albedo.grad

The backward pass is the engine's own gradient (its $autodiff of the renderer), applied to d loss / d image.
Tensors on another device (CUDA) are copied through the host and the results returned to it.
"""
import numpy as np
import torch as _torch

from . import _adjoint

__all__ = ["render"]


def _to_numpy(t):
    return t.detach().to("cpu", _torch.float32).contiguous().numpy()


class _Render(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, scene, paths, view, *values):
        arrays = [_to_numpy(v) for v in values]
        image = _adjoint._render_with(scene, list(paths), arrays, view)
        ctx.scene, ctx.paths, ctx.view, ctx.arrays, ctx.image = scene, list(paths), view, arrays, image
        ctx.shapes = [(v.shape, v.dtype, v.device) for v in values]
        device = values[0].device if values else _torch.device("cpu")
        return _torch.from_numpy(image).to(device)

    @staticmethod
    def backward(ctx, grad_image):
        if not any(ctx.needs_input_grad[3:]):
            return (None, None, None) + (None,) * len(ctx.arrays)
        grads = _adjoint._image_vjp(ctx.scene, ctx.paths, ctx.arrays, ctx.view, ctx.image, _to_numpy(grad_image))
        out = []
        for g, (shape, dtype, device), needed in zip(grads, ctx.shapes, ctx.needs_input_grad[3:]):
            out.append(_torch.from_numpy(np.ascontiguousarray(g)).reshape(shape).to(device, dtype) if needed else None)
        return (None, None, None) + tuple(out)


def render(scene, params=None, view=0):
    """The scene's view `view` as a float32 [H, W, 3] tensor (linear RGB, rows top first), with the parameters
    named in `params` ({path: tensor}) set to the tensors' values; differentiable with respect to each tensor.
    The scene itself is not changed. Each tensor has the parameter's floats in any shape (a texture [H, W, 3])."""
    params = dict(params or {})
    for path, value in params.items():
        if not isinstance(value, _torch.Tensor):
            raise TypeError(f"{path}: expected a torch.Tensor, got {type(value).__name__}")
        if not value.is_floating_point():
            raise TypeError(f"{path}: expected a floating-point tensor, got {value.dtype}")
    paths = tuple(params.keys())
    return _Render.apply(scene, paths, int(view), *params.values())
