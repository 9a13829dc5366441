"""nvdiffrast's texture and texture_construct_mip for adjoint.torch (kernels in app/python/texture_ops.cpp).

Same arguments, shapes, dtypes and conventions as nvdiffrast.torch: tex float32 [minibatch, H, W, C] (or a cube
map [minibatch, 6, H, W, C], faces +x, -x, +y, -y, +z, -z), minibatch 1 shared by every image; uv float32
[minibatch, height, width, 2] ((0, 0) the corner of the first texel in memory, texel centres at half-integers)
or, for a cube, [..., 3] directions; uv_da [..., 4] = (du/dX, du/dY, dv/dX, dv/dY) (cube: [..., 6], the
direction's); mip_level_bias [minibatch, height, width]. The output [minibatch, height, width, C] is
differentiable with respect to tex, uv, uv_da and mip_level_bias (the last two through the mip level in
'linear-mipmap-linear'). Tensors on another device (CUDA) are copied through the host.
Cube maps: a bilinear tap past a face's edge reads the neighbouring face's texel; a tap past a corner (outside
in both directions, where three faces meet) reads the mean of the quad's other three taps.
"""
import operator

import numpy as np
import torch as _torch

from . import _adjoint
from ._common import _first_order, _to_numpy

__all__ = ["texture", "texture_construct_mip", "TextureMipWrapper"]

_FILTERS = {"nearest": 0, "linear": 1, "linear-mipmap-nearest": 2, "linear-mipmap-linear": 3}
_BOUNDARIES = {"wrap": 0, "clamp": 1, "zero": 2, "cube": 3}


