"""onnxruntime.capi for the Loom shim: the exception module code imports from."""
