#include "graph_capture.h"

#include <string>

#include "cuda_check.h"
#include "stream_resources.h"

namespace loom::cuda {
namespace {

StreamResources& resources_of(LOOM_Stream* stream) {
  if (stream == nullptr || stream->state == nullptr)
    throw sdk::Error("cuda: capture needs one of this EP's streams", LOOM_STATUS_INVALID_ARGUMENT);
  return *static_cast<StreamResources*>(stream->state);
}

struct Graph {
  int device;
  cudaGraphExec_t exec;
};

}  // namespace

void begin_graph_capture(LOOM_Stream* stream) {
  StreamResources& res = resources_of(stream);
  check(cudaSetDevice(res.device()), "cudaSetDevice");
  check(cudaStreamBeginCapture(res.stream(), cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
}

LOOM_CapturedWork* end_graph_capture(LOOM_Stream* stream) {
  StreamResources& res = resources_of(stream);
  check(cudaSetDevice(res.device()), "cudaSetDevice");
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(res.stream(), &graph);
  if (ended != cudaSuccess || graph == nullptr) {
    if (graph != nullptr) cudaGraphDestroy(graph);
    (void)cudaGetLastError();  // an invalidated capture is reported here, not sticky
    throw sdk::Error(std::string("cuda: the run could not be captured as a CUDA graph: ") +
                         cudaGetErrorString(ended),
                     LOOM_STATUS_NOT_IMPLEMENTED);
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  check(made, "cudaGraphInstantiate");
  auto* w = new LOOM_CapturedWork{};
  w->struct_size = LOOM_CapturedWork_STRUCT_SIZE;
  w->state = new Graph{res.device(), exec};
  w->replay = [](void* st, LOOM_Stream* s) noexcept -> LOOM_Status* {
    auto* g = static_cast<Graph*>(st);
    if (s == nullptr || s->state == nullptr)
      return sdk::make_status(LOOM_STATUS_INVALID_ARGUMENT, "cuda: replay needs one of this EP's streams");
    if (LOOM_Status* e = status_of(cudaSetDevice(g->device), "cudaSetDevice")) return e;
    return status_of(cudaGraphLaunch(g->exec, static_cast<StreamResources*>(s->state)->stream()), "cudaGraphLaunch");
  };
  w->release = [](LOOM_CapturedWork* self) noexcept {
    auto* g = static_cast<Graph*>(self->state);
    cudaSetDevice(g->device);
    cudaGraphExecDestroy(g->exec);
    delete g;
    delete self;
  };
  return w;
}

}  // namespace loom::cuda
