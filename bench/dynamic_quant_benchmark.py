#!/usr/bin/env python3
"""A quantize_dynamic-style BERT-base-like encoder on Loom (cpu_onednn, and the reference EP alone)
against ONNX Runtime, side by side. The model is written here with onnx.helper the way ONNX Runtime's
quantize_dynamic (default options: int8 symmetric weights per tensor, MatMulConstBOnly) writes
a BERT encoder: every MatMul with a constant weight becomes DynamicQuantizeLinear -> MatMulInteger
-> Cast -> Mul(., Mul(x_scale, W_scale)), followed by the float model's bias Add; the attention
MatMuls between activations stay float.

Outputs are compared first (Loom with cpu_onednn, the reference EP, ONNX Runtime: max abs
difference), then each runtime is timed with `loom bench` / bench/ort_bench.js in alternating
rounds at 1 and 2 threads; the medians of the rounds' medians and the ratios are printed as a
Markdown table (with the machine, bench/machine.py), also written to --out when given.

  python3 bench/dynamic_quant_benchmark.py --loom build/bin/loom --ort-dir build/models \\
      [--layers 4] [--seq 128] [--rounds 3] [--reference-runs 2] [--work DIR] [--out results.md]
  python3 bench/dynamic_quant_benchmark.py --cnn build/models/resnet50.onnx ...   (ConvInteger instead)
"""
import argparse, os, sys
import numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import side_by_side  # noqa: E402

HIDDEN, HEADS, FFN = 768, 12, 3072


class Builder:
    def __init__(self, seed):
        self.nodes, self.inits, self.rng, self.n = [], [], np.random.default_rng(seed), 0

    def name(self, hint):
        self.n += 1
        return f"{hint}_{self.n}"

    def init(self, hint, array):
        name = self.name(hint)
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def node(self, op, inputs, hint, outputs=1, **attrs):
        outs = [self.name(hint) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=self.name(op), **attrs))
        return outs[0] if outputs == 1 else outs

    def dynamic_quantize(self, x):
        """quantize_dynamic quantizes each activation once: (x_q, x_scale, x_zp)."""
        return self.node("DynamicQuantizeLinear", [x], x + "_quant", outputs=3)

    def linear(self, xq, k, n):
        """MatMulInteger chain with int8 symmetric per-tensor weights, then the bias Add."""
        x_q, x_scale, x_zp = xq
        w = (self.rng.standard_normal([k, n]) * 0.02).astype(np.float32)
        scale = np.float32(np.abs(w).max() / 127.0)
        wq = self.init("W_q", np.clip(np.rint(w / scale), -127, 127).astype(np.int8))
        ws = self.init("W_scale", np.array(scale, dtype=np.float32))
        wz = self.init("W_zp", np.array(0, dtype=np.int8))
        acc = self.node("MatMulInteger", [x_q, wq, x_zp, wz], "acc")
        cast = self.node("Cast", [acc], "acc_float", to=TensorProto.FLOAT)
        scales = self.node("Mul", [x_scale, ws], "scales")
        y = self.node("Mul", [cast, scales], "scaled")
        bias = self.init("bias", (self.rng.standard_normal([n]) * 0.02).astype(np.float32))
        return self.node("Add", [y, bias], "linear")

    def layer_norm(self, x):
        g = self.init("gamma", np.ones([HIDDEN], np.float32))
        b = self.init("beta", np.zeros([HIDDEN], np.float32))
        return self.node("LayerNormalization", [x, g, b], "ln", axis=-1, epsilon=1e-12)


