#!/usr/bin/python3
"""Checks of `loom quantize`, driven by ctest.

  quantize_check.py --loom L --work DIR

Builds a small float CNN with the onnx package (opset 13),

    x [1, 3, 8, 8] -> Conv (4 filters 3x3, bias) -> Relu -> Flatten
                   -> MatMul W2 [144, 10] -> Add b2 -> y [1, 10]

calibrates it (`loom calibrate`, minmax, 16 seeded samples), quantizes it
per tensor and per channel, and checks each QDQ model:

- ONNX's checker accepts it (full check, with shape inference);
- the structure ONNX Runtime's QDQ format has: int8 Conv and MatMul
  weights behind DequantizeLinear (per-channel: 4 and 10 scales, axis 0 /
  1), the Conv bias as int32 with scale x_scale * w_scale, a
  QuantizeLinear/DequantizeLinear pair on x, the Relu output (after the
  Relu, not between it and the Conv, as ORT places it), the Flatten
  output and the MatMul output, no float Conv/MatMul weights left;
- the weights' int8 values and scales equal ONNX Runtime's formulas
  (recomputed here with numpy);
- `loom run` of the quantized model on a held-out input stays within a few
  quantization steps of the float model's output (max abs error under
  5 % of the output range), per channel no worse than 1.5x per tensor;
- errors: --per-channel on an opset-11 model is refused naming the opset;
  a node whose input has no range is left in float and reported;
- `loom compare` of the quantized against the float model on 6 held-out
  samples reports the max / mean abs error, SNR and top-1 agreement numpy
  computes from the two models' outputs;
- with --ort-dir (a folder whose node_modules holds onnxruntime-node) and
  --node: ONNX Runtime loads both QDQ models (graph optimization "all", so
  it fuses them into its int8 kernels) and its outputs agree with Loom's
  unfused reference run within two steps of the output's quantization grid.
Exit 0 on success, 1 with a reason on stderr otherwise.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def fail(msg):
    print("quantize_check: " + msg, file=sys.stderr)
    sys.exit(1)


def build_model(path, rng, opset=13):
    w = (rng.standard_normal((4, 3, 3, 3)) * 0.5).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32) * 0.1
    w2 = (rng.standard_normal((144, 10)) * 0.2).astype(np.float32)
    b2 = rng.standard_normal(10).astype(np.float32) * 0.1
    nodes = [
        helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv", kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Flatten", ["r"], ["f"], name="flatten"),
        helper.make_node("MatMul", ["f", "W2"], ["m"], name="matmul"),
        helper.make_node("Add", ["m", "B2"], ["y"], name="add"),
    ]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B"), numpy_helper.from_array(w2, "W2"),
         numpy_helper.from_array(b2, "B2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    onnx.save(model, path)
    return w, b, w2


def loom(l, *args, expect=0):
    p = subprocess.run([l, *args], capture_output=True, text=True)
    if p.returncode != expect:
        fail("loom %s: exit %d (expected %d)\nstdout: %s\nstderr: %s" %
             (" ".join(args), p.returncode, expect, p.stdout, p.stderr))
    return p


def run_model(l, model, x, work, tag):
    inp = os.path.join(work, tag + "_x.pb")
    with open(inp, "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    out = os.path.join(work, tag + "_out")
    loom(l, "run", "--model", model, "--input", "x=" + inp, "--save-outputs", out, "--providers", "reference",
         "--quiet")
    t = onnx.TensorProto()
    with open(os.path.join(out, "y.pb"), "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def inits(model):
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def weight_scales(w, axis):
    """ONNX Runtime's symmetric int8 weights: scale = absmax / 127 (per channel along axis)."""
    if axis is None:
        m = max(abs(float(w.min())), abs(float(w.max())), 0.0)
        return np.float32(m) / np.float32(127)
    moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    m = np.maximum(np.abs(np.minimum(moved.min(axis=1), 0)), np.abs(np.maximum(moved.max(axis=1), 0)))
    return m.astype(np.float32) / np.float32(127)


