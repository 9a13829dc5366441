# adjoint.torch.antialias, DepthPeeler, rasterize's near-plane clipping and its rast_db gradients, against
# independent computations: a straight edge's exact pixel coverage, central differences, per-triangle depth
# sorting, ray-plane intersections. The cube fit that uses them: test_cube_fit.py.
import numpy as np
import pytest
import torch

import adjoint.torch as dr

CTX = dr.RasterizeCudaContext()


def quad(x0, x1, y0, y1, z=0.0, w=1.0):
    """Two triangles (one shared, interior diagonal) covering NDC [x0, x1] x [y0, y1], at clip w."""
    pos = torch.tensor([[x0, y0, z, 1], [x1, y0, z, 1], [x1, y1, z, 1], [x0, y1, z, 1]], dtype=torch.float32) * w
    return pos, torch.tensor([[0, 1, 2], [0, 2, 3]], dtype=torch.int32)


@pytest.mark.parametrize("vertical_edge", [True, False])
@pytest.mark.parametrize("covered_below", [True, False])
def test_a_straight_edge_is_blended_by_its_exact_pixel_coverage(vertical_edge, covered_below):
    # A quad past the image on three sides; its fourth edge at pixel coordinate 7.3 (columns, or rows counted
    # from the bottom), the quad on the side of the lower indices or of the higher ones (so that the pixel the
    # blend moves is the upper or the lower one of its pair). A box filter over each pixel gives coverage
    # clip(7.3 - index, 0, 1), or clip(index + 1 - 7.3, 0, 1).
    H, W, edge = 12, 16, 7.3
    at = edge / (W if vertical_edge else H) * 2 - 1
    lo, hi = (-2, at) if covered_below else (at, 2)
    pos, tri = quad(lo, hi, -2, 2, w=2.0) if vertical_edge else quad(-2, 2, lo, hi, w=2.0)
    rast, _ = dr.rasterize(CTX, pos[None], tri, (H, W))
    fg, bg = torch.tensor([1.0, 0.5, 0.2]), torch.tensor([0.0, 0.25, 1.0])
    inside = (rast[..., 3:] > 0).float()
    color = (inside * fg + (1 - inside) * bg).contiguous()
    out = dr.antialias(color, rast, pos[None], tri)[0].numpy()
    index = np.arange(W)[None, :] if vertical_edge else np.arange(H)[:, None]
    coverage = np.clip(edge - index, 0, 1) if covered_below else np.clip(index + 1 - edge, 0, 1)
    coverage = np.broadcast_to(coverage, (H, W))[..., None]
    expected = coverage * fg.numpy() + (1 - coverage) * bg.numpy()
    np.testing.assert_allclose(out, expected, atol=1e-5)
    assert 0 < coverage.mean() < 1 and ((coverage > 0) & (coverage < 1)).any()


def test_the_images_of_a_batch_are_antialiased_apart():
    # One dispatch stacks the images' rows: the top row of one lies beside the bottom row of the next, and a quad
    # across its image's top edge must not blend into the next image's bottom row (nor the reverse).
    pos, tri = quad(-0.6, 0.5, -0.2, 2.0)
    away = pos + torch.tensor([10.0, 0, 0, 0])   # off the image: the second image sees nothing
    rast, _ = dr.rasterize(CTX, torch.stack([pos, away, pos]), tri, (10, 10))
    assert (rast[0, -1, :, 3] > 0).any() and (rast[1, ..., 3] == 0).all()
    color = torch.rand(3, 10, 10, 3, generator=torch.Generator().manual_seed(5))
    both = dr.antialias(color, rast, torch.stack([pos, away, pos]), tri)
    for b in range(3):
        alone = dr.antialias(color[b:b + 1].contiguous(), rast[b:b + 1].contiguous(), torch.stack([pos, away, pos])[b:b + 1], tri)
        assert torch.equal(both[b], alone[0]), f"image {b}"
    assert torch.equal(both[1], color[1]) and not torch.equal(both[0], color[0])


