# Shared by the Python tests: the repository's paths, a small demo scene, and the check that the Vulkan
# validation layer said nothing during a test (as the C++ tests' device fixture checks).
import os
import pathlib

import pytest

import adjoint

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENES = ROOT / "assets" / "scenes"


@pytest.fixture(autouse=True)
def no_validation_messages():
    before = len(adjoint.validation_messages())
    yield
    messages = adjoint.validation_messages()
    assert len(messages) == before, messages[before]


@pytest.fixture
def small_scene():
    """material-light.json (a sphere on a floor, a point light and an ambient one) at 32x32."""
    return adjoint.Scene(SCENES / "material-light.json", resolution=(32, 32))