def check_qdq(l, model_path, w, b, w2, per_channel, ranges):
    m = onnx.load(model_path)
    try:
        onnx.checker.check_model(m, full_check=True)
    except Exception as e:  # noqa: BLE001 - any checker failure is the finding
        fail("%s: ONNX's checker refuses it: %s" % (model_path, e))
    ops = [n.op_type for n in m.graph.node]
    if ops.count("QuantizeLinear") != 4:
        fail("%s: %d QuantizeLinear, expected 4 (x, r, f, m): %s" % (model_path, ops.count("QuantizeLinear"), ops))
    quantized = sorted(n.input[0] for n in m.graph.node if n.op_type == "QuantizeLinear")
    if quantized != ["f", "m", "r", "x"]:
        fail("%s: QuantizeLinear reads %s, expected f, m, r, x (the Relu's output, not the Conv's)" %
             (model_path, quantized))
    if ops.count("DequantizeLinear") != 4 + 3:
        fail("%s: %d DequantizeLinear, expected 7 (4 activations, W, B, W2)" % (model_path, ops.count("DequantizeLinear")))
    init = inits(m)
    for gone in ("W", "B", "W2"):
        if gone in init:
            fail("%s: float initializer %s is still there" % (model_path, gone))
    if init["W_quantized"].dtype != np.int8 or init["W2_quantized"].dtype != np.int8 or init["B_quantized"].dtype != np.int32:
        fail("%s: weight types %s %s %s" % (model_path, init["W_quantized"].dtype, init["W2_quantized"].dtype,
                                            init["B_quantized"].dtype))
    ws = weight_scales(w, 0 if per_channel else None)
    w2s = weight_scales(w2, 1 if per_channel else None)
    if not np.allclose(init["W_scale"], ws, rtol=1e-6) or not np.allclose(init["W2_scale"], w2s, rtol=1e-6):
        fail("%s: weight scales differ from ORT's formula" % model_path)
    shape = (4, 1, 1, 1) if per_channel else ()
    q = np.clip(np.round(w / np.reshape(ws, shape)), -127, 127).astype(np.int8)
    if not np.array_equal(init["W_quantized"], q):
        fail("%s: int8 Conv weights differ from round(w / scale)" % model_path)
    lo, hi = min(ranges["x"]["low"], 0.0), max(ranges["x"]["high"], 0.0)
    xs = np.float32(np.float32(hi) - np.float32(lo)) / np.float32(255)
    if not np.allclose(init["x_scale"], xs, rtol=1e-6):
        fail("%s: x scale %s, ORT's formula gives %s" % (model_path, init["x_scale"], xs))
    if not np.allclose(init["B_scale"], xs * ws, rtol=1e-6):
        fail("%s: bias scale is not x_scale * w_scale" % model_path)
    axes = {n.output[0]: [a.i for a in n.attribute if a.name == "axis"] for n in m.graph.node
            if n.op_type == "DequantizeLinear"}
    want = [0] if per_channel else []
    if axes["W_DequantizeLinear_Output"] != want or axes["W2_DequantizeLinear_Output"] != ([1] if per_channel else []):
        fail("%s: DequantizeLinear axes %s" % (model_path, axes))


ORT_RUN_JS = r"""
const path = require('path');
const [ortNode, ortDir, model, input] = process.argv.slice(2);
const { loadOrt, readTensorFile } = require(ortNode);
(async () => {
  const ort = loadOrt(ortDir);
  const s = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'all' });
  const out = await s.run({ x: readTensorFile(ort, input) });
  console.log(JSON.stringify(Array.from(out.y.data)));
})().catch(e => { console.error(e.message); process.exit(1); });
"""


def run_ort(node, ort_dir, model, x_pb, work):
    script = os.path.join(work, "ort_run.js")
    with open(script, "w") as f:
        f.write(ORT_RUN_JS)
    ort_node = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "ort_node.js")
    p = subprocess.run([node, script, os.path.abspath(ort_node), ort_dir, model, x_pb], capture_output=True, text=True)
    if p.returncode != 0:
        fail("ONNX Runtime cannot run %s: %s" % (model, p.stderr.strip()))
    return np.array(json.loads(p.stdout), dtype=np.float32)


