"""InferenceSession: NodeArgs, run forms, providers, placement, options,
profiling and plugins, as ONNX Runtime's Python API has them."""
import json
import os
import pathlib

import numpy as np
import pytest
from onnx import TensorProto, helper

import loom
from conftest import add_relu_model, model_bytes, tensor


def test_node_args(add_relu):
    ins, outs = add_relu.get_inputs(), add_relu.get_outputs()
    assert [i.name for i in ins] == ["a", "b"]
    assert [o.name for o in outs] == ["s", "y"]
    assert ins[0].type == "tensor(float)"
    assert ins[0].shape == ["N", 3]
    assert "NodeArg(name='a', type='tensor(float)', shape=['N', 3])" == repr(ins[0])


def test_overridable_initializers():
    # A graph input with an initializer: listed apart, fed or not, as in ORT.
    model = model_bytes([helper.make_node("Mul", ["x", "scale"], ["y"])],
                        [tensor("x", TensorProto.FLOAT, [2]), tensor("scale", TensorProto.FLOAT, [2])],
                        [tensor("y", TensorProto.FLOAT, [2])],
                        initializers=[helper.make_tensor("scale", TensorProto.FLOAT, [2], [2.0, 3.0])])
    sess = loom.InferenceSession(model, providers=["reference"])
    assert [i.name for i in sess.get_inputs()] == ["x"]
    (scale,) = sess.get_overridable_initializers()
    assert (scale.name, scale.type, scale.shape) == ("scale", "tensor(float)", [2])
    x = np.ones(2, dtype=np.float32)
    assert sess.run(None, {"x": x})[0].tolist() == [2.0, 3.0]
    assert sess.run(None, {"x": x, "scale": np.array([5, 7], dtype=np.float32)})[0].tolist() == [5.0, 7.0]


def test_unknown_dims_and_rank():
    # y's rank depends on the length of `shape`, which nobody knows.
    model = model_bytes([helper.make_node("Reshape", ["x", "shape"], ["y"])],
                        [helper.make_tensor_value_info("x", TensorProto.INT32, [None, 2, "T"]),
                         helper.make_tensor_value_info("shape", TensorProto.INT64, [None])],
                        [helper.make_tensor_value_info("y", TensorProto.INT32, None)])
    sess = loom.InferenceSession(model, providers=["reference"])
    assert sess.get_inputs()[0].shape == [None, 2, "T"]
    assert sess.get_outputs()[0].shape == []
    (y,) = sess.run(None, {"x": np.arange(6, dtype=np.int32).reshape(1, 2, 3), "shape": [3, 2]})
    assert y.shape == (3, 2)


def test_run_all_and_subsets(add_relu, rng):
    a = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((4, 3)).astype(np.float32)
    s, y = add_relu.run(None, {"a": a, "b": b})
    np.testing.assert_allclose(s, a + b, rtol=1e-6)
    np.testing.assert_allclose(y, np.maximum(a + b, 0), rtol=1e-6)
    (only_y,) = add_relu.run(["y"], {"a": a, "b": b})
    np.testing.assert_array_equal(only_y, y)
    y2, s2 = add_relu.run(["y", "s"], {"a": a, "b": b})
    np.testing.assert_array_equal(y2, y)
    np.testing.assert_array_equal(s2, s)
    assert len(add_relu.run([], {"a": a, "b": b})) == 2


def test_model_from_path_and_pathlike(tmp_path):
    path = tmp_path / "add_relu.onnx"
    path.write_bytes(add_relu_model())
    for p in (str(path), path):
        sess = loom.InferenceSession(p, providers=["reference"])
        assert [o.name for o in sess.get_outputs()] == ["s", "y"]


def test_providers_and_placement(add_relu):
    assert add_relu.get_providers() == ["reference"]
    placement = add_relu.get_placement()
    assert [(n.node_name, n.op_type, n.provider) for n in placement.nodes] == [
        ("add", "Add", "reference"), ("relu", "Relu", "reference")]
    assert placement.nodes[0].inputs == ["a", "b"]
    assert placement.providers[0].provider == "reference"
    assert placement.providers[0].node_count == 2
    assert placement.providers[0].op_types == {"Add": 1, "Relu": 1}
    assert "reference" in str(placement)
    assert "Add" in add_relu.describe_plan()


def test_default_providers_put_reference_last():
    sess = loom.InferenceSession(add_relu_model())
    providers = sess.get_providers()
    assert providers[-1] == "reference"
    assert providers == [p for p in loom.get_available_providers() if p != "reference"] + ["reference"]


def test_provider_options_forms():
    sess = loom.InferenceSession(add_relu_model(), providers=[("reference", {"x": 1})])
    assert sess.get_provider_options()["reference"] == {"x": "1"}
    sess = loom.InferenceSession(add_relu_model(), providers=["reference"], provider_options=[{"y": "2"}])
    assert sess.get_provider_options()["reference"] == {"y": "2"}
    with pytest.raises(ValueError, match="same length"):
        loom.InferenceSession(add_relu_model(), providers=["reference"], provider_options=[{}, {}])


