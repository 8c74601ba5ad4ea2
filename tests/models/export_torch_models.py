#!/usr/bin/python3
"""Exports the torch-built models the `models` tests run through Loom and ONNX Runtime.

Usage: export_torch_models.py OUT_DIR [--only NAME ...] [--force]

Writes OUT_DIR/{resnet50,mobilenetv2,bert_encoder}.onnx with random weights from a
fixed seed, so every run writes the same graph. Extra models (bert_base) are
written only when named with --only: they are for the benchmark (bench/), too big
for the test fixture. A model already present is skipped
(--force re-exports). Each file is written to a temporary name first and renamed, so
an interrupted run never leaves a half-written model behind.

- resnet50, mobilenetv2: torchvision architectures, batch 1, 3x224x224, opset 17.
  BatchNorm running statistics are calibrated on a few random batches, so the
  activations keep a trained network's scale instead of growing with depth.
- bert_encoder: a BERT-style encoder in plain torch.nn (word + position + token-type
  embeddings, LayerNorm, 4 post-LN layers of multi-head attention written out with
  MatMul / Softmax, GELU via erf, and a tanh pooler). Inputs input_ids and
  attention_mask, int64 [1, seq] with `seq` left symbolic (the tests use 32).
  Outputs last_hidden_state [1, seq, 128] and pooler_output [1, 128].
- bert_base (extra): the same encoder at BERT-base size (vocab 30522, 512 positions,
  12 layers, hidden 768, 12 heads, intermediate 3072), opset 14 (LayerNorm exported
  as its primitive ops), traced at seq 128; outputs [1, seq, 768] and [1, 768].
"""
import argparse
import math
import os
import sys
import time

import torch
import torch.nn as nn

OPSET = 17


def opset_for_torch():
    """Highest opset <= OPSET the installed torch can export."""
    try:
        from torch.onnx._constants import ONNX_MAX_OPSET  # torch >= 1.13
    except ImportError:
        try:
            from torch.onnx.symbolic_helper import _onnx_stable_opsets
            ONNX_MAX_OPSET = max(_onnx_stable_opsets)
        except ImportError:
            ONNX_MAX_OPSET = OPSET
    return min(OPSET, ONNX_MAX_OPSET)


# --------------------------------------------------------------------------- vision


@torch.no_grad()
def calibrate_batchnorm(model, batches=4, batch_size=4):
    """Sets BatchNorm running mean / var from random inputs (cumulative average)."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None
    model.train()
    gen = torch.Generator().manual_seed(1)
    for _ in range(batches):
        model(torch.randn(batch_size, 3, 224, 224, generator=gen))
    model.eval()


def build_resnet50():
    import torchvision
    model = torchvision.models.resnet50(weights=None)
    calibrate_batchnorm(model)
    return model


def build_mobilenetv2():
    import torchvision
    model = torchvision.models.mobilenet_v2(weights=None)
    calibrate_batchnorm(model)
    return model


def export_vision(model, path, opset):
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(2))
    torch.onnx.export(model, (x,), path, opset_version=opset, input_names=["input"],
                      output_names=["logits"], do_constant_folding=True)


# --------------------------------------------------------------------------- BERT


class Gelu(nn.Module):
    """GELU written with erf, as BERT's original code (exports Div/Erf/Add/Mul)."""

    def forward(self, x):
        return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


class SelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.output = nn.Linear(hidden, hidden)

    def split_heads(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, mask_bias):
        q = self.split_heads(self.query(x))
        k = self.split_heads(self.key(x))
        v = self.split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = torch.softmax(scores + mask_bias, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        b, s = ctx.shape[0], ctx.shape[1]
        return self.output(ctx.view(b, s, self.heads * self.head_dim))


class EncoderLayer(nn.Module):
    def __init__(self, hidden, heads, intermediate):
        super().__init__()
        self.attention = SelfAttention(hidden, heads)
        self.attention_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, intermediate)
        self.act = Gelu()
        self.out = nn.Linear(intermediate, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, mask_bias):
        x = self.attention_norm(x + self.attention(x, mask_bias))
        return self.output_norm(x + self.out(self.act(self.intermediate(x))))


