"""`cmake --install` puts the package in <prefix>/lib/python3/dist-packages,
where it imports, finds libloom_core and the installed plugins, and runs a
model (in a fresh interpreter, away from the build tree)."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD_DIR, add_relu_model

CMAKE = os.environ.get("LOOM_CMAKE") or shutil.which("cmake")

SCRIPT = """
import sys, numpy as np, loom
sess = loom.InferenceSession(sys.argv[1])
a = np.ones((2, 3), np.float32)
s, y = sess.run(None, {"a": a, "b": a})
assert (y == 2).all(), y
print(loom.__file__)
print(loom.get_plugins()[0].path)
print(",".join(sess.get_providers()))
"""


@pytest.mark.skipif(CMAKE is None or not (BUILD_DIR / "cmake_install.cmake").exists(),
                    reason="not run from a CMake build tree")
def test_installed_package_runs_a_model(tmp_path):
    prefix = tmp_path / "prefix"
    subprocess.run([CMAKE, "--install", str(BUILD_DIR), "--prefix", str(prefix)], check=True,
                   capture_output=True, text=True)
    site = prefix / "lib" / "python3" / "dist-packages"
    assert (site / "loom" / "__init__.py").exists()
    model = tmp_path / "m.onnx"
    model.write_bytes(add_relu_model())
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOM_")}
    env["PYTHONPATH"] = str(site)
    p = subprocess.run([sys.executable, "-c", SCRIPT, str(model)], cwd=tmp_path, env=env,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    module, plugin, providers = p.stdout.split()
    assert pathlib.Path(module).resolve().is_relative_to(site.resolve())
    assert pathlib.Path(plugin).resolve().is_relative_to(prefix.resolve())
    assert providers.endswith("reference")
