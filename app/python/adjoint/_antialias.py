"""nvdiffrast's antialias, antialias_construct_topology_hash and DepthPeeler for adjoint.torch.

antialias's kernels are app/python/antialias_ops.cpp (forward and its $autodiff backward); DepthPeeler runs
raster_ops.cpp's rasterizer with the previous layer's depth as a per-pixel lower bound.
"""
import numpy as np
import torch as _torch

from . import _adjoint
from ._common import _first_order, _to_numpy

_NONE = 0xFFFFFFFF


def _checks():
    from .torch import _check_float, _check_tri   # torch.py imports this module at its end
    return _check_float, _check_tri


def _topology(tri_np, vertices):
    """[T, 6] uint32: per edge k of each triangle (the edge opposite vertex k), the triangle across it, then
    that triangle's vertex off the edge; _NONE on a boundary or a non-manifold edge (more than two triangles)."""
    t = tri_np.astype(np.int64)
    count = t.shape[0]
    a = np.stack([t[:, 1], t[:, 2], t[:, 0]], 1).reshape(-1)   # edge k joins vertices k+1 and k+2
    b = np.stack([t[:, 2], t[:, 0], t[:, 1]], 1).reshape(-1)
    key = np.minimum(a, b) * (vertices + 1) + np.maximum(a, b)
    order = np.argsort(key, kind="stable")
    ks = key[order]
    topo = np.full((count * 3, 2), _NONE, np.uint32)
    if count:
        starts = np.r_[True, ks[1:] != ks[:-1]]
        run = np.cumsum(starts) - 1
        sizes = np.bincount(run)
        pairs = np.nonzero((sizes[run] == 2) & starts)[0]   # first of each run of exactly two
        first, second = order[pairs], order[pairs + 1]
        for e, other in ((first, second), (second, first)):
            topo[e, 0] = other // 3
            topo[e, 1] = t.reshape(-1)[other]   # edge k of a triangle is opposite its vertex k
    return np.ascontiguousarray(topo.reshape(count, 3, 2).transpose(0, 2, 1).reshape(count, 6))


def antialias_construct_topology_hash(tri):
    """nvdiffrast.torch.antialias_construct_topology_hash: the topology of tri (int32 [T, 3]) for antialias,
    worth keeping when the same triangles are antialiased many times. An int32 tensor [T, 6]: opaque."""
    _, check_tri = _checks()
    tri_np = check_tri(tri, 2 ** 31 - 1)
    vertices = int(tri_np.max()) + 1 if tri_np.size else 0
    return _torch.from_numpy(_topology(tri_np, vertices).view(np.int32)).to(tri.device)


class _Antialias(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, color, pos, rast_np, tri_np, topo_np, batched, boost):
        c, p = _to_numpy(color), _to_numpy(pos)
        p3 = p if batched else p[None]
        out, blends = _adjoint._antialias(c, rast_np, p3, tri_np, topo_np, batched)
        ctx.saved = (c, p3, rast_np, tri_np, topo_np, batched, blends, boost, pos.shape)
        return _torch.from_numpy(out).to(color.device)

    @staticmethod
    @_first_order("antialias")
    def backward(ctx, grad_out):
        c, p3, rast_np, tri_np, topo_np, batched, blends, boost, shape = ctx.saved
        g = _to_numpy(grad_out)
        gc, gp = _adjoint._antialias(c, rast_np, p3, tri_np, topo_np, batched, blends, g)
        device = grad_out.device
        gc = _torch.from_numpy(gc + g).to(device)   # + the pass-through (out = color + blends)
        gp = _torch.from_numpy(gp * np.float32(boost)).reshape(shape).to(device)
        return gc, gp, None, None, None, None, None


