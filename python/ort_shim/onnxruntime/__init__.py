"""ONNX Runtime's Python API, served by Loom.

Existing code that does `import onnxruntime as ort` runs on Loom, unchanged,
when this folder's parent is on PYTHONPATH. It is opt-in: the folder is
installed outside Python's own paths (<prefix>/share/loom/python-ort-shim),
so it never shadows a real onnxruntime install by default.

    PYTHONPATH=/usr/share/loom/python-ort-shim python3 my_ort_script.py

Provider names are ONNX Runtime's (CPUExecutionProvider runs on Loom's
cpu_onednn, then reference; CUDAExecutionProvider on cuda); everything else
is the `loom` package.
"""
import os as _os

import loom as _loom
from loom import (  # noqa: F401
    ExecutionMode,
    GraphOptimizationLevel,
    InferenceSession,
    ModelMetadata,
    NodeArg,
    OrtValue,
    RunOptions,
    SessionIOBinding,
    SessionOptions,
    __version__,
    get_device,
)

from onnxruntime.capi import onnxruntime_pybind11_state  # noqa: F401

IOBinding = SessionIOBinding

# ONNX Runtime 1.2x's providers, in its order.
_ALL_PROVIDERS = [
    "TensorrtExecutionProvider", "CUDAExecutionProvider", "MIGraphXExecutionProvider", "ROCMExecutionProvider",
    "OpenVINOExecutionProvider", "DnnlExecutionProvider", "VitisAIExecutionProvider", "QNNExecutionProvider",
    "NnapiExecutionProvider", "VSINPUExecutionProvider", "JsExecutionProvider", "CoreMLExecutionProvider",
    "ArmNNExecutionProvider", "ACLExecutionProvider", "DmlExecutionProvider", "RknpuExecutionProvider",
    "WebNNExecutionProvider", "WebGpuExecutionProvider", "XnnpackExecutionProvider", "CANNExecutionProvider",
    "AzureExecutionProvider", "CPUExecutionProvider",
]


def get_all_providers():
    """Every provider name ONNX Runtime knows (as onnxruntime.get_all_providers)."""
    return list(_ALL_PROVIDERS)


def get_available_providers():
    """The providers usable here, in ONNX Runtime's names and priority order."""
    loom_names = _loom.get_available_providers()
    names = ["CUDAExecutionProvider"] if "cuda" in loom_names else []
    return names + ["CPUExecutionProvider"]


def get_version_string():
    return __version__


def get_build_info():
    return "Loom " + __version__ + " (ONNX Runtime's Python API)"


_SEVERITY_TO_LOOM = {0: "trace", 1: "info", 2: "warn", 3: "error", 4: "off"}


def set_default_logger_severity(severity):
    """ONNX Runtime's 0 (verbose) .. 4 (fatal); sessions created afterwards log at that level."""
    if severity not in _SEVERITY_TO_LOOM:
        raise ValueError("severity must be 0..4, got %r" % (severity,))
    _os.environ["LOOM_LOG_LEVEL"] = _SEVERITY_TO_LOOM[severity]


def set_default_logger_verbosity(verbosity):
    """Accepted for ONNX Runtime code; Loom has no separate verbose log level (no effect)."""
    int(verbosity)
