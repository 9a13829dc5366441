"""Adjoint's renderer as a torch operation.

    import adjoint, adjoint.torch
    scene = adjoint.Scene("assets/scenes/material-light.json", resolution=(64, 64))
    albedo = torch.tensor([0.5, 0.5, 0.5], requires_grad=True)
    image = adjoint.torch.render(scene, {"materials.ball.albedo": albedo})   # [H, W, 3], differentiable
    loss = ((image - target) ** 2).mean(); loss.backward()                  # albedo.grad

The backward pass is the engine's own gradient (its $autodiff of the renderer), applied to d loss / d image.
Tensors on another device (CUDA) are copied through the host and the results returned to it.
"""
import operator

import numpy as np
import torch as _torch

from . import _adjoint
from ._common import _first_order, _to_numpy
from ._texture import texture, texture_construct_mip, TextureMipWrapper  # noqa: F401 (re-exported)

__all__ = ["render", "rasterize", "interpolate", "texture", "texture_construct_mip", "antialias",
           "antialias_construct_topology_hash", "DepthPeeler",
           "RasterizeContext", "RasterizeCudaContext", "RasterizeGLContext", "get_log_level", "set_log_level"]


class _Render(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, scene, paths, view, *values):
        arrays = [_to_numpy(v) for v in values]
        image = _adjoint._render_with(scene, list(paths), arrays, view)
        ctx.scene, ctx.paths, ctx.view, ctx.arrays, ctx.image = scene, list(paths), view, arrays, image
        # The scene as rendered: a write to scene.parameters before backward() does not change this gradient.
        ctx.seen = _adjoint._snapshot(scene) if any(ctx.needs_input_grad[3:]) else None
        ctx.shapes = [(v.shape, v.dtype, v.device) for v in values]
        device = values[0].device if values else _torch.device("cpu")
        return _torch.from_numpy(image).to(device)

    @staticmethod
    @_first_order("render")
    def backward(ctx, grad_image):
        if not any(ctx.needs_input_grad[3:]):
            return (None, None, None) + (None,) * len(ctx.arrays)
        g_image = _to_numpy(grad_image)
        # The bridge passes the gradient G as an l2 target T = I - k * G (k = H * W * 3 / 2) in float32, which
        # keeps no more of G than T's rounding at I leaves: a loss scaled by 1e-9 had gradient 0. The vjp is
        # linear in G, so G goes in scaled to |k * G| <= 1 and the gradients come back scaled by the inverse.
        peak = float(np.abs(g_image).max()) if g_image.size else 0.0
        norm = peak * g_image.shape[0] * g_image.shape[1] * 1.5 if np.isfinite(peak) and peak > 0 else 1.0
        grads = _adjoint._image_vjp(ctx.scene, ctx.seen, ctx.paths, ctx.arrays, ctx.view, ctx.image,
                                    (g_image / norm).astype(np.float32))
        out = []
        for g, (shape, dtype, device), needed in zip(grads, ctx.shapes, ctx.needs_input_grad[3:]):
            g = np.ascontiguousarray(g, np.float64) * norm
            out.append(_torch.from_numpy(g).reshape(shape).to(device, dtype) if needed else None)
        return (None, None, None) + tuple(out)


def render(scene, params=None, view=0):
    """The scene's view `view` as a float32 [H, W, 3] tensor (linear RGB, rows top first), with the parameters
    named in `params` ({path: tensor}) set to the tensors' values; differentiable with respect to each tensor.
    The scene itself is not changed. Each tensor has the parameter's floats, flat, as rows of 3 (vertices) or as
    one row or column (a texture [H, W, 3]); values are in the scene file's units (intrinsics: its pixels).
    The scene keeps what renders and differentiates a set of paths at a view between calls, for the most recently
    used such pairs whose device buffers take up to 256 MiB (at most 64 of them): the first call builds it, later
    ones only write their values (a write to scene.parameters drops them)."""
    params = dict(params or {})
    for path, value in params.items():
        if not isinstance(path, str):
            raise TypeError(f"params: expected parameter paths (str) as keys, got {type(path).__name__} {path!r}")
        if not isinstance(value, _torch.Tensor):
            raise TypeError(f"{path}: expected a torch.Tensor, got {type(value).__name__}")
        if not value.is_floating_point():
            raise TypeError(f"{path}: expected a floating-point tensor, got {value.dtype}")
    paths = tuple(params.keys())
    # The view as given: the binding takes an integer index only (int(1.9) rendered view 1, True view 1).
    return _Render.apply(scene, paths, view, *params.values())


