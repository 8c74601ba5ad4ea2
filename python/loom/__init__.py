"""Loom, a plugin-based ONNX inference runtime, with ONNX Runtime's Python API.

    import loom, numpy as np
    sess = loom.InferenceSession("model.onnx", providers=["cpu_onednn", "reference"])
    y, = sess.run(None, {"x": np.zeros((1, 3), np.float32)})
    print(sess.get_placement())   # which provider runs each node, and why

ONNX Runtime's provider names work too: providers=["CPUExecutionProvider"]
runs on Loom's host providers (cpu_onednn, then reference),
"CUDAExecutionProvider" (with its ORT options) on cuda; a provider ORT knows
but this machine lacks is skipped with ORT's warning.

InferenceSession, SessionOptions, RunOptions, GraphOptimizationLevel,
ExecutionMode, the IO binding (SessionIOBinding, OrtValue) and the errors
(LoomError and its subclasses Fail, InvalidArgument, NotFound / NoSuchFile,
NotImplemented, InvalidGraph, OutOfMemory, Cancelled, TimedOut) come from
the extension module loom._loom.
"""
from loom._loom import (  # noqa: F401
    Cancelled,
    CustomOpDomain,
    ExecutionMode,
    Fail,
    GraphOptimizationLevel,
    InferenceSession,
    InvalidArgument,
    InvalidGraph,
    LoomError,
    ModelMetadata,
    NodeArg,
    NodePlacement,
    NoSuchFile,
    NotFound,
    NotImplemented,
    OrtValue,
    OutOfMemory,
    PlacementReport,
    PluginDevice,
    PluginInfo,
    PluginProvider,
    ProviderPlacement,
    RunOptions,
    SessionIOBinding,
    SessionOptions,
    TimedOut,
    __version__,
    get_available_providers,
    get_plugins,
)


def get_device():
    """'GPU' when a CUDA provider is usable here, else 'CPU' (as ONNX Runtime)."""
    return "GPU" if "cuda" in get_available_providers() else "CPU"