def antialias(color, rast, pos, tri, topology_hash=None, pos_gradient_boost=1.0):
    """nvdiffrast.torch.antialias: color float32 [B, H, W, C], rast [B, H, W, 4] from rasterize, pos the clip-space
    positions given to rasterize ([B, V, 4], or [V, 4] in range mode), tri int32 [T, 3]. Returns the colours
    with silhouette edges blended by their coverage, [B, H, W, C], differentiable with respect to color and pos
    (the latter scaled by pos_gradient_boost), not rast."""
    check_float, check_tri = _checks()
    check_float("color", color, None, (4,))
    check_float("rast", rast, 4, (4,))
    check_float("pos", pos, 4, (2, 3))
    if rast.shape[:3] != color.shape[:3]:
        raise ValueError(f"rast: shape {list(rast.shape)} does not match color's {list(color.shape)}")
    batched = pos.dim() == 3
    if batched and pos.shape[0] != color.shape[0]:
        raise ValueError(f"pos: minibatch {pos.shape[0]} differs from color's {color.shape[0]}")
    tri_np = check_tri(tri, pos.shape[-2])
    if topology_hash is None:
        topo_np = _topology(tri_np, pos.shape[-2])
    else:
        if not isinstance(topology_hash, _torch.Tensor) or topology_hash.dtype != _torch.int32:
            raise TypeError("topology_hash: expected the int32 tensor of antialias_construct_topology_hash")
        if tuple(topology_hash.shape) != (tri_np.shape[0], 6):
            raise ValueError(f"topology_hash: built for {topology_hash.shape[0] if topology_hash.dim() else 0} "
                             f"triangles, tri has {tri_np.shape[0]}")
        topo_np = np.ascontiguousarray(topology_hash.detach().cpu().numpy().view(np.uint32))
        if topo_np.size and ((topo_np[:, :3] != _NONE) & (topo_np[:, :3] >= tri_np.shape[0])).any():
            raise ValueError("topology_hash: does not belong to these triangles")
    try:
        boost = float(pos_gradient_boost)
    except (TypeError, ValueError):
        raise TypeError(f"pos_gradient_boost: expected a number, got {pos_gradient_boost!r}") from None
    rast_np = np.ascontiguousarray(rast.detach().to("cpu").numpy())
    ids = rast_np[..., 3]
    if ids.size and (ids.max() > tri_np.shape[0] or ids.min() < 0):
        raise ValueError(f"rast: triangle ids up to {int(ids.max())}, tri has {tri_np.shape[0]} triangles")
    return _Antialias.apply(color, pos, rast_np, tri_np, topo_np, batched, boost)


class DepthPeeler:
    """nvdiffrast.torch.DepthPeeler: the depth layers of a mesh, nearest first, as a context manager:

        with DepthPeeler(glctx, pos, tri, resolution) as peeler:
            for i in range(layers):
                rast, rast_db = peeler.rasterize_next_layer()

    Each call returns what rasterize returns (same arguments, same gradients) for the surfaces behind the
    previous layer's at each pixel, ordered by (z/w, triangle id); pixels with nothing left are 0."""

    def __init__(self, glctx, pos, tri, resolution, ranges=None, grad_db=True):
        from .torch import _rasterize, _check_context
        _check_context(glctx)
        self._rasterize = _rasterize
        self._output_db = glctx.output_db
        self._args = (pos, tri, resolution, ranges, grad_db)
        self._previous = None
        self._active = False

    def __enter__(self):
        if self._active:
            raise RuntimeError("DepthPeeler: already entered")
        self._active, self._previous = True, None
        return self

    def __exit__(self, *exc):
        self._active, self._previous = False, None
        return False

    def rasterize_next_layer(self):
        if not self._active:
            raise RuntimeError("DepthPeeler: rasterize_next_layer() outside its `with` block")
        pos, tri, resolution, ranges, grad_db = self._args
        rast, db = self._rasterize(pos, tri, resolution, ranges, grad_db, self._previous)
        self._previous = np.ascontiguousarray(rast.detach().cpu().numpy())
        if not self._output_db:   # as rasterize with the context's output_db False
            db = _torch.empty(list(rast.shape[:3]) + [0], device=rast.device)
        return rast, db
