# adjoint.torch.rasterize / interpolate (nvdiffrast's conventions) against independent computations: ray-plane
# intersections in camera space for the barycentrics and depth, plain torch for interpolation and its
# gradients, central differences for rasterize's gradient with respect to the positions.
import numpy as np
import pytest
import torch

import adjoint.torch as dr
from adjoint import _adjoint

CTX = dr.RasterizeCudaContext()


def perspective(fov_y=60.0, near=0.1, far=10.0):
    f = 1.0 / np.tan(np.radians(fov_y) / 2)
    return np.array([[f, 0, 0, 0], [0, f, 0, 0], [0, 0, (far + near) / (near - far), 2 * far * near / (near - far)],
                     [0, 0, -1, 0]])


def test_barycentrics_and_depth_of_a_tilted_triangle_in_perspective():
    # Camera space (looking down -z), depths from 1.5 to 3: perspective makes u, v differ from screen-space ones.
    cam = np.array([[-0.9, -0.7, -1.5], [1.2, -0.5, -3.0], [-0.2, 1.0, -2.2]])
    proj = perspective()
    clip = np.c_[cam, np.ones(3)] @ proj.T
    pos = torch.tensor(clip[None], dtype=torch.float32)
    tri = torch.tensor([[0, 1, 2]], dtype=torch.int32)
    H, W = 24, 32
    rast, db = dr.rasterize(CTX, pos, tri, (H, W))
    assert rast.shape == (1, H, W, 4) and db.shape == (1, H, W, 4) and rast.dtype == torch.float32
    rast = rast[0].numpy()
    normal = np.cross(cam[1] - cam[0], cam[2] - cam[0])
    f = proj[0, 0]
    checked = 0
    for row in range(H):
        for col in range(W):
            ndc = np.array([2 * (col + 0.5) / W - 1, 2 * (row + 0.5) / H - 1])   # row 0 at the bottom
            ray = np.array([ndc[0] / f, ndc[1] / f, -1.0])   # the camera-space ray through the pixel centre
            t = normal @ cam[0] / (normal @ ray)
            hit = t * ray
            areas = [np.cross(cam[(k + 1) % 3] - hit, cam[(k + 2) % 3] - hit) @ normal for k in range(3)]
            b = np.array(areas) / (normal @ normal)
            hit_clip = proj @ np.r_[hit, 1.0]
            if b.min() > 1e-3:
                assert rast[row, col, 3] == 1.0
                np.testing.assert_allclose(rast[row, col, :2], b[:2], atol=2e-5)
                np.testing.assert_allclose(rast[row, col, 2], hit_clip[2] / hit_clip[3], atol=2e-5)
                checked += 1
            elif b.min() < -1e-3:
                assert not rast[row, col].any()
    assert checked > 100


@pytest.mark.parametrize("far", [2.0, 1e7, 1e19, 1e30])
def test_a_screen_filling_triangle_far_out_covers_every_pixel(far):
    # Corners at +-1e19 (w = 1) covered no pixel: the barycentrics' products of two coordinates overflowed float.
    # nvdiffrast clips such a triangle; here the corners are scaled by a power of two first (ratios are unchanged).
    pos = torch.tensor([[[-far, -far, 0.5, 1.0], [far, -far, 0.5, 1.0], [0.0, far, 0.5, 1.0]]], dtype=torch.float32)
    tri = torch.tensor([[0, 1, 2]], dtype=torch.int32)
    rast, db = dr.rasterize(CTX, pos, tri, (16, 16))
    rast = rast[0].numpy()
    ys, xs = np.mgrid[0:16, 0:16]
    x, y = (xs + 0.5) / 8 - 1, (ys + 0.5) / 8 - 1   # row 0 at the bottom
    # (x, y) = u (-f, -f) + v (f, -f) + (1 - u - v) (0, f): u + v = (1 - y / f) / 2 and v - u = x / f.
    s = (1 - y / far) / 2
    u, v = (s - x / far) / 2, (s + x / far) / 2
    inside = (u >= 0) & (v >= 0) & (1 - u - v >= 0)
    np.testing.assert_array_equal(rast[..., 3] > 0, inside)
    np.testing.assert_allclose(rast[..., 0][inside], u[inside], atol=1e-5)
    np.testing.assert_allclose(rast[..., 1][inside], v[inside], atol=1e-5)
    np.testing.assert_allclose(rast[..., 2][inside], 0.5, atol=1e-6)
    assert np.isfinite(db.numpy()).all()


