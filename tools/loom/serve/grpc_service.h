// The Open Inference Protocol's gRPC service (inference.GRPCInferenceService,
// grpc_predict_v2.proto) over the same repository and schedulers as REST.
// Tensors come as raw_input_contents (checked like the binary data
// extension) or typed InferTensorContents (element counts checked against
// the shape before allocating); outputs go as raw_output_contents, as
// Triton sends them. Errors map to gRPC codes: INVALID_ARGUMENT (HTTP 400),
// NOT_FOUND (404), RESOURCE_EXHAUSTED (full queue, 503), UNAVAILABLE
// (shutting down), DEADLINE_EXCEEDED (504), INTERNAL (500).
#pragma once

#include <memory>
#include <string>

#include "loom/status.h"

namespace loom::serve {

struct ServerState;

class GrpcServer {
 public:
  // Listens on host:port (0: any free port); `max_message_bytes` bounds a request.
  static Expected<std::unique_ptr<GrpcServer>> start(ServerState& state, const std::string& host, int port,
                                                    size_t max_message_bytes);
  ~GrpcServer();
  int port() const;
  // Refuses new calls and waits for those in flight.
  void shutdown();

 private:
  struct Impl;
  explicit GrpcServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::serve
