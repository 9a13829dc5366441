# adjoint.torch.texture (nvdiffrast's conventions) against an independent numpy computation: nearest and
# bilinear lookups per boundary mode, mip pyramids by reshaped means, trilinear blends with the level from the
# footprint's largest singular value, cube maps by OpenGL's face table; gradients of tex, uv, uv_da and
# mip_level_bias against central differences, and whole gradients against torch's autograd of a bilinear lookup;
# bad inputs.
import numpy as np
import pytest
import torch

import adjoint.torch as dr

RNG = np.random.default_rng(7)


# ---- the numpy reference ------------------------------------------------------------------------------------

def mip_levels(tex, count=None):
    """tex [..., H, W, C] and its 2x2 means (a side of 1 kept) until 1x1 or `count` levels above the base."""
    levels = [tex]
    while levels[-1].shape[-3] > 1 or levels[-1].shape[-2] > 1:
        if count is not None and len(levels) > count:
            break
        t = levels[-1]
        h, w = t.shape[-3], t.shape[-2]
        t = t.reshape(*t.shape[:-3], max(h // 2, 1), min(h, 2), max(w // 2, 1), min(w, 2), t.shape[-1])
        levels.append(t.mean(axis=(-4, -2)))
    return levels


def fetch(img, x, y, boundary):
    """img [H, W, C] at integer (x, y) after the boundary mode."""
    h, w = img.shape[:2]
    if boundary == "wrap":
        return img[y % h, x % w]
    if boundary == "clamp":
        return img[min(max(y, 0), h - 1), min(max(x, 0), w - 1)]
    if 0 <= x < w and 0 <= y < h:
        return img[y, x]
    return np.zeros(img.shape[2])


def sample(img, s, t, linear, boundary, fetcher=None, cube=False):
    fetcher = fetcher or (lambda x, y: fetch(img, x, y, boundary))
    h, w = img.shape[:2]
    if not linear:
        return fetcher(int(np.floor(s * w)), int(np.floor(t * h)))
    x, y = s * w - 0.5, t * h - 0.5
    x0, y0 = int(np.floor(x)), int(np.floor(y))
    fx, fy = x - x0, y - y0
    taps = {(i, j): fetcher(x0 + i, y0 + j) for i in (0, 1) for j in (0, 1)}
    if cube:   # a tap past a corner of the face: the mean of the other three
        for (i, j) in taps:
            if not (0 <= x0 + i < w) and not (0 <= y0 + j < h):
                taps[i, j] = sum(v for k, v in taps.items() if k != (i, j)) / 3
    return ((1 - fx) * (1 - fy) * taps[0, 0] + fx * (1 - fy) * taps[1, 0] +
            (1 - fx) * fy * taps[0, 1] + fx * fy * taps[1, 1])


def trilinear(levels, level, sampler):
    level = min(max(level, 0.0), len(levels) - 1)
    l0 = int(np.floor(level))
    f = level - l0
    v = sampler(levels[l0])
    return v if f == 0 else (1 - f) * v + f * sampler(levels[min(l0 + 1, len(levels) - 1)])


def footprint_level(jac):
    """log2 of the footprint's major axis: the largest singular value of [[ds/dX, ds/dY], [dt/dX, dt/dY]]."""
    return np.log2(np.linalg.svd(jac, compute_uv=False)[0])


# OpenGL's cube table: face -> (sc, tc, major) as functions of the direction.
FACES = [lambda d: (-d[2], -d[1], d[0]), lambda d: (d[2], -d[1], -d[0]), lambda d: (d[0], d[2], d[1]),
         lambda d: (d[0], -d[2], -d[1]), lambda d: (d[0], -d[1], d[2]), lambda d: (-d[0], -d[1], -d[2])]


def cube_face(d):
    a = np.abs(d)
    if a[0] >= a[1] and a[0] >= a[2]:
        return 0 if d[0] >= 0 else 1
    if a[1] >= a[2]:
        return 2 if d[1] >= 0 else 3
    return 4 if d[2] >= 0 else 5


def cube_st(d):
    f = cube_face(d)
    sc, tc, m = FACES[f](d)
    return f, (sc / m + 1) / 2, (tc / m + 1) / 2


def cube_fetch(faces, face, x, y):
    """faces [6, S, S, C]: texel (x, y) of `face`, continued onto the neighbouring face past an edge."""
    n = faces.shape[1]
    if 0 <= x < n and 0 <= y < n:
        return faces[face, y, x]
    sc, tc = 2 * (x + 0.5) / n - 1, 2 * (y + 0.5) / n - 1
    # The direction whose projection on `face` is (sc, tc): solve the face's linear map with major 1.
    basis = np.array([FACES[face](e) for e in np.eye(3)]).T      # rows: sc, tc, major as linear forms
    d = np.linalg.solve(basis, [sc, tc, 1.0])
    f2, s, t = cube_st(d)
    return faces[f2, min(max(int(np.floor(t * n)), 0), n - 1), min(max(int(np.floor(s * n)), 0), n - 1)]


def t32(a):
    return torch.tensor(np.asarray(a), dtype=torch.float32)


# ---- lookups ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("boundary", ["wrap", "clamp", "zero"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_2d_lookups_match_numpy(boundary, mode):
    tex = RNG.random((2, 8, 16, 3))
    uv = RNG.uniform(-0.6, 1.6, (2, 5, 7, 2))
    out = dr.texture(t32(tex), t32(uv), filter_mode=mode, boundary_mode=boundary).numpy()
    assert out.shape == (2, 5, 7, 3)
    for b, i, j in np.ndindex(2, 5, 7):
        want = sample(tex[b], uv[b, i, j, 0], uv[b, i, j, 1], mode == "linear", boundary)
        np.testing.assert_allclose(out[b, i, j], want, atol=2e-5, err_msg=f"pixel {b, i, j}")


def test_texel_centres_read_their_texel_and_minibatch_one_is_shared():
    tex = RNG.random((1, 4, 8, 2))
    # Texel (x=5, y=1): u = 5.5 / 8, v = 1.5 / 4; row 0 of the texture is v = 0.
    uv = t32([[[[5.5 / 8, 1.5 / 4]]], [[[0.5 / 8, 3.5 / 4]]]])
    out = dr.texture(t32(tex), uv, filter_mode="linear").numpy()
    np.testing.assert_allclose(out[0, 0, 0], tex[0, 1, 5], atol=1e-6)
    np.testing.assert_allclose(out[1, 0, 0], tex[0, 3, 0], atol=1e-6)
    # Halfway between texels (x 5, 6) of row 1: their mean.
    mid = dr.texture(t32(tex), t32([[[[6.0 / 8, 1.5 / 4]]]])).numpy()
    np.testing.assert_allclose(mid[0, 0, 0], (tex[0, 1, 5] + tex[0, 1, 6]) / 2, atol=1e-6)


@pytest.mark.parametrize("boundary", ["wrap", "clamp", "zero"])
def test_trilinear_with_bias_and_uv_da_matches_numpy(boundary):
    tex = RNG.random((1, 16, 32, 2))
    levels = mip_levels(tex[0])
    uv = RNG.uniform(-0.2, 1.2, (1, 4, 6, 2))
    bias = RNG.uniform(-0.5, 6.5, (1, 4, 6))
    da = RNG.normal(0, 0.05, (1, 4, 6, 4))
    out_bias = dr.texture(t32(tex), t32(uv), mip_level_bias=t32(bias), boundary_mode=boundary).numpy()
    out_da = dr.texture(t32(tex), t32(uv), uv_da=t32(da), mip_level_bias=t32(bias * 0.2), boundary_mode=boundary).numpy()
    out_nearest = dr.texture(t32(tex), t32(uv), mip_level_bias=t32(bias), filter_mode="linear-mipmap-nearest",
                             boundary_mode=boundary).numpy()
    for i, j in np.ndindex(4, 6):
        def s(img):
            return sample(img, uv[0, i, j, 0], uv[0, i, j, 1], True, boundary)
        np.testing.assert_allclose(out_bias[0, i, j], trilinear(levels, bias[0, i, j], s), atol=3e-5)
        np.testing.assert_allclose(out_nearest[0, i, j], trilinear(levels, np.floor(bias[0, i, j] + 0.5), s), atol=3e-5)
        jac = np.array([[da[0, i, j, 0] * 32, da[0, i, j, 1] * 32], [da[0, i, j, 2] * 16, da[0, i, j, 3] * 16]])
        level = footprint_level(jac) + 0.2 * bias[0, i, j]
        np.testing.assert_allclose(out_da[0, i, j], trilinear(levels, level, s), atol=3e-4)


def test_max_mip_level_and_constructed_or_custom_mips():
    tex = RNG.random((1, 8, 8, 3))
    uv = RNG.uniform(0, 1, (1, 3, 3, 2))
    bias = np.full((1, 3, 3), 5.0)
    capped = dr.texture(t32(tex), t32(uv), mip_level_bias=t32(bias), max_mip_level=1).numpy()
    levels = mip_levels(tex[0], 1)
    for i, j in np.ndindex(3, 3):
        np.testing.assert_allclose(capped[0, i, j], sample(levels[1], *uv[0, i, j], True, "wrap"), atol=2e-5)
    bias = t32(RNG.uniform(0, 3, (1, 3, 3)))
    plain = dr.texture(t32(tex), t32(uv), mip_level_bias=bias)
    built = dr.texture(t32(tex), t32(uv), mip_level_bias=bias, mip=dr.texture_construct_mip(t32(tex)))
    custom = dr.texture(t32(tex), t32(uv), mip_level_bias=bias, mip=[t32(l[None]) for l in mip_levels(tex[0])[1:]])
    np.testing.assert_allclose(built.numpy(), plain.numpy(), atol=1e-6)
    np.testing.assert_allclose(custom.numpy(), plain.numpy(), atol=1e-6)
    # max_mip_level as numpy's integer; a level past 1x1 in a custom list is refused (it would never be read).
    numpy_capped = dr.texture(t32(tex), t32(uv), mip_level_bias=t32(np.full((1, 3, 3), 5.0)), max_mip_level=np.int64(1))
    np.testing.assert_array_equal(numpy_capped.numpy(), capped)
    too_many = [t32(l[None]) for l in mip_levels(tex[0])[1:]] + [t32(np.zeros((1, 1, 1, 3)))]
    with pytest.raises(ValueError, match=r"mip: 4 levels, but a 8x8 texture has 3 above its base"):
        dr.texture(t32(tex), t32(uv), mip_level_bias=bias, mip=too_many)


def random_directions(n, rng):
    d = rng.normal(size=(n, 3))
    return d / np.linalg.norm(d, axis=1, keepdims=True)


@pytest.mark.parametrize("mode", ["nearest", "linear", "linear-mipmap-linear"])
@pytest.mark.parametrize("channels", [3, 8])
def test_cube_lookups_match_numpy(mode, channels):
    faces = RNG.random((1, 6, 8, 8, channels))
    dirs = random_directions(40, RNG)
    dirs[:6] = [[1, 0.3, -0.2], [-1, 0.95, 0.1], [0.2, 1, 0.97], [0.1, -1, -0.4], [-0.3, 0.2, 1], [0.5, -0.7, -1]]
    bias = RNG.uniform(0, 3, (1, 1, 40))
    kwargs = {"mip_level_bias": t32(bias)} if mode.endswith("linear") and "mipmap" in mode else {}
    out = dr.texture(t32(faces), t32(dirs.reshape(1, 1, 40, 3)), filter_mode=mode, boundary_mode="cube", **kwargs)
    out = out.numpy()
    levels = mip_levels(faces[0])
    for k, d in enumerate(dirs):
        f, s, t = cube_st(d)

        def lookup(lv):
            return sample(lv[f], s, t, mode != "nearest", None, lambda x, y: cube_fetch(lv, f, x, y), cube=True)
        want = trilinear(levels, bias[0, 0, k], lookup) if kwargs else lookup(levels[0])
        np.testing.assert_allclose(out[0, 0, k], want, atol=3e-5, err_msg=f"direction {d}")


# ---- gradients --------------------------------------------------------------------------------------------

def central_differences(f, x, picks, eps):
    """d f / d x at the flat indices `picks` (x float64 numpy), by central differences."""
    out = []
    for k in picks:
        xp, xm = x.copy(), x.copy()
        xp.flat[k] += eps
        xm.flat[k] -= eps
        out.append((f(xp) - f(xm)) / (2 * eps))
    return np.array(out)


def check_gradients(run, inputs, eps, rtol, atol, picks=8):
    """run(**tensors) -> output; loss = <output, weights>; each input's autograd gradient against differences."""
    out = run(**{k: t32(v) for k, v in inputs.items()})
    weights = RNG.normal(size=out.shape)
    tensors = {k: t32(v).requires_grad_(True) for k, v in inputs.items()}
    (run(**tensors) * t32(weights)).sum().backward()
    for name, value in inputs.items():
        def loss(x):
            args = {k: t32(x if k == name else v) for k, v in inputs.items()}
            return float((run(**args).double() * torch.tensor(weights)).sum())
        ks = RNG.choice(value.size, size=min(picks, value.size), replace=False)
        want = central_differences(loss, value.astype(np.float64), ks, eps[name])
        got = tensors[name].grad.numpy().reshape(-1)[ks]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"d loss / d {name}")


@pytest.mark.parametrize("boundary", ["wrap", "clamp", "zero"])
def test_gradients_of_tex_and_uv_bilinear(boundary):
    inputs = {"tex": RNG.random((1, 8, 8, 2)), "uv": RNG.uniform(-0.3, 1.3, (1, 4, 4, 2))}
    check_gradients(lambda tex, uv: dr.texture(tex, uv, filter_mode="linear", boundary_mode=boundary), inputs,
                    {"tex": 1e-2, "uv": 1e-4}, rtol=2e-2, atol=2e-3)


def test_gradients_of_tex_uv_uv_da_and_bias_trilinear():
    inputs = {"tex": RNG.random((1, 16, 16, 2)), "uv": RNG.uniform(0, 1, (1, 3, 4, 2)),
              "uv_da": RNG.normal(0, 0.08, (1, 3, 4, 4)), "mip_level_bias": RNG.uniform(-0.3, 0.8, (1, 3, 4))}
    check_gradients(lambda **a: dr.texture(**a, filter_mode="linear-mipmap-linear"), inputs,
                    {"tex": 1e-2, "uv": 1e-4, "uv_da": 1e-4, "mip_level_bias": 1e-3}, rtol=3e-2, atol=3e-3)


@pytest.mark.parametrize("channels", [1, 4])
def test_gradients_of_a_cube_map_and_its_directions(channels):
    dirs = random_directions(12, RNG).reshape(1, 3, 4, 3)
    inputs = {"tex": RNG.random((1, 6, 4, 4, channels)), "uv": dirs,
              "mip_level_bias": RNG.uniform(0.1, 0.9, (1, 3, 4))}
    check_gradients(lambda tex, uv, mip_level_bias: dr.texture(tex, uv, mip_level_bias=mip_level_bias,
                                                               boundary_mode="cube"), inputs,
                    {"tex": 1e-2, "uv": 1e-4, "mip_level_bias": 1e-3}, rtol=3e-2, atol=3e-3)


def test_custom_mip_levels_receive_their_gradients():
    tex = t32(RNG.random((1, 4, 4, 1))).requires_grad_(True)
    level1 = t32(RNG.random((1, 2, 2, 1))).requires_grad_(True)
    out = dr.texture(tex, t32([[[[0.3, 0.6]]]]), mip_level_bias=t32([[[1.0]]]), mip=[level1])
    out.sum().backward()
    assert float(tex.grad.abs().sum()) == 0.0                      # level 1 alone is read
    np.testing.assert_allclose(float(level1.grad.sum()), 1.0, atol=1e-6)   # bilinear weights sum to 1


def torch_bilinear_wrap(tex, uv, nearest=False):
    """An independent bilinear (or nearest) lookup with wrap in torch (float64): tex [1, H, W, C], uv [1, h, w, 2]."""
    h, w = tex.shape[1], tex.shape[2]
    p = (uv - torch.floor(uv)) * torch.tensor([w, h], dtype=uv.dtype) - (0.0 if nearest else 0.5)
    f = torch.floor(p)
    t = torch.zeros_like(p) if nearest else p - f
    x0, y0 = f[..., 0].long(), f[..., 1].long()

    def at(x, y):
        return tex[0][y % h, x % w]
    tx, ty = t[..., :1], t[..., 1:]
    top = at(x0, y0) * (1 - tx) + at(x0 + 1, y0) * tx
    bottom = at(x0, y0 + 1) * (1 - tx) + at(x0 + 1, y0 + 1) * tx
    return top * (1 - ty) + bottom * ty


@pytest.mark.parametrize("channels,mode", [(1, "linear"), (3, "linear"), (4, "linear"), (5, "linear"), (8, "linear"),
                                           (3, "nearest")])
def test_whole_gradients_of_a_magnified_texture_match_torch_autograd(channels, mode):
    # Neighbouring pixels share taps (about 4 pixels a texel), so the backward pass's sums over a run of pixels and
    # its channel groups (all of 1-4 channels at once, 5 one at a time, 8 four at a time) are all exercised, and with
    # nearest filtering the taps it skips (weight 0); every texel's and every pixel's gradient is compared.
    tex = RNG.random((1, 6, 10, channels))
    ys, xs = np.meshgrid(np.arange(24), np.arange(40), indexing="ij")
    uv = np.stack([(xs + 0.5) / 40 * 1.3 - 0.1, (ys + 0.5) / 24 * 1.2 - 0.05], -1)[None]
    uv = uv + RNG.normal(0, 0.004, uv.shape)
    weights = RNG.normal(size=(1, 24, 40, channels))
    got_tex, got_uv = t32(tex).requires_grad_(True), t32(uv).requires_grad_(True)
    out = dr.texture(got_tex, got_uv, filter_mode=mode, boundary_mode="wrap")
    (out * t32(weights)).sum().backward()
    ref_tex = torch.tensor(tex, requires_grad=True)
    ref_uv = torch.tensor(uv, requires_grad=True)
    ref = torch_bilinear_wrap(ref_tex, ref_uv, nearest=mode == "nearest")
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=2e-5)
    (ref * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(got_tex.grad.numpy(), ref_tex.grad.numpy(), rtol=1e-4, atol=1e-4)
    want_uv = np.zeros(uv.shape) if ref_uv.grad is None else ref_uv.grad.numpy()   # nearest: uv has none
    np.testing.assert_allclose(got_uv.grad.numpy(), want_uv, rtol=1e-3, atol=2e-3)


def test_thousands_of_channels_stay_within_lavapipes_loop_limit():
    # 8,209 channels (prime: looked up one at a time) over a run of 8 pixels would be 65,672 loop iterations a thread,
    # past the 65,535 lavapipe runs; the backward takes fewer pixels a thread there.
    channels = 8209
    tex = RNG.random((1, 3, 5, channels))
    uv = RNG.uniform(0, 1, (1, 2, 6, 2))
    weights = RNG.normal(size=(1, 2, 6, channels))
    got_tex, got_uv = t32(tex).requires_grad_(True), t32(uv).requires_grad_(True)
    (dr.texture(got_tex, got_uv, filter_mode="linear") * t32(weights)).sum().backward()
    ref_tex, ref_uv = torch.tensor(tex, requires_grad=True), torch.tensor(uv, requires_grad=True)
    (torch_bilinear_wrap(ref_tex, ref_uv) * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(got_tex.grad.numpy(), ref_tex.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_uv.grad.numpy(), ref_uv.grad.numpy(), rtol=1e-3, atol=2e-2)


# ---- bad input --------------------------------------------------------------------------------------------

def test_bad_inputs_raise_clear_errors():
    tex, uv = torch.rand(1, 8, 8, 3), torch.rand(1, 4, 4, 2)
    with pytest.raises(TypeError, match="tex: expected float32"):
        dr.texture(tex.double(), uv)
    with pytest.raises(TypeError, match="uv: expected a torch.Tensor"):
        dr.texture(tex, uv.numpy())
    with pytest.raises(ValueError, match="uv: expected shape 4-D with last dimension 2"):
        dr.texture(tex, torch.rand(1, 4, 4, 3))
    with pytest.raises(ValueError, match="tex: must be contiguous"):
        dr.texture(torch.rand(1, 8, 8, 3).transpose(1, 2), uv)
    with pytest.raises(ValueError, match="tex: minibatch 2 must be 1 or uv's 1"):
        dr.texture(torch.rand(2, 8, 8, 3), uv)
    with pytest.raises(ValueError, match="filter_mode"):
        dr.texture(tex, uv, filter_mode="cubic")
    with pytest.raises(ValueError, match="boundary_mode"):
        dr.texture(tex, uv, boundary_mode="mirror")
    with pytest.raises(ValueError, match="needs uv_da or mip_level_bias"):
        dr.texture(tex, uv, filter_mode="linear-mipmap-linear")
    with pytest.raises(ValueError, match="uv_da: expected shape"):
        dr.texture(tex, uv, uv_da=torch.rand(1, 4, 4, 2))
    with pytest.raises(ValueError, match="mip_level_bias: expected shape"):
        dr.texture(tex, uv, mip_level_bias=torch.rand(1, 4, 5))
    with pytest.raises(ValueError, match="cannot be halved"):
        dr.texture(torch.rand(1, 6, 8, 3), uv, mip_level_bias=torch.zeros(1, 4, 4))
    with pytest.raises(ValueError, match="a cube map is"):
        dr.texture(torch.rand(1, 5, 8, 8, 3), torch.rand(1, 4, 4, 3), boundary_mode="cube")
    with pytest.raises(ValueError, match="max_mip_level"):
        dr.texture(tex, uv, max_mip_level=-1)
