#!/usr/bin/env python3
"""Adds intermediate values of a model to its outputs (float, shape left to inference).

  add_outputs.py IN.onnx OUT.onnx NAME [NAME ...]

The GPU check compares PP-OCR's detector by its logits too: its Sigmoid output saturates, so
its relative error says little.
"""
import sys

import onnx
from onnx import TensorProto, helper


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    model = onnx.load(sys.argv[1])
    produced = {o for n in model.graph.node for o in n.output}
    for name in sys.argv[3:]:
        if name not in produced:
            print(f"add_outputs: no node makes '{name}'", file=sys.stderr)
            return 1
        model.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    onnx.save(model, sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
