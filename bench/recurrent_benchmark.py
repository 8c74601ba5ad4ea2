#!/usr/bin/env python3
"""A PyTorch recurrent model (two stacked bidirectional LSTM or GRU layers, batch first, then a
Linear) exported by torch.onnx at opset 14, on Loom (cpu_onednn, and the reference EP alone)
against ONNX Runtime, side by side (bench/side_by_side.py). PyTorch's GRU exports with
linear_before_reset = 1, and both exports compute their zero initial states with Shape -> Gather
-> Concat -> Expand chains.

  /usr/bin/python3 bench/recurrent_benchmark.py --kind lstm|gru --loom build/bin/loom \\
      --ort-dir build/models [--batch 2] [--seq 50] [--rounds 5] [--runs 50] [--out results.md]
"""
import argparse, os, sys

import numpy as np
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import side_by_side  # noqa: E402

INPUT, HIDDEN, CLASSES = 40, 64, 10


def export(kind, path, batch, seq):
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            rnn = nn.LSTM if kind == "lstm" else nn.GRU
            self.rnn = rnn(INPUT, HIDDEN, num_layers=2, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(2 * HIDDEN, CLASSES)

        def forward(self, x):
            y, _ = self.rnn(x)
            return self.fc(y)

    torch.manual_seed(0)
    torch.onnx.export(Model().eval(), torch.randn(batch, seq, INPUT), path, input_names=["x"], output_names=["y"],
                      opset_version=14)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", choices=["lstm", "gru"], required=True)
    side_by_side.add_arguments(ap, rounds=5, runs=50, reference_runs=10, work_prefix="loom_rnn_")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=50)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    model, x = os.path.join(a.work, f"{a.kind}.onnx"), os.path.join(a.work, "x.pb")
    export(a.kind, model, a.batch, a.seq)
    with open(x, "wb") as f:
        data = np.random.default_rng(1).standard_normal([a.batch, a.seq, INPUT]).astype(np.float32)
        f.write(numpy_helper.from_array(data, "x").SerializeToString())
    what = (f"torch.nn.{a.kind.upper()}({INPUT}, {HIDDEN}, num_layers=2, batch_first=True, bidirectional=True) "
            f"then Linear({2 * HIDDEN}, {CLASSES}); batch {a.batch}, sequence {a.seq}; torch.onnx.export, opset 14")
    side_by_side.compare_and_report(a, f"PyTorch {a.kind.upper()} on CPU: Loom vs ONNX Runtime", what,
                                    "recurrent_benchmark.py", model, "x", x, "y")
    return 0


if __name__ == "__main__":
    sys.exit(main())