# ---- nvdiffrast's rasterize and interpolate (app/python/raster_ops.cpp) ------------------------------------
# Same names, arguments, shapes and conventions as nvdiffrast: rast_out [B, H, W, 4] = (u, v, z/w,
# triangle_id + 1), 0 where empty; row 0 the bottom row; pixel centres at +0.5; triangles crossing w = 0
# clipped; gradients to pos through (u, v, z/w) and rast_db. antialias and DepthPeeler: _antialias.py.

class RasterizeContext:
    """Adjoint's rasterizer context: the process's Vulkan device (ADJOINT_DEVICE picks it). `device` is accepted
    for nvdiffrast's signature; results go to the device of the input tensors (CUDA through the host)."""

    def __init__(self, device=None, output_db=True):
        self.output_db = bool(output_db)


class RasterizeCudaContext(RasterizeContext):
    """nvdiffrast's RasterizeCudaContext(device=None): rast_db always given."""

    def __init__(self, device=None):
        super().__init__(device=device)


class RasterizeGLContext(RasterizeContext):
    """nvdiffrast's RasterizeGLContext(output_db=True, mode='automatic', device=None). There is no OpenGL context
    to make current: set_context() and release_context() are accepted in 'manual' mode, as nvdiffrast's, and do
    nothing."""

    def __init__(self, output_db=True, mode="automatic", device=None):
        if mode not in ("automatic", "manual"):
            raise ValueError(f"mode: expected 'automatic' or 'manual', got {mode!r}")
        super().__init__(device=device, output_db=output_db)
        self.mode = mode

    def set_context(self):
        if self.mode != "manual":
            raise RuntimeError("set_context: the context's mode is 'automatic' (nvdiffrast allows it in 'manual')")

    def release_context(self):
        if self.mode != "manual":
            raise RuntimeError("release_context: the context's mode is 'automatic' (nvdiffrast allows it in "
                               "'manual')")


_log_level = 1


def get_log_level():
    """nvdiffrast's log level (0 info, 1 warnings, 2 errors, 3 fatal only): kept, not used (errors raise)."""
    return _log_level


def set_log_level(level):
    global _log_level
    _log_level = operator.index(level)


def _check_context(glctx):
    if not isinstance(glctx, RasterizeContext):
        raise TypeError(f"glctx: expected a RasterizeCudaContext or RasterizeGLContext, got {type(glctx).__name__}")


