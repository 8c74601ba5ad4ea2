"""Shared helpers for the loom Python tests: small ONNX models built with
onnx.helper, and where the build tree keeps the CLI and the test plugins
(LOOM_BIN / LOOM_TEST_PLUGIN_DIR from ctest, else found next to the package)."""
import os
import pathlib

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import loom

BUILD_DIR = pathlib.Path(loom.__file__).resolve().parents[2]


def build_path(env, *default):
    return pathlib.Path(os.environ.get(env) or BUILD_DIR.joinpath(*default))


LOOM_BIN = build_path("LOOM_BIN", "bin", "loom")
TEST_PLUGIN_DIR = build_path("LOOM_TEST_PLUGIN_DIR", "test_plugins")
CUSTOM_OP_LIBRARY = TEST_PLUGIN_DIR / "custom_op_library" / "libloom_example_custom_op_library.so"


def model_bytes(nodes, inputs, outputs, opset=17, domains=(), initializers=()):
    graph = helper.make_graph(nodes, "test", inputs, outputs, initializer=list(initializers))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    return model.SerializeToString()


def tensor(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


def identity_model(elem_type, shape=None):
    """y = Identity(x) for one element type (shape None: unknown rank)."""
    return model_bytes([helper.make_node("Identity", ["x"], ["y"])],
                       [tensor("x", elem_type, shape)], [tensor("y", elem_type, shape)])


def add_relu_model():
    """s = a + b; y = Relu(s); both outputs, float [N, 3] with N symbolic."""
    return model_bytes([helper.make_node("Add", ["a", "b"], ["s"], name="add"),
                        helper.make_node("Relu", ["s"], ["y"], name="relu")],
                       [tensor("a", TensorProto.FLOAT, ["N", 3]), tensor("b", TensorProto.FLOAT, ["N", 3])],
                       [tensor("s", TensorProto.FLOAT, ["N", 3]), tensor("y", TensorProto.FLOAT, ["N", 3])])


def endless_loop_model():
    """A Loop adding 1 to x until the run is stopped (2**62 iterations)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["x_in", "one"], ["x_out"])],
        "body",
        [tensor("i", TensorProto.INT64, []), tensor("cond_in", TensorProto.BOOL, []),
         tensor("x_in", TensorProto.FLOAT, [1])],
        [tensor("cond_out", TensorProto.BOOL, []), tensor("x_out", TensorProto.FLOAT, [1])],
        initializer=[helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])])
    nodes = [helper.make_node("Loop", ["trips", "cond", "x"], ["y"], body=body)]
    inits = [helper.make_tensor("trips", TensorProto.INT64, [], [2**62]),
             helper.make_tensor("cond", TensorProto.BOOL, [], [True])]
    return model_bytes(nodes, [tensor("x", TensorProto.FLOAT, [1])], [tensor("y", TensorProto.FLOAT, [1])],
                       initializers=inits)


@pytest.fixture
def add_relu():
    return loom.InferenceSession(add_relu_model(), providers=["reference"])


@pytest.fixture
def rng():
    return np.random.default_rng(0)