def test_nearest_triangle_wins_and_ranges_offset_ids():
    pos = torch.tensor([[-1, -1, 0.5, 1], [3, -1, 0.5, 1], [-1, 3, 0.5, 1],     # far, covers everything
                        [-1, -1, -0.5, 1], [1, -1, -0.5, 1], [-1, 1, -0.5, 1]], dtype=torch.float32)
    tri = torch.tensor([[0, 1, 2], [3, 4, 5]], dtype=torch.int32)
    rast, _ = dr.rasterize(CTX, pos[None], tri, (8, 8))
    ids = rast[0, ..., 3]
    assert ids[0, 0] == 2 and ids[7, 7] == 1 and set(ids.unique().tolist()) == {1.0, 2.0}
    np.testing.assert_allclose(rast[0, 0, 0, 2], -0.5)
    ranges = torch.tensor([[0, 1], [1, 1]], dtype=torch.int32)
    rr, _ = dr.rasterize(CTX, pos, tri, (8, 8), ranges=ranges)
    assert rr.shape == (2, 8, 8, 4)
    assert (rr[0, ..., 3] == 1).all() and rr[1, 0, 0, 3] == 2 and rr[1, 7, 7, 3] == 0


def big_triangle(batch=1):
    # Covers every pixel centre with a margin, so small moves of the vertices change no pixel's coverage.
    base = torch.tensor([[-3.0, -3.0, 0.1, 1.0], [6.0, -2.5, 0.3, 1.5], [-2.0, 6.0, -0.2, 2.0]])
    return torch.stack([base * (1 + 0.1 * b) for b in range(batch)]), torch.tensor([[0, 1, 2]], dtype=torch.int32)


def expect_central_differences(grad, pos, loss, atol, h=1e-2):
    """Each of the 3 x 4 position gradients within atol + 1% of loss's central difference at step h."""
    for v in range(3):
        for c in range(4):
            plus, minus = pos.clone(), pos.clone()
            plus[0, v, c] += h
            minus[0, v, c] -= h
            fd = float(loss(plus) - loss(minus)) / (2 * h)
            got = float(grad[0, v, c])
            assert abs(got - fd) <= atol + 1e-2 * abs(fd), f"pos[{v}][{c}]: autograd {got}, differences {fd}"


def test_rasterize_gradient_matches_central_differences():
    pos, tri = big_triangle()
    weights = torch.from_numpy(np.random.default_rng(3).uniform(-1, 1, (1, 6, 5, 3)).astype(np.float32))
    p = pos.clone().requires_grad_(True)
    rast, _ = dr.rasterize(CTX, p, tri, (6, 5))
    assert (rast[..., 3] == 1).all()
    (rast[..., :3] * weights).sum().backward()
    expect_central_differences(
        p.grad, pos, lambda q: (dr.rasterize(CTX, q, tri, (6, 5))[0][..., :3].double() * weights).sum(), atol=2e-3)
    assert float(p.grad.abs().sum()) > 1.0


def test_rasterize_gradient_through_rast_db_matches_central_differences():
    # rast_db's backward runs only where the loss uses rast_db (otherwise its gradient is None, and the kernel
    # skips that part); here it is the only output used.
    pos, tri = big_triangle()
    weights = torch.from_numpy(np.random.default_rng(4).uniform(-1, 1, (1, 6, 5, 4)).astype(np.float32))
    p = pos.clone().requires_grad_(True)
    _, db = dr.rasterize(CTX, p, tri, (6, 5))
    (db * weights).sum().backward()
    expect_central_differences(
        p.grad, pos, lambda q: (dr.rasterize(CTX, q, tri, (6, 5))[1].double() * weights).sum(), atol=2e-4)
    assert float(p.grad.abs().sum()) > 0.05


