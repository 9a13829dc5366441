"""Adjoint from Python: load a scene, render its views, read and write its parameters, run its optimization.

    import adjoint
    scene = adjoint.Scene("assets/scenes/material-light.json")
    image = scene.render(view=0)                 # float32 [H, W, 3], linear RGB, rows top first
    scene.parameters["materials.ball.albedo"] = [0.2, 0.4, 0.8]   # the next render shows it

adjoint.torch.render makes the renderer a differentiable torch operation (import adjoint.torch; needs torch).
Errors from the loader and the engine are Python exceptions: ValueError for bad input (naming the file and
JSON path), KeyError for a path that addresses nothing, RuntimeError for the device.
"""
from collections.abc import MutableMapping

from . import _adjoint
from ._adjoint import Optimization, validation_messages, device_name

__all__ = ["Scene", "Optimization", "SceneParameters", "validation_messages", "device_name"]


class SceneParameters(MutableMapping):
    """A scene's values by parameter path (Mitsuba 3's traverse(), without the update(): a write applies at once).

    Values are float32 numpy arrays: textures [H, W, 3] (rows top first, linear RGB), anything else 1-D.
    Keys cannot be added or removed: a scene has the values its materials, lights, meshes and camera give it.
    """

    def __init__(self, scene):
        self._scene = scene

    def __getitem__(self, path):
        return self._scene._get(path)

    def __setitem__(self, path, value):
        self._scene._set(path, value)

    def __delitem__(self, path):
        raise TypeError("a scene's parameters cannot be removed")

    def __iter__(self):
        return iter(self._scene._parameter_paths())

    def __len__(self):
        return len(self._scene._parameter_paths())

    def __repr__(self):
        return "SceneParameters(" + ", ".join(self) + ")"


class Scene(_adjoint.Scene):
    """A scene file, loaded and checked (ValueError: `<file>: <json path>: <what>`)."""

    @property
    def parameters(self):
        return SceneParameters(self)
