"""register_custom_ops_library with examples/custom_op_library (domain
example.ops), built in tree into test_plugins/custom_op_library."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import loom
from conftest import CUSTOM_OP_LIBRARY, model_bytes, tensor

pytestmark = pytest.mark.skipif(not CUSTOM_OP_LIBRARY.exists(),
                                reason=f"{CUSTOM_OP_LIBRARY} not built (target loom_example_custom_op_library)")


def custom_model():
    ops = "example.ops"
    return model_bytes(
        [helper.make_node("ScaledTanh", ["a"], ["t"], name="scaled_tanh", domain=ops, alpha=2.0, beta=0.5),
         helper.make_node("SumOfSquares", ["a", "b"], ["s"], name="sum_sq", domain=ops),
         helper.make_node("Add", ["t", "s"], ["u"], name="add")],
        [tensor("a", TensorProto.FLOAT, [2, 3]), tensor("b", TensorProto.FLOAT, [2, 3])],
        [tensor("u", TensorProto.FLOAT, None)], domains=[ops])


def test_custom_ops_run_with_the_library(rng):
    so = loom.SessionOptions()
    so.register_custom_ops_library(str(CUSTOM_OP_LIBRARY))
    assert so.custom_op_libraries == [str(CUSTOM_OP_LIBRARY)]
    sess = loom.InferenceSession(custom_model(), so, providers=["reference"])
    a = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal((2, 3)).astype(np.float32)
    (u,) = sess.run(None, {"a": a, "b": b})
    np.testing.assert_allclose(u, 2 * np.tanh(0.5 * a) + a * a + b * b, rtol=1e-5, atol=1e-6)
    ops = {n.node_name: n.domain for n in sess.get_placement().nodes}
    assert ops["scaled_tanh"] == "example.ops"


def test_without_the_library_the_domain_is_unknown():
    with pytest.raises(loom.LoomError, match="example.ops"):
        loom.InferenceSession(custom_model(), providers=["reference"])


def test_plugins_report_the_domain():
    found = [p for p in loom.get_plugins(custom_op_libraries=[str(CUSTOM_OP_LIBRARY)])
             if p.path == str(CUSTOM_OP_LIBRARY)]
    assert len(found) == 1 and found[0].loaded
    (domain,) = found[0].custom_op_domains
    assert domain.name == "example.ops" and domain.refusal == ""
    assert "ScaledTanh" in domain.ops and "SumOfSquares" in domain.ops


def test_a_refused_library_is_an_error(tmp_path):
    bad = tmp_path / "libbad_ops.so"
    bad.write_text("not an ELF file")
    so = loom.SessionOptions()
    so.register_custom_ops_library(bad)
    with pytest.raises(loom.Fail, match="libbad_ops.so' was refused"):
        loom.InferenceSession(custom_model(), so, providers=["reference"])
