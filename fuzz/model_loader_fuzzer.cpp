// Fuzz target: bytes -> ModelProto -> IR graph -> ONNX shape inference
// (onnxio::load_model_bytes), then the graph's topological order. Any input
// must give a model or an error status: no crash, hang, leak or allocation
// the bytes do not justify (the limits below bound what a valid model may
// claim). Model bytes have no folder, so external data is refused.
#include <cstddef>
#include <cstdint>
#include <string>

#include "onnx/model_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  loom::onnxio::LoadOptions options;
  options.max_tensor_bytes = int64_t{64} << 20;
  options.max_nodes = 10000;
  auto model = loom::onnxio::load_model_bytes(std::string(reinterpret_cast<const char*>(data), size), "",
                                              "fuzz input", options);
  if (model.has_value()) (void)model->graph->topological_order();
  return 0;
}
