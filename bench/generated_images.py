"""A generated image set for calibrating and judging quantized image models.

No image data set can be downloaded here, so the images are drawn: a smooth
background (a colour gradient plus low-frequency waves), one large shape
(disc, ring, rectangle, stripes or checkerboard) whose hue is the image's
class, and up to two small distractor shapes, with soft noise. They are not
ImageNet, but they are images: spatially correlated, with edges and
textures. Image i has class i % 10 (one of ten hues of the large shape):
the task bench/trained_classifiers.py trains its classifiers on (whole
networks, from scratch).

Each image is 1x3xHxW float32, normalised with ImageNet's mean and std as the
torchvision models expect, saved as NNN.npy (the layout `loom calibrate` and
`loom compare` read for one-input models). Deterministic: image i of a set
comes from seed (set_seed, i).

Usage: generated_images.py OUT_DIR --count N [--seed S] [--size 224]
"""
import argparse
import os
import sys

import numpy as np

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32).reshape(3, 1, 1)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32).reshape(3, 1, 1)


def _background(rng, size, yy, xx):
    a, b = rng.random(3), rng.random(3)
    angle = rng.uniform(0, np.pi)
    t = (np.cos(angle) * xx + np.sin(angle) * yy + 1.0) / 2.0
    img = a[:, None, None] * (1 - t) + b[:, None, None] * t
    for _ in range(3):
        f = rng.uniform(1, 6, size=2)
        phase = rng.uniform(0, 2 * np.pi)
        wave = np.sin(np.pi * (f[0] * xx + f[1] * yy) + phase)
        img += rng.uniform(0.03, 0.12) * wave * rng.uniform(-1, 1, size=3)[:, None, None]
    return img


KINDS = ("disc", "ring", "rect", "stripes", "checker")
CLASSES = 10


def _shape_mask(rng, kind, yy, xx, large=True):
    cx, cy = rng.uniform(-0.4, 0.4, size=2) if large else rng.uniform(-0.8, 0.8, size=2)
    r = rng.uniform(0.35, 0.6) if large else rng.uniform(0.08, 0.2)
    if kind == "disc":
        return ((xx - cx) ** 2 + (yy - cy) ** 2) < r * r
    if kind == "ring":
        d = np.sqrt((xx - cx) ** 2 + (yy - cy) ** 2)
        return (d < r) & (d > r * rng.uniform(0.5, 0.85))
    if kind == "rect":
        w, h = rng.uniform(0.5, 1.0, size=2) * r
        return (np.abs(xx - cx) < w) & (np.abs(yy - cy) < h)
    if kind == "stripes":
        angle = rng.uniform(0, np.pi)
        period = rng.uniform(0.05, 0.3)
        inside = ((xx - cx) ** 2 + (yy - cy) ** 2) < (1.5 * r) ** 2
        return inside & (np.sin((np.cos(angle) * xx + np.sin(angle) * yy) / period * np.pi) > 0)
    # checkerboard
    cell = rng.uniform(0.05, 0.25)
    inside = (np.abs(xx - cx) < r) & (np.abs(yy - cy) < r)
    return inside & ((np.floor(xx / cell) + np.floor(yy / cell)) % 2 == 0)


def _colour(rng, hue):
    """A saturated colour of hue `hue` (0-1, jittered by a quarter of a class)."""
    h = (hue + rng.uniform(-0.025, 0.025)) % 1.0
    sat, val = rng.uniform(0.75, 1.0), rng.uniform(0.75, 1.0)
    k = (np.array([5.0, 3.0, 1.0]) + h * 6.0) % 6.0
    rgb = val - val * sat * np.clip(np.minimum(k, 4.0 - k), 0.0, 1.0)
    return rgb[:, None, None]


def label(index):
    """The class of image `index`: the large shape's hue is label / CLASSES."""
    return index % CLASSES


def image(seed, index, size=224):
    """One normalised 1x3xSxS float32 image of class label(index)."""
    rng = np.random.default_rng([seed, index])
    lin = np.linspace(-1, 1, size, dtype=np.float32)
    yy, xx = np.meshgrid(lin, lin, indexing="ij")
    img = _background(rng, size, yy, xx) * 0.6 + 0.2
    cls = label(index)
    shapes = [(rng.choice(KINDS), cls / CLASSES, True)]
    shapes += [(rng.choice(KINDS), rng.random(), False) for _ in range(rng.integers(0, 3))]
    for kind, hue, large in shapes:
        mask = _shape_mask(rng, kind, yy, xx, large)
        shade = 1.0 + 0.15 * np.sin(np.pi * rng.uniform(1, 4) * (xx + yy))
        img = np.where(mask[None], _colour(rng, hue) * shade, img)
    img += rng.normal(0, 0.02, size=img.shape)
    img = np.clip(img, 0.0, 1.0).astype(np.float32)
    return ((img - MEAN) / STD)[None].astype(np.float32)


def write_set(folder, count, seed, size=224):
    """Writes images 0..count-1 of set `seed` as folder/NNN.npy (kept when present)."""
    os.makedirs(folder, exist_ok=True)
    for i in range(count):
        path = os.path.join(folder, f"{i:03d}.npy")
        if not os.path.exists(path):
            np.save(path, image(seed, i, size))
    return folder


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--size", type=int, default=224)
    a = p.parse_args()
    if a.count < 1 or a.size < 8:
        p.error("--count must be >= 1 and --size >= 8")
    write_set(a.out, a.count, a.seed, a.size)
    print(f"wrote {a.count} images to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
