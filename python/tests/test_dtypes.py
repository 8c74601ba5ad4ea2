"""Round trips through Identity for every ONNX element type (bfloat16 through
float32 or ml_dtypes), strings, sequences and optionals; shapes, views and
byte orders."""
import numpy as np
import pytest
import onnx
from onnx import TensorProto, helper

import loom
from conftest import identity_model, model_bytes, tensor

NUMERIC = [
    (np.float32, TensorProto.FLOAT, "float"),
    (np.float64, TensorProto.DOUBLE, "double"),
    (np.float16, TensorProto.FLOAT16, "float16"),
    (np.int8, TensorProto.INT8, "int8"),
    (np.int16, TensorProto.INT16, "int16"),
    (np.int32, TensorProto.INT32, "int32"),
    (np.int64, TensorProto.INT64, "int64"),
    (np.uint8, TensorProto.UINT8, "uint8"),
    (np.uint16, TensorProto.UINT16, "uint16"),
    (np.uint32, TensorProto.UINT32, "uint32"),
    (np.uint64, TensorProto.UINT64, "uint64"),
    (np.bool_, TensorProto.BOOL, "bool"),
    (np.complex64, TensorProto.COMPLEX64, "complex64"),
    (np.complex128, TensorProto.COMPLEX128, "complex128"),
]


def values(dtype, shape, rng):
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype,elem,name", NUMERIC, ids=[n for _, _, n in NUMERIC])
def test_numeric_round_trip(dtype, elem, name, rng):
    sess = loom.InferenceSession(identity_model(elem, [2, 3, 4]), providers=["reference"])
    assert sess.get_inputs()[0].type == f"tensor({name})"
    x = values(dtype, (2, 3, 4), rng)
    (y,) = sess.run(None, {"x": x})
    assert isinstance(y, np.ndarray)
    assert y.dtype == np.dtype(dtype)
    assert y.shape == x.shape
    np.testing.assert_array_equal(y, x)


