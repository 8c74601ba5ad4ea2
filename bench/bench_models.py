"""The models the side-by-side benchmark times, and how to get them.

Each model is a file under the models folder, made by the scripts the model
tests use: tests/models/export_torch_models.py (torch exports; bert_base is an
extra it writes only when named) and tests/models/fetch_models.sh (PP-OCR models
and onnxruntime-node, from the npm registry). Both skip what is already there.
"""
import os
import subprocess
import sys
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL_SCRIPTS = os.path.join(HERE, "..", "tests", "models")


@dataclass
class BenchModel:
    name: str
    file: str  # relative to the models folder
    shape: str  # the input the benchmark feeds, for the report
    # Default timed runs per process: about half a second to a second of
    # runs at 1 thread, so each process spans the VM's swings in speed
    # (shared hosts slow a process by 1.3-1.7x for tenths of a second at a
    # time) instead of landing inside one of them.
    runs: int
    dims: dict = field(default_factory=dict)  # symbolic input dim -> size
    text_images: dict = field(default_factory=dict)  # input -> "imagenet" | "half" (see compare_with_ort.py)
    torch_export: bool = False  # made by export_torch_models.py, else by fetch_models.sh


MODELS = [
    BenchModel("resnet50", "resnet50.onnx", "1x3x224x224", runs=10, torch_export=True),
    BenchModel("mobilenetv2", "mobilenetv2.onnx", "1x3x224x224", runs=100, torch_export=True),
    BenchModel("bert_base", "bert_base.onnx", "1x128 ids + mask", runs=5, dims={"seq": 128}, torch_export=True),
    # paddle2onnx names the dynamic dims; a synthetic text page makes the OCR
    # models answer with more than background (as in the model tests).
    BenchModel("ppocr_det", "ocr-models/ch_PP-OCRv4_det_infer.onnx", "1x3x640x640", runs=10,
               dims={"p2o.DynamicDimension.0": 1, "p2o.DynamicDimension.1": 640, "p2o.DynamicDimension.2": 640},
               text_images={"x": "imagenet"}),
    BenchModel("ppocr_rec", "ocr-models/ch_PP-OCRv4_rec_infer.onnx", "1x3x48x320", runs=40,
               dims={"p2o.DynamicDimension.0": 1, "p2o.DynamicDimension.1": 320},
               text_images={"x": "half"}),
]
BY_NAME = {m.name: m for m in MODELS}


def prepare_models(models, models_dir, python=sys.executable):
    """Makes every model file and onnxruntime-node present in models_dir.

    Raises RuntimeError with the failing step's last line."""
    def step(cmd):
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            lines = [l for l in (p.stderr + p.stdout).splitlines() if l.strip()]
            raise RuntimeError(f"{os.path.basename(cmd[1] if cmd[0] == python else cmd[0])} failed: "
                               f"{lines[-1] if lines else 'exit ' + str(p.returncode)}")

    step([os.path.join(MODEL_SCRIPTS, "fetch_models.sh"), models_dir])
    exports = [m.name for m in models if m.torch_export]
    if exports:
        step([python, os.path.join(MODEL_SCRIPTS, "export_torch_models.py"), models_dir, "--only", *exports])
    for m in models:
        if not os.path.isfile(os.path.join(models_dir, m.file)):
            raise RuntimeError(f"{m.name}: {m.file} missing in {models_dir} after preparing")
