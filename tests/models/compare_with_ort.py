#!/usr/bin/python3
"""Runs one model through Loom and through ONNX Runtime and compares the outputs.

Usage: compare_with_ort.py --loom PATH_TO_loom --model M.onnx --work DIR
                           [--dim NAME=VALUE ...] [--seed N] [--rtol R] [--atol A]
                           [--ort-dir DIR] [--extra-args "..."] [--timeout S]

Generates deterministic random inputs for the model's graph inputs (floats from a
standard normal; integer ids uniform in [0, vocab) where vocab is the row count of
the embedding table the ids index, else [0, --int-high); inputs whose name holds
"mask" are ones, "token_type" / "segment" zeros), writes them to DIR/inputs/NAME.pb
(TensorProto), then runs
  node ort_run.js --model M --input NAME=PATH.pb ... --save-outputs DIR/ort
  loom run        --model M --input NAME=PATH.pb ... --save-outputs DIR/loom
and compares every graph output: dtype, shape, and values with
|loom - ort| <= atol + rtol * |ort| (exact for integers and booleans).

Symbolic input dims come from --dim NAME=VALUE; without one, a model's first dim
is 1 and a dim whose name holds "seq" is 32; any other is an error.

--text-image NAME=imagenet|half makes input NAME (float [1, 3, H, W]) a synthetic
text page instead of noise (dark glyph-like blocks in lines on white), normalized
with ImageNet mean / std or as (x - 0.5) / 0.5 -- what OCR models expect, so they
answer with more than background. --add-output TENSOR also compares an inner
tensor (e.g. the logits before a saturating Sigmoid), with atol scaled by
max(1, max |ort|) as such tensors are not normalized: both runtimes then run a
copy of the model, DIR/model.onnx, with TENSOR added to the graph outputs.
Prints one line per output with the max abs / rel error. Exits 0 when all match,
1 on a mismatch, 2 when a runtime fails (its stderr's last line is printed) or
on bad usage.
"""
import argparse
import os
import shlex
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def die(msg, code=2):
    print(f"compare_with_ort: {msg}", file=sys.stderr)
    sys.exit(code)


def parse_dims(items):
    dims = {}
    for item in items or []:
        name, sep, value = item.rpartition("=")
        if not sep or not name:
            die(f"--dim wants NAME=VALUE, got {item!r}")
        try:
            dims[name] = int(value)
        except ValueError:
            die(f"--dim {item!r}: value is not an integer")
    return dims


def find_ort_dir(model_path):
    """Walks up from the model's folder to one holding node_modules/onnxruntime-node."""
    d = os.path.dirname(os.path.abspath(model_path))
    while True:
        if os.path.isdir(os.path.join(d, "node_modules", "onnxruntime-node")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def np_dtype(elem_type):
    if hasattr(onnx.helper, "tensor_dtype_to_np_dtype"):  # onnx >= 1.13
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type))
    return np.dtype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[elem_type])


def embedding_rows(graph, input_name):
    """Row count of the initializer a Gather indexes with `input_name`, if any."""
    inits = {t.name: t for t in graph.initializer}
    for node in graph.node:
        if node.op_type == "Gather" and len(node.input) > 1 and node.input[1] == input_name:
            table = inits.get(node.input[0])
            axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
            if table is not None and len(table.dims) > axis:
                return int(table.dims[axis])
    return None


