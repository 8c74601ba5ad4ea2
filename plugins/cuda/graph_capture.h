// Recorded runs on the CUDA EP (option enable_cuda_graph, as ONNX Runtime's):
// the host's LOOM_Ep.begin_capture / end_capture become a CUDA graph
// capture of the run's stream, and each replay one cudaGraphLaunch of the
// instantiated graph, so a run at batch 1 costs one launch instead of one
// per kernel. Capture runs in relaxed mode: the allocations a kernel makes
// while it is recorded (scratch from the host's arena, cuDNN and cuBLAS
// handles) are allowed, and stay the graph's (the host keeps them).
#pragma once

#include <cuda_runtime.h>

#include "loom/sdk.h"

namespace loom::cuda {

// Starts capturing `stream` (a stream this EP made). Throws sdk::Error.
void begin_graph_capture(LOOM_Stream* stream);
// Ends the capture and returns the instantiated graph as the host's
// recording; throws sdk::Error (the capture is discarded) when the work
// could not be captured.
LOOM_CapturedWork* end_graph_capture(LOOM_Stream* stream);

}  // namespace loom::cuda
