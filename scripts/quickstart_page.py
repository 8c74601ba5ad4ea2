#!/usr/bin/env python3
"""The quickstart's input and reading of the result (scripts/quickstart.sh).

  quickstart_page.py page OUT.pb [--size 320]   # a synthetic text page, 1x3xSxS, as the PP-OCR detector expects
  quickstart_page.py regions MAP.pb PAGE.pb     # the text regions the detector's probability map shows

`page` draws lines of glyph-like marks on white (tests/models/compare_with_ort.py's
text_image) and normalises it with ImageNet's mean and std. `regions` thresholds
the map at 0.3 (PP-OCR's default), finds the connected regions and prints their
boxes, then how many of the page's text lines they cover.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "models"))
from compare_with_ort import normalize_image, text_image  # noqa: E402

SEED = 3


def page(out, size):
    gray = text_image(size, size, np.random.default_rng(SEED))
    x = normalize_image(gray, "imagenet", 3)[None].astype(np.float32)
    with open(out, "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    np.save(out + ".gray.npy", gray)
    print(f"input: a {size}x{size} page with {count_lines(gray)} lines of text-like marks")


def count_lines(gray):
    rows = (gray < 0.5).any(axis=1)
    return int(np.count_nonzero(rows[1:] & ~rows[:-1]) + rows[0])


def read(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def components(mask):
    """Boxes (y0, x0, y1, x1) of the 4-connected regions of `mask`, largest first."""
    seen = np.zeros_like(mask, bool)
    boxes = []
    for y, x in zip(*np.nonzero(mask)):
        if seen[y, x]:
            continue
        stack, y0, x0, y1, x1, n = [(y, x)], y, x, y, x, 0
        seen[y, x] = True
        while stack:
            cy, cx = stack.pop()
            n += 1
            y0, x0, y1, x1 = min(y0, cy), min(x0, cx), max(y1, cy), max(x1, cx)
            for ny, nx in ((cy + 1, cx), (cy - 1, cx), (cy, cx + 1), (cy, cx - 1)):
                if 0 <= ny < mask.shape[0] and 0 <= nx < mask.shape[1] and mask[ny, nx] and not seen[ny, nx]:
                    seen[ny, nx] = True
                    stack.append((ny, nx))
        if n >= 16:  # specks are not text
            boxes.append((n, (int(y0), int(x0), int(y1) + 1, int(x1) + 1)))
    return [b for _, b in sorted(boxes, reverse=True)]


def regions(map_path, page_path):
    prob = read(map_path).reshape(read(map_path).shape[-2:])
    boxes = components(prob > 0.3)
    print(f"text regions found: {len(boxes)} (probability > 0.3 on {100 * np.mean(prob > 0.3):.1f}% of the page)")
    for y0, x0, y1, x1 in sorted(boxes)[:8]:
        print(f"  rows {y0:3d}-{y1:3d}, columns {x0:3d}-{x1:3d}")
    if len(boxes) > 8:
        print(f"  ... and {len(boxes) - 8} more")
    gray = np.load(page_path + ".gray.npy")
    lines = count_lines(gray)
    ink = gray < 0.5
    covered = sum(1 for y0, x0, y1, x1 in boxes if ink[y0:y1, x0:x1].any())
    print(f"{covered} of the regions lie on the page's {lines} lines of marks")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "page":
        size = int(sys.argv[sys.argv.index("--size") + 1]) if "--size" in sys.argv else 320
        page(sys.argv[2], size)
    elif len(sys.argv) == 4 and sys.argv[1] == "regions":
        regions(sys.argv[2], sys.argv[3])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