def _check(name, t, ndim, last=None, lead=None):
    """A float32, contiguous tensor of `ndim` dimensions (last one `last`, leading ones `lead`)."""
    if not isinstance(t, _torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
    if t.dtype != _torch.float32:
        raise TypeError(f"{name}: expected float32, got {t.dtype}")
    shape = list(t.shape)
    if t.dim() != ndim or (last is not None and shape[-1] != last) or (lead is not None and shape[:len(lead)] != lead):
        want = f"{ndim}-D" + (f" with last dimension {last}" if last is not None else "") + \
            (f" starting {lead}" if lead is not None else "")
        raise ValueError(f"{name}: expected shape {want}, got {shape}")
    if not t.is_contiguous():
        raise ValueError(f"{name}: must be contiguous")


def _tex_layout(tex, cube):
    """(minibatch, faces, height, width, channels) of a texture, checked."""
    if cube:
        _check("tex", tex, 5)
        if tex.shape[1] != 6 or tex.shape[2] != tex.shape[3]:
            raise ValueError(f"tex: a cube map is [minibatch, 6, size, size, channels], got {list(tex.shape)}")
        b, f, h, w, c = tex.shape
    else:
        _check("tex", tex, 4)
        (b, h, w, c), f = tex.shape, 1
    if min(b, h, w, c) <= 0:
        raise ValueError(f"tex: every dimension must be > 0, got {list(tex.shape)}")
    return b, f, h, w, c


def _mip_sizes(h, w, max_mip_level):
    """The (height, width) of every level: halved (a side of 1 stays 1) until 1 x 1 or max_mip_level levels above
    the base; a side that is odd and over 1 cannot be halved."""
    sizes = [(h, w)]
    while (h > 1 or w > 1) and (max_mip_level is None or len(sizes) <= max_mip_level):
        if (h > 1 and h % 2) or (w > 1 and w % 2):
            raise ValueError(f"tex: mip level {len(sizes) - 1} is {h}x{w}, which cannot be halved (each side must be "
                             f"even or 1); pass max_mip_level={len(sizes) - 1} or a texture whose sides are powers of two")
        h, w = max(1, h // 2), max(1, w // 2)
        sizes.append((h, w))
    return sizes


def _table(sizes, images, channels):
    """[levels, 4] uint32 records (offset in floats, width, height, images) and the total number of floats."""
    table, offset = [], 0
    for h, w in sizes:
        table.append((offset, w, h, images))
        offset += images * h * w * channels
    return np.array(table, np.uint32).reshape(-1, 4), offset


class TextureMipWrapper:
    """A mip stack made by texture_construct_mip, for texture(..., mip=...): every level above the base."""

    def __init__(self, stack, table, layout, cube):
        self.stack, self.table, self.layout, self.cube = stack, table, layout, cube


def _check_max_level(max_mip_level):
    """max_mip_level as an int (numpy's and torch's integers too), or None."""
    if max_mip_level is None:
        return None
    try:
        level = operator.index(max_mip_level)
    except TypeError:
        level = -1
    if isinstance(max_mip_level, bool) or level < 0:
        raise ValueError(f"max_mip_level: expected None or an integer >= 0, got {max_mip_level!r}")
    return level


def texture_construct_mip(tex, max_mip_level=None, cube_mode=False):
    """nvdiffrast.torch.texture_construct_mip: the mip stack of tex ([minibatch, H, W, C], or a cube map with
    cube_mode), each level the 2x2 mean of the one below, for texture(..., mip=...)."""
    max_mip_level = _check_max_level(max_mip_level)
    b, f, h, w, c = _tex_layout(tex, cube_mode)
    sizes = _mip_sizes(h, w, max_mip_level)
    table, total = _table(sizes, b * f, c)
    stack = np.zeros(total, np.float32)
    stack[:tex.numel()] = _to_numpy(tex).reshape(-1)
    return TextureMipWrapper(_adjoint._texture_build_mip(stack, table, b * f, c), table, (b, f, h, w, c), cube_mode)


class _Texture(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, cfg, tex, uv, uv_da, bias, *levels):
        stack = cfg["stack"].copy() if cfg["stack"] is not None else np.zeros(cfg["total"], np.float32)
        stack[:tex.numel()] = _to_numpy(tex).reshape(-1)
        if cfg["source"] == "build":
            stack = _adjoint._texture_build_mip(stack, cfg["table"], cfg["images"], cfg["channels"])
        for level, record in zip(levels, cfg["table"][1:]):
            stack[record[0]:record[0] + level.numel()] = _to_numpy(level).reshape(-1)
        n = uv.shape[-1]
        arrays = (_to_numpy(uv).reshape(-1, n), None if uv_da is None else _to_numpy(uv_da).reshape(-1, uv_da.shape[-1]),
                  None if bias is None else _to_numpy(bias).reshape(-1))
        out = _adjoint._texture(stack, cfg["table"], *arrays, cfg["c0"], cfg["c1"], cfg["cube"])
        ctx.cfg, ctx.stack, ctx.arrays = cfg, stack, arrays
        ctx.shapes = (tex.shape, uv.shape, None if uv_da is None else uv_da.shape, None if bias is None else bias.shape,
                      [l.shape for l in levels])
        ctx.device = uv.device
        return _torch.from_numpy(out.reshape(*uv.shape[:3], cfg["channels"])).to(uv.device)

    @staticmethod
    @_first_order("texture")
    def backward(ctx, grad_out):
        cfg = ctx.cfg
        chain = cfg["source"] in ("build", "wrapper")   # tex reaches every level through the mip chain
        gs, gu, gd, gb = _adjoint._texture(ctx.stack, cfg["table"], *ctx.arrays, cfg["c0"], cfg["c1"], cfg["cube"],
                                           _to_numpy(grad_out).reshape(-1, cfg["channels"]), chain)
        tex_shape, uv_shape, da_shape, bias_shape, level_shapes = ctx.shapes

        def back(a, shape):
            return None if shape is None else _torch.from_numpy(np.ascontiguousarray(a)).reshape(shape).to(ctx.device)
        n0 = int(np.prod(tex_shape))
        level_grads = [back(gs[r[0]:r[0] + int(np.prod(s))], s) for r, s in zip(cfg["table"][1:], level_shapes)]
        return (None, back(gs[:n0], tex_shape), back(gu, uv_shape), back(gd, da_shape), back(gb, bias_shape),
                *level_grads)


def _check_inputs(tex, uv, uv_da, mip_level_bias, cube):
    layout = _tex_layout(tex, cube)
    _check("uv", uv, 4, 3 if cube else 2)
    lead = list(uv.shape[:3])
    if layout[0] not in (1, lead[0]):
        raise ValueError(f"tex: minibatch {layout[0]} must be 1 or uv's {lead[0]}")
    if uv_da is not None:
        _check("uv_da", uv_da, 4, 6 if cube else 4, lead)
    if mip_level_bias is not None:
        _check("mip_level_bias", mip_level_bias, 3, None, lead)
    return layout


def _mip_source(mip, layout, cube, sizes):
    """('build' | 'wrapper' | 'custom', the wrapper's stack or None, the custom level tensors)."""
    if mip is None:
        return "build", None, []
    if isinstance(mip, TextureMipWrapper):
        if mip.layout != layout or mip.cube != cube:
            raise ValueError(f"mip: built for a texture of layout {mip.layout}, this one is {layout}")
        return "wrapper", mip.stack, []
    if not isinstance(mip, (list, tuple)):
        raise TypeError(f"mip: expected a TextureMipWrapper or a list of tensors, got {type(mip).__name__}")
    b, f, h0, w0, c = layout
    if len(mip) > len(sizes) - 1:   # a level past 1x1 would never be read
        raise ValueError(f"mip: {len(mip)} levels, but a {h0}x{w0} texture has {len(sizes) - 1} above its base")
    for k, level in enumerate(mip):
        h, w = sizes[k + 1]
        _check(f"mip[{k}]", level, 5 if cube else 4, c, [b, 6] if cube else [b])
        if tuple(level.shape[-3:-1]) != (h, w):
            raise ValueError(f"mip[{k}]: expected level {k + 1} of size {h}x{w}, got {list(level.shape)}")
    return "custom", None, list(mip)


def texture(tex, uv, uv_da=None, mip_level_bias=None, mip=None, filter_mode="auto", boundary_mode="wrap",
            max_mip_level=None):
    """nvdiffrast.torch.texture: tex sampled at uv with the filter mode ('auto' is 'linear-mipmap-linear' when
    uv_da or mip_level_bias is given, else 'linear') and the boundary mode ('wrap', 'clamp', 'zero', or 'cube'
    for a cube map). mip: texture_construct_mip's stack, or a list of tensors, one per level above the base
    (gradients then go to them). Returns float32 [minibatch, height, width, C]."""
    if filter_mode != "auto" and filter_mode not in _FILTERS:
        raise ValueError(f"filter_mode: expected one of auto, {', '.join(_FILTERS)}, got {filter_mode!r}")
    if boundary_mode not in _BOUNDARIES:
        raise ValueError(f"boundary_mode: expected one of {', '.join(_BOUNDARIES)}, got {boundary_mode!r}")
    max_mip_level = _check_max_level(max_mip_level)
    cube = boundary_mode == "cube"
    b, f, h, w, c = _check_inputs(tex, uv, uv_da, mip_level_bias, cube)
    if filter_mode == "auto":
        filter_mode = "linear-mipmap-linear" if uv_da is not None or mip_level_bias is not None else "linear"
    mipmapped = _FILTERS[filter_mode] >= 2
    if mipmapped and uv_da is None and mip_level_bias is None:
        raise ValueError(f"filter_mode {filter_mode!r} needs uv_da or mip_level_bias to choose the mip level")
    if mipmapped and isinstance(mip, (list, tuple)):
        sizes = _mip_sizes(h, w, len(mip))[:len(mip) + 1]
    elif mipmapped:
        sizes = _mip_sizes(h, w, max_mip_level)
    else:
        sizes = [(h, w)]
    source, stack, levels = _mip_source(mip, (b, f, h, w, c), cube, sizes) if mipmapped else ("none", None, [])
    if source == "wrapper":
        table = mip.table
        total = len(stack)
    else:
        table, total = _table(sizes, b * f, c)
    flags = (1 if uv_da is not None else 0) | (2 if mip_level_bias is not None else 0)
    cfg = {"source": source, "stack": stack, "table": table, "total": total, "images": b * f, "channels": c,
           "cube": cube, "c0": (_FILTERS[filter_mode], _BOUNDARIES[boundary_mode], len(table), c),
           "c1": (uv.shape[1] * uv.shape[2], int(b > 1), f, flags)}
    return _Texture.apply(cfg, tex, uv, uv_da, mip_level_bias, *levels)
