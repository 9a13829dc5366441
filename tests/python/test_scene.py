# adjoint.Scene, scene.parameters and adjoint.Optimization against the programs and known values.
import json
import os
import struct
import subprocess
import zlib

import numpy as np
import pytest

import adjoint
from conftest import SCENES


def read_png_rgb8(path):
    """An 8-bit RGB, non-interlaced PNG (what adjoint-render writes) as uint8 [H, W, 3]; zlib and the five filters."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat, width = 8, b"", None
    while at < len(data):
        (length,) = struct.unpack(">I", data[at:at + 4])
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert (depth, colour, interlace) == (8, 2, 0)
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    raw, stride = zlib.decompress(idat), width * 3
    out = np.zeros((height, stride), np.int32)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int32)
        up = out[y - 1] if y > 0 else np.zeros(stride, np.int32)
        row = out[y]
        for x in range(stride):
            a = row[x - 3] if x >= 3 else 0
            c = up[x - 3] if x >= 3 else 0
            b = up[x]
            if kind == 0: p = 0
            elif kind == 1: p = a
            elif kind == 2: p = b
            elif kind == 3: p = (a + b) // 2
            else:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            row[x] = (line[x] + p) & 255
    return out.reshape(height, width, 3).astype(np.uint8)


def linear_to_srgb8(linear):
    """The io layer's encoding (image_io.cpp): the sRGB curve, rounded, 0 below and 255 above the range."""
    l = np.clip(linear.astype(np.float64), 0.0, 1.0)
    s = np.where(l <= 0.0031308, l * 12.92, 1.055 * np.power(l, 1 / 2.4) - 0.055)
    return np.round(s * 255).astype(np.uint8)


def test_render_matches_adjoint_render(tmp_path):
    scene = adjoint.Scene(SCENES / "material-light.json", resolution=(48, 40))
    image = scene.render(view=0)
    assert image.dtype == np.float32 and image.shape == (40, 48, 3)
    out = tmp_path / "view.png"
    subprocess.run([os.environ["ADJOINT_RENDER"], "--scene", str(SCENES / "material-light.json"),
                    "--resolution", "48x40", "--out", str(out)], check=True)
    png = read_png_rgb8(out)
    diff = np.abs(png.astype(int) - linear_to_srgb8(image).astype(int))
    assert diff.max() <= 1, f"{np.count_nonzero(diff)} values differ, up to {diff.max()}"
    assert np.count_nonzero(diff) <= image.size // 100   # a rounding tie at most, here and there
    # Rows top first: the floor (below the sphere) fills the bottom rows, the dark background the top ones.
    assert image[-1].mean() > 5 * image[0].mean()


def test_parameter_write_changes_the_render(small_scene):
    params = small_scene.parameters
    assert "materials.ball.albedo" in params and "lights.key.position" in params and "camera.fov_y" in params
    np.testing.assert_allclose(params["materials.ball.albedo"], [0.8, 0.3, 0.2], rtol=1e-6)
    a1, a2 = np.array([0.8, 0.3, 0.2]), np.array([0.1, 0.6, 0.9])
    images = []
    for a in (a1, a2, (a1 + a2) / 2):
        params["materials.ball.albedo"] = a
        np.testing.assert_allclose(params["materials.ball.albedo"], a, rtol=1e-6)
        images.append(small_scene.render())
    changed = np.any(np.abs(images[0] - images[1]) > 1e-3, axis=2)
    # Only the sphere's pixels change (it covers part of the view, not all), and the shading is affine in the
    # albedo: the midpoint's image is the two images' mean.
    assert 50 < changed.sum() < 32 * 32 - 100
    np.testing.assert_allclose(images[2], (images[0] + images[1]) / 2, atol=2e-5)
    # A dimmer key light (8 -> 2) darkens the view.
    params["lights.key.intensity"] = 2.0
    assert small_scene.render().mean() < images[0].mean() * 0.8


def test_intrinsics_are_in_the_scene_files_pixels_at_any_resolution(tmp_path):
    """scene.parameters["camera.intrinsics"] was in the rendered resolution's pixels, params.json in the file's:
    writing params.json's values into a scene loaded at another resolution moved the image (up to 230 of 255)."""
    text = (SCENES / "material-light.json").read_text()
    scene_json = json.loads(text)
    scene_json["camera"].pop("fov_y", None)
    scene_json["camera"]["resolution"] = [64, 48]
    scene_json["camera"]["intrinsics"] = {"fx": 70, "fy": 66, "cx": 30, "cy": 25}
    scene_json["optimize"]["parameters"] = {"camera.intrinsics": {"init": [72, 64, 31, 24], "lr": 0.1}}
    for mesh in scene_json["meshes"]:
        mesh["file"] = str((SCENES / mesh["file"]).resolve())
    path = tmp_path / "intrinsics.json"
    path.write_text(json.dumps(scene_json))
    for resolution in [(64, 48), (96, 96)]:
        scene = adjoint.Scene(path, resolution=resolution)
        np.testing.assert_allclose(scene.parameters["camera.intrinsics"], [70, 66, 30, 25], rtol=1e-6)
        before = scene.render()
        scene.parameters["camera.intrinsics"] = [70, 66, 30, 25]   # the file's own values: the same picture
        np.testing.assert_array_equal(scene.render(), before)
        optimization = adjoint.Optimization(scene)
        np.testing.assert_allclose(optimization.parameters["camera.intrinsics"], [72, 64, 31, 24], rtol=1e-6)


