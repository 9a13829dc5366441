# adjoint.torch.render: its image is scene.render's, its gradients central differences of scene.render, and
# the example (a torch optimizer driving it) converges in a reduced run.
import os
import runpy
import subprocess
import sys

import numpy as np
import pytest
import torch

import adjoint
import adjoint.torch
from conftest import ROOT, SCENES


def test_intrinsics_and_their_gradients_are_in_the_scene_files_pixels(tmp_path):
    """One camera written two ways: at 96x72 with intrinsics (105, 99, 45, 37.5), and at 64x48 with (70, 66, 30, 25),
    two thirds of them. Rendered at 96x72 both are one picture, and d/d(file value) of the second is 1.5 times the
    first's (d run / d file = 1.5): values and gradients are in each file's own pixels, as params.json's."""
    import json
    base = json.loads((SCENES / "material-light.json").read_text())
    base["camera"].pop("fov_y", None)
    base["render"] = {"visibility": "antialias"}
    for mesh in base["meshes"]:
        mesh["file"] = str((SCENES / mesh["file"]).resolve())
    scenes, values = [], [[105.0, 99.0, 45.0, 37.5], [70.0, 66.0, 30.0, 25.0]]
    for name, size, v in (("big.json", [96, 72], values[0]), ("small.json", [64, 48], values[1])):
        scene = dict(base, camera=dict(base["camera"], resolution=size,
                                       intrinsics={"fx": v[0], "fy": v[1], "cx": v[2], "cy": v[3]}))
        (tmp_path / name).write_text(json.dumps(scene))
        scenes.append(adjoint.Scene(tmp_path / name, resolution=(96, 72)))
    weights = torch.tensor(np.random.default_rng(0).standard_normal((72, 96, 3)).astype(np.float32))
    images, grads = [], []
    for scene, v in zip(scenes, values):
        x = torch.tensor(v, requires_grad=True)
        image = adjoint.torch.render(scene, {"camera.intrinsics": x})
        (image * weights).sum().backward()
        images.append(image.detach().numpy())
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(images[1], images[0], atol=1e-5)
    assert np.abs(grads[0]).min() > 1e-3
    np.testing.assert_allclose(grads[1], 1.5 * grads[0], rtol=1e-3)


def test_render_is_scene_render_and_leaves_the_scene(small_scene):
    albedo = torch.tensor([0.1, 0.6, 0.9], requires_grad=True)
    image = adjoint.torch.render(small_scene, {"materials.ball.albedo": albedo})
    assert image.shape == (32, 32, 3) and image.dtype == torch.float32 and image.requires_grad
    before = small_scene.render()
    small_scene.parameters["materials.ball.albedo"] = [0.1, 0.6, 0.9]
    np.testing.assert_array_equal(image.detach().numpy(), small_scene.render())
    assert np.abs(before - small_scene.render()).max() > 0.05   # render() with a tensor did not write the scene


def test_calls_reuse_one_optimizer_yet_see_every_value_target_and_scene_write(small_scene):
    # The optimizer behind render() is kept between calls with the same paths: each call must still render its
    # own values, each backward use its own image gradient, and a write to the scene must be seen.
    params = small_scene.parameters
    for albedo, intensity in [([0.1, 0.6, 0.9], 3.0), ([0.7, 0.2, 0.4], 5.0)]:
        image = adjoint.torch.render(small_scene, {"materials.ball.albedo": torch.tensor(albedo),
                                                   "lights.key.intensity": torch.tensor([intensity])})
        saved = params["materials.ball.albedo"], params["lights.key.intensity"]
        params["materials.ball.albedo"], params["lights.key.intensity"] = albedo, [intensity]
        np.testing.assert_array_equal(image.numpy(), small_scene.render())
        params["materials.ball.albedo"], params["lights.key.intensity"] = saved
    albedo = torch.tensor([0.5, 0.4, 0.3], requires_grad=True)
    weights = torch.from_numpy(np.random.default_rng(3).uniform(-1, 1, (32, 32, 3)).astype(np.float32))
    grads = []
    for scale in (1.0, -3.0, 1.0):
        albedo.grad = None
        (adjoint.torch.render(small_scene, {"materials.ball.albedo": albedo}) * weights * scale).sum().backward()
        grads.append(albedo.grad.clone())
    np.testing.assert_allclose(grads[1].numpy(), -3 * grads[0].numpy(), rtol=1e-4)
    np.testing.assert_allclose(grads[2].numpy(), grads[0].numpy(), rtol=1e-6)   # (sums in any order)
    assert grads[0].abs().sum() > 0.1
    # A write to the scene (a value the call does not set) shows in the next call.
    params["lights.key.intensity"] = [2 * float(params["lights.key.intensity"][0])]
    image = adjoint.torch.render(small_scene, {"materials.ball.albedo": albedo})
    params["materials.ball.albedo"] = [0.5, 0.4, 0.3]
    np.testing.assert_array_equal(image.detach().numpy(), small_scene.render())
    np.testing.assert_array_equal(adjoint.torch.render(small_scene).numpy(), small_scene.render())


