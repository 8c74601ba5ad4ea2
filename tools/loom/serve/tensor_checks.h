// Checks and conversions shared by the REST and gRPC request decoders. Each
// size derived from a request is checked arithmetic against the bytes the
// request actually carries before anything is allocated from it. Every
// error is kInvalidArgument, naming the input, for the client.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "infer_request.h"
#include "loom/status.h"
#include "loom/tensor.h"

namespace loom::serve {

// Deeper nesting / higher ranks than this are refused.
constexpr int kMaxRank = 32;

// A request's shape: at most kMaxRank non-negative dims whose product fits int64.
Expected<Dims> checked_dims(const std::vector<int64_t>& shape, const std::string& input);

// The model's input of that name; nullptr when it has none.
const ValueInfo* find_input(const ModelSignature& model, const std::string& name);

// The datatype, rank and fixed dims the model declares for the input.
Status check_against_model(const std::string& input, DType dtype, const Dims& dims, const ValueInfo& info);

// A tensor from its raw bytes (binary data extension, gRPC
// raw_input_contents): little-endian elements, exactly count * element size
// bytes; BYTES as 4-byte little-endian lengths each followed by the bytes,
// exactly `count` of them filling `bytes`; BOOL bytes must be 0 or 1.
Expected<Tensor> tensor_from_raw(const std::string& input, DType dtype, const Dims& dims, std::string_view bytes);

// The inverse: appends the tensor's raw bytes to `out`.
void append_raw(const Tensor& t, std::string& out);

}  // namespace loom::serve