def text_image(h, w, rng, scale=3):
    """A white page with lines of random 5x7 glyphs, `scale` pixels per dot; floats in [0, 1]."""
    img = np.ones((h, w), np.float32)
    glyphs = rng.random((40, 7, 5)) < 0.45
    gh, gw = 7 * scale, 5 * scale
    y = int(rng.integers(4, 12)) if h > gh + 24 else max(0, (h - gh) // 2)
    while y + gh <= h:
        x, end = int(rng.integers(4, 20)), int(rng.integers(max(w // 2, 21), max(w - 3, 22)))
        while x + gw < end:
            if rng.random() < 0.15:  # a space
                x += 4 * scale
                continue
            dots = np.kron(glyphs[rng.integers(0, len(glyphs))], np.ones((scale, scale), bool))
            img[y:y + gh, x:x + gw][dots] = float(rng.integers(0, 60)) / 255.0
            x += gw + scale
        y += gh + int(rng.integers(6, 20))
    return img


def normalize_image(gray, norm, channels):
    x = np.repeat(gray[None], channels, axis=0)
    if norm == "imagenet":
        mean = np.array([0.485, 0.456, 0.406], np.float32)[:channels, None, None]
        std = np.array([0.229, 0.224, 0.225], np.float32)[:channels, None, None]
        return (x - mean) / std
    return (x - 0.5) / 0.5


def make_inputs(model, dims, seed, int_high, text_images):
    graph = model.graph
    inits = {t.name for t in graph.initializer}
    rng = np.random.default_rng(seed)
    feeds = {}
    for vi in graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type"):
            die(f"input {vi.name}: only tensor inputs are supported")
        dtype = np_dtype(tt.elem_type)
        shape = []
        for i, d in enumerate(tt.shape.dim):
            if d.HasField("dim_value"):
                shape.append(d.dim_value)
            elif d.dim_param in dims:
                shape.append(dims[d.dim_param])
            elif i == 0:
                shape.append(1)
            elif "seq" in d.dim_param.lower():
                shape.append(32)
            else:
                die(f"input {vi.name}: dim {i} is symbolic ({d.dim_param!r}); give it with --dim {d.dim_param}=N")
        lname = vi.name.lower()
        if vi.name in text_images:
            if len(shape) != 4 or not np.issubdtype(dtype, np.floating) or shape[1] > 3:
                die(f"--text-image {vi.name}: wants a float [N, C<=3, H, W] input, it is {dtype}{shape}")
            value = np.stack([normalize_image(text_image(shape[2], shape[3], rng), text_images[vi.name], shape[1])
                              for _ in range(shape[0])]).astype(dtype)
        elif np.issubdtype(dtype, np.floating):
            value = rng.standard_normal(shape).astype(dtype)
        elif dtype == np.bool_:
            value = np.ones(shape, dtype=dtype)
        elif np.issubdtype(dtype, np.integer):
            if "mask" in lname:
                value = np.ones(shape, dtype=dtype)
            elif "token_type" in lname or "segment" in lname:
                value = np.zeros(shape, dtype=dtype)
            else:
                high = embedding_rows(graph, vi.name) or int_high
                value = rng.integers(0, high, size=shape).astype(dtype)
        else:
            die(f"input {vi.name}: unsupported dtype {dtype}")
        feeds[vi.name] = value
    return feeds


def last_line(text):
    lines = [l for l in (text or "").strip().splitlines() if l.strip()]
    return lines[-1] if lines else "(no output on stderr)"


def run_runtime(label, cmd, timeout):
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError as e:
        die(f"{label}: cannot start {cmd[0]}: {e}")
    except subprocess.TimeoutExpired:
        die(f"{label}: timed out after {timeout}s: {shlex.join(cmd)}")
    elapsed = time.monotonic() - start
    if proc.returncode != 0:
        die(f"{label} failed (exit {proc.returncode}): {last_line(proc.stderr)}\n  command: {shlex.join(cmd)}")
    return elapsed, proc


def load_output(folder, name):
    """DIR/<name>.pb, else any .pb in DIR whose TensorProto carries that name."""
    candidates = [os.path.join(folder, name + ".pb"),
                  os.path.join(folder, name.replace("/", "_").replace("\\", "_") + ".pb")]
    for path in candidates:
        if os.path.isfile(path):
            t = onnx.TensorProto()
            t.ParseFromString(open(path, "rb").read())
            return t
    if os.path.isdir(folder):
        for entry in sorted(os.listdir(folder)):
            if entry.endswith(".pb"):
                t = onnx.TensorProto()
                try:
                    t.ParseFromString(open(os.path.join(folder, entry), "rb").read())
                except Exception:  # noqa: BLE001 - not a TensorProto
                    continue
                if t.name == name:
                    return t
    return None


def compare(name, expected_t, actual_t, rtol, atol, inner=False):
    """Prints one line for this output; returns True when it matches.

    An inner tensor (--add-output) is not normalized like a model's outputs (logits
    may reach the hundreds), so its atol is scaled by max(1, max |ort|)."""
    exp = numpy_helper.to_array(expected_t)
    act = numpy_helper.to_array(actual_t)
    note = ""
    if inner and exp.size and np.issubdtype(exp.dtype, np.floating):
        scale = max(1.0, float(np.nanmax(np.abs(np.where(np.isinf(exp), 0, exp)))))
        atol *= scale
        note = f", inner tensor: atol {atol:.2g}"
    dtname = onnx.TensorProto.DataType.Name
    if expected_t.data_type != actual_t.data_type:
        print(f"  {name}: FAIL dtype {dtname(actual_t.data_type)}, ORT has {dtname(expected_t.data_type)}")
        return False
    if exp.shape != act.shape:
        print(f"  {name}: FAIL shape {list(act.shape)}, ORT has {list(exp.shape)}")
        return False
    desc = f"{dtname(expected_t.data_type)}{list(exp.shape)}"
    if exp.size == 0:
        print(f"  {name}: {desc} ok (empty)")
        return True
    if not np.issubdtype(exp.dtype, np.floating):
        bad = int(np.count_nonzero(exp != act))
        print(f"  {name}: {desc} {'ok' if bad == 0 else 'FAIL'} exact, {bad}/{exp.size} differ")
        return bad == 0
    e = exp.astype(np.float64)
    a = act.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        nan_mismatch = np.isnan(e) != np.isnan(a)
        both = ~np.isnan(e) & ~np.isnan(a)
        inf_mismatch = both & (np.isinf(e) | np.isinf(a)) & (a != e)
        finite = both & np.isfinite(e) & np.isfinite(a)
        err = np.where(finite, np.abs(a - e), 0.0)
        err = np.where(nan_mismatch | inf_mismatch, np.inf, err)
        e_fin = np.where(finite, np.abs(e), 0.0)
        allowed = atol + rtol * e_fin
        bad_mask = nan_mismatch | inf_mismatch | (err > allowed)
        worst = float(np.max(err / allowed))
        max_abs = float(np.max(err))
        max_rel = float(np.max(err / np.maximum(e_fin, atol)))
    bad = int(np.count_nonzero(bad_mask))
    line = (f"  {name}: {desc} {'ok' if bad == 0 else 'FAIL'} max_abs={max_abs:.3g} max_rel={max_rel:.3g} "
            f"worst={worst:.2g} of tolerance (|ort| max {float(np.max(e_fin)):.3g}{note})")
    if bad:
        idx = np.unravel_index(int(np.argmax(np.where(bad_mask, np.where(np.isnan(a), np.inf, err), -1))), exp.shape)
        line += f", {bad}/{exp.size} outside tolerance, e.g. at {list(map(int, idx))}: loom {act[idx]!r} ort {exp[idx]!r}"
    print(line)
    return bad == 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--loom", required=True, help="the loom executable")
    p.add_argument("--model", required=True)
    p.add_argument("--work", required=True, help="scratch folder (inputs/, ort/, loom/ inside)")
    p.add_argument("--dim", action="append", metavar="NAME=VALUE", help="value of a symbolic input dim")
    p.add_argument("--text-image", action="append", metavar="NAME=imagenet|half",
                   help="feed input NAME a synthetic text image with this normalization")
    p.add_argument("--add-output", action="append", metavar="TENSOR", help="also compare this inner tensor")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--atol", type=float, default=1e-4)
    p.add_argument("--int-high", type=int, default=100, help="id range for integer inputs that index no table")
    p.add_argument("--ort-dir", help="folder whose node_modules holds onnxruntime-node "
                   "(default: LOOM_ORT_NODE_DIR, else searched upward from the model)")
    p.add_argument("--node", default=os.environ.get("LOOM_NODE", "node"))
    p.add_argument("--extra-args", default="", help="more arguments for `loom run`")
    p.add_argument("--timeout", type=int, default=600, help="seconds per runtime")
    args = p.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # keep order with stderr under ctest

    if not os.path.isfile(args.model):
        die(f"model {args.model} not found (the models.fetch fixture makes it: "
            f"tests/models/fetch_models.sh and export_torch_models.py)")
    if not (os.path.isfile(args.loom) and os.access(args.loom, os.X_OK)):
        die(f"loom executable {args.loom} not found")
    ort_dir = args.ort_dir or os.environ.get("LOOM_ORT_NODE_DIR") or find_ort_dir(args.model)
    if not ort_dir:
        die("onnxruntime-node not found: run tests/models/fetch_models.sh WORK_DIR and pass --ort-dir WORK_DIR")

    text_images = {}
    for item in args.text_image or []:
        name, _, norm = item.rpartition("=")
        if not name or norm not in ("imagenet", "half"):
            die(f"--text-image wants NAME=imagenet|half, got {item!r}")
        text_images[name] = norm

    model = onnx.load(args.model)
    known_inputs = {vi.name for vi in model.graph.input}
    for name in text_images:
        if name not in known_inputs:
            die(f"--text-image {name}: the model has no input {name!r}")
    feeds = make_inputs(model, parse_dims(args.dim), args.seed, args.int_high, text_images)
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    model_path = args.model
    original_outputs = [o.name for o in model.graph.output]
    if args.add_output:
        produced = {o for n in model.graph.node for o in n.output}
        present = {o.name for o in model.graph.output}
        try:
            inferred = onnx.shape_inference.infer_shapes(model).graph.value_info
            elem_types = {vi.name: vi.type.tensor_type.elem_type for vi in inferred}
        except Exception:  # noqa: BLE001 - fall back to float
            elem_types = {}
        for name in args.add_output:
            if name not in produced:
                die(f"--add-output {name}: no node of the model produces it")
            if name not in present:
                elem = elem_types.get(name) or onnx.TensorProto.FLOAT
                model.graph.output.append(onnx.helper.make_tensor_value_info(name, elem, None))
                present.add(name)
        model_path = os.path.join(work, "model.onnx")
        onnx.save(model, model_path)
    output_names = [o.name for o in model.graph.output]
    inner_names = set(args.add_output or []) - set(original_outputs)
    del model

    in_dir, ort_out, loom_out = (os.path.join(work, d) for d in ("inputs", "ort", "loom"))
    for d in (in_dir, ort_out, loom_out):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    input_args = []
    for name, value in feeds.items():
        path = os.path.join(in_dir, f"input_{len(input_args) // 2}.pb")
        with open(path, "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())
        input_args += ["--input", f"{name}={path}"]
    print(f"{os.path.basename(args.model)}: inputs "
          + ", ".join(f"{n} {v.dtype}{list(v.shape)}" for n, v in feeds.items()))

    ort_cmd = [args.node, os.path.join(HERE, "ort_run.js"), "--model", model_path, *input_args,
               "--save-outputs", ort_out, "--ort-dir", ort_dir]
    ort_s, ort_proc = run_runtime("ONNX Runtime", ort_cmd, args.timeout)
    loom_cmd = [args.loom, "run", "--model", model_path, *input_args, "--save-outputs", loom_out,
                *shlex.split(args.extra_args)]
    loom_s, _ = run_runtime("loom", loom_cmd, args.timeout)
    print(f"  wall time: ORT {ort_s:.2f}s ({last_line(ort_proc.stdout).replace('ort_run: ', '')}), loom {loom_s:.2f}s")

    ok = True
    for name in output_names:
        expected = load_output(ort_out, name)
        if expected is None:
            die(f"ONNX Runtime wrote no output {name!r} in {ort_out}")
        actual = load_output(loom_out, name)
        if actual is None:
            print(f"  {name}: FAIL loom wrote no {name}.pb in {loom_out}")
            ok = False
            continue
        ok &= compare(name, expected, actual, args.rtol, args.atol, inner=name in inner_names)
    print("PASS" if ok else f"FAIL: outputs differ from ONNX Runtime beyond rtol {args.rtol} / atol {args.atol}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