def test_interior_edges_and_equal_triangles_leave_the_image_alone():
    pos, tri = quad(-0.6, 0.5, -0.7, 0.4)
    rast, _ = dr.rasterize(CTX, pos[None], tri, (10, 10))
    color = torch.rand(1, 10, 10, 2)
    out = dr.antialias(color, rast, pos[None], tri)
    cov = rast[0, ..., 3] > 0
    # Pixels whose 4-neighbourhood lies inside the quad (only the diagonal between them) keep their colour.
    interior = cov.clone()
    interior[1:-1, 1:-1] = cov[1:-1, 1:-1] & cov[:-2, 1:-1] & cov[2:, 1:-1] & cov[1:-1, :-2] & cov[1:-1, 2:]
    interior[0, :] = interior[-1, :] = interior[:, 0] = interior[:, -1] = False
    assert interior.sum() > 10
    assert torch.equal(out[0][interior], color[0][interior])
    assert not torch.equal(out, color)   # the silhouette did blend


def loss_weights(shape, seed=1):
    return torch.from_numpy(np.random.default_rng(seed).uniform(-1, 1, shape))


def test_gradients_to_color_and_pos_match_central_differences():
    # One perspective triangle (no edge near 45 degrees, so no pair changes direction under the step) over a
    # random background; rast stays fixed, as antialias takes it as an input.
    H = W = 12
    pos = torch.tensor([[[-0.62, -0.55, 0.1, 1.0], [0.71, -0.38, 0.3, 1.3], [-0.18, 0.83, -0.2, 1.1]]])
    tri = torch.tensor([[0, 1, 2]], dtype=torch.int32)
    rast, _ = dr.rasterize(CTX, pos, tri, (H, W))
    color = torch.from_numpy(np.random.default_rng(0).uniform(0, 1, (1, H, W, 3)).astype(np.float32))
    weights = loss_weights((1, H, W, 3))

    def loss(c, p):
        return (dr.antialias(c, rast, p, tri).double() * weights).sum()

    c, p = color.clone().requires_grad_(True), pos.clone().requires_grad_(True)
    loss(c, p).backward()
    h = 1e-3
    fd = np.zeros(12)
    for i in range(12):
        d = torch.zeros(12)
        d[i] = h
        fd[i] = (loss(color, pos + d.reshape(1, 3, 4)) - loss(color, pos - d.reshape(1, 3, 4))).item() / (2 * h)
    assert np.abs(fd).max() > 0.5   # the silhouette moves the image
    np.testing.assert_allclose(p.grad.numpy().reshape(-1), fd, rtol=0.03, atol=0.01 * np.abs(fd).max())
    # Colours enter linearly: spot-check central differences at blended and untouched pixels.
    for (row, col, ch) in [(int(i) // (W * 3), (int(i) // 3) % W, int(i) % 3) for i in
                           np.random.default_rng(2).choice(H * W * 3, 12, replace=False)]:
        d = torch.zeros_like(color)
        d[0, row, col, ch] = 0.25
        expect = (loss(color + d, pos) - loss(color - d, pos)).item() / 0.5
        assert c.grad[0, row, col, ch].item() == pytest.approx(expect, abs=1e-4)
    # pos_gradient_boost scales the positions' gradient only.
    p2 = pos.clone().requires_grad_(True)
    (dr.antialias(color, rast, p2, tri, pos_gradient_boost=3.0).double() * weights).sum().backward()
    np.testing.assert_allclose(p2.grad.numpy(), 3.0 * p.grad.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="pos_gradient_boost: expected a number, got 'x'"):
        dr.antialias(color, rast, p2, tri, pos_gradient_boost="x")


def test_topology_hash_range_mode_and_instanced_batches_agree():
    pos, tri = quad(-0.6, 0.5, -0.7, 0.4)
    topo = dr.antialias_construct_topology_hash(tri)
    assert topo.dtype == torch.int32 and topo.shape == (2, 6)
    rast, _ = dr.rasterize(CTX, pos[None], tri, (10, 10))
    color = torch.rand(1, 10, 10, 3)
    a = dr.antialias(color, rast, pos[None], tri, topology_hash=topo)
    b = dr.antialias(color, rast, pos, tri)   # pos shared across the minibatch, as in range mode
    assert torch.equal(a, b)
    two = dr.antialias(torch.cat([color, color]), torch.cat([rast, rast]), torch.stack([pos, pos]), tri)
    assert torch.equal(two[1:], a)


def test_depth_peeler_layers_are_the_triangles_sorted_by_depth():
    # Three overlapping triangles at known depths; each pixel's layers are the covering triangles sorted by z/w.
    pos = torch.tensor([[-0.9, -0.9, 0.5, 1], [0.9, -0.9, 0.5, 1], [0.0, 0.9, 0.5, 1],
                        [-0.5, -0.6, -0.2, 1], [0.7, -0.2, -0.2, 1], [-0.3, 0.8, -0.2, 1],
                        [-0.2, -0.3, 0.1, 1], [0.4, -0.3, 0.1, 1], [0.1, 0.5, 0.1, 1]], dtype=torch.float32)
    tri = torch.tensor([[0, 1, 2], [3, 4, 5], [6, 7, 8]], dtype=torch.int32)
    H = W = 16
    single = [dr.rasterize(CTX, pos[None], tri[i:i + 1], (H, W))[0][0] for i in range(3)]
    layers = []
    p = pos[None].clone().requires_grad_(True)
    with dr.DepthPeeler(CTX, p, tri, (H, W)) as peeler:
        for _ in range(4):
            layers.append(peeler.rasterize_next_layer())
    with dr.DepthPeeler(dr.RasterizeGLContext(output_db=False), p, tri, (H, W)) as peeler:
        rast, db = peeler.rasterize_next_layer()   # as rasterize: no rast_db with output_db False
        assert torch.equal(rast, layers[0][0]) and db.shape == (1, H, W, 0)
    depth = [0.5, -0.2, 0.1]
    for row in range(H):
        for col in range(W):
            covering = sorted((depth[i], i) for i in range(3) if single[i][row, col, 3] > 0)
            for k in range(4):
                r = layers[k][0][0, row, col]
                if k < len(covering):
                    z, i = covering[k]
                    assert r[3].item() == i + 1 and r[2].item() == pytest.approx(z, abs=1e-6)
                    assert torch.allclose(r[:2], single[i][row, col, :2], atol=1e-6)
                else:
                    assert not r.any()
    assert (layers[2][0][..., 3] > 0).any()
    # The layers carry rasterize's gradients: d sum(z/w of layer 2) / d z of triangle 2's vertices sums to the
    # number of pixels where triangle 2 is the second layer (w = 1, barycentrics sum to 1).
    layers[1][0][..., 2].sum().backward()
    second = int((layers[1][0][..., 3] == 3).sum())
    assert second > 0
    assert p.grad[0, 6:9, 2].sum().item() == pytest.approx(second, rel=1e-5)
    with pytest.raises(RuntimeError, match="outside its `with` block"):
        peeler.rasterize_next_layer()


def test_triangles_crossing_w_zero_are_clipped_at_the_camera():
    # Camera space (looking down -z): one vertex behind the camera. A pixel sees the triangle where the ray
    # through its centre meets the triangle's plane in front of the camera inside the triangle.
    cam = np.array([[-1.0, -0.6, -2.0], [1.2, -0.4, -2.5], [0.2, 0.9, 1.0]])
    f = 1.0 / np.tan(np.radians(30))
    near, far = 0.1, 10.0
    proj = np.array([[f, 0, 0, 0], [0, f, 0, 0], [0, 0, (far + near) / (near - far), 2 * far * near / (near - far)],
                     [0, 0, -1, 0]])
    clip = np.c_[cam, np.ones(3)] @ proj.T
    assert clip[2, 3] < 0
    H, W = 16, 20
    rast = dr.rasterize(CTX, torch.tensor(clip[None], dtype=torch.float32), torch.tensor([[0, 1, 2]], dtype=torch.int32),
                        (H, W))[0][0].numpy()
    normal = np.cross(cam[1] - cam[0], cam[2] - cam[0])
    seen = 0
    for row in range(H):
        for col in range(W):
            ray = np.array([(2 * (col + 0.5) / W - 1) / f, (2 * (row + 0.5) / H - 1) / f, -1.0])
            t = normal @ cam[0] / (normal @ ray)
            hit = t * ray
            b = np.array([np.cross(cam[(k + 1) % 3] - hit, cam[(k + 2) % 3] - hit) @ normal for k in range(3)])
            b /= normal @ normal
            in_front = t > 0 and -hit[2] > near
            if in_front and b.min() > 1e-3:
                assert rast[row, col, 3] == 1 and np.allclose(rast[row, col, :2], b[:2], atol=1e-4)
                seen += 1
            elif not in_front or b.min() < -1e-3:
                assert rast[row, col, 3] == 0
    assert seen > 20


def test_rast_db_gradients_match_central_differences():
    # A perspective triangle covering the whole image, so no pixel changes triangle under the step.
    pos = torch.tensor([[[-4.0, -4.0, 0.2, 1.0], [11.2, -6.4, 0.48, 1.6], [-4.8, 8.4, -0.12, 1.2]]], dtype=torch.float64)
    tri = torch.tensor([[0, 1, 2]], dtype=torch.int32)
    H, W = 6, 8
    w_rast, w_db = loss_weights((1, H, W, 4), 3), loss_weights((1, H, W, 4), 4) * 10

    def loss(p):
        rast, db = dr.rasterize(CTX, p.float(), tri, (H, W))
        assert (rast[..., 3] == 1).all()
        w = w_rast.clone()
        w[..., 3] = 0
        return (rast.double() * w).sum() + (db.double() * w_db).sum()

    p = pos.clone().requires_grad_(True)
    loss(p).backward()
    h = 1e-3
    fd = np.array([(loss(pos + d) - loss(pos - d)).item() / (2 * h)
                   for d in torch.eye(12, dtype=torch.float64).reshape(12, 1, 3, 4) * h])
    np.testing.assert_allclose(p.grad.numpy().reshape(-1), fd, rtol=0.02, atol=0.01 * np.abs(fd).max())
    # grad_db=False: only (u, v, z/w) reach pos.
    p2 = pos.float().clone().requires_grad_(True)
    rast, db = dr.rasterize(CTX, p2, tri, (H, W), grad_db=False)
    (db * w_db.float()).sum().backward()
    assert not p2.grad.any()


def test_bad_inputs_raise_clear_errors():
    pos, tri = quad(-0.5, 0.5, -0.5, 0.5)
    rast, _ = dr.rasterize(CTX, pos[None], tri, (8, 8))
    color = torch.rand(1, 8, 8, 3)
    with pytest.raises(TypeError, match="color: expected float32"):
        dr.antialias(color.double(), rast, pos[None], tri)
    with pytest.raises(ValueError, match="rast: shape"):
        dr.antialias(color, rast[:, :4].contiguous(), pos[None], tri)
    with pytest.raises(ValueError, match="color: must be contiguous"):
        dr.antialias(color.transpose(1, 2), rast, pos[None], tri)
    with pytest.raises(TypeError, match="tri: expected int32"):
        dr.antialias(color, rast, pos[None], tri.long())
    with pytest.raises(ValueError, match="tri: vertex indices"):
        dr.antialias(color, rast, pos[None], tri + 2)
    with pytest.raises(ValueError, match="pos: expected shape"):
        dr.antialias(color, rast, pos[None, :, :3].contiguous(), tri)
    with pytest.raises(ValueError, match="pos: minibatch"):
        dr.antialias(color, rast, torch.stack([pos, pos]), tri)
    with pytest.raises(TypeError, match="topology_hash"):
        dr.antialias(color, rast, pos[None], tri, topology_hash=torch.zeros(2, 6))
    with pytest.raises(ValueError, match="topology_hash: built for"):
        dr.antialias(color, rast, pos[None], tri, topology_hash=dr.antialias_construct_topology_hash(tri[:1]))
    with pytest.raises(ValueError, match="rast: triangle ids"):
        dr.antialias(color, rast, pos[None], tri[:1])

