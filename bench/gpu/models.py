"""The torch modules of the GPU benchmark (bench/gpu_benchmark.py), built the same way on the
build machine, which exports their ONNX graphs, and on the GPU machine, which loads the weights the
bundle regenerates into them, so Loom and PyTorch run the same architecture with the same weights.

  resnet50, mobilenetv2: torchvision, eval mode, input "input" [batch, 3, height, width]
  bert_base: the BERT-base-style encoder of tests/models/export_torch_models.py (12 layers, hidden
             768, 12 heads, intermediate 3072), inputs input_ids / attention_mask [batch, seq]

Graphs are exported at opset 17 with do_constant_folding=False, so every initializer keeps its
state_dict name (BatchNorm stays a node: Loom folds it when it loads the graph).
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
# export_torch_models.py: next to this file in the bundle, in tests/models in the repository.
for candidate in (HERE, os.path.join(HERE, "..", "..", "tests", "models")):
    if os.path.exists(os.path.join(candidate, "export_torch_models.py")):
        sys.path.insert(0, candidate)
        break
import export_torch_models as etm  # noqa: E402

MODELS = ("resnet50", "mobilenetv2", "bert_base")


def build(name):
    """The module, in eval mode, with torch's default initialisation (weights come later)."""
    torch.manual_seed(0)
    if name == "resnet50":
        import torchvision
        return torchvision.models.resnet50(weights=None).eval()
    if name == "mobilenetv2":
        import torchvision
        return torchvision.models.mobilenet_v2(weights=None).eval()
    if name == "bert_base":
        return etm.build_bert_base()
    raise ValueError(f"unknown model {name}")


def example_inputs(name, batch, size=224, seq=128, generator=None):
    """Inputs as a tuple of tensors (float images in [-1, 1); token ids; an all-ones mask whose
    last eighth is zero, so the mask matters)."""
    g = generator or torch.Generator().manual_seed(5)
    if name == "bert_base":
        ids = torch.randint(0, 30522, (batch, seq), generator=g, dtype=torch.long)
        mask = torch.ones(batch, seq, dtype=torch.long)
        mask[:, seq - seq // 8:] = 0
        return ids, mask
    return (torch.rand(batch, 3, size, size, generator=g) * 2 - 1,)


def input_names(name):
    return ["input_ids", "attention_mask"] if name == "bert_base" else ["input"]


def export(name, path):
    # Calibrated statistics make every folded bias distinct: the exporter shares identical
    # initializers between nodes, and a shared one could not take two layers' weights later.
    model = calibrate(name, build(name), "cpu")
    inputs = example_inputs(name, 2, size=64, seq=16)
    if name == "bert_base":
        axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                "last_hidden_state": {0: "batch", 1: "seq"}, "pooler_output": {0: "batch"}}
        outputs = ["last_hidden_state", "pooler_output"]
    else:
        axes = {"input": {0: "batch", 2: "height", 3: "width"}, "logits": {0: "batch"}}
        outputs = ["logits"]
    with torch.no_grad():
        torch.onnx.export(model, inputs, path, opset_version=17, input_names=input_names(name),
                          output_names=outputs, dynamic_axes=axes, do_constant_folding=False)


@torch.no_grad()
def calibrate(name, model, device):
    """BatchNorm statistics from a few random batches, so activations keep a trained network's
    scale (random weights with BatchNorm's defaults grow or fade with depth)."""
    if name == "bert_base":
        return model
    etm_batches = [example_inputs(name, 4, generator=torch.Generator().manual_seed(10 + i))[0] for i in range(4)]
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None
    model.train()
    for x in etm_batches:
        model(x.to(device))
    return model.eval()


def _conv_bn_pairs(name, model):
    """(conv, batchnorm) modules in the order the forward pass runs them; every torchvision conv of
    these models is followed by its BatchNorm."""
    order = []
    hooks = [m.register_forward_hook(lambda mod, i, o: order.append(mod)) for m in model.modules()
             if isinstance(m, (torch.nn.Conv2d, torch.nn.BatchNorm2d))]
    with torch.no_grad():
        model(*[t.to(next(model.parameters()).device) for t in example_inputs(name, 1, size=32)])
    for h in hooks:
        h.remove()
    pairs = []
    for a, b in zip(order[0::2], order[1::2]):
        if not isinstance(a, torch.nn.Conv2d) or not isinstance(b, torch.nn.BatchNorm2d):
            raise RuntimeError("a convolution is not followed by its BatchNorm")
        pairs.append((a, b))
    return pairs


def write_weights(name, model, src_onnx, dst_onnx):
    """The ONNX graph `src_onnx` with the module's weights: by name for what the exporter kept
    (BERT's parameters, the classifier), and for the convolutions the exporter folded with their
    BatchNorm, the folded weights computed the same way, matched in execution order."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    graph = onnx.load(src_onnx)
    inits = {i.name: i for i in graph.graph.initializer}

    def put(init_name, array):
        t = inits[init_name]
        if tuple(t.dims) != tuple(array.shape):
            raise RuntimeError(f"{init_name}: ONNX dims {tuple(t.dims)} != {tuple(array.shape)}")
        t.CopyFrom(numpy_helper.from_array(np.ascontiguousarray(array.astype(np.float32)), init_name))

    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    written = 0
    for k, v in state.items():
        if k in inits and v.is_floating_point():
            put(k, v.numpy())
            written += 1
    if name != "bert_base":
        convs = [n for n in graph.graph.node if n.op_type == "Conv"]
        pairs = _conv_bn_pairs(name, model)
        if len(convs) != len(pairs):
            raise RuntimeError(f"{len(convs)} ONNX convolutions for {len(pairs)} conv + BatchNorm pairs")
        for node, (conv, bn) in zip(convs, pairs):
            scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
            w = conv.weight * scale[:, None, None, None]
            b = (conv.bias if conv.bias is not None else torch.zeros_like(bn.bias)) * scale
            b = b + bn.bias - bn.running_mean * scale
            put(node.input[1], w.detach().cpu().numpy())
            if len(node.input) < 3 or not node.input[2]:
                raise RuntimeError(f"convolution {node.name} has no bias to hold the folded shift")
            put(node.input[2], b.detach().cpu().numpy())
            written += 2
    onnx.save(graph, dst_onnx)
    return written


if __name__ == "__main__":
    # python3 bench/gpu/models.py OUT_DIR: exports every model (build machine).
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for n in MODELS:
        export(n, os.path.join(out, n + ".onnx"))
        print(n, "exported")
