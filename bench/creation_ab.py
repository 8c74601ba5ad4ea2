#!/usr/bin/env python3
"""Session creation of two Loom builds side by side.

Times `loom bench --json` (create_ms: model load, inference, optimisation,
partitioning, compilation) of build A and build B on the same models, in
fresh processes, alternating which goes first each round so that drift hits
both alike; prints the medians and B / A per model and writes them as
Markdown (--out).

  bench/creation_ab.py --a OLD/bin/loom --b build/bin/loom [--models a.onnx,b.onnx] [--rounds 11]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

DEFAULT_MODELS = ["build/models/resnet50.onnx", "build/models/mobilenetv2.onnx", "build/models/bert_encoder.onnx",
                  "build/models/ocr-models/ch_PP-OCRv4_det_infer.onnx"]


def create_ms(loom, model, threads):
    out = subprocess.run([loom, "bench", "--model", model, "--runs", "1", "--warmup", "0", "--threads", str(threads),
                          "--json"], check=True, capture_output=True, text=True, timeout=600).stdout
    return json.loads(out[out.index("{"):])["create_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="loom executable of the baseline build")
    ap.add_argument("--b", required=True, help="loom executable of the build measured against it")
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS))
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", help="write the table here (Markdown)")
    args = ap.parse_args()
    rows = []
    started = time.time()
    for model in [m for m in args.models.split(",") if m]:
        if not os.path.exists(model):
            print(f"{model}: missing, skipped", file=sys.stderr)
            continue
        times = {"a": [], "b": []}
        for r in range(args.rounds):
            order = ["a", "b"] if r % 2 == 0 else ["b", "a"]
            for side in order:
                times[side].append(create_ms(getattr(args, side), model, args.threads))
        a, b = statistics.median(times["a"]), statistics.median(times["b"])
        rows.append((os.path.basename(model), a, b, b / a))
        print(f"{os.path.basename(model)}: A {a:.1f} ms, B {b:.1f} ms, B/A {b / a:.2f}", flush=True)
    lines = [f"# Session creation, two Loom builds side by side ({time.strftime('%Y-%m-%d %H:%M')})", "",
             f"- Machine: {platform.node()}, {os.cpu_count()} logical CPUs, {platform.platform()}",
             f"- A: `{args.a}`; B: `{args.b}`",
             f"- Method: `loom bench --json --runs 1 --warmup 0 --threads {args.threads}`, {args.rounds} rounds "
             f"alternating which build goes first, fresh process each; medians of create_ms. "
             f"Took {time.time() - started:.0f} s.", "",
             "| model | A create ms | B create ms | B / A |", "|---|---|---|---|"]
    lines += [f"| {m} | {a:.1f} | {b:.1f} | {r:.2f} |" for m, a, b, r in rows]
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
