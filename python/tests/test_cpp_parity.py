"""The Python API gives the outputs the C++ API gives: ONNX backend-test
models run through loom.InferenceSession and through `loom run` (the C++
Session API behind the command line) on the same inputs, with the default
providers, against each other and the test's expected outputs."""
import pathlib
import subprocess

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import loom
from conftest import LOOM_BIN

DATA = pathlib.Path("/usr/share/libonnx-testdata/data")
MODELS = ["node/test_conv_with_strides_padding", "pytorch-converted/test_Conv2d_depthwise_padded",
          "pytorch-converted/test_BatchNorm2d_eval", "pytorch-converted/test_Linear",
          "node/test_gemm_default_matrix_bias"]


def read_pb(path):
    t = onnx.TensorProto()
    t.ParseFromString(pathlib.Path(path).read_bytes())
    return numpy_helper.to_array(t)


@pytest.mark.skipif(not LOOM_BIN.exists(), reason=f"{LOOM_BIN} not built")
@pytest.mark.parametrize("name", MODELS)
def test_same_outputs_as_cpp(name, tmp_path):
    case = DATA / name
    assert case.is_dir(), f"{case}: install libonnx-testdata"
    model = onnx.load(str(case / "model.onnx"))
    initializers = {i.name for i in model.graph.initializer}
    input_names = [i.name for i in model.graph.input if i.name not in initializers]
    data = case / "test_data_set_0"
    feed = {n: read_pb(data / f"input_{k}.pb") for k, n in enumerate(input_names)}
    sess = loom.InferenceSession(str(case / "model.onnx"))
    outputs = sess.run(None, feed)

    cmd = [str(LOOM_BIN), "run", "--model", str(case / "model.onnx"), "--save-outputs", str(tmp_path), "--quiet"]
    for k, n in enumerate(input_names):
        cmd += ["--input", f"{n}={data / f'input_{k}.pb'}"]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    for k, out in enumerate(sess.get_outputs()):
        cpp = read_pb(tmp_path / f"{out.name}.pb")
        assert outputs[k].dtype == cpp.dtype and outputs[k].shape == cpp.shape
        np.testing.assert_allclose(outputs[k], cpp, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(outputs[k], read_pb(data / f"output_{k}.pb"), rtol=1e-3, atol=1e-4)