def test_a_write_between_forward_and_backward_leaves_the_gradient(small_scene):
    # The forward call's scene is the one differentiated: writing scene.parameters before backward() (a loop that
    # sets each view's camera, then one backward over all) must not change the gradient. Before, the backward
    # differentiated the scene as written, comparing it with the image of another one.
    params = small_scene.parameters
    weights = torch.from_numpy(np.random.default_rng(5).uniform(-1, 1, (32, 32, 3)).astype(np.float32))
    position = torch.tensor(params["lights.key.position"])

    def gradient(write):
        p = position.clone().requires_grad_()
        image = adjoint.torch.render(small_scene, {"lights.key.position": p})
        intensity = params["lights.key.intensity"]
        if write:
            params["lights.key.intensity"] = [0.25 * float(intensity[0])]
        (image * weights).sum().backward()
        params["lights.key.intensity"] = intensity
        return p.grad.clone()

    plain = gradient(False)
    assert plain.abs().sum() > 0.01
    np.testing.assert_allclose(gradient(True).numpy(), plain.numpy(), rtol=1e-5, atol=1e-7)
    # Two renders with a write between them, one backward: each term as the render saw its scene.
    p = position.clone().requires_grad_()
    first = adjoint.torch.render(small_scene, {"lights.key.position": p})
    intensity = params["lights.key.intensity"]
    params["lights.key.intensity"] = [0.25 * float(intensity[0])]
    second = adjoint.torch.render(small_scene, {"lights.key.position": p})
    ((first + second) * weights).sum().backward()
    quarter = gradient(False)   # at the quarter intensity, still written
    params["lights.key.intensity"] = intensity
    np.testing.assert_allclose(p.grad.numpy(), (plain + quarter).numpy(), rtol=1e-4, atol=1e-6)
    assert (quarter - plain).abs().sum() > 0.01 * plain.abs().sum()


