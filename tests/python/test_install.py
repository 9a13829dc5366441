# cmake --install puts the package into the prefix's Python folder, and it imports and renders from there.
import os
import pathlib
import subprocess
import sys


def test_installed_package_imports_from_the_prefix(tmp_path):
    build = os.environ["ADJOINT_BUILD_DIR"]
    subprocess.run([os.environ["ADJOINT_CMAKE"], "--install", build, "--prefix", str(tmp_path)],
                   check=True, capture_output=True)
    site = tmp_path / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    assert (site / "adjoint" / "__init__.py").is_file()
    scene = pathlib.Path(__file__).resolve().parents[2] / "assets" / "scenes" / "texture.json"
    code = ("import adjoint; s = adjoint.Scene(%r, resolution=(24, 16)); "
            "print(adjoint.__file__, s.render().shape)" % str(scene))
    env = dict(os.environ, PYTHONPATH=str(site))
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env,
                         cwd=tmp_path).stdout.split()
    assert out[0].startswith(str(site)) and out[1:] == ["(16,", "24,", "3)"]