def _check_float(name, t, last=None, ndims=(2, 3)):
    if not isinstance(t, _torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
    if t.dtype != _torch.float32:
        raise TypeError(f"{name}: expected float32, got {t.dtype}")
    if t.dim() not in ndims or (last is not None and t.shape[-1] != last):
        raise ValueError(f"{name}: expected shape {'/'.join(str(n) for n in ndims)}-D"
                         f"{'' if last is None else f' with last dimension {last}'}, got {list(t.shape)}")
    if not t.is_contiguous():
        raise ValueError(f"{name}: must be contiguous")


def _check_tri(tri, vertices):
    if not isinstance(tri, _torch.Tensor):
        raise TypeError(f"tri: expected a torch.Tensor, got {type(tri).__name__}")
    if tri.dtype != _torch.int32:
        raise TypeError(f"tri: expected int32, got {tri.dtype}")
    if tri.dim() != 2 or tri.shape[1] != 3:
        raise ValueError(f"tri: expected shape [num_triangles, 3], got {list(tri.shape)}")
    if not tri.is_contiguous():
        raise ValueError("tri: must be contiguous")
    if tri.numel() and (int(tri.min()) < 0 or int(tri.max()) >= vertices):
        raise ValueError(f"tri: vertex indices must be in [0, {vertices}), got [{int(tri.min())}, {int(tri.max())}]")
    return tri.detach().cpu().numpy().astype(np.uint32)


class _Rasterize(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, pos, tri_np, height, width, id_offset, grad_db, previous=None):
        p = _to_numpy(pos)
        if previous is not None and id_offset:   # the kernel compares ids within this range
            previous = previous.copy()
            previous[..., 3] = np.where(previous[..., 3] > 0, previous[..., 3] - id_offset, 0)
        rast, db = _adjoint._rasterize(p, tri_np, height, width, previous)
        if id_offset:
            rast[..., 3] = np.where(rast[..., 3] > 0, rast[..., 3] + id_offset, 0)
        ctx.p, ctx.tri, ctx.rast, ctx.offset, ctx.device, ctx.grad_db = p, tri_np, rast, id_offset, pos.device, grad_db
        ctx.set_materialize_grads(False)   # an output the loss does not use gets None, not a zero image, in backward
        return _torch.from_numpy(rast).to(pos.device), _torch.from_numpy(db).to(pos.device)

    @staticmethod
    @_first_order("rasterize")
    def backward(ctx, grad_rast, grad_db):
        rast = ctx.rast
        if ctx.offset:
            rast = rast.copy()
            rast[..., 3] = np.where(rast[..., 3] > 0, rast[..., 3] - ctx.offset, 0)
        gr = np.zeros_like(rast) if grad_rast is None else _to_numpy(grad_rast)
        gd = None if grad_db is None or not ctx.grad_db else _to_numpy(grad_db)   # None: rast_db has no gradient
        g = _adjoint._rasterize_backward(ctx.p, ctx.tri, rast, gr, gd)
        return _torch.from_numpy(g).to(ctx.device), None, None, None, None, None, None


def rasterize(glctx, pos, tri, resolution, ranges=None, grad_db=True):
    """nvdiffrast.torch.rasterize: pos [B, V, 4] clip space (instanced mode) or [V, 4] with ranges [B, 2]
    (int32 start, count; range mode); tri int32 [T, 3]; resolution [height, width]. Returns (rast_out,
    rast_db), each float32 [B, height, width, 4]; rast_out is differentiable with respect to pos (through u, v
    and z/w) and rast_db with respect to pos unless grad_db is False; with the context's output_db False, rast_db
    is empty ([B, height, width, 0]), as nvdiffrast's. Triangles crossing w = 0 are clipped."""
    _check_context(glctx)
    rast, db = _rasterize(pos, tri, resolution, ranges, grad_db)
    if not glctx.output_db:
        db = _torch.empty(list(rast.shape[:3]) + [0], device=rast.device)
    return rast, db


def _resolution(resolution):
    """[height, width] as two integers (Python's, numpy's or torch's) in 1..2^31 - 1, as nvdiffrast takes it."""
    try:
        sides = [operator.index(v) for v in resolution]
    except TypeError:
        sides = []
    if len(sides) != 2 or any(isinstance(v, bool) for v in resolution) or not all(0 < v < 2**31 for v in sides):
        raise ValueError(f"resolution: expected [height, width], two integers > 0, got {resolution!r}")
    return sides


def _rasterize(pos, tri, resolution, ranges, grad_db, previous=None):
    """rasterize, or with `previous` (a layer's rast_out as numpy) the next depth layer (DepthPeeler)."""
    height, width = _resolution(resolution)
    if ranges is None:
        _check_float("pos", pos, 4, (3,))
        tri_np = _check_tri(tri, pos.shape[1])
        if previous is not None and previous.shape[0] != pos.shape[0]:
            raise ValueError(f"pos: minibatch {pos.shape[0]} differs from the peeled layers' {previous.shape[0]}")
        return _Rasterize.apply(pos, tri_np, height, width, 0, bool(grad_db), previous)
    _check_float("pos", pos, 4, (2,))
    if not isinstance(ranges, _torch.Tensor) or ranges.dtype != _torch.int32 or ranges.dim() != 2 or ranges.shape[1] != 2:
        raise TypeError("ranges: expected an int32 tensor [minibatch, 2] (start, count)")
    tri_np = _check_tri(tri, pos.shape[0])
    if ranges.shape[0] == 0:   # a minibatch of none
        empty = _torch.zeros((0, height, width, 4), device=pos.device)
        return empty, empty.clone()
    outs = []
    for i, (start, count) in enumerate(ranges.cpu().tolist()):
        if start < 0 or count < 0 or start + count > tri_np.shape[0]:
            raise ValueError(f"ranges: [{start}, {count}] is outside the {tri_np.shape[0]} triangles")
        if previous is not None and previous.shape[0] != ranges.shape[0]:
            raise ValueError(f"ranges: {ranges.shape[0]} ranges, the peeled layers have {previous.shape[0]}")
        prev = None if previous is None else np.ascontiguousarray(previous[i:i + 1])
        outs.append(_Rasterize.apply(pos[None], np.ascontiguousarray(tri_np[start:start + count]), height, width,
                                     start, bool(grad_db), prev))
    return _torch.cat([o[0] for o in outs]), _torch.cat([o[1] for o in outs])


class _Interpolate(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, attr, rast, tri_np, batched):
        a, r = _to_numpy(attr), _to_numpy(rast)
        a3 = a if batched else a[None]
        out = _adjoint._interpolate(a3, r, tri_np, batched)
        ctx.a, ctx.r, ctx.tri, ctx.batched, ctx.shape = a3, r, tri_np, batched, attr.shape
        return _torch.from_numpy(out).to(attr.device)

    @staticmethod
    @_first_order("interpolate")
    def backward(ctx, grad_out):
        ga, gr = _adjoint._interpolate(ctx.a, ctx.r, ctx.tri, ctx.batched, _to_numpy(grad_out))
        device = grad_out.device
        ga = _torch.from_numpy(ga).reshape(ctx.shape).to(device)
        gr = _torch.from_numpy(gr).to(device)   # z/w and the triangle id get 0: they do not enter the interpolation
        return ga, gr, None, None


class _InterpolateDerivatives(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, attr, rast_db, rast, tri_np, chosen, batched):
        a = _to_numpy(attr)
        a3 = a if batched else a[None]
        r, d = _to_numpy(rast), _to_numpy(rast_db)
        out = _adjoint._interpolate_da(a3, r, d, tri_np, chosen, batched)
        ctx.saved = (a3, r, d, tri_np, chosen, batched, attr.shape)
        return _torch.from_numpy(out).to(attr.device)

    @staticmethod
    @_first_order("interpolate")
    def backward(ctx, grad_out):
        a3, r, d, tri_np, chosen, batched, shape = ctx.saved
        ga, gd = _adjoint._interpolate_da(a3, r, d, tri_np, chosen, batched, _to_numpy(grad_out))
        device = grad_out.device
        return (_torch.from_numpy(ga).reshape(shape).to(device), _torch.from_numpy(gd).to(device),
                None, None, None, None)


def interpolate(attr, rast, tri, rast_db=None, diff_attrs=None):
    """nvdiffrast.torch.interpolate: attr [V, A] or [B, V, A] float32, rast [B, H, W, 4] from rasterize,
    tri int32 [T, 3]. Returns (out [B, H, W, A], out_da): out is differentiable with respect to attr and rast's
    (u, v). With rast_db and diff_attrs ('all' or a list of attribute indices), out_da [B, H, W, 2 * n] holds
    each chosen attribute's (d/dX, d/dY) per pixel, differentiable with respect to attr and rast_db; else it is
    empty."""
    _check_float("attr", attr, None, (2, 3))
    _check_float("rast", rast, 4, (4,))
    batched = attr.dim() == 3
    if batched and attr.shape[0] != rast.shape[0]:
        if attr.shape[0] != 1:
            raise ValueError(f"attr: minibatch {attr.shape[0]} differs from rast's {rast.shape[0]} (nor is it 1)")
        attr = attr.expand(rast.shape[0], -1, -1).contiguous()   # broadcast, as nvdiffrast; its gradient sums back
    every = isinstance(diff_attrs, str) and diff_attrs == "all"
    if diff_attrs is not None and not every:   # a numpy array is compared element by element: not with ==
        try:
            diff_attrs = [operator.index(i) for i in diff_attrs]
        except TypeError:
            raise ValueError(f"diff_attrs: expected 'all' or a list of attribute indices, got {diff_attrs!r}") from None
    tri_np = _check_tri(tri, attr.shape[-2])
    out = _Interpolate.apply(attr, rast, tri_np, batched)
    if diff_attrs is None:
        return out, _torch.empty(list(out.shape[:3]) + [0], device=out.device)
    if rast_db is None:
        raise ValueError("interpolate: diff_attrs needs rast_db (rasterize's second output)")
    _check_float("rast_db", rast_db, 4, (4,))
    if rast_db.shape != rast.shape:
        raise ValueError(f"rast_db: shape {list(rast_db.shape)} differs from rast's {list(rast.shape)}")
    count = attr.shape[-1]
    chosen = list(range(count)) if every else diff_attrs
    if any(i < 0 or i >= count for i in chosen):
        raise ValueError(f"diff_attrs: indices must be in [0, {count}), got {chosen}")
    if not chosen:
        return out, _torch.empty(list(out.shape[:3]) + [0], device=out.device)
    da = _InterpolateDerivatives.apply(attr, rast_db, rast, tri_np, np.array(chosen, np.uint32), batched)
    return out, da


from ._antialias import antialias, antialias_construct_topology_hash, DepthPeeler  # noqa: E402 (needs the above)
