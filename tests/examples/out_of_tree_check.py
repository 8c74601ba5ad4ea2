#!/usr/bin/python3
"""Third-party plugins built out of tree against an installed Loom.

  out_of_tree_check.py --build BUILD --source SRC --work WORK

Installs the build tree BUILD into WORK/prefix (cmake --install), configures
and builds examples/minimal_ep, examples/kernel_ep and
examples/custom_op_library from SRC against that prefix alone
(find_package(Loom)), drops the three plugins into a temporary plugin folder,
then, with the installed `loom`:
- checks where each node of a small ONNX model runs (minimal_ep first in the
  priority list takes Add+Relu, kernel_ep takes LeakyRelu) and that the
  outputs equal numpy's;
- runs a second model importing the custom domain "example.ops" (ScaledTanh
  with alpha=2, beta=0.5; SumOfSquares with 3 float inputs and with 3 int64
  inputs, a type variant; an ONNX Add consuming both custom outputs) and
  compares its outputs with numpy's.
Also checks that pkg-config finds the installed loom.pc. Exit 0 on success, 1
with a reason otherwise.
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

EXAMPLES = ("minimal_ep", "kernel_ep", "custom_op_library")


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def abi_version(source):
    """(major, minor) of the plugin ABI, from its header."""
    text = open(os.path.join(source, "plugin_api", "include", "loom", "abi", "base.h")).read()
    pick = lambda part: int(text.split(f"#define LOOM_ABI_VERSION_{part} ")[1].split()[0])
    return pick("MAJOR"), pick("MINOR")


def check_package_versions(work, prefix, source):
    """find_package(Loom X.Y) accepts every ABI this host loads (same major,
    minor up to its own) and refuses a newer minor."""
    major, minor = abi_version(source)
    for want, ok in [(f"{major}.{minor}", True), (f"{major}.0", True), (f"{major}.{minor + 1}", False)]:
        proj = os.path.join(work, "version-" + want)
        os.makedirs(proj, exist_ok=True)
        with open(os.path.join(proj, "CMakeLists.txt"), "w") as f:
            f.write(f"cmake_minimum_required(VERSION 3.22)\nproject(v LANGUAGES CXX)\n"
                    f"find_package(Loom {want} REQUIRED)\n")
        p = subprocess.run(["cmake", "-S", proj, "-B", os.path.join(proj, "build"), f"-DCMAKE_PREFIX_PATH={prefix}"],
                           capture_output=True, text=True)
        if (p.returncode == 0) != ok:
            fail(f"find_package(Loom {want}) {'failed' if ok else 'succeeded'} against ABI {major}.{minor}:\n"
                 f"{p.stderr[-1500:]}")


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p.stdout


def make_model(path):
    nodes = [helper.make_node("Add", ["a", "b"], ["s"], name="add"),
             helper.make_node("Relu", ["s"], ["y"], name="relu"),
             helper.make_node("LeakyRelu", ["a"], ["z"], name="leaky", alpha=0.2),
             helper.make_node("Sigmoid", ["b"], ["w"], name="sigmoid")]
    value = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph(nodes, "third_party", [value("a"), value("b")], [value("y"), value("z"), value("w")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def make_custom_op_model(path):
    """ScaledTanh and SumOfSquares from custom_op_library's domain; s and q
    have no static shape (SumOfSquares has no shape inference)."""
    ops = "example.ops"
    nodes = [helper.make_node("ScaledTanh", ["a"], ["t"], name="scaled_tanh", domain=ops, alpha=2.0, beta=0.5),
             helper.make_node("SumOfSquares", ["a", "b", "c"], ["s"], name="sum_sq", domain=ops),
             helper.make_node("Add", ["t", "s"], ["u"], name="add"),
             helper.make_node("SumOfSquares", ["i", "j", "i"], ["q"], name="sum_sq_int", domain=ops)]
    value = lambda n, dtype=TensorProto.FLOAT: helper.make_tensor_value_info(n, dtype, [2, 3])
    dynamic = lambda n, dtype=TensorProto.FLOAT: helper.make_tensor_value_info(n, dtype, None)
    inputs = [value("a"), value("b"), value("c"), value("i", TensorProto.INT64), value("j", TensorProto.INT64)]
    outputs = [value("t"), dynamic("s"), dynamic("u"), dynamic("q", TensorProto.INT64)]
    graph = helper.make_graph(nodes, "custom_ops", inputs, outputs)
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(ops, 1)]
    onnx.save(helper.make_model(graph, opset_imports=opsets), path)


def write_inputs(work, values):
    for name, value in values.items():
        with open(os.path.join(work, name + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())


def run_and_compare(loom, model, config, work, inputs, expected, out):
    """Runs `model` on `inputs` with the installed loom and compares every
    output with `expected` (dtype and values)."""
    cmd = [loom, "run", "--model", model, "--config", config]
    for name in inputs:
        cmd += ["--input", f"{name}={work}/{name}.pb"]
    run(cmd + ["--save-outputs", out, "--quiet"])
    for name, want in expected.items():
        t = onnx.TensorProto()
        with open(os.path.join(out, name + ".pb"), "rb") as f:
            t.ParseFromString(f.read())
        got = numpy_helper.to_array(t)
        if got.dtype != want.dtype or got.shape != want.shape or not np.allclose(got, want, rtol=1e-6, atol=1e-6):
            fail(f"{os.path.basename(model)} output {name}: got {got.dtype} {got}, want {want.dtype} {want}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    prefix, plugins = os.path.join(work, "prefix"), os.path.join(work, "plugins")
    os.makedirs(plugins)
    run(["cmake", "--install", args.build, "--prefix", prefix])
    # ONNX's shape inference runs in this program, found next to the library.
    if not os.access(os.path.join(prefix, "lib", "loom", "loom-inference-server"), os.X_OK):
        fail(f"no executable {prefix}/lib/loom/loom-inference-server after the install")

    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    if shutil.which("pkg-config"):
        flags = run(["pkg-config", "--cflags", "--libs", "loom"], env=env).split()
        includes = [os.path.normpath(f[2:]) for f in flags if f.startswith("-I")]
        if os.path.join(prefix, "include") not in includes or "-lloom_core" not in flags:
            fail(f"pkg-config loom gave '{' '.join(flags)}'")

    check_package_versions(work, prefix, args.source)

    for ex in EXAMPLES:
        build = os.path.join(work, "build-" + ex)
        run(["cmake", "-S", os.path.join(args.source, "examples", ex), "-B", build, "-G", "Ninja",
             "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_PREFIX_PATH={prefix}"])
        run(["cmake", "--build", build])
        shutil.copy(os.path.join(build, f"lib{ex}.so"), plugins)

    model = os.path.join(work, "model.onnx")
    make_model(model)
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    write_inputs(work, {"a": a, "b": b})
    config = os.path.join(work, "config.json")
    with open(config, "w") as f:
        json.dump({"plugin_dirs": [plugins], "providers": ["minimal_ep", "kernel_ep", "reference"]}, f)

    loom = os.path.join(prefix, "bin", "loom")
    p = subprocess.run([loom, "partition", "--model", model, "--config", config], capture_output=True, text=True)
    if p.returncode != 0 or "loom-inference-server is missing" in p.stderr:
        fail(f"loom partition with the installed loom exited {p.returncode}:\n{p.stderr[-2000:]}")
    placement = p.stdout
    for line in ("add [Add] -> minimal_ep", "relu [Relu] -> minimal_ep", "leaky [LeakyRelu] -> kernel_ep",
                 "sigmoid [Sigmoid] -> reference"):
        if line not in placement:
            fail(f"expected '{line}' in the placement:\n{placement}")
    expected = {"y": np.maximum(a + b, 0), "z": np.where(a >= 0, a, 0.2 * a), "w": 1 / (1 + np.exp(-b))}
    run_and_compare(loom, model, config, work, ("a", "b"), expected, os.path.join(work, "outputs"))

    # The custom-op library: its CPU kernels (provider "") serve the custom
    # nodes on a host-memory EP; the ONNX Add sees their outputs typed.
    custom_model = os.path.join(work, "custom_ops.onnx")
    make_custom_op_model(custom_model)
    c = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    i = rng.integers(-1000, 1000, (2, 3)).astype(np.int64)
    j = rng.integers(-1000, 1000, (2, 3)).astype(np.int64)
    write_inputs(work, {"c": c, "i": i, "j": j})
    t = (2 * np.tanh(0.5 * a)).astype(np.float32)
    s = (a * a + b * b + c * c).astype(np.float32)
    expected = {"t": t, "s": s, "u": t + s, "q": i * i + j * j + i * i}
    run_and_compare(loom, custom_model, config, work, ("a", "b", "c", "i", "j"), expected,
                    os.path.join(work, "custom_outputs"))
    print(f"built {', '.join(EXAMPLES)} against {prefix}; placement and outputs as expected, "
          "custom ops included")


if __name__ == "__main__":
    main()
