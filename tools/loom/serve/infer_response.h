// Encoding an Open Inference Protocol infer response (REST): outputs as JSON
// data (flat, row-major) or, where asked, as binary data after the JSON
// (the binary tensor data extension: the output gets parameter
// `binary_data_size` and the response an Inference-Header-Content-Length).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "loom/tensor.h"

namespace loom::serve {

struct NamedOutput {
  std::string name;
  Tensor tensor;
  bool binary = false;
};

struct EncodedResponse {
  std::string body;
  // Set when the body carries binary data: the JSON part's length.
  std::optional<size_t> json_length;
};

// Fails only for element types the protocol cannot name (float8, int4...).
Expected<EncodedResponse> encode_infer_response(const std::string& model_name, const std::string& model_version,
                                                const std::string& id, const std::vector<NamedOutput>& outputs);

// {"error": message} as the protocol's error object.
std::string error_json(const std::string& message);

}  // namespace loom::serve
