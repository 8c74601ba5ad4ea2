#!/usr/bin/python3
"""Third-party plugins built out of tree against an installed Loom.

  out_of_tree_check.py --build BUILD --source SRC --work WORK

Installs the build tree BUILD into WORK/prefix (cmake --install), configures
and builds examples/minimal_ep and examples/kernel_ep from SRC against that
prefix alone (find_package(Loom)), drops the two plugins into a temporary
plugin folder, then, with the installed `loom`, checks where each node of a
small model runs (minimal_ep first in the priority list takes Add+Relu,
kernel_ep takes LeakyRelu) and that the outputs equal numpy's. Also checks
that pkg-config finds the installed loom.pc. Exit 0 on success, 1 with a
reason otherwise.
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

EXAMPLES = ("minimal_ep", "kernel_ep")


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


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

    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    if shutil.which("pkg-config"):
        flags = run(["pkg-config", "--cflags", "--libs", "loom"], env=env).split()
        includes = [os.path.normpath(f[2:]) for f in flags if f.startswith("-I")]
        if os.path.join(prefix, "include") not in includes or "-lloom_core" not in flags:
            fail(f"pkg-config loom gave '{' '.join(flags)}'")

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
    for name, value in (("a", a), ("b", b)):
        with open(os.path.join(work, name + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())
    config = os.path.join(work, "config.json")
    with open(config, "w") as f:
        json.dump({"plugin_dirs": [plugins], "providers": ["minimal_ep", "kernel_ep", "reference"]}, f)

    loom = os.path.join(prefix, "bin", "loom")
    placement = run([loom, "partition", "--model", model, "--config", config])
    for line in ("add [Add] -> minimal_ep", "relu [Relu] -> minimal_ep", "leaky [LeakyRelu] -> kernel_ep",
                 "sigmoid [Sigmoid] -> reference"):
        if line not in placement:
            fail(f"expected '{line}' in the placement:\n{placement}")
    out = os.path.join(work, "outputs")
    run([loom, "run", "--model", model, "--config", config, "--input", f"a={work}/a.pb", "--input",
         f"b={work}/b.pb", "--save-outputs", out, "--quiet"])
    expected = {"y": np.maximum(a + b, 0), "z": np.where(a >= 0, a, 0.2 * a), "w": 1 / (1 + np.exp(-b))}
    for name, want in expected.items():
        t = onnx.TensorProto()
        with open(os.path.join(out, name + ".pb"), "rb") as f:
            t.ParseFromString(f.read())
        got = numpy_helper.to_array(t)
        if not np.allclose(got, want, rtol=1e-6, atol=1e-6):
            fail(f"output {name}: got {got}, want {want}")
    print(f"built {', '.join(EXAMPLES)} against {prefix}; placement and outputs as expected")


if __name__ == "__main__":
    main()
