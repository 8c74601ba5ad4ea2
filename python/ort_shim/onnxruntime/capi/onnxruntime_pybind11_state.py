"""The exception classes ONNX Runtime code catches, as Loom's errors.

ONNX Runtime's classes map onto Loom's status codes; where ORT is finer
(InvalidProtobuf, NoModel) the Loom class is broader, so an `except` for
the ORT name still catches what it meant to."""
from loom import (  # noqa: F401
    Cancelled,
    Fail,
    InvalidArgument,
    InvalidGraph,
    LoomError,
    NoSuchFile,
    NotImplemented,
    OutOfMemory,
    TimedOut,
)

RuntimeException = Fail
EPFail = Fail
EngineError = Fail
ModelLoaded = Fail
InvalidProtobuf = InvalidGraph
NoModel = InvalidGraph
ModelLoadCanceled = Cancelled