def test_a_loop_over_views_keeps_an_optimizer_for_each_while_they_fit():
    # The optimizers kept are the most recently used whose buffers fit the budget (256 MiB, 64 of them: all eight
    # views of this scene). Each view renders with its own values, its image that of scene.render (checked first,
    # each check a write that drops them all), and its gradient the same whether its optimizer was kept or, under
    # a budget of two optimizers' buffers, made again.
    from conftest import SCENES
    scene = adjoint.Scene(SCENES / "texture-8views.json", resolution=(24, 24))
    params = scene.parameters
    weights = torch.from_numpy(np.random.default_rng(5).uniform(-1, 1, (24, 24, 3)).astype(np.float32))

    def gradient(view, check=False):
        intensity = torch.tensor([0.5 + 0.1 * view], requires_grad=True)
        image = adjoint.torch.render(scene, {"lights.fill.intensity": intensity}, view=view)
        (image * weights).sum().backward()
        if check:
            saved = params["lights.fill.intensity"]
            params["lights.fill.intensity"] = [0.5 + 0.1 * view]
            np.testing.assert_array_equal(image.detach().numpy(), scene.render(view))
            params["lights.fill.intensity"] = saved
        return float(intensity.grad)

    views = (0, 3, 5, 1, 6, 2, 7, 4)
    first = {view: gradient(view, check=True) for view in views}
    assert len(set(round(g, 3) for g in first.values())) == 8   # eight views, eight different gradients
    assert adjoint._adjoint._torch_cache_info(scene) == []   # each check's write dropped them
    for view in views * 2:
        assert gradient(view) == pytest.approx(first[view], rel=1e-5), view
    kept = adjoint._adjoint._torch_cache_info(scene)
    assert [v for v, _ in kept] == list(reversed(views))
    one = max(b for _, b in kept)
    assert one > 24 * 24 * 16 and all(b > 0 for _, b in kept)   # each holds at least a view's float4 image
    before = adjoint._adjoint._torch_cache_limits(bytes=2 * one + one // 2)
    params["lights.fill.intensity"] = params["lights.fill.intensity"]   # a write: the limits apply as they fill
    try:
        for view in views * 2:
            assert gradient(view) == pytest.approx(first[view], rel=1e-5), view
        assert [v for v, _ in adjoint._adjoint._torch_cache_info(scene)] == [4, 7]
        adjoint._adjoint._torch_cache_limits(count=3, bytes=before[1])
        for view in views:
            gradient(view)
        assert [v for v, _ in adjoint._adjoint._torch_cache_info(scene)] == [4, 7, 2]
    finally:
        adjoint._adjoint._torch_cache_limits(*before)


def test_gradients_match_central_differences(small_scene):
    values = {"materials.ball.albedo": [0.5, 0.4, 0.3], "lights.key.position": [1.0, 2.2, 1.2],
              "lights.key.intensity": [6.0], "materials.floor.specular": [0.3, 0.25, 0.2]}
    weights = np.random.default_rng(7).uniform(-1, 1, (32, 32, 3)).astype(np.float64)
    tensors = {p: torch.tensor(v, dtype=torch.float32, requires_grad=True) for p, v in values.items()}
    image = adjoint.torch.render(small_scene, tensors)
    (image.double() * torch.from_numpy(weights)).sum().backward()

    def objective():
        return float((small_scene.render().astype(np.float64) * weights).sum())

    params = small_scene.parameters
    for path, v in values.items():
        params[path] = v
    for path, v in values.items():
        h = 1e-3 * max(1.0, float(np.abs(v).max()))   # the highlight is sharp: larger steps see its curvature
        for i in range(len(v)):
            plus, minus = np.array(v, np.float64), np.array(v, np.float64)
            plus[i] += h
            minus[i] -= h
            params[path] = plus
            up = objective()
            params[path] = minus
            down = objective()
            params[path] = v
            fd = (up - down) / (2 * h)
            got = float(tensors[path].grad[i])
            assert abs(got - fd) <= 2e-3 * max(1.0, abs(fd)), f"{path}[{i}]: autograd {got}, differences {fd}"
    assert float(tensors["materials.ball.albedo"].grad.abs().sum()) > 1.0   # not a test of zeros


def test_gradients_of_a_loss_scaled_small_are_scaled_not_lost(small_scene):
    # The image gradient reaches the engine as an l2 target; one of 1e-9 of a pixel's value was below its rounding
    # and came back 0.
    target = torch.from_numpy(small_scene.render())
    grads = []
    for scale in (1.0, 1e-9):
        albedo = torch.tensor([0.5, 0.4, 0.3], requires_grad=True)
        loss = scale * ((adjoint.torch.render(small_scene, {"materials.ball.albedo": albedo}) - target) ** 2).mean()
        loss.backward()
        grads.append(albedo.grad / scale)
    assert grads[0].abs().min() > 1e-3
    torch.testing.assert_close(grads[1], grads[0], rtol=1e-4, atol=0)


def test_a_view_is_an_index_and_params_are_keyed_by_paths(small_scene):
    # int(view) rendered view 1 for 1.9 and for True without a word; a non-str key failed in a private binding.
    for view in (1.9, True, "0"):
        with pytest.raises(TypeError, match="view: expected an integer index"):
            adjoint.torch.render(small_scene, {}, view=view)
        with pytest.raises(TypeError, match="view: expected an integer index"):
            small_scene.render(view)
    with pytest.raises(TypeError, match="params: expected parameter paths"):
        adjoint.torch.render(small_scene, {3: torch.tensor([1.0])})
    for view in (np.int64(0), torch.tensor(0)):
        assert adjoint.torch.render(small_scene, {}, view=view).shape == (32, 32, 3)
    # An __index__ that raises (a numpy array of several values) crashed the process; a huge index was a cast error.
    with pytest.raises(TypeError):
        small_scene.render(np.array([0, 1]))
    with pytest.raises(IndexError, match="out of range"):
        small_scene.render(2**40)


def test_a_unit_value_read_and_written_back_is_unchanged():
    # Normalized again on write, a direction or a rotation moved by a rounding: read and written back, it
    # flipped between two values, and a pixel of the render with it.
    for name, path in (("pbr-lights.json", "lights.sun.direction"), ("camera.json", "meshes.knot.rotation")):
        scene = adjoint.Scene(SCENES / name, resolution=(24, 24))
        value = scene.parameters[path]
        image = scene.render()
        for _ in range(3):
            scene.parameters[path] = scene.parameters[path]
            np.testing.assert_array_equal(scene.parameters[path], value)
        # (A render after a write may differ from the first by an ulp; the drift moved a pixel by 1.7e-4.)
        np.testing.assert_allclose(scene.render(), image, rtol=0, atol=1e-6)


def test_scene_values_the_loader_refuses_are_refused(small_scene):
    params = small_scene.parameters
    for path, value, said in (("camera.fov_y", 0, r"expected numbers in \[1, 179\]"),
                              ("camera.fov_y", 180, r"expected numbers in \[1, 179\]"),
                              ("camera.eye", list(params["camera.target"]), "eye and target are the same point"),
                              ("lights.key.position", [0, float("nan"), 0], "expected finite numbers, got nan"),
                              ("lights.key.intensity", -1, "expected numbers >= 0")):
        before = params[path]
        with pytest.raises(ValueError, match=f"{path}: {said}"):
            params[path] = value
        np.testing.assert_array_equal(params[path], before)
        # render() checks a tensor's value as a write does: not a blank image and a zero gradient.
        with pytest.raises(ValueError, match=f"{path}: {said}"):
            adjoint.torch.render(small_scene, {path: torch.tensor(value, dtype=torch.float32).reshape(-1)})
    # The values are checked together once set: the eye moved onto the old target while the target moves away.
    eye, target = params["camera.eye"], params["camera.target"]
    image = adjoint.torch.render(small_scene, {"camera.eye": torch.tensor(target, dtype=torch.float32),
                                               "camera.target": torch.tensor(2 * target - eye, dtype=torch.float32)})
    assert image.shape == (32, 32, 3)
    for resolution in ((0, 0), (-1, 4), (8193, 4)):
        with pytest.raises(ValueError, match=r"resolution: expected each side in 1..8192, got"):
            adjoint.Scene(small_scene.name, resolution=resolution)


def test_bad_tensors_raise(small_scene):
    with pytest.raises(TypeError, match="floating-point"):
        adjoint.torch.render(small_scene, {"materials.ball.albedo": torch.tensor([1, 2, 3])})
    with pytest.raises(ValueError, match="expected 3 floats, got 4"):
        adjoint.torch.render(small_scene, {"materials.ball.albedo": torch.zeros(4)})
    with pytest.raises(KeyError, match="lights.nobody"):
        adjoint.torch.render(small_scene, {"lights.nobody.position": torch.zeros(3)})


def test_example_fit_converges():
    script = ROOT / "tools" / "examples" / "python" / "fit_scene.py"
    result = subprocess.run([sys.executable, str(script), "--iterations", "60", "--resolution", "32"],
                            capture_output=True, text=True, check=True, env=os.environ)
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("final"), result.stdout
    error = float(last.split("error")[1].split()[0])
    assert error < 0.02, result.stdout


def test_the_nearer_of_two_squares_a_twentieth_apart_a_thousand_away_is_seen(tmp_path):
    # A model in millimetres: two squares 0.05 units apart, 1,000 away, near 0.05, far 5,000. NDC z there lies
    # within a float's rounding of 1 and the farther square (the first mesh, the lower ids) won every tie; the
    # rasterizer's reversed depth keeps a float's relative precision, on the static chain (scene.render) and on
    # the dynamic one (a free camera: render's optimizer, whose camera is projected on the device).
    for name, z in (("far", -1000.05), ("near", -1000.0)):
        (tmp_path / f"{name}.obj").write_text(
            "".join(f"v {x} {y} {z}\n" for x, y in ((-300, -300), (300, -300), (300, 300), (-300, 300)))
            + "f 1 2 3\nf 1 3 4\n")
    (tmp_path / "s.json").write_text("""{ "format": 1,
      "camera": { "eye": [0, 0, 0], "target": [0, 0, -1], "fov_y": 60, "near": 0.05, "far": 5000,
                  "resolution": [32, 32] },
      "materials": { "red": { "albedo": [1, 0, 0] }, "blue": { "albedo": [0, 0, 1] } },
      "meshes": [ { "name": "far", "file": "far.obj", "material": "blue" },
                  { "name": "near", "file": "near.obj", "material": "red" } ],
      "lights": [ { "name": "fill", "type": "ambient", "intensity": 1 } ] }""")
    scene = adjoint.Scene(str(tmp_path / "s.json"))
    for image in (scene.render(),
                  adjoint.torch.render(scene, {"camera.eye": torch.zeros(3)}).numpy()):
        covered = image.sum(axis=2) > 0.5
        assert covered.sum() > 250                      # about 17 x 17 of 32 x 32 pixels
        assert (image[covered][:, 2] < 0.01).all()      # no blue: the farther square is hidden