def test_a_call_that_fails_midway_leaves_the_next_one_right():
    # The ops record into one stream kept between calls; one that throws after recording uploads must drop
    # them (the next call would otherwise run them, reading arrays already freed).
    pos, tri = big_triangle()
    rast, _ = dr.rasterize(CTX, pos, tri, (6, 5))
    attr = np.arange(9, dtype=np.float32).reshape(1, 3, 3)
    tri_np = tri.numpy().astype(np.uint32)
    grad = np.ones((1, 6, 5, 3), np.float32)
    want_attr, want_rast = _adjoint._interpolate(attr, rast.numpy(), tri_np, False, grad)
    assert _adjoint._op_stream_alive()
    with pytest.raises(ValueError, match="grad: expected 90 values, got 89"):
        _adjoint._interpolate(attr, rast.numpy(), tri_np, False, grad.reshape(-1)[:89])
    assert not _adjoint._op_stream_alive()   # dropped with the uploads it had recorded
    got_attr, got_rast = _adjoint._interpolate(attr, rast.numpy(), tri_np, False, grad)
    np.testing.assert_array_equal(got_attr, want_attr)
    np.testing.assert_array_equal(got_rast, want_rast)
    assert _adjoint._op_stream_alive()
    assert abs(float(want_attr.sum()) - 90.0) < 1e-3   # 30 pixels, barycentrics summing to 1, three attributes


def two_triangles():
    """Two triangles in perspective sharing an edge (4 vertices), a gap and the background around them."""
    pos = torch.tensor([[-0.9, -0.8, 0.0, 1.0], [0.9, -0.7, 0.2, 1.3], [0.0, 0.9, -0.1, 0.8],
                        [0.95, 0.95, 0.5, 1.0]], dtype=torch.float32)
    return pos, torch.tensor([[0, 1, 2], [1, 3, 2]], dtype=torch.int32)


def backward_alike(got, ref, seed):
    """The backward of got and of its plain-torch reference ref, weighted by the same random gradient."""
    g = torch.randn(got.shape, generator=torch.Generator().manual_seed(seed))
    (got * g).sum().backward()
    (ref * g).sum().backward()


def interpolated(rast, corners):
    """Plain torch: the attributes at each pixel from its triangle's three corners' (rast's u, v; 0 uncovered)."""
    u, v = rast[..., 0:1], rast[..., 1:2]
    return (u * corners[0] + v * corners[1] + (1 - u - v) * corners[2]) * (rast[..., 3:] > 0)


def derivatives(c, db):
    """Plain torch: the attributes' (d/dX, d/dY) per pixel from the corners c and rast_db, interleaved."""
    return torch.stack([(c[0] - c[2]) * db[..., 0:1] + (c[1] - c[2]) * db[..., 2:3],
                        (c[0] - c[2]) * db[..., 1:2] + (c[1] - c[2]) * db[..., 3:4]], -1).flatten(-2)