def encoder(path, layers, seq):
    b = Builder(0)
    x = "x"
    d = HIDDEN // HEADS
    heads_shape = b.init("heads_shape", np.array([1, seq, HEADS, d], np.int64))
    hidden_shape = b.init("hidden_shape", np.array([1, seq, HIDDEN], np.int64))
    for _ in range(layers):
        xq = b.dynamic_quantize(x)
        q, k, v = (b.node("Reshape", [b.linear(xq, HIDDEN, HIDDEN), heads_shape], "heads") for _ in range(3))
        q = b.node("Transpose", [q], "q", perm=[0, 2, 1, 3])
        k = b.node("Transpose", [k], "k", perm=[0, 2, 3, 1])
        v = b.node("Transpose", [v], "v", perm=[0, 2, 1, 3])
        scores = b.node("Mul", [b.node("MatMul", [q, k], "qk"), b.init("inv_sqrt_d", np.array(d ** -0.5, np.float32))],
                        "scores")
        ctx = b.node("MatMul", [b.node("Softmax", [scores], "probs", axis=-1), v], "ctx")
        ctx = b.node("Reshape", [b.node("Transpose", [ctx], "ctx_t", perm=[0, 2, 1, 3]), hidden_shape], "ctx_r")
        attn = b.linear(b.dynamic_quantize(ctx), HIDDEN, HIDDEN)
        ln1 = b.layer_norm(b.node("Add", [attn, x], "res1"))
        ff = b.linear(b.dynamic_quantize(ln1), HIDDEN, FFN)
        erf = b.node("Erf", [b.node("Div", [ff, b.init("sqrt2", np.array(np.sqrt(2), np.float32))], "div")], "erf")
        gelu = b.node("Mul", [b.node("Mul", [ff, b.node("Add", [erf, b.init("one", np.array(1, np.float32))], "p1")],
                                     "m"), b.init("half", np.array(0.5, np.float32))], "gelu")
        ff2 = b.linear(b.dynamic_quantize(gelu), FFN, HIDDEN)
        x = b.layer_norm(b.node("Add", [ff2, ln1], "res2"))
    b.nodes.append(helper.make_node("Identity", [x], ["y"], name="output"))
    g = helper.make_graph(b.nodes, "dynamic_quant_encoder",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, HIDDEN])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, HIDDEN])], b.inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def quantize_convs(src, path):
    """A float CNN's Convs with constant weights as quantize_dynamic writes them: each activation
    quantized once by DynamicQuantizeLinear, ConvInteger with int8 symmetric per-tensor weights,
    Cast, Mul by Mul(x_scale, W_scale), then the bias (reshaped to [1, C, 1, 1]) added."""
    m = onnx.load(src)
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    quantized, nodes, new_inits = {}, [], []
    for node in g.node:
        if node.op_type != "Conv" or node.input[1] not in inits:
            nodes.append(node)
            continue
        x, out = node.input[0], node.output[0]
        if x not in quantized:
            quantized[x] = [f"{x}_q", f"{x}_scale", f"{x}_zp"]
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x], quantized[x], name=f"{x}_dql"))
        xq, xs, xz = quantized[x]
        w = numpy_helper.to_array(inits[node.input[1]])
        scale = np.float32(max(np.abs(w).max(), 1e-8) / 127.0)
        base = node.name or out
        new_inits += [numpy_helper.from_array(np.clip(np.rint(w / scale), -127, 127).astype(np.int8), f"{base}_Wq"),
                      numpy_helper.from_array(np.array(scale, np.float32), f"{base}_Ws"),
                      numpy_helper.from_array(np.array(0, np.int8), f"{base}_Wzp")]
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        nodes.append(helper.make_node("ConvInteger", [xq, f"{base}_Wq", xz, f"{base}_Wzp"], [f"{base}_acc"],
                                      name=f"{base}_quant", **attrs))
        nodes.append(helper.make_node("Cast", [f"{base}_acc"], [f"{base}_accf"], to=TensorProto.FLOAT))
        nodes.append(helper.make_node("Mul", [xs, f"{base}_Ws"], [f"{base}_scales"]))
        has_bias = len(node.input) > 2 and node.input[2]
        scaled = f"{base}_scaled" if has_bias else out
        nodes.append(helper.make_node("Mul", [f"{base}_accf", f"{base}_scales"], [scaled]))
        if has_bias:
            new_inits.append(numpy_helper.from_array(np.array([1, -1, 1, 1], np.int64), f"{base}_bias_shape"))
            nodes.append(helper.make_node("Reshape", [node.input[2], f"{base}_bias_shape"], [f"{base}_bias_r"]))
            nodes.append(helper.make_node("Add", [scaled, f"{base}_bias_r"], [out]))
    used = {i for n in nodes for i in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    onnx.save(m, path)
    return g.input[0].name, [d.dim_value or 1 for d in g.input[0].type.tensor_type.shape.dim], g.output[0].name


def main():
    ap = argparse.ArgumentParser()
    side_by_side.add_arguments(ap, rounds=3, runs=10, reference_runs=2, work_prefix="loom_dq_")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--cnn", help="instead of the encoder, this float CNN with its Convs quantized as quantize_dynamic "
                                  "quantizes them (ConvInteger), e.g. build/models/resnet50.onnx")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    model, x = os.path.join(a.work, "model.onnx"), os.path.join(a.work, "x.pb")
    if a.cnn:
        in_name, in_dims, out_name = quantize_convs(a.cnn, model)
        what = (f"{os.path.basename(a.cnn)} with every Conv as quantize_dynamic writes it (DynamicQuantizeLinear, "
                "ConvInteger with int8 symmetric per-tensor weights, Cast, Mul by the scales, bias Add)")
    else:
        encoder(model, a.layers, a.seq)
        in_name, in_dims, out_name = "x", [1, a.seq, HIDDEN], "y"
        what = (f"{a.layers} encoder layers, hidden {HIDDEN}, {HEADS} heads, FFN {FFN}, seq {a.seq}, batch 1; "
                "int8 symmetric per-tensor weights, written as quantize_dynamic writes them")
    with open(x, "wb") as f:
        f.write(numpy_helper.from_array(np.random.default_rng(1).standard_normal(in_dims).astype(np.float32),
                                        in_name).SerializeToString())
    title = f"quantize_dynamic {'CNN' if a.cnn else 'BERT-like encoder'} on CPU: Loom vs ONNX Runtime"
    side_by_side.compare_and_report(a, title, what, "dynamic_quant_benchmark.py", model, in_name, x, out_name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