def check_compare(l, qmodel, model, rng, work, per_channel):
    """`loom compare` reports what numpy computes from the two models' outputs."""
    held = os.path.join(work, "held_out")
    if not os.path.isdir(held):
        os.makedirs(held)
        for i in range(6):
            np.save(os.path.join(held, "%02d.npy" % i), rng.standard_normal((1, 3, 8, 8)).astype(np.float32))
    got, ref = [], []
    for f in sorted(os.listdir(held)):
        x = np.load(os.path.join(held, f))
        got.append(run_model(l, qmodel, x, work, "cmp_q").ravel())
        ref.append(run_model(l, model, x, work, "cmp_f").ravel())
    got, ref = np.array(got, dtype=np.float64), np.array(ref, dtype=np.float64)
    p = loom(l, "compare", "--model", qmodel, "--reference", model, "--data", held, "--json", "--providers", "reference")
    report = json.loads(p.stdout)["outputs"][0]
    want_max = float(np.abs(got - ref).max())
    want_mean = float(np.abs(got - ref).mean())
    want_snr = 10 * np.log10((ref ** 2).sum() / ((got - ref) ** 2).sum())
    want_top1 = float((got.argmax(axis=1) == ref.argmax(axis=1)).mean())
    if not (abs(report["max_abs_error"] - want_max) <= 1e-5 * max(1, want_max) and
            abs(report["mean_abs_error"] - want_mean) <= 1e-5 * max(1, want_mean) and
            abs(report["snr_db"] - want_snr) < 1e-3 and abs(report["top1_agreement"] - want_top1) < 1e-9):
        fail("loom compare (%s) reports %s; numpy says max %g mean %g snr %g top1 %g" %
             ("per channel" if per_channel else "per tensor", report, want_max, want_mean, want_snr, want_top1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loom", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--ort-dir")
    ap.add_argument("--node", default="node")
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    rng = np.random.default_rng(11)
    model = os.path.join(a.work, "cnn.onnx")
    w, b, w2 = build_model(model, rng)
    data = os.path.join(a.work, "data")
    os.makedirs(data)
    for i in range(16):
        np.save(os.path.join(data, "%02d.npy" % i), rng.standard_normal((1, 3, 8, 8)).astype(np.float32))
    ranges_path = os.path.join(a.work, "ranges.json")
    loom(a.loom, "calibrate", "--model", model, "--data", data, "--out", ranges_path, "--quiet")
    with open(ranges_path) as f:
        ranges = json.load(f)["ranges"]

    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    ref = run_model(a.loom, model, x, a.work, "float")
    span = float(ref.max() - ref.min())
    errors = {}
    for per_channel in (False, True):
        out = os.path.join(a.work, "cnn_int8%s.onnx" % ("_pc" if per_channel else ""))
        args = ["quantize", "--model", model, "--ranges", ranges_path, "--out", out] + (["--per-channel"] if per_channel else [])
        p = loom(a.loom, *args)
        if "quantized 2 nodes" not in p.stdout:
            fail("unexpected summary: %s" % p.stdout)
        check_qdq(a.loom, out, w, b, w2, per_channel, ranges)
        got = run_model(a.loom, out, x, a.work, "pc" if per_channel else "pt")
        errors[per_channel] = float(np.abs(got - ref).max())
        if a.ort_dir:
            ort = run_ort(a.node, a.ort_dir, out, os.path.join(a.work, ("pc" if per_channel else "pt") + "_x.pb"), a.work)
            step = float(inits(onnx.load(out))["m_scale"])
            diff = float(np.abs(ort - got.ravel()).max())
            if diff > 2 * step + 1e-6:
                fail("%s: ONNX Runtime and Loom differ by %g (grid step %g)" % (out, diff, step))
            print("%s: ONNX Runtime loads and runs it; max difference to Loom %.4g (grid step %.4g)" % (out, diff, step))
        if errors[per_channel] > 0.05 * span:
            fail("%s: max abs error %g against the float model (output range %g)" % (out, errors[per_channel], span))
        check_compare(a.loom, out, model, rng, a.work, per_channel)
    if errors[True] > 1.5 * errors[False] + 1e-6:
        fail("per-channel error %g worse than per-tensor %g" % (errors[True], errors[False]))

    old = os.path.join(a.work, "cnn_opset11.onnx")
    build_model(old, np.random.default_rng(11), opset=11)
    p = loom(a.loom, "quantize", "--model", old, "--ranges", ranges_path, "--out", os.path.join(a.work, "x.onnx"),
             "--per-channel", expect=1)
    if "opset 11" not in p.stderr or "13" not in p.stderr:
        fail("opset 11 with --per-channel: %r" % p.stderr)
    partial = os.path.join(a.work, "partial.json")
    with open(partial, "w") as f:
        json.dump({"version": 1, "method": "minmax", "ranges": {k: v for k, v in ranges.items() if k != "f"}}, f)
    p = loom(a.loom, "quantize", "--model", model, "--ranges", partial, "--out", os.path.join(a.work, "p.onnx"))
    if "quantized 1 nodes" not in p.stdout or "left in float: matmul (MatMul): no calibrated range for input 'f'" not in p.stdout:
        fail("a node without a range: %s" % p.stdout)
    print("quantize checks passed: max abs error per tensor %.4g, per channel %.4g (output range %.4g)" %
          (errors[False], errors[True], span))


if __name__ == "__main__":
    main()