def bfloat16_rounded(x):
    """float32 values rounded to bfloat16 (nearest even, NaN kept), widened back."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    out = r.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32("nan"), out)


def test_bfloat16_round_trip():
    # numpy has no bfloat16 of its own: float arrays fed to a bfloat16 input
    # are rounded to nearest even; outputs are ml_dtypes.bfloat16 arrays when
    # that package is installed (not a Debian 12 package), else float32
    # widened exactly, as onnx.numpy_helper reads bfloat16 tensors.
    try:
        import ml_dtypes
        out_dtype = np.dtype(ml_dtypes.bfloat16)
    except ImportError:
        out_dtype = np.dtype(np.float32)
    sess = loom.InferenceSession(identity_model(TensorProto.BFLOAT16, [8]), providers=["reference"])
    assert sess.get_inputs()[0].type == "tensor(bfloat16)"
    x = np.array([1.0, 1.0048828125, 1.00390625, 1.0078125 + 2**-9, 3.3e38, np.inf, -2.5, np.nan], np.float32)
    (y,) = sess.run(None, {"x": x})
    assert y.dtype == out_dtype
    y = y.astype(np.float32)
    np.testing.assert_array_equal(y, bfloat16_rounded(x))
    assert y[1] == 1.0078125, "above the tie rounds up (not truncated)"
    assert y[2] == 1.0, "a tie rounds to even"
    # The same rounding as the reference EP's Cast to bfloat16.
    cast = loom.InferenceSession(
        model_bytes([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.BFLOAT16)],
                    [tensor("x", TensorProto.FLOAT, [8])], [tensor("y", TensorProto.BFLOAT16, [8])]),
        providers=["reference"])
    (z,) = cast.run(None, {"x": x})
    np.testing.assert_array_equal(z.astype(np.float32), y)
    with pytest.raises(loom.InvalidArgument):
        sess.run(None, {"x": np.arange(8, dtype=np.int32)})


@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (1,), (2, 1, 1, 5)])
def test_shapes(shape, rng):
    sess = loom.InferenceSession(identity_model(TensorProto.FLOAT), providers=["reference"])
    x = rng.standard_normal(shape).astype(np.float32)
    (y,) = sess.run(None, {"x": x})
    assert y.shape == shape
    np.testing.assert_array_equal(y, x)


def test_views_and_byte_order(rng):
    sess = loom.InferenceSession(identity_model(TensorProto.FLOAT), providers=["reference"])
    base = rng.standard_normal((4, 6)).astype(np.float32)
    for x in (base.T, base[::2, 1::2], base.astype(">f4")):
        (y,) = sess.run(None, {"x": x})
        np.testing.assert_array_equal(y, x)
        assert y.dtype == np.float32 and y.flags.c_contiguous


def test_python_values_take_the_model_dtype():
    sess = loom.InferenceSession(identity_model(TensorProto.INT64), providers=["reference"])
    (y,) = sess.run(None, {"x": [[1, 2], [3, 4]]})
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y, [[1, 2], [3, 4]])


def test_outputs_own_their_memory(rng):
    sess = loom.InferenceSession(identity_model(TensorProto.FLOAT), providers=["reference"])
    x = rng.standard_normal(5).astype(np.float32)
    (y1,) = sess.run(None, {"x": x})
    (y2,) = sess.run(None, {"x": x + 1})
    y1[0] = 100.0  # writable, and not shared with the next run's output
    np.testing.assert_array_equal(y2, x + 1)
    x[:] = 7  # the session copied the input
    assert y1[1] != 7


def test_strings():
    sess = loom.InferenceSession(identity_model(TensorProto.STRING, [2, 2]), providers=["reference"])
    assert sess.get_outputs()[0].type == "tensor(string)"
    for x in (np.array([["a", "bé"], ["", "日本語"]]), np.array([["a", "bé"], ["", "日本語"]], dtype=object)):
        (y,) = sess.run(None, {"x": x})
        assert y.dtype == object and y.shape == (2, 2)
        assert y.tolist() == [["a", "bé"], ["", "日本語"]]
    (y,) = sess.run(None, {"x": np.array([[b"x", b"yy"], [b"", b"z"]])})
    assert y.tolist() == [["x", "yy"], ["", "z"]]


def test_sequences():
    seq = helper.make_tensor_sequence_value_info
    model = model_bytes(
        [helper.make_node("SequenceConstruct", ["a", "b"], ["pair"]),
         helper.make_node("Identity", ["s"], ["same"]),
         helper.make_node("SequenceLength", ["s"], ["n"])],
        [tensor("a", TensorProto.FLOAT, [2]), tensor("b", TensorProto.FLOAT, [2]),
         seq("s", TensorProto.INT64, None)],
        [seq("pair", TensorProto.FLOAT, None), seq("same", TensorProto.INT64, None),
         tensor("n", TensorProto.INT64, [])])
    sess = loom.InferenceSession(model, providers=["reference"])
    assert [i.type for i in sess.get_inputs()] == ["tensor(float)", "tensor(float)", "seq(tensor(int64))"]
    assert sess.get_outputs()[0].type == "seq(tensor(float))"
    a, b = np.array([1, 2], np.float32), np.array([3, 4], np.float32)
    s = [np.arange(3, dtype=np.int64), np.arange(5, dtype=np.int64).reshape(5, 1)]
    pair, same, n = sess.run(None, {"a": a, "b": b, "s": s})
    assert isinstance(pair, list) and len(pair) == 2
    np.testing.assert_array_equal(pair[0], a)
    np.testing.assert_array_equal(pair[1], b)
    assert len(same) == 2 and same[1].shape == (5, 1)
    np.testing.assert_array_equal(same[0], s[0])
    assert int(n) == 2
    (n,) = sess.run(["n"], {"a": a, "b": b, "s": []})
    assert int(n) == 0


def test_optional():
    opt = helper.make_tensor_type_proto(TensorProto.FLOAT, [2])
    model = model_bytes([helper.make_node("OptionalHasElement", ["o"], ["has"])],
                        [helper.make_value_info("o", helper.make_optional_type_proto(opt))],
                        [tensor("has", TensorProto.BOOL, [])], opset=18)
    sess = loom.InferenceSession(model, providers=["reference"])
    assert sess.get_inputs()[0].type == "optional(tensor(float))"
    (has,) = sess.run(None, {"o": np.zeros(2, np.float32)})
    assert bool(has)
    (has,) = sess.run(None, {"o": None})
    assert not bool(has)


def map_value_info(name, key, value, in_sequence):
    t = onnx.TypeProto()
    m = t.sequence_type.elem_type.map_type if in_sequence else t.map_type
    m.key_type = key
    m.value_type.tensor_type.elem_type = value
    return helper.make_value_info(name, t)


def test_zipmap_returns_a_list_of_dicts_like_onnxruntime():
    # What skl2onnx ends every classifier with: probabilities as one dict per row.
    node = helper.make_node("ZipMap", ["x"], ["y"], domain="ai.onnx.ml", classlabels_int64s=[0, 1, 7])
    s = loom.InferenceSession(model_bytes([node], [tensor("x", TensorProto.FLOAT, ["N", 3])],
                                          [map_value_info("y", TensorProto.INT64, TensorProto.FLOAT, True)],
                                          domains=("ai.onnx.ml",)))
    assert s.get_outputs()[0].type == "seq(map(int64,tensor(float)))"
    x = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], dtype=np.float32)
    (y,) = s.run(None, {"x": x})
    assert isinstance(y, list) and len(y) == 2
    assert y[1] == {0: 0.5, 1: 0.25, 7: 0.25}
    assert all(isinstance(k, int) for k in y[0])


def test_dict_input_feeds_a_map():
    node = helper.make_node("DictVectorizer", ["x"], ["y"], domain="ai.onnx.ml", string_vocabulary=["a", "b", "c"])
    s = loom.InferenceSession(model_bytes([node], [map_value_info("x", TensorProto.STRING, TensorProto.INT64, False)],
                                          [tensor("y", TensorProto.INT64, None)], domains=("ai.onnx.ml",)))
    assert s.get_inputs()[0].type == "map(string,tensor(int64))"
    (y,) = s.run(None, {"x": {"c": 3, "a": 1}})
    np.testing.assert_array_equal(y, np.array([[1, 0, 3]], dtype=np.int64))
    with pytest.raises(Exception, match=r"x \(keys\).*not str"):
        s.run(None, {"x": {1: 3}})
