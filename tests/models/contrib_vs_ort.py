#!/usr/bin/python3
"""Compares Loom's reference EP with ONNX Runtime on com.microsoft contrib ops.

Usage: contrib_vs_ort.py --loom PATH_TO_loom --work DIR [--ort-dir DIR] [--node NODE]
                         [--rtol R] [--atol A] [--filter SUBSTRING] [--list]

Builds small one-node models (Gelu, FastGelu, BiasGelu, SkipLayerNormalization,
SkipSimplifiedLayerNormalization, LayerNormalization at opsets < 17,
SimplifiedLayerNormalization, EmbedLayerNormalization, Attention with every
mask format, FusedMatMul, FusedConv, FusedGemm) with onnx.helper and deterministic inputs, runs each
through ONNX Runtime (tests/models/ort_run.js, npm onnxruntime-node, CPU) and
through `loom run --providers reference`, and compares every output with
compare_with_ort.compare (|loom - ort| <= atol + rtol * |ort|; exact for
integers). Prints one line per case; exits 0 when all match, 1 on a mismatch,
2 when a runtime fails or on bad usage.
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_with_ort as cwo  # noqa: E402  (reuse its runner, loader and comparison)

MS = "com.microsoft"
F32 = TensorProto.FLOAT
I32 = TensorProto.INT32


class Case:
    def __init__(self, name, op, inputs, outputs, attrs=None, domain=MS, opset=17, out_types=None):
        """inputs: list of (name, np.ndarray) or None for an omitted optional input.
        outputs: list of output names ('' for an omitted optional output)."""
        self.name = name
        self.inputs = inputs
        self.feeds = {n: v for n, v in (i for i in inputs if i is not None)}
        in_names = ["" if i is None else i[0] for i in inputs]
        while in_names and in_names[-1] == "":
            in_names.pop()
        node = helper.make_node(op, in_names, outputs, domain=domain, **(attrs or {}))
        g_inputs = [helper.make_tensor_value_info(n, (I32 if v.dtype == np.int32 else F32), list(v.shape))
                    for n, v in self.feeds.items()]
        out_types = out_types or {}
        g_outputs = [helper.make_tensor_value_info(o, out_types.get(o, F32), None) for o in outputs if o]
        graph = helper.make_graph([node], name, g_inputs, g_outputs)
        imports = [helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)]
        self.model = helper.make_model(graph, opset_imports=imports, producer_name="contrib_vs_ort")
        self.model.ir_version = 8
        self.outputs = [o for o in outputs if o]


def rnd(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def cases():
    rng = np.random.default_rng(1234)
    out = []

    # --- activations
    for shape in [(5,), (2, 3, 8), (1, 4, 16)]:
        x = rnd(rng, *shape, scale=2.0)
        out.append(Case(f"gelu_{'x'.join(map(str, shape))}", "Gelu", [("x", x)], ["y"]))
        out.append(Case(f"fastgelu_{'x'.join(map(str, shape))}", "FastGelu", [("x", x)], ["y"]))
        b = rnd(rng, shape[-1])
        out.append(Case(f"fastgelu_bias_{'x'.join(map(str, shape))}", "FastGelu", [("x", x), ("b", b)], ["y"]))
        out.append(Case(f"biasgelu_{'x'.join(map(str, shape))}", "BiasGelu", [("a", x), ("b", b)], ["y"]))

    # --- SkipLayerNormalization (and the simplified variant)
    B, S, H = 2, 3, 8
    x, skip = rnd(rng, B, S, H), rnd(rng, B, S, H)
    gamma, beta, bias = rnd(rng, H), rnd(rng, H), rnd(rng, H)
    out.append(Case("skipln_basic", "SkipLayerNormalization", [("x", x), ("skip", skip), ("gamma", gamma)], ["y"]))
    out.append(Case("skipln_beta_bias_eps", "SkipLayerNormalization",
                    [("x", x), ("skip", skip), ("gamma", gamma), ("beta", beta), ("bias", bias)],
                    ["y", "", "", "sum"], attrs={"epsilon": 1e-5}))
    out.append(Case("skipln_bias_no_beta", "SkipLayerNormalization",
                    [("x", x), ("skip", skip), ("gamma", gamma), None, ("bias", bias)], ["y", "", "", "sum"]))
    out.append(Case("skipln_skip_1SH", "SkipLayerNormalization",
                    [("x", x), ("skip", rnd(rng, 1, S, H)), ("gamma", gamma), ("beta", beta)], ["y"]))
    out.append(Case("skipln_skip_SH", "SkipLayerNormalization",
                    [("x", x), ("skip", rnd(rng, S, H)), ("gamma", gamma), ("beta", beta)], ["y", "", "", "sum"]))
    out.append(Case("skipln_2d", "SkipLayerNormalization",
                    [("x", rnd(rng, 5, H)), ("skip", rnd(rng, 5, H)), ("gamma", gamma), ("beta", beta)], ["y"]))
    out.append(Case("skipsimpln_basic", "SkipSimplifiedLayerNormalization",
                    [("x", x), ("skip", skip), ("gamma", gamma)], ["y", "", "", "sum"], attrs={"epsilon": 1e-6}))

    out.append(Case("skipsimpln_bias", "SkipSimplifiedLayerNormalization",
                    [("x", x), ("skip", skip), ("gamma", gamma), ("bias", bias)], ["y", "", "", "sum"]))

    # --- LayerNormalization below opset 17 (ORT contrib registration) and SimplifiedLayerNormalization
    for opset in (12, 16):
        out.append(Case(f"layernorm_opset{opset}", "LayerNormalization", [("x", x), ("g", gamma), ("b", beta)],
                        ["y"], attrs={"epsilon": 1e-5}, domain="", opset=opset))
    out.append(Case("layernorm_opset13_axis1", "LayerNormalization",
                    [("x", x), ("g", rnd(rng, S, H)), ("b", rnd(rng, S, H))], ["y"], attrs={"axis": 1}, domain="",
                    opset=13))
    out.append(Case("simplified_layernorm", "SimplifiedLayerNormalization", [("x", x), ("g", gamma)], ["y"],
                    attrs={"epsilon": 1e-6}, domain="", opset=14))

    # --- EmbedLayerNormalization
    V, P, G = 10, 6, 2
    word, pos, seg = rnd(rng, V, H), rnd(rng, P, H), rnd(rng, G, H)
    ids = rng.integers(0, V, (B, S)).astype(np.int32)
    seg_ids = rng.integers(0, G, (B, S)).astype(np.int32)
    mask = np.array([[1, 1, 0], [1, 1, 1]], np.int32)
    types = {"mask_index": I32}
    out.append(Case("embedln_full", "EmbedLayerNormalization",
                    [("ids", ids), ("seg_ids", seg_ids), ("word", word), ("pos", pos), ("seg", seg),
                     ("gamma", gamma), ("beta", beta), ("mask", mask)],
                    ["y", "mask_index", "emb_sum"], attrs={"epsilon": 1e-12}, out_types=types))
    out.append(Case("embedln_no_segment_no_mask", "EmbedLayerNormalization",
                    [("ids", ids), None, ("word", word), ("pos", pos), None, ("gamma", gamma), ("beta", beta)],
                    ["y", "mask_index"], attrs={"epsilon": 1e-5}, out_types=types))
    pos_ids = np.array([[2, 0, 5]], np.int32)
    out.append(Case("embedln_position_ids_1S", "EmbedLayerNormalization",
                    [("ids", ids), ("seg_ids", seg_ids), ("word", word), ("pos", pos), ("seg", seg),
                     ("gamma", gamma), ("beta", beta), ("mask", np.array([[1, 0, 1], [2, 1, 0]], np.int32)),
                     ("pos_ids", pos_ids)],
                    ["y", "mask_index", "emb_sum"], attrs={"epsilon": 1e-12}, out_types=types))
    out.append(Case("embedln_position_ids_BS", "EmbedLayerNormalization",
                    [("ids", ids), ("seg_ids", seg_ids), ("word", word), ("pos", pos), ("seg", seg),
                     ("gamma", gamma), ("beta", beta), None,
                     ("pos_ids", rng.integers(0, P, (B, S)).astype(np.int32))],
                    ["y", "mask_index"], attrs={"epsilon": 1e-12}, out_types=types))

    # --- Attention
    def attention(name, B, S, Din, N, qkv=None, mask=None, past=None, abias=None, attrs=None, present=False,
                  no_bias=False):
        Dq, Dk, Dv = qkv if qkv else (Din, Din, Din)
        w = rnd(rng, Din, Dq + Dk + Dv, scale=0.5)
        inputs = [("x", rnd(rng, B, S, Din)), ("w", w), None if no_bias else ("bias", rnd(rng, Dq + Dk + Dv))]
        inputs.append(None if mask is None else ("mask", mask))
        inputs.append(None if past is None else ("past", past))
        inputs.append(None if abias is None else ("abias", abias))
        a = {"num_heads": N}
        if qkv:
            a["qkv_hidden_sizes"] = list(qkv)
        a.update(attrs or {})
        return Case(f"attention_{name}", "Attention", inputs, ["y", "present" if present else ""], attrs=a)

    B, S, D, N = 2, 4, 8, 2
    out.append(attention("nomask", B, S, D, N))
    # No "nomask_nobias" case: ORT 1.30's CPU Attention crashes (SIGSEGV) when bias is omitted.
    out.append(attention("mask1d_end", B, S, D, N, mask=np.array([2, 4], np.int32)))
    out.append(attention("mask1d_end_start", B, S, D, N, mask=np.array([3, 4, 1, 0], np.int32)))
    out.append(attention("mask2d_raw", B, S, D, N, mask=np.array([[1, 1, 0, 1], [1, 0, 0, 0]], np.int32)))
    out.append(attention("mask2d_dummy", B, S, D, N, mask=np.ones((B, 1), np.int32)))
    m3 = rng.integers(0, 2, (B, S, S)).astype(np.int32)
    m3[:, :, 0] = 1
    out.append(attention("mask3d", B, S, D, N, mask=m3))
    out.append(attention("mask3d_fully_masked_row", B, S, D, N, mask=np.zeros((B, S, S), np.int32)))
    out.append(attention("mask3d_unidirectional", B, S, D, N, mask=m3, attrs={"unidirectional": 1}))
    out.append(attention("unidirectional", B, S, D, N, attrs={"unidirectional": 1}))
    out.append(attention("unidirectional_mask2d", B, S, D, N, mask=np.array([[1, 1, 1, 0], [0, 1, 1, 1]], np.int32),
                         attrs={"unidirectional": 1}))
    out.append(attention("mask_filter_scale", B, S, D, N, mask=np.array([[1, 1, 0, 0], [1, 1, 1, 0]], np.int32),
                         attrs={"mask_filter_value": -1e9, "scale": 0.3}))
    out.append(attention("qkv_hidden_sizes", B, S, 6, 2, qkv=(4, 4, 6), mask=np.array([3, 2], np.int32)))
    out.append(attention("one_head", 1, 3, 4, 1))
    out.append(attention("mask1d_out_of_range_end", B, S, D, N, mask=np.array([7, 0], np.int32)))
    out.append(attention("mask2d_raw_nonbinary", B, S, D, N, mask=np.array([[2, 0, 5, 1], [0, 0, 1, 3]], np.int32)))
    P = 3
    past = rnd(rng, 2, B, N, P, D // N)
    out.append(attention("past_present", B, S, D, N, past=past, present=True))
    out.append(attention("past_present_unidirectional_mask2d", B, S, D, N, past=past, present=True,
                         mask=np.array([[1] * (P + S), [0, 1] + [1] * (P + S - 2)], np.int32),
                         attrs={"unidirectional": 1}))
    out.append(attention("present_no_past", B, S, D, N, present=True))
    out.append(attention("attention_bias", B, S, D, N, abias=rnd(rng, B, N, S, S)))
    out.append(attention("attention_bias_broadcast", B, S, D, N, abias=rnd(rng, 1, 1, S, S),
                         mask=np.array([3, 4], np.int32)))

    # --- FusedMatMul
    def fmm(name, sa, sb, **attrs):
        return Case(f"fusedmatmul_{name}", "FusedMatMul", [("a", rnd(rng, *sa)), ("b", rnd(rng, *sb))], ["y"],
                    attrs=attrs)

    out.append(fmm("plain", (3, 4), (4, 5)))
    out.append(fmm("alpha", (3, 4), (4, 5), alpha=0.125))
    out.append(fmm("transA", (4, 3), (4, 5), transA=1))
    out.append(fmm("transB", (3, 4), (5, 4), transB=1))
    out.append(fmm("transAB_alpha", (4, 3), (5, 4), transA=1, transB=1, alpha=2.5))
    out.append(fmm("batched_broadcast", (2, 1, 3, 4), (3, 5, 4), transB=1, alpha=0.5))
    out.append(fmm("vector_b", (2, 3, 4), (4,), alpha=3.0))

    # --- FusedConv (activation_params; optional Z added before the activation)
    def fconv(name, act, params=None, z=False, group=1, **conv_attrs):
        x, w, b = rnd(rng, 1, 4, 6, 6), rnd(rng, 6, 4 // group, 3, 3, scale=0.3), rnd(rng, 6)
        attrs = {"activation": act, "group": group, **conv_attrs}
        if params is not None:
            attrs["activation_params"] = params
        y_hw = 6 if conv_attrs.get("pads") else 4
        inputs = [("x", x), ("w", w), ("b", b)] + ([("z", rnd(rng, 1, 6, y_hw, y_hw))] if z else [])
        return Case(f"fusedconv_{name}", "FusedConv", inputs, ["y"], attrs=attrs)

    out.append(fconv("relu", "Relu"))
    out.append(fconv("tanh", "Tanh", pads=[1, 1, 1, 1]))
    out.append(fconv("sigmoid", "Sigmoid", group=2))
    out.append(fconv("leakyrelu", "LeakyRelu", [0.1], pads=[1, 1, 1, 1]))
    out.append(fconv("clip", "Clip", [-0.5, 1.0]))
    out.append(fconv("hardsigmoid", "HardSigmoid", [0.3, 0.4]))
    out.append(fconv("relu_z", "Relu", z=True))
    out.append(fconv("clip_z_pads", "Clip", [0.0, 6.0], z=True, pads=[1, 1, 1, 1]))

    # --- FusedGemm (the activation's attributes as activation_<name>)
    def fgemm(name, act, trans_b=0, gemm_alpha=1.0, gemm_beta=1.0, **act_attrs):
        a, b = rnd(rng, 3, 5), rnd(rng, *((4, 5) if trans_b else (5, 4)))
        attrs = {"activation": act, "transB": trans_b, "alpha": gemm_alpha, "beta": gemm_beta}
        attrs.update({f"activation_{k}": v for k, v in act_attrs.items()})
        return Case(f"fusedgemm_{name}", "FusedGemm", [("a", a), ("b", b), ("c", rnd(rng, 4))], ["y"], attrs=attrs)

    out.append(fgemm("relu", "Relu"))
    out.append(fgemm("leakyrelu_transb", "LeakyRelu", trans_b=1, gemm_alpha=0.5, alpha=0.2))
    out.append(fgemm("sigmoid_beta", "Sigmoid", gemm_beta=2.0))
    out.append(fgemm("tanh", "Tanh"))
    out.append(fgemm("hardsigmoid", "HardSigmoid", alpha=0.3, beta=0.4))
    out.append(fgemm("elu", "Elu", alpha=0.7))
    out.append(fgemm("selu", "Selu", alpha=1.5, gamma=1.1))
    out.append(fgemm("softplus", "Softplus"))
    out.append(fgemm("softsign", "Softsign"))
    out.append(fgemm("thresholdedrelu", "ThresholdedRelu", alpha=0.1))
    return out


def run_case(case, args, work):
    cdir = os.path.join(work, case.name)
    in_dir, ort_out, loom_out = (os.path.join(cdir, d) for d in ("inputs", "ort", "loom"))
    shutil.rmtree(cdir, ignore_errors=True)
    for d in (in_dir, ort_out, loom_out):
        os.makedirs(d)
    model_path = os.path.join(cdir, "model.onnx")
    onnx.save(case.model, model_path)
    input_args = []
    for i, (name, value) in enumerate(case.feeds.items()):
        path = os.path.join(in_dir, f"input_{i}.pb")
        with open(path, "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())
        input_args += ["--input", f"{name}={path}"]
    ort_cmd = [args.node, os.path.join(HERE, "ort_run.js"), "--model", model_path, *input_args,
               "--save-outputs", ort_out, "--ort-dir", args.ort_dir]
    loom_cmd = [args.loom, "run", "--model", model_path, *input_args, "--save-outputs", loom_out,
                "--providers", "reference", "--quiet"]
    for label, cmd in (("ONNX Runtime", ort_cmd), ("loom", loom_cmd)):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        if proc.returncode != 0:
            return "ERROR", f"{label} failed (exit {proc.returncode}): {cwo.last_line(proc.stderr)}"
    details = []
    ok = True
    import contextlib
    import io
    for name in case.outputs:
        expected = cwo.load_output(ort_out, name)
        actual = cwo.load_output(loom_out, name)
        if expected is None or actual is None:
            return "ERROR", f"output {name} missing from {'ONNX Runtime' if expected is None else 'loom'}"
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            ok &= cwo.compare(name, expected, actual, args.rtol, args.atol)
        details.append(buf.getvalue().strip())
    return ("ok" if ok else "FAIL"), "; ".join(details)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--loom", required=True, help="the loom executable")
    p.add_argument("--work", required=True, help="scratch folder (one subfolder per case)")
    p.add_argument("--ort-dir", default=os.environ.get("LOOM_ORT_NODE_DIR"),
                   help="folder whose node_modules holds onnxruntime-node (default: LOOM_ORT_NODE_DIR)")
    p.add_argument("--node", default=os.environ.get("LOOM_NODE", "node"))
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=1e-5)
    p.add_argument("--filter", default="", help="only cases whose name contains this")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--timeout", type=int, default=120, help="seconds per runtime and case")
    args = p.parse_args()
    sys.stdout.reconfigure(line_buffering=True)

    all_cases = [c for c in cases() if args.filter in c.name]
    if args.list:
        for c in all_cases:
            print(c.name)
        return 0
    if not (os.path.isfile(args.loom) and os.access(args.loom, os.X_OK)):
        cwo.die(f"loom executable {args.loom} not found")
    if not args.ort_dir or not os.path.isdir(os.path.join(args.ort_dir, "node_modules", "onnxruntime-node")):
        cwo.die("onnxruntime-node not found: run tests/models/fetch_models.sh WORK_DIR and pass --ort-dir WORK_DIR")
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    counts = {"ok": 0, "FAIL": 0, "ERROR": 0}
    for case in all_cases:
        try:
            status, detail = run_case(case, args, work)
        except subprocess.TimeoutExpired:
            status, detail = "ERROR", f"timed out after {args.timeout}s"
        counts[status] += 1
        print(f"{case.name}: {status} {detail}")
    print(f"contrib_vs_ort: {counts['ok']} passed, {counts['FAIL']} failed, {counts['ERROR']} errors "
          f"(rtol {args.rtol}, atol {args.atol})")
    if counts["ERROR"]:
        return 2
    return 0 if counts["FAIL"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