class BertEncoder(nn.Module):
    def __init__(self, vocab=1000, hidden=128, heads=4, layers=4, intermediate=512,
                 max_positions=128, type_vocab=2):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(max_positions, hidden)
        self.token_type_embeddings = nn.Embedding(type_vocab, hidden)
        self.embedding_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.register_buffer("position_ids", torch.arange(max_positions).unsqueeze(0))
        self.register_buffer("token_type_ids", torch.zeros(1, max_positions, dtype=torch.long))
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads, intermediate) for _ in range(layers))
        self.pooler = nn.Linear(hidden, hidden)
        for m in self.modules():  # BERT's initializer range
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)

    def forward(self, input_ids, attention_mask):
        seq = input_ids.shape[1]
        x = (self.word_embeddings(input_ids)
             + self.position_embeddings(self.position_ids[:, :seq])
             + self.token_type_embeddings(self.token_type_ids[:, :seq]))
        x = self.embedding_norm(x)
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_bias)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return x, pooled


def build_bert():
    model = BertEncoder()
    model.eval()
    return model


def build_bert_base():
    model = BertEncoder(vocab=30522, hidden=768, heads=12, layers=12, intermediate=3072, max_positions=512)
    model.eval()
    return model


def export_bert(model, path, opset, seq=32):
    gen = torch.Generator().manual_seed(3)
    vocab = model.word_embeddings.num_embeddings
    ids = torch.randint(0, vocab, (1, seq), generator=gen, dtype=torch.long)
    mask = torch.ones(1, seq, dtype=torch.long)
    torch.onnx.export(model, (ids, mask), path, opset_version=opset,
                      input_names=["input_ids", "attention_mask"],
                      output_names=["last_hidden_state", "pooler_output"],
                      dynamic_axes={"input_ids": {1: "seq"}, "attention_mask": {1: "seq"},
                                    "last_hidden_state": {1: "seq"}},
                      do_constant_folding=True)
    # torch leaves the outputs' batch dim as a made-up symbol; it is 1.
    import onnx
    m = onnx.load(path)
    for out in m.graph.output:
        dim0 = out.type.tensor_type.shape.dim[0]
        dim0.Clear()
        dim0.dim_value = 1
    onnx.save(m, path)


# --------------------------------------------------------------------------- main

def export_bert_base(model, path, opset):
    export_bert(model, path, BERT_BASE_OPSET, seq=128)


BERT_BASE_OPSET = 14  # what the benchmark specifies (issue 4)

MODELS = {
    "resnet50": (build_resnet50, export_vision),
    "mobilenetv2": (build_mobilenetv2, export_vision),
    "bert_encoder": (build_bert, export_bert),
    "bert_base": (build_bert_base, export_bert_base),
}
# Written only when asked for by name (--only).
EXTRA_MODELS = {"bert_base"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--only", nargs="+", choices=sorted(MODELS), help="export only these")
    parser.add_argument("--force", action="store_true", help="re-export models already present")
    args = parser.parse_args()

    os.makedirs(args.out_dir, exist_ok=True)
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    opset = opset_for_torch()
    import onnx

    for name in args.only or [m for m in MODELS if m not in EXTRA_MODELS]:
        path = os.path.join(args.out_dir, name + ".onnx")
        if os.path.exists(path) and not args.force:
            print(f"{name}: present, skipped ({path})")
            continue
        start = time.monotonic()
        torch.manual_seed(0)
        build, export = MODELS[name]
        model = build()
        tmp = path + ".tmp"
        try:
            export(model, tmp, opset)
            onnx.checker.check_model(tmp)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        imports = onnx.load(path, load_external_data=False).opset_import
        written_opset = next((o.version for o in imports if o.domain in ("", "ai.onnx")), opset)
        print(f"{name}: exported opset {written_opset} in {time.monotonic() - start:.1f}s ({path})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
