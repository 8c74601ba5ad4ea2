"""The opt-in onnxruntime shim (python/ort_shim): code written for ONNX
Runtime, run unchanged with `import onnxruntime as ort`, in a fresh
interpreter whose PYTHONPATH holds the shim folder."""
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from conftest import BUILD_DIR, add_relu_model

SHIM_DIR = BUILD_DIR / "python_ort_shim"


def run_with_shim(tmp_path, code):
    model = tmp_path / "add_relu.onnx"
    model.write_bytes(add_relu_model())
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SHIM_DIR), str(BUILD_DIR / "python"), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not (SHIM_DIR / "onnxruntime").is_dir(), reason="shim not built")
def test_onnxruntime_code_runs_unchanged(tmp_path):
    r = run_with_shim(tmp_path, """
        import numpy as np
        import onnxruntime as ort
        from onnxruntime.capi.onnxruntime_pybind11_state import InvalidArgument, NoSuchFile, InvalidProtobuf
        assert "CPUExecutionProvider" in ort.get_available_providers()
        assert "CUDAExecutionProvider" in ort.get_all_providers()
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess = ort.InferenceSession("add_relu.onnx", so, providers=["CPUExecutionProvider"])
        assert sess.get_providers() == ["CPUExecutionProvider"], sess.get_providers()
        names = [i.name for i in sess.get_inputs()]
        a = np.array([[-1, 2, -3]], np.float32)
        s, y = sess.run(None, dict(zip(names, [a, a])))
        assert (y == np.maximum(2 * a, 0)).all()
        try:
            sess.run(None, {"a": a})
            raise SystemExit("a missing input was accepted")
        except InvalidArgument:
            pass
        try:
            ort.InferenceSession("missing.onnx", providers=["CPUExecutionProvider"])
            raise SystemExit("a missing file was accepted")
        except NoSuchFile:
            pass
        open("garbage.onnx", "wb").write(b"not a model")
        try:
            ort.InferenceSession("garbage.onnx")
            raise SystemExit("garbage was accepted")
        except (InvalidProtobuf, InvalidArgument):
            pass
        ort.set_default_logger_severity(3)
        print("ok", ort.get_version_string(), ort.get_device())
        """)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("ok "), r.stdout


def test_shim_is_not_on_the_default_path():
    """Plain `import loom` must not make `import onnxruntime` find the shim."""
    import loom
    assert not (pathlib.Path(loom.__file__).parent.parent / "onnxruntime").exists()
