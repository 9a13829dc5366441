"""Makes assets/datasets/blender_knot6: pictures of assets/meshes/torus_knot.obj made by Blender (Cycles), not by
Adjoint, with their poses as a NeRF transforms.json (camera_angle_x), a NeRF file with fl_x/fl_y/cx/cy intrinsics
(an off-centre principal point from the camera's shift) and a COLMAP text model (PINHOLE) of the same views, so
that the loaders' camera conventions are checked against a renderer that is not ours (tests/app/
blender_dataset_test.cpp).

Usage (Debian's blender 3.4; a tool to make test data, not a dependency of the build or the tests):
    blender -b --factory-startup --python tools/datasets/make_blender_dataset.py
Deterministic (Cycles' noise is seeded; a rerun writes the same bytes); the alpha, the silhouette, is sampled at
pixel centres.
"""
import json
import math
import pathlib

import bpy
from bpy_extras.object_utils import world_to_camera_view
from mathutils import Matrix, Vector

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
MESH = ROOT / "assets" / "meshes" / "torus_knot.obj"
OUT = ROOT / "assets" / "datasets" / "blender_knot6"
W, H = 96, 72          # non-square on purpose
DISTANCE = 3.6
# (azimuth about +y, elevation, roll) in degrees; the first three centred at camera_angle_x 40 degrees, the
# last three with a longer lens and the lens shifted (an off-centre principal point).
CENTRED = [(20, 15, 0), (140, 35, 0), (260, -20, 12)]
SHIFTED = [(80, 25, 0), (200, 50, -8), (320, 5, 0)]
ANGLE_X_CENTRED = math.radians(40)
ANGLE_X_SHIFTED = math.radians(34)
SHIFT = (0.06, -0.04)   # Blender's shift_x, shift_y: fractions of the width (sensor fit horizontal)


def read_obj(path):
    """The OBJ's positions and faces verbatim: Blender's world is the file's (no axis conversion), which is
    also Adjoint's world, so the NeRF matrices below are Blender's camera matrices as they are."""
    positions, faces = [], []
    for line in path.read_text().splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "v":
            positions.append(tuple(float(x) for x in parts[1:4]))
        elif parts[0] == "f":
            faces.append(tuple(int(p.split("/")[0]) - 1 for p in parts[1:]))
    return positions, faces


def look_at(eye, roll_degrees):
    """Camera-to-world (OpenGL: looks down -Z, +Y up) looking at the origin with world +Y up, then rolled."""
    eye = Vector(eye)
    forward = (-eye).normalized()
    right = forward.cross(Vector((0, 1, 0))).normalized()
    up = right.cross(forward)
    m = Matrix.Identity(4)
    for r in range(3):
        m[r][0], m[r][1], m[r][2], m[r][3] = right[r], up[r], -forward[r], eye[r]
    return m @ Matrix.Rotation(math.radians(roll_degrees), 4, "Z")


def eye_of(azimuth, elevation):
    a, e = math.radians(azimuth), math.radians(elevation)
    return (DISTANCE * math.cos(e) * math.sin(a), DISTANCE * math.sin(e), DISTANCE * math.cos(e) * math.cos(a))


def setup_scene():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    positions, faces = read_obj(MESH)
    mesh = bpy.data.meshes.new("knot")
    mesh.from_pydata(positions, [], faces)
    mesh.update()
    knot = bpy.data.objects.new("knot", mesh)
    scene.collection.objects.link(knot)
    material = bpy.data.materials.new("clay")
    material.diffuse_color = (0.8, 0.35, 0.15, 1)
    material.use_nodes = True
    material.node_tree.nodes["Principled BSDF"].inputs["Base Color"].default_value = (0.8, 0.35, 0.15, 1)
    mesh.materials.append(material)
    sun = bpy.data.objects.new("sun", bpy.data.lights.new("sun", "SUN"))
    sun.rotation_euler = (math.radians(-40), math.radians(30), 0)
    scene.collection.objects.link(sun)
    world = bpy.data.worlds.new("world")
    world.color = (0.3, 0.3, 0.3)
    scene.world = world
    camera = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
    scene.collection.objects.link(camera)
    scene.camera = camera
    camera.data.sensor_fit = "HORIZONTAL"
    r = scene.render
    r.engine = "CYCLES"
    r.resolution_x, r.resolution_y, r.resolution_percentage = W, H, 100
    r.pixel_aspect_x = r.pixel_aspect_y = 1
    r.film_transparent = True                   # alpha = coverage: the silhouette
    r.image_settings.file_format = "PNG"
    r.image_settings.color_mode = "RGBA"
    r.image_settings.color_depth = "8"
    scene.view_settings.view_transform = "Standard"
    for stamp in [name for name in dir(r) if name.startswith("use_stamp")]:
        setattr(r, stamp, False)              # no date, time or path in the PNGs (Cycles' timings: strip_text)
    scene.cycles.device = "CPU"
    scene.cycles.samples = 16
    scene.cycles.use_denoising = False
    scene.cycles.pixel_filter_type = "GAUSSIAN"   # Cycles widens a box filter to 1 pixel
    scene.cycles.filter_width = 0.01           # every sample at the pixel centre: a hard silhouette
    return scene, camera, positions