def test_vertices_are_rows_of_three_and_a_transposed_set_is_refused():
    """Vertices as (3, N), the x's, then the y's, then the z's, were read as N rows: scrambled, silently."""
    scene = adjoint.Scene(SCENES / "shape.json", resolution=(16, 16))
    vertices = np.asarray(scene.parameters["meshes.blob.vertices"]).reshape(-1, 3)
    assert vertices.shape[0] > 3
    scene.parameters["meshes.blob.vertices"] = vertices * 1.01   # (N, 3): rows of x, y, z
    np.testing.assert_allclose(scene.parameters["meshes.blob.vertices"], (vertices * 1.01).ravel(), rtol=1e-6)
    with pytest.raises(ValueError, match=r"meshes.blob.vertices: expected \d+ floats or \d+ rows of 3, got shape "
                                         r"\(3, \d+\)"):
        scene.parameters["meshes.blob.vertices"] = vertices.T
    scene.parameters["lights.key.direction"] = [[0.0], [-1.0], [0.0]]   # a single column is its values
    np.testing.assert_allclose(scene.parameters["lights.key.direction"], [0.0, -1.0, 0.0], atol=1e-7)


def test_bad_input_raises_with_the_loaders_message(tmp_path, small_scene):
    text = json.loads((SCENES / "material-light.json").read_text())
    text["camera"]["fov_y"] = "wide"
    for mesh in text["meshes"]:
        mesh["file"] = str(SCENES / mesh["file"])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(text))
    with pytest.raises(ValueError, match=r"bad\.json.*camera\.fov_y"):
        adjoint.Scene(bad)
    with pytest.raises(ValueError, match="no-such-file"):
        adjoint.Scene(tmp_path / "no-such-file.json")
    with pytest.raises(KeyError, match="materials.nothing"):
        small_scene.parameters["materials.nothing.albedo"]
    with pytest.raises(ValueError, match=r"materials\.ball\.albedo: expected 3 floats, got 2"):
        small_scene.parameters["materials.ball.albedo"] = [1, 2]
    with pytest.raises(IndexError, match="out of range"):
        small_scene.render(view=3)
    # A texture as an image keeps its rows and columns: as many floats in another shape would scramble it.
    textured = adjoint.Scene(SCENES / "texture.json", resolution=(16, 16))
    texture = textured.parameters["materials.skin.albedo_texture"]
    assert texture.shape == (128, 128, 3)
    textured.parameters["materials.skin.albedo_texture"] = texture[::-1]
    textured.parameters["materials.skin.albedo_texture"] = texture.reshape(-1)
    assert np.array_equal(textured.parameters["materials.skin.albedo_texture"], texture)
    with pytest.raises(ValueError, match=r"albedo_texture: expected an image of shape \(128, 128, 3\) or 49152 "
                                         r"floats, got shape \(256, 64, 3\)"):
        textured.parameters["materials.skin.albedo_texture"] = texture.reshape(256, 64, 3)
    with pytest.raises(ValueError, match="no optimize block"):
        text.pop("optimize")
        bad.write_text(json.dumps(text).replace('"wide"', "40"))
        adjoint.Optimization(adjoint.Scene(bad))


def test_optimization_reduces_the_loss():
    scene = adjoint.Scene(SCENES / "material-light.json", resolution=(32, 32))
    opt = adjoint.Optimization(scene)
    assert opt.run(0) is None and opt.iteration == 0   # no step, no report
    first = opt.step()
    assert set(first) == {"iteration", "loss", "psnr", "param_error", "ms"} and first["param_error"] is not None
    seen = []
    last = opt.run(299, callback=lambda r: seen.append(r["iteration"]))
    assert seen == list(range(1, 300)) and opt.iteration == 300
    assert last["loss"] < first["loss"] / 100 and last["loss"] < 1e-4, (first, last)
    assert last["param_error"] < first["param_error"] / 3
    assert set(opt.parameters) == {"lights.key.position", "lights.key.intensity", "materials.ball.albedo",
                                   "materials.floor.albedo"}
