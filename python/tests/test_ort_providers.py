"""ONNX Runtime's provider names, as existing onnxruntime code passes them:
CPUExecutionProvider runs on Loom's fast host provider (not the reference EP
alone), CUDAExecutionProvider maps to cuda with its ORT options, a provider
ORT knows but this machine lacks is skipped with ORT's warning, and an
unknown name raises."""
import warnings

import numpy as np
import pytest

import loom
from conftest import add_relu_model

HAS_ONEDNN = "cpu_onednn" in loom.get_available_providers()
HAS_CUDA = "cuda" in loom.get_available_providers()


def run_add_relu(sess):
    a = np.array([[-1, 2, -3]], np.float32)
    b = np.array([[0.5, 0.5, 0.5]], np.float32)
    s, y = sess.run(None, {"a": a, "b": b})
    np.testing.assert_allclose(s, a + b)
    np.testing.assert_allclose(y, np.maximum(a + b, 0))


def test_cpu_execution_provider_uses_the_fast_host_provider():
    sess = loom.InferenceSession(add_relu_model(), providers=["CPUExecutionProvider"])
    assert sess.get_providers() == ["CPUExecutionProvider"]
    placed = {n.provider for n in sess.get_placement().nodes}
    assert placed == ({"cpu_onednn"} if HAS_ONEDNN else {"reference"})
    run_add_relu(sess)


@pytest.mark.skipif(HAS_CUDA, reason="checks the warning ONNX Runtime gives where CUDA is missing")
def test_cuda_where_it_is_missing_warns_and_runs_on_the_cpu():
    with pytest.warns(UserWarning, match="Specified provider 'CUDAExecutionProvider' is not in available provider"):
        sess = loom.InferenceSession(add_relu_model(),
                                     providers=[("CUDAExecutionProvider", {"device_id": 0, "gpu_mem_limit": 1 << 31,
                                                                           "arena_extend_strategy": "kSameAsRequested",
                                                                           "do_copy_in_default_stream": True}),
                                                "CPUExecutionProvider"])
    assert sess.get_providers() == ["CPUExecutionProvider"]
    run_add_relu(sess)


@pytest.mark.skipif(not HAS_CUDA, reason="needs the cuda provider")
def test_cuda_execution_provider_is_cuda():
    sess = loom.InferenceSession(add_relu_model(), providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert sess.get_providers() == ["CUDAExecutionProvider", "CPUExecutionProvider"]
    run_add_relu(sess)


def test_known_but_absent_provider_warns_and_the_session_goes_on():
    with pytest.warns(UserWarning, match="TensorrtExecutionProvider"):
        sess = loom.InferenceSession(add_relu_model(), providers=["TensorrtExecutionProvider"])
    run_add_relu(sess)


def test_unknown_provider_name_raises():
    with pytest.raises(ValueError, match="Unknown provider 'FooExecutionProvider'"):
        loom.InferenceSession(add_relu_model(), providers=["FooExecutionProvider"])


def test_loom_and_ort_names_mix_and_loom_names_answer_in_loom_names():
    sess = loom.InferenceSession(add_relu_model(), providers=["reference"])
    assert sess.get_providers() == ["reference"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sess = loom.InferenceSession(add_relu_model(), providers=["reference", "CPUExecutionProvider"])
    assert {n.provider for n in sess.get_placement().nodes} == {"reference"}
    assert sess.get_providers() == ["CPUExecutionProvider"]


def test_a_provider_listed_twice_is_refused():
    with pytest.raises(ValueError, match="listed twice"):
        loom.InferenceSession(add_relu_model(), providers=["CPUExecutionProvider", "CPUExecutionProvider"])


def test_modelmeta_reports_the_model_files_fields():
    import onnx
    model = onnx.load_from_string(add_relu_model())
    model.producer_name = "exporter"
    model.producer_version = "2.1"
    model.domain = "ai.example"
    model.doc_string = "adds and rectifies"
    model.model_version = 7
    model.graph.doc_string = "the graph"
    onnx.helper.set_model_props(model, {"names": "{0: 'cat', 1: 'dog'}", "stride": "32"})
    meta = loom.InferenceSession(model.SerializeToString(), providers=["reference"]).get_modelmeta()
    assert (meta.producer_name, meta.producer_version, meta.graph_name) == ("exporter", "2.1", "test")
    assert (meta.domain, meta.description, meta.version) == ("ai.example", "adds and rectifies", 7)
    assert meta.graph_description == "the graph"
    assert meta.custom_metadata_map == {"names": "{0: 'cat', 1: 'dog'}", "stride": "32"}


def test_session_options_onnxruntime_code_sets():
    so = loom.SessionOptions()
    assert so.enable_mem_pattern and so.enable_cpu_mem_arena and so.enable_mem_reuse
    so.enable_mem_pattern = False
    so.enable_cpu_mem_arena = False
    so.use_deterministic_compute = True
    so.logid = "worker-3"
    so.log_verbosity_level = 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.add_session_config_entry("session.use_env_allocators", "1")
    assert so.get_session_config_entry("session.use_env_allocators") == "1"
    with pytest.raises(loom.InvalidArgument, match="session.no_such_key"):
        so.get_session_config_entry("session.no_such_key")
    assert (so.enable_mem_pattern, so.logid, so.log_verbosity_level) == (False, "worker-3", 1)
    run_add_relu(loom.InferenceSession(add_relu_model(), so, providers=["CPUExecutionProvider"]))