def intrinsics(camera):
    """Pixels, pixel centres at +0.5: Blender's shift moves the view, so the principal point moves the other way."""
    fx = camera.data.lens / camera.data.sensor_width * W
    return fx, fx, W / 2 - camera.data.shift_x * W, H / 2 + camera.data.shift_y * W


def check_projection(scene, camera, positions):
    """Blender's own projection of a few vertices against the pinhole model written to the files."""
    fx, fy, cx, cy = intrinsics(camera)
    world_to_camera = camera.matrix_world.inverted()
    for p in positions[::97]:
        ndc = world_to_camera_view(scene, camera, Vector(p))
        q = world_to_camera @ Vector(p)
        u, v = cx + fx * q.x / -q.z, cy - fy * q.y / -q.z
        assert abs(u - ndc.x * W) < 1e-3 and abs(v - (1 - ndc.y) * H) < 1e-3, (u, v, ndc)


def strip_text(path):
    """Drops a PNG's text chunks (Cycles writes its render times there), so that a rerun writes the same bytes."""
    data = path.read_bytes()
    out, at = bytearray(data[:8]), 8
    while at < len(data):
        length = int.from_bytes(data[at:at + 4], "big")
        chunk = data[at:at + 12 + length]
        if chunk[4:8] not in (b"tEXt", b"zTXt", b"iTXt"):
            out += chunk
        at += 12 + length
    path.write_bytes(bytes(out))


def colmap_pose(c2w):
    """COLMAP's world-to-camera (OpenCV: +y down, +z forward) of an OpenGL camera-to-world matrix."""
    opencv = c2w @ Matrix.Diagonal((1, -1, -1, 1))
    w2c = opencv.inverted()
    q = w2c.to_3x3().to_quaternion()
    return (q.w, q.x, q.y, q.z), tuple(w2c.translation)


def main():
    scene, camera, positions = setup_scene()
    OUT.mkdir(parents=True, exist_ok=True)
    nerf = {"camera_angle_x": ANGLE_X_CENTRED, "frames": []}
    nerf_k = {"w": W, "h": H, "frames": []}
    cameras, images = [], []
    for index, (azimuth, elevation, roll) in enumerate(CENTRED + SHIFTED):
        shifted = index >= len(CENTRED)
        camera.data.angle_x = ANGLE_X_SHIFTED if shifted else ANGLE_X_CENTRED
        camera.data.shift_x, camera.data.shift_y = SHIFT if shifted else (0, 0)
        camera.matrix_world = look_at(eye_of(azimuth, elevation), roll)
        bpy.context.view_layer.update()
        check_projection(scene, camera, positions)
        name = f"r_{index}"
        scene.render.filepath = str(OUT / f"{name}.png")
        bpy.ops.render.render(write_still=True)
        strip_text(OUT / f"{name}.png")
        c2w = [[round(x, 7) for x in row] for row in camera.matrix_world]
        fx, fy, cx, cy = intrinsics(camera)
        if shifted:
            nerf_k.update({"fl_x": fx, "fl_y": fy, "cx": cx, "cy": cy})
            nerf_k["frames"].append({"file_path": f"./{name}", "transform_matrix": c2w})
        else:
            nerf["frames"].append({"file_path": f"./{name}", "transform_matrix": c2w})
        camera_id = 2 if shifted else 1
        if len(cameras) < camera_id:
            cameras.append(f"{camera_id} PINHOLE {W} {H} {fx:.9g} {fy:.9g} {cx:.9g} {cy:.9g}")
        q, t = colmap_pose(camera.matrix_world)
        images.append(f"{index + 1} {' '.join(f'{x:.9g}' for x in q + t)} {camera_id} {name}.png\n\n")   # no 2D points
    (OUT / "transforms.json").write_text(json.dumps(nerf, indent=1) + "\n")
    (OUT / "transforms_intrinsics.json").write_text(json.dumps(nerf_k, indent=1) + "\n")
    sparse = OUT / "colmap"
    sparse.mkdir(exist_ok=True)
    (sparse / "cameras.txt").write_text("# Camera list: CAMERA_ID, MODEL, WIDTH, HEIGHT, PARAMS[]\n" +
                                        "\n".join(cameras) + "\n")
    (sparse / "images.txt").write_text("# IMAGE_ID, QW, QX, QY, QZ, TX, TY, TZ, CAMERA_ID, NAME, then POINTS2D\n" +
                                       "".join(images))
    (sparse / "points3D.txt").write_text("# 3D point list (none: the poses are known, nothing was triangulated)\n")


main()
