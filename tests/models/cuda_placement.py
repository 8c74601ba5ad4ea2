#!/usr/bin/python3
"""Checks where the five reference models run against the cuda EP, on any machine.

`loom partition` with providers cuda, reference and the cuda option virtual_device (a device
to partition against where no GPU is) must place every node on cuda, except nodes the cuda EP
leaves to the host on purpose: shape arithmetic (integer results read only as shape operands,
which it declines saying so). Prints each model's placement summary; exits 1 naming every
node that went elsewhere and why.

Usage: cuda_placement.py --loom PATH --models DIR [--work DIR]
"""
import argparse
import json
import os
import re
import subprocess
import sys

MODELS = [
    ("resnet50", "resnet50.onnx"),
    ("mobilenetv2", "mobilenetv2.onnx"),
    ("bert_encoder", "bert_encoder.onnx"),
    ("ppocr_det", "ocr-models/ch_PP-OCRv4_det_infer.onnx"),
    ("ppocr_rec", "ocr-models/ch_PP-OCRv4_rec_infer.onnx"),
]
ALLOWED_ON_HOST = ("shape arithmetic",)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--loom", required=True)
    p.add_argument("--models", required=True)
    p.add_argument("--work", default="/tmp/loom_cuda_placement")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    config = os.path.join(a.work, "cuda_virtual.json")
    with open(config, "w") as f:
        json.dump({"providers": ["cuda", "reference"], "fallback": "allow",
                   "provider_options": {"cuda": {"virtual_device": "1"}}}, f)
    bad = []
    for name, rel in MODELS:
        path = os.path.join(a.models, rel)
        r = subprocess.run([a.loom, "partition", "--model", path, "--config", config],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            bad.append(f"{name}: loom partition failed: {r.stdout.strip()[-800:]}")
            continue
        summary = [l for l in r.stdout.splitlines() if re.match(r"^  \w+: \d+ node\(s\)", l)]
        print(f"{name}: " + "; ".join(s.strip() for s in summary))
        for line in r.stdout.splitlines():
            m = re.match(r"^  (.*) \[(.*)\] -> (\w+): (.*)$", line)
            if not m or m.group(3) == "cuda":
                continue
            if any(reason in m.group(4) for reason in ALLOWED_ON_HOST):
                continue
            bad.append(f"{name}: node {m.group(1)} [{m.group(2)}] on {m.group(3)}: {m.group(4)[:300]}")
    for b in bad:
        print(b)
    print(f"{len(bad)} node(s) off cuda without a host reason")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