def test_session_options_fields():
    so = loom.SessionOptions()
    assert so.intra_op_num_threads == 0
    assert so.graph_optimization_level == loom.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    assert so.log_severity_level == 2
    assert so.fallback_policy == "warn"
    so.intra_op_num_threads = 2
    so.inter_op_num_threads = 1
    so.graph_optimization_level = loom.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.execution_mode = loom.ExecutionMode.ORT_PARALLEL
    so.log_severity_level = 3
    so.fallback_policy = "deny"
    assert (so.intra_op_num_threads, so.inter_op_num_threads) == (2, 1)
    assert so.graph_optimization_level == loom.GraphOptimizationLevel.ORT_DISABLE_ALL
    assert int(loom.GraphOptimizationLevel.ORT_ENABLE_ALL) == 99
    assert so.execution_mode == loom.ExecutionMode.ORT_PARALLEL
    sess = loom.InferenceSession(add_relu_model(), sess_options=so, providers=["reference"])
    assert sess.get_session_options().intra_op_num_threads == 2
    a = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(sess.run(["y"], {"a": a, "b": a})[0], 2 * a)


def identity_chain():
    """Identity nodes the basic level removes."""
    return model_bytes([helper.make_node("Identity", ["x"], ["t"], name="id"),
                        helper.make_node("Relu", ["t"], ["y"], name="relu")],
                       [tensor("x", TensorProto.FLOAT, [2])], [tensor("y", TensorProto.FLOAT, [2])])


def test_optimization_level_takes_effect():
    so = loom.SessionOptions()
    so.graph_optimization_level = loom.GraphOptimizationLevel.ORT_DISABLE_ALL
    unopt = loom.InferenceSession(identity_chain(), so, providers=["reference"])
    assert [n.op_type for n in unopt.get_placement().nodes] == ["Identity", "Relu"]
    so.graph_optimization_level = loom.GraphOptimizationLevel.ORT_ENABLE_BASIC
    opt = loom.InferenceSession(identity_chain(), so, providers=["reference"])
    assert [n.op_type for n in opt.get_placement().nodes] == ["Relu"]


def test_config_file_and_options_override(tmp_path):
    config = tmp_path / "loom.json"
    config.write_text(json.dumps({"providers": ["reference"], "optimization_level": "disabled"}))
    sess = loom.InferenceSession(identity_chain(), config=str(config))
    assert sess.get_providers() == ["reference"]
    assert [n.op_type for n in sess.get_placement().nodes] == ["Identity", "Relu"]
    so = loom.SessionOptions()
    so.graph_optimization_level = loom.GraphOptimizationLevel.ORT_ENABLE_BASIC
    sess = loom.InferenceSession(identity_chain(), so, config=config)
    assert [n.op_type for n in sess.get_placement().nodes] == ["Relu"]
    config.write_text(json.dumps({"no_such_key": 1}))
    with pytest.raises(loom.InvalidArgument, match="no_such_key"):
        loom.InferenceSession(identity_chain(), config=config)


def test_profiling(tmp_path, add_relu):
    assert add_relu.end_profiling() == ""  # profiling off, as ONNX Runtime
    so = loom.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "prof")
    sess = loom.InferenceSession(add_relu_model(), so, providers=["reference"])
    a = np.ones((2, 3), np.float32)
    for _ in range(3):
        sess.run(None, {"a": a, "b": a})
    path = sess.end_profiling()
    assert path.startswith(str(tmp_path / "prof_")) and path.endswith(".json")
    trace = json.loads(pathlib.Path(path).read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    names = {e.get("name") for e in events}
    assert "relu" in names or any("relu" in str(e.get("args", {})) for e in events)


def test_optimized_model_filepath(tmp_path):
    so = loom.SessionOptions()
    so.optimized_model_filepath = str(tmp_path / "opt.onnx")
    loom.InferenceSession(identity_chain(), so, providers=["reference"])
    saved = loom.InferenceSession(str(tmp_path / "opt.onnx"), providers=["reference"])
    assert [n.op_type for n in saved.get_placement().nodes] == ["Relu"]


def test_run_options():
    ro = loom.RunOptions()
    ro.logid = "tagged"
    ro.log_severity_level = 3
    sess = loom.InferenceSession(add_relu_model(), providers=["reference"])
    a = np.ones((1, 3), np.float32)
    sess.run(None, {"a": a, "b": a}, ro)
    ro.terminate = True
    with pytest.raises(loom.Cancelled):
        sess.run(None, {"a": a, "b": a}, ro)
    ro.terminate = False
    assert len(sess.run(None, {"a": a, "b": a}, ro)) == 2


def test_available_providers_and_plugins(tmp_path):
    assert "reference" in loom.get_available_providers()
    plugins = loom.get_plugins()
    reference = [p for p in plugins if p.name == "reference"]
    assert reference and reference[0].loaded and reference[0].refusal == ""
    assert reference[0].providers[0].name == "reference"
    assert reference[0].providers[0].devices[0].memory == "cpu"
    bad = tmp_path / "libnot_a_plugin.so"
    bad.write_text("not an ELF file")
    refused = [p for p in loom.get_plugins([str(tmp_path)]) if p.path == str(bad)]
    assert len(refused) == 1 and not refused[0].loaded
    assert refused[0].refusal  # the reason, e.g. what dlopen said
    assert "refused" in repr(refused[0])
