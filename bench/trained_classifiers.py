#!/usr/bin/python3
"""Image classifiers whose top-1 answers mean something, for judging int8 accuracy.

No pretrained weights can be downloaded here, and a network with random
weights answers every image with nearly flat logits: its top-1 flips under
any noise, so "top-1 agreement" would measure nothing. So the quantization
benchmark judges classifiers trained here, briefly, on the generated images'
task (bench/generated_images.py: ten classes, the hue of the large shape):
the torchvision ResNet-50 / MobileNetV2 built as the benchmark's float
models are (tests/models/export_torch_models.py: seed 0, BatchNorm
statistics calibrated on random batches), then trained end to end with Adam
(lr 1e-3, batch 8) on 224x224 generated images (seed 3, a fresh batch per
step; at the size it is judged at, since a network trained on smaller
images can collapse to one answer at 224), and exported like the float
models (opset 17, input `input`, output `logits`). Same architecture, so the same speed; but the
logits now separate the classes with margins a trained network has.

Usage: trained_classifiers.py MODELS_DIR [--only resnet50 mobilenetv2] [--steps N]
Writes MODELS_DIR/<name>_trained.onnx (skipped when present) and prints the
float model's accuracy and median top-1 margin on held-out images (seed 2).
"""
import argparse
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))
sys.path.insert(0, HERE)
import export_torch_models as etm  # noqa: E402
import generated_images  # noqa: E402

BUILDERS = {"resnet50": etm.build_resnet50, "mobilenetv2": etm.build_mobilenetv2}
DEFAULT_STEPS = {"resnet50": 120, "mobilenetv2": 200}
BATCH, TRAIN_SIZE, SEED = 8, 224, 3


def train(model, steps, log):
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(steps):
        first = step * BATCH
        x = np.concatenate([generated_images.image(SEED, i, TRAIN_SIZE) for i in range(first, first + BATCH)])
        y = torch.tensor([generated_images.label(i) for i in range(first, first + BATCH)])
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(torch.from_numpy(x)), y)
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == steps - 1:
            log(f"  step {step + 1}/{steps}: loss {float(loss):.3f}")
    model.eval()


@torch.no_grad()
def evaluate(model, seed, count):
    """Accuracy and median top-1 margin (in logit standard deviations) at 224x224."""
    hits, margins = 0, []
    for i in range(count):
        logits = model(torch.from_numpy(generated_images.image(seed, i)))[0]
        top = torch.topk(logits, 2).values
        margins.append(float((top[0] - top[1]) / logits.std()))
        hits += int(int(logits.argmax()) == generated_images.label(i))
    return hits / count, float(np.median(margins))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models_dir")
    p.add_argument("--only", nargs="+", choices=sorted(BUILDERS), default=sorted(BUILDERS))
    p.add_argument("--steps", type=int, help="training steps (default: resnet50 120, mobilenetv2 200)")
    a = p.parse_args()
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    os.makedirs(a.models_dir, exist_ok=True)
    for name in a.only:
        path = os.path.join(a.models_dir, f"{name}_trained.onnx")
        if os.path.exists(path):
            print(f"{name}: present, skipped ({path})")
            continue
        start = time.monotonic()
        torch.manual_seed(0)  # as export_torch_models.py builds it
        model = BUILDERS[name]()
        steps = a.steps or DEFAULT_STEPS[name]
        print(f"{name}: training {steps} steps", flush=True)
        train(model, steps, lambda m: print(m, flush=True))
        acc, margin = evaluate(model, 2, 100)
        tmp = path + ".tmp"
        etm.export_vision(model, tmp, etm.opset_for_torch())
        os.replace(tmp, path)
        print(f"{name}: held-out accuracy {100 * acc:.0f} %, median top-1 margin {margin:.2f} logit std; "
              f"wrote {path} in {time.monotonic() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