@pytest.mark.parametrize("attrs", [1, 2, 3, 4, 5, 6])   # every group width the backward takes (1-4 at once, 5 one by one)
def test_interpolate_matches_plain_torch_with_gradients(attrs):
    pos, tri = two_triangles()
    rast, _ = dr.rasterize(CTX, torch.stack([pos, pos * 1.1]), tri, (12, 10))
    attr = torch.randn(2, 4, attrs, generator=torch.Generator().manual_seed(1))
    for a in (attr, attr[0]):   # batched, and one attribute set for every image
        a1 = a.clone().requires_grad_(True)
        r1 = rast.clone().requires_grad_(True)
        out, out_da = dr.interpolate(a1, r1, tri)
        assert out.shape == (2, 12, 10, attrs) and out_da.shape == (2, 12, 10, 0)
        a2 = a.clone().requires_grad_(True)
        r2 = rast.clone().requires_grad_(True)
        ab = a2 if a2.dim() == 3 else a2.expand(2, 4, attrs)
        t = (r2[..., 3].long() - 1).clamp(min=0)
        corners = [torch.stack([ab[b][tri.long()[t[b], k]] for b in range(2)]) for k in range(3)]
        ref = interpolated(r2, corners)
        assert (rast[..., 3] > 0).sum() > 100 and (rast[..., 3] == 0).sum() > 10
        torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)
        backward_alike(out, ref, 2)
        torch.testing.assert_close(a1.grad, a2.grad, atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(r1.grad[..., :2], r2.grad[..., :2], atol=1e-4, rtol=1e-4)
        assert (r1.grad[..., 2:] == 0).all()


@pytest.mark.parametrize("attrs", [70000, 1029])
def test_interpolate_backward_over_more_attributes_than_one_dispatch_takes(attrs):
    # The backward kernel takes the attributes about 1,024 at a time, in dispatches whose d/d(u, v) add up: a loop over
    # all 70,000 would pass lavapipe's 65,535 iterations (a RuntimeError naming the kernel). 1,029 attributes are
    # taken three at a time, in chunks of 1,023 (whole groups) and 6.
    pos, tri = two_triangles()
    rast, _ = dr.rasterize(CTX, pos[None], tri, (6, 5))
    attr = torch.randn(4, attrs, generator=torch.Generator().manual_seed(3))
    a1, r1 = attr.clone().requires_grad_(True), rast.clone().requires_grad_(True)
    out, _ = dr.interpolate(a1, r1, tri)
    a2, r2 = attr.clone().requires_grad_(True), rast.clone().requires_grad_(True)
    t = (r2[..., 3].long() - 1).clamp(min=0)
    corners = [a2[tri.long()[t, k]] for k in range(3)]
    ref = interpolated(r2, corners)
    assert (rast[..., 3] > 0).sum() > 10
    backward_alike(out, ref, 4)
    torch.testing.assert_close(a1.grad, a2.grad, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(r1.grad[..., :2], r2.grad[..., :2], atol=2e-3, rtol=1e-4)


def test_bad_inputs_raise_clear_errors():
    pos, tri = big_triangle()
    with pytest.raises(TypeError, match="tri: expected int32, got torch.int64"):
        dr.rasterize(CTX, pos, tri.long(), (4, 4))
    with pytest.raises(ValueError, match=r"tri: vertex indices must be in \[0, 3\)"):
        dr.rasterize(CTX, pos, torch.tensor([[0, 1, 3]], dtype=torch.int32), (4, 4))
    with pytest.raises(TypeError, match="pos: expected float32"):
        dr.rasterize(CTX, pos.double(), tri, (4, 4))
    with pytest.raises(ValueError, match="pos: expected shape"):
        dr.rasterize(CTX, pos[..., :3].contiguous(), tri, (4, 4))
    with pytest.raises(ValueError, match="pos: must be contiguous"):
        dr.rasterize(CTX, torch.cat([pos, pos], 2)[..., ::2], tri, (4, 4))
    with pytest.raises(ValueError, match="tri: expected shape"):
        dr.rasterize(CTX, pos, tri.reshape(3, 1), (4, 4))
    rast, _ = dr.rasterize(CTX, pos, tri, (4, 4))
    with pytest.raises(ValueError, match="attr: minibatch 2"):
        dr.interpolate(torch.zeros(2, 3, 1), rast, tri)
    with pytest.raises(ValueError, match="rast_db: expected shape"):
        dr.interpolate(torch.zeros(3, 1), rast, tri, rast_db=torch.zeros(4, 4, 4), diff_attrs="all")
    # A triangle id past tri (or NaN) in a rast that rasterize did not make would read past tri on the device: the
    # kernels check each pixel's as they read it.
    for bad, shown in ((5.0, "5"), (float("nan"), "nan")):
        r = rast.clone()
        r[0, 1, 2, 3] = bad
        said = f"rast: pixel 6 holds triangle id \\+ 1 = {shown}, where tri has 1 triangles"
        with pytest.raises(ValueError, match=said):
            dr.interpolate(torch.zeros(3, 1), r, tri)
        with pytest.raises(ValueError, match=said):
            dr.interpolate(torch.zeros(3, 1), r, tri, rast_db=torch.zeros(1, 4, 4, 4), diff_attrs="all")
    # No triangles: every pixel sees none, and interpolate reads no corner past tri.
    empty_rast, _ = dr.rasterize(CTX, pos, tri[:0], (4, 4))
    assert (dr.interpolate(torch.ones(3, 2), empty_rast, tri[:0])[0] == 0).all()
    # More than any device's buffer holds (Vulkan counts a storage buffer's range in 32 bits): a ValueError naming
    # the array, where the engine's error named a kernel's argument by number or the Vulkan call that failed.
    with pytest.raises(ValueError, match=r"rast: 25600000000 bytes on the device, more than the \d+ one buffer of"):
        dr.rasterize(CTX, pos, tri, (40000, 40000))
    rast, _ = dr.rasterize(CTX, pos, tri, (64, 64))
    with pytest.raises(ValueError, match=r"out: 4294983680 bytes on the device, more than"):
        dr.interpolate(torch.zeros(3, 262145), rast, tri)
    with pytest.raises(ValueError, match=r"out: 4299161600 bytes on the device, more than"):
        dr.texture(torch.zeros(1, 4, 4, 1025), torch.zeros(1, 1024, 1024, 2))


def test_empty_batches_and_attribute_sets_go_through_every_op():
    # Device buffers hold at least one element where arrays may hold none: each op copies out only what its array
    # holds (under the sanitizer job, a copy of the whole buffer into an empty array is a heap overflow).
    pos, tri = big_triangle()
    rast, db = dr.rasterize(CTX, pos, tri, (8, 8))
    p0 = pos[:0].clone().requires_grad_(True)
    r0, d0 = dr.rasterize(CTX, p0, tri, (8, 8))
    assert r0.shape == (0, 8, 8, 4) and d0.shape == (0, 8, 8, 4)
    (r0.sum() + d0.sum()).backward()
    assert p0.grad.shape == (0, 3, 4)
    a = torch.ones(3, 2, requires_grad=True)
    out, out_da = dr.interpolate(a, rast[:0], tri, rast_db=db[:0], diff_attrs="all")
    assert out.shape == (0, 8, 8, 2) and out_da.shape == (0, 8, 8, 4)
    (out.sum() + out_da.sum()).backward()
    assert (a.grad == 0).all()
    empty = torch.zeros(3, 0, requires_grad=True)
    out, _ = dr.interpolate(empty, rast, tri)
    assert out.shape == (1, 8, 8, 0)
    out.sum().backward()
    assert empty.grad.shape == (3, 0)
    tex = torch.rand(1, 4, 4, 3, requires_grad=True)
    t = dr.texture(tex, torch.zeros(0, 8, 8, 2))
    assert t.shape == (0, 8, 8, 3)
    t.sum().backward()
    assert (tex.grad == 0).all()
    color = torch.zeros(0, 8, 8, 3, requires_grad=True)
    aa = dr.antialias(color, rast[:0], pos[:0], tri)
    assert aa.shape == (0, 8, 8, 3)
    aa.sum().backward()
    assert color.grad.shape == (0, 8, 8, 3)


def test_attribute_derivatives_match_pixel_differences_and_plain_torch():
    pos, tri = big_triangle()
    rast, db = dr.rasterize(CTX, pos, tri, (16, 16))
    attr = torch.tensor([[1.0, 0.0, 5.0], [0.0, 2.0, 5.0], [3.0, 1.0, 5.0]])
    out, da = dr.interpolate(attr, rast, tri, rast_db=db, diff_attrs=[0, 1])
    assert da.shape == (1, 16, 16, 4)
    # Perspective makes the attributes curve across the image: the image-space derivatives (interleaved
    # d/dX, d/dY per chosen attribute) agree with central differences between neighbouring pixels.
    dx = (out[0, 1:-1, 2:, :2] - out[0, 1:-1, :-2, :2]) / 2
    dy = (out[0, 2:, 1:-1, :2] - out[0, :-2, 1:-1, :2]) / 2
    torch.testing.assert_close(da[0, 1:-1, 1:-1, 0::2], dx, atol=2e-4, rtol=2e-2)
    torch.testing.assert_close(da[0, 1:-1, 1:-1, 1::2], dy, atol=2e-4, rtol=2e-2)
    assert float(da[..., 0].std()) > 1e-3   # not constant: the perspective is there
    _, all_da = dr.interpolate(attr, rast, tri, rast_db=db, diff_attrs="all")
    assert all_da.shape == (1, 16, 16, 6) and float(all_da[..., 4:].abs().max()) < 1e-6   # a constant attribute
    # Gradients with respect to the attributes and rast_db, against the same formula in plain torch.
    a1, d1 = attr.clone().requires_grad_(True), db.clone().requires_grad_(True)
    a2, d2 = attr.clone().requires_grad_(True), db.clone().requires_grad_(True)
    _, got = dr.interpolate(a1, rast, tri, rast_db=d1, diff_attrs=[0, 1])
    c = [a2[k, :2] for k in range(3)]
    ref = derivatives(c, d2)
    torch.testing.assert_close(got, ref, atol=1e-6, rtol=1e-5)
    backward_alike(got, ref, 4)
    torch.testing.assert_close(a1.grad, a2.grad, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(d1.grad, d2.grad, atol=1e-4, rtol=1e-4)
    with pytest.raises(ValueError, match="diff_attrs needs rast_db"):
        dr.interpolate(attr, rast, tri, diff_attrs="all")
    with pytest.raises(ValueError, match=r"diff_attrs: indices must be in \[0, 3\)"):
        dr.interpolate(attr, rast, tri, rast_db=db, diff_attrs=[3])


# Chosen attributes in groups of one to four, side by side or not, out of order, one twice: the backward gathers a
# group's values and adds its gradients where each chosen attribute lies.
@pytest.mark.parametrize("chosen", [[4], [3, 0], [4, 1, 2], [5, 0, 3, 1], [1, 1], [0, 2, 4, 1, 3]])
def test_attribute_derivatives_of_chosen_groups_match_plain_torch(chosen):
    pos, tri = two_triangles()
    rast, db = dr.rasterize(CTX, torch.stack([pos, pos * 1.1]), tri, (12, 10))
    attr = torch.randn(2, 4, 6, generator=torch.Generator().manual_seed(8))
    for a in (attr, attr[0]):   # batched, and one attribute set for every image
        a1, d1 = a.clone().requires_grad_(True), db.clone().requires_grad_(True)
        a2, d2 = a.clone().requires_grad_(True), db.clone().requires_grad_(True)
        _, got = dr.interpolate(a1, rast, tri, rast_db=d1, diff_attrs=chosen)
        ab = a2 if a2.dim() == 3 else a2.expand(2, 4, 6)
        t = (rast[..., 3].long() - 1).clamp(min=0)
        c = [torch.stack([ab[b][tri.long()[t[b], k]][..., chosen] for b in range(2)]) for k in range(3)]
        ref = derivatives(c, d2) * (rast[..., 3:] > 0)
        assert (rast[..., 3] > 0).sum() > 100 and len(set(t[rast[..., 3] > 0].tolist())) == 2
        torch.testing.assert_close(got, ref, atol=1e-5, rtol=1e-5)
        backward_alike(got, ref, 9)
        torch.testing.assert_close(a1.grad, a2.grad, atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(d1.grad, d2.grad, atol=1e-4, rtol=1e-4)


def test_rast_db_gradient_over_more_chosen_attributes_than_one_dispatch_takes():
    # The backward takes the chosen attributes 1,024 a dispatch; each pixel's rast_db gradient adds up over them.
    pos, tri = big_triangle()
    rast, db = dr.rasterize(CTX, pos, tri, (4, 5))
    attr = torch.randn(3, 2500, generator=torch.Generator().manual_seed(6))
    d1, d2 = db.clone().requires_grad_(True), db.clone().requires_grad_(True)
    _, got = dr.interpolate(attr, rast, tri, rast_db=d1, diff_attrs="all")
    c = [attr[k] for k in range(3)]
    ref = derivatives(c, d2)
    torch.testing.assert_close(got, ref, atol=1e-5, rtol=1e-5)
    backward_alike(got, ref, 7)
    torch.testing.assert_close(d1.grad, d2.grad, atol=1e-3, rtol=1e-4)
    assert float(d1.grad.abs().min()) > 0   # every pixel is covered and gets a gradient


def nearest_by_brute_force(pos, tri, height, width):
    """Every triangle at every pixel centre in float64, as rasterize defines it: the ids (0: none) of the nearest
    hit (the lowest id among equal depths), and a mask of the pixels where float32 rounding could decide
    otherwise (a corner's barycentric, w or the depth bounds within 1e-4, two different depths within 1e-3:
    z/w at a small w, where a triangle crosses w = 0, rounds far more than elsewhere)."""
    x = (np.arange(width) + 0.5) * 2 / width - 1
    y = (np.arange(height) + 0.5) * 2 / height - 1
    X, Y = np.meshgrid(x, y)
    best = np.full((height, width), np.inf)
    ids = np.zeros((height, width), dtype=np.int64)
    close = np.zeros((height, width), dtype=bool)
    depths = []
    for t, (i0, i1, i2) in enumerate(tri):
        p = pos[[i0, i1, i2]].astype(np.float64)
        a = [(p[k, 0] - X * p[k, 3], p[k, 1] - Y * p[k, 3]) for k in range(3)]
        c = np.stack([a[(k + 1) % 3][0] * a[(k + 2) % 3][1] - a[(k + 1) % 3][1] * a[(k + 2) % 3][0] for k in range(3)])
        s = c.sum(0)
        with np.errstate(divide="ignore", invalid="ignore"):
            b = c / s
            w = (b * p[:, 3, None, None]).sum(0)
            depth = (b * p[:, 2, None, None]).sum(0) / w
        inside = (s != 0) & (w > 0) & (b.min(0) >= 0) & (depth >= -1) & (depth <= 1)
        # Where it is inside or about to be: at an edge, at w = 0 or at a depth bound.
        almost = (b.min(0) > -1e-4) & (w > -1e-4)
        close |= almost & ((b.min(0) < 1e-4) | (w < 1e-4) | (np.abs(np.abs(depth) - 1) < 1e-4))
        depths.append(np.where(inside, depth, np.inf))
        nearer = inside & (depth < best)
        best = np.where(nearer, depth, best)
        ids = np.where(nearer, t + 1, ids)
    d = np.stack(depths)
    near_tie = ((np.abs(d - best) < 1e-3) & (d != best)).any(0)
    return ids, close | near_tie


def test_binned_triangles_match_every_triangle_at_every_pixel():
    # Triangles of every size, some crossing w = 0, behind the camera, beyond the depth range or outside the
    # image, degenerate ones, and exact copies (equal depths: the lower id must win whatever the tile lists'
    # order), in two images; at a size whose tiles are 8 pixels and at one whose tiles are 16 (over 16,384 tiles
    # of 8).
    rng = np.random.default_rng(7)
    batch, count = 2, 240
    centre = rng.uniform(-1.3, 1.3, (batch, count, 1, 2))
    spread = rng.choice([0.02, 0.15, 0.8, 3.0], (batch, count, 1, 1))
    xy = centre + rng.normal(0, 1, (batch, count, 3, 2)) * spread
    w = rng.uniform(0.4, 2.0, (batch, count, 3, 1))
    z = rng.uniform(-1.3, 1.3, (batch, count, 3, 1))
    w[:, :12, 0] = -0.5                                          # crossing w = 0
    w[:, 12:16] = -1.0                                           # behind
    xy[:, 16:20, 2] = xy[:, 16:20, 1]                            # degenerate
    pos = np.concatenate([xy * w, z * w, w], -1).reshape(batch, count * 3, 4).astype(np.float32)
    tri = np.arange(count * 3, dtype=np.int32).reshape(count, 3)
    tri = np.concatenate([tri, tri[30:60]])                      # copies: ids 241-270 of triangles 31-60
    # The large image with fewer triangles (the reference's time): ids 61-90 copy 31-60.
    for height, width, tri in [(45, 61, tri), (1031, 1100, np.concatenate([tri[:60], tri[30:60]]))]:
        rast, _ = dr.rasterize(CTX, torch.from_numpy(pos), torch.from_numpy(tri), (height, width))
        got = rast[..., 3].numpy().astype(np.int64)
        for b in range(batch):
            want, unsure = nearest_by_brute_force(pos[b], tri, height, width)
            sure = ~unsure
            assert sure.mean() > 0.9
            mismatched = np.argwhere(sure & (got[b] != want))
            assert len(mismatched) == 0, f"{height}x{width} image {b}: {len(mismatched)} pixels differ, first {mismatched[:3]}"
            assert (want[sure] > 0).mean() > 0.3
            assert np.isin(want[sure], np.arange(1, 13)).any()    # triangles crossing w = 0 show
            assert np.isin(want[sure], np.arange(31, 61)).any()   # pixels where a copy ties and loses


def test_a_tile_list_past_lavapipes_loop_limit_is_taken_in_parts():
    # 70,000 triangles over one 8x8 tile: more than a dispatch may loop over (65,535 on lavapipe), so its pixels go
    # through the list in parts, each going on from the hit the earlier parts kept. Copies of one far triangle (the
    # lowest id wins) and, in the last part, a nearer one over the lower left corner.
    far = [[-1, -1, 0.5, 1], [3, -1, 0.5, 1], [-1, 3, 0.5, 1]]
    near = [[-1, -1, -0.5, 1], [0.2, -1, -0.5, 1], [-1, 0.2, -0.5, 1]]
    pos = torch.tensor([far + near], dtype=torch.float32)
    n = 70000
    tri = torch.tensor([[0, 1, 2]] * (n - 1) + [[3, 4, 5]], dtype=torch.int32)
    rast, db = dr.rasterize(CTX, pos, tri, (8, 8))
    ids = rast[0, ..., 3].numpy()
    corner = np.add.outer(np.arange(8), np.arange(8)) <= 3   # pixel centres inside the near triangle (x + y <= -0.8)
    assert (ids[corner] == n).all() and (ids[~corner] == 1).all()
    np.testing.assert_allclose(rast[0, 0, 0, 2], -0.5)
    np.testing.assert_allclose(rast[0, 7, 7, 2], 0.5)
    assert db[0, 7, 7].abs().sum() > 0   # the last part's barycentric derivatives


def test_nvdiffrasts_calling_conventions():
    pos, tri = big_triangle(2)
    # output_db=False in the context: rast_db is empty, as nvdiffrast's.
    rast, db = dr.rasterize(dr.RasterizeGLContext(output_db=False), pos, tri, (4, 6))
    assert rast.shape == (2, 4, 6, 4) and db.shape == (2, 4, 6, 0)
    # nvdiffrast's signatures: RasterizeGLContext(output_db, mode, device), positionally too; set_context and
    # release_context in manual mode; RasterizeCudaContext(device); the log level. Not a context: refused.
    manual = dr.RasterizeGLContext(False, "manual")
    assert dr.rasterize(manual, pos, tri, (4, 6))[1].shape == (2, 4, 6, 0)
    manual.set_context()
    manual.release_context()
    with pytest.raises(RuntimeError, match="set_context: the context's mode is 'automatic'"):
        dr.RasterizeGLContext().set_context()
    with pytest.raises(ValueError, match="mode: expected 'automatic' or 'manual'"):
        dr.RasterizeGLContext(mode="egl")
    assert dr.rasterize(dr.RasterizeCudaContext(device="cpu"), pos, tri, (4, 6))[1].shape == (2, 4, 6, 4)
    before = dr.get_log_level()
    dr.set_log_level(2)
    assert dr.get_log_level() == 2
    dr.set_log_level(before)
    with pytest.raises(TypeError, match="glctx: expected a RasterizeCudaContext or RasterizeGLContext, got NoneType"):
        dr.rasterize(None, pos, tri, (4, 6))
    full_rast, full_db = dr.rasterize(CTX, pos, tri, (4, 6))
    assert torch.equal(rast, full_rast) and full_db.shape == (2, 4, 6, 4)
    # Attributes of minibatch 1 broadcast over the rast's minibatch; their gradient sums over it.
    a = torch.rand(1, 3, 2, requires_grad=True)
    b = a.detach().expand(2, 3, 2).clone().requires_grad_(True)
    out_a, _ = dr.interpolate(a, rast, tri)
    out_b, _ = dr.interpolate(b, rast, tri)
    assert torch.equal(out_a, out_b)
    weights = torch.rand(out_a.shape)
    (out_a * weights).sum().backward()
    (out_b * weights).sum().backward()
    torch.testing.assert_close(a.grad[0], b.grad.sum(0))
    # resolution: two integers (numpy's too), nothing else.
    assert dr.rasterize(CTX, pos, tri, np.array([4, 6]))[0].shape == (2, 4, 6, 4)
    for bad in ([8, 8, 8], [8.7, 8], [0, 4], [2**32 + 1, 1], (True, 4), "88"):
        with pytest.raises(ValueError, match=r"resolution: expected \[height, width\], two integers > 0"):
            dr.rasterize(CTX, pos, tri, bad)
    # Range mode with no ranges: a minibatch of none.
    r0, d0 = dr.rasterize(CTX, pos[0], tri, (4, 6), ranges=torch.zeros(0, 2, dtype=torch.int32))
    assert r0.shape == (0, 4, 6, 4) and d0.shape == (0, 4, 6, 4)
    # diff_attrs: 'all' or indices (numpy's too).
    _, da = dr.interpolate(torch.rand(3, 2), full_rast, tri, rast_db=full_db, diff_attrs=np.array([1, 0]))
    assert da.shape == (2, 4, 6, 4)
    for bad in ("All", 1, [0.5]):
        with pytest.raises(ValueError, match="diff_attrs: expected 'all' or a list of attribute indices"):
            dr.interpolate(torch.rand(3, 2), full_rast, tri, rast_db=full_db, diff_attrs=bad)


def test_second_order_gradients_are_refused():
    pos, tri = big_triangle()
    pos.requires_grad_(True)
    rast, _ = dr.rasterize(CTX, pos, tri, (4, 4))
    attr = torch.rand(3, 2, requires_grad=True)
    out, _ = dr.interpolate(attr, rast, tri)
    with pytest.raises(RuntimeError, match=r"adjoint.torch.interpolate: second-order gradients \(create_graph=True\)"):
        torch.autograd.grad((out ** 2).sum(), attr, create_graph=True)
    (grad,) = torch.autograd.grad((out ** 2).sum(), attr)   # first order as before
    assert grad.abs().sum() > 0
