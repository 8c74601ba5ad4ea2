// Decoding an Open Inference Protocol infer request (REST): the JSON
// request object, its tensors as JSON data (flat row-major or nested
// arrays) or as binary data (the binary tensor data extension: the first
// `Inference-Header-Content-Length` bytes of the body are JSON, each input
// with parameter `binary_data_size` takes that many of the bytes after it,
// in input order).
//
// Contract: every size taken from a request (shape products, element sizes,
// binary sizes, the header length) is checked arithmetic against the bytes
// actually received before anything is allocated from it, so a request that
// declares more than it sends is refused without allocating. Every error is
// kInvalidArgument with a message for the client (HTTP 400).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loom/session.h"
#include "loom/status.h"
#include "loom/tensor.h"

namespace loom::serve {

struct RequestedOutput {
  std::string name;
  bool binary = false;  // parameters.binary_data
};

struct InferRequest {
  std::string id;  // echoed in the response when given
  std::map<std::string, Tensor> inputs;
  // The outputs asked for, in request order; empty: every model output.
  std::vector<RequestedOutput> outputs;
  // parameters.binary_data_output: outputs not listed go as binary data.
  bool binary_output_default = false;
};

// The model's side of the checks: its inputs (name, element type, rank and
// fixed dims) and outputs (names).
struct ModelSignature {
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
};

// Decodes `body`; `header_length` is the Inference-Header-Content-Length
// header's text when present. Checks the request against `model`: every
// model input given once with the model's datatype, rank and fixed dims, no
// unknown inputs or outputs. A JSON part over `max_json_bytes` is refused
// with kOutOfMemory before it is parsed: parsed JSON takes 10 to 20 times
// its text's size, so large tensors belong in binary data.
Expected<InferRequest> decode_infer_request(std::string_view body, const std::optional<std::string>& header_length,
                                            const ModelSignature& model, size_t max_json_bytes);

}  // namespace loom::serve
