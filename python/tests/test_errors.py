"""Bad models, inputs and options raise loom's exceptions with Loom's
messages (the class follows the Status code)."""
import numpy as np
import pytest
from onnx import TensorProto

import loom
from conftest import add_relu_model, identity_model


def feed(n=2):
    a = np.ones((n, 3), np.float32)
    return {"a": a, "b": a}


def test_hierarchy():
    for cls in (loom.Fail, loom.InvalidArgument, loom.NotFound, loom.NotImplemented, loom.InvalidGraph,
                loom.OutOfMemory, loom.Cancelled, loom.TimedOut):
        assert issubclass(cls, loom.LoomError)
    assert issubclass(loom.LoomError, RuntimeError)
    assert issubclass(loom.InvalidArgument, ValueError)
    assert loom.NoSuchFile is loom.NotFound
    assert loom.InvalidArgument.__module__ == "loom"


def test_unknown_input_name(add_relu):
    f = feed()
    f["c"] = f["a"]
    with pytest.raises(loom.InvalidArgument, match="unknown input 'c'"):
        add_relu.run(None, f)


def test_missing_input(add_relu):
    with pytest.raises(loom.InvalidArgument, match="'b'"):
        add_relu.run(None, {"a": feed()["a"]})


def test_wrong_dtype_and_rank(add_relu):
    f = feed()
    f["a"] = f["a"].astype(np.float64)
    with pytest.raises(loom.InvalidArgument, match="double"):
        add_relu.run(None, f)
    f = feed()
    f["a"] = np.ones((2, 3, 1), np.float32)
    with pytest.raises(loom.InvalidArgument, match="rank|dims|shape"):
        add_relu.run(None, f)


def test_unknown_output_name(add_relu):
    with pytest.raises(loom.LoomError, match="nope"):
        add_relu.run(["nope"], feed())


def test_bad_python_arguments(add_relu):
    with pytest.raises(TypeError):
        add_relu.run(None, {1: feed()["a"]})
    with pytest.raises(TypeError):
        add_relu.run("y", feed())
    with pytest.raises(loom.InvalidArgument, match="has no ONNX type"):
        add_relu.run(None, {"a": np.zeros((2, 3), "datetime64[s]"), "b": feed()["b"]})


def test_bad_string_element():
    sess = loom.InferenceSession(identity_model(TensorProto.STRING, [2]), providers=["reference"])
    with pytest.raises(loom.InvalidArgument, match="element 1 of a string tensor is a int"):
        sess.run(None, {"x": np.array(["a", 3], dtype=object)})


def test_missing_model_file(tmp_path):
    with pytest.raises(loom.NoSuchFile) as e:
        loom.InferenceSession(str(tmp_path / "missing.onnx"))
    assert "missing.onnx" in str(e.value)


def test_invalid_model_bytes():
    with pytest.raises(loom.LoomError) as e:
        loom.InferenceSession(b"this is not a model", providers=["reference"])
    assert str(e.value)


def test_unknown_provider_denied():
    so = loom.SessionOptions()
    so.fallback_policy = "deny"
    with pytest.raises(loom.NotFound, match="provider 'no_such_ep' was not found"):
        loom.InferenceSession(add_relu_model(), so, providers=["no_such_ep"])


def test_bad_options():
    so = loom.SessionOptions()
    with pytest.raises(loom.InvalidArgument, match="log_severity_level"):
        so.log_severity_level = 7
    with pytest.raises(ValueError, match="intra_op_num_threads"):
        so.intra_op_num_threads = -1
    with pytest.raises(loom.InvalidArgument, match="fallback_policy"):
        so.fallback_policy = "sometimes"
    with pytest.raises(loom.NotFound, match="does not exist"):
        so.register_custom_ops_library("/no/such/libops.so")
    so.plugin_dirs = ["/no/such/dir"]
    with pytest.raises(loom.NotFound, match="/no/such/dir"):
        loom.InferenceSession(add_relu_model(), so)
