"""IO binding: inputs from numpy or from device buffers, outputs left in a
memory kind or written into a given buffer (ONNX Runtime's SessionIOBinding)."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import loom
from conftest import TEST_PLUGIN_DIR, model_bytes, tensor


def relu_model():
    return model_bytes([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                       [tensor("x", TensorProto.FLOAT, [2, 3])], [tensor("y", TensorProto.FLOAT, [2, 3])])


def test_host_binding(add_relu, rng):
    a = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal((2, 3)).astype(np.float32)
    io = add_relu.io_binding()
    io.bind_cpu_input("a", a)
    io.bind_cpu_input("b", b)
    io.bind_output("y")
    add_relu.run_with_iobinding(io)
    (y,) = io.copy_outputs_to_cpu()
    np.testing.assert_allclose(y, np.maximum(a + b, 0), rtol=1e-6)
    (value,) = io.get_outputs()
    assert value.device_name() == "cpu" and value.shape() == [2, 3] and value.data_type() == "tensor(float)"
    np.testing.assert_array_equal(value.numpy(), y)

    out = np.full((2, 3), -1, np.float32)
    io.clear_binding_outputs()
    io.bind_output("s", "cpu", 0, np.float32, [2, 3], out.ctypes.data)
    add_relu.run_with_iobinding(io)
    np.testing.assert_allclose(out, a + b, rtol=1e-6)
    np.testing.assert_array_equal(io.copy_outputs_to_cpu()[0], out)

    io.clear_binding_inputs()
    io.bind_ortvalue_input("a", loom.OrtValue.ortvalue_from_numpy(a))
    with pytest.raises(loom.InvalidArgument, match="'b'"):
        add_relu.run_with_iobinding(io)


@pytest.mark.skipif(not (TEST_PLUGIN_DIR / "device").is_dir(), reason="test_device plugin not built")
def test_device_memory_outputs_stay_on_the_device(rng):
    so = loom.SessionOptions()
    so.plugin_dirs = [str(TEST_PLUGIN_DIR / "device")]
    so.fallback_policy = "deny"
    sess = loom.InferenceSession(relu_model(), so, providers=["test_device"])
    assert sess.get_providers() == ["test_device"]
    x = rng.standard_normal((2, 3)).astype(np.float32)
    io = sess.io_binding()
    io.bind_cpu_input("x", x)
    io.bind_output("y", "test_device")
    sess.run_with_iobinding(io)
    (y,) = io.get_outputs()
    assert y.device_name() == "test_device" and y.data_ptr() != 0
    np.testing.assert_array_equal(y.numpy(), np.maximum(x, 0))
    # The device output feeds the next run where it is.
    again = sess.io_binding()
    again.bind_ortvalue_input("x", y)
    again.bind_output("y", "test_device")
    sess.run_with_iobinding(again)
    np.testing.assert_array_equal(again.copy_outputs_to_cpu()[0], np.maximum(x, 0))
    with pytest.raises(loom.InvalidArgument, match="memory 'nowhere'"):
        bad = sess.io_binding()
        bad.bind_cpu_input("x", x)
        bad.bind_output("y", "nowhere")
        sess.run_with_iobinding(bad)
