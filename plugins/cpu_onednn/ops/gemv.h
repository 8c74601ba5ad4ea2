// Single-row matrix products (y = x W + bias with x of one row and W a large
// constant): a host step that streams W once, row by row of W's transpose.
//
// oneDNN 2.6's matmul runs M = 1 through its blocked GEMM kernel, which walks
// the packed weights in several interleaved streams: in MobileNetV2 the
// 1280x1000 classifier took 0.53 ms, reading its 5 MB at ~10 GB/s, while one
// sequential pass over W (each output a dot product of a contiguous row of
// W's transpose) reads it at the memory's streaming rate. The step splits
// outputs across the EP's threads.
#pragma once

#include <optional>

#include "program_builder.h"

namespace loom::onednn {

// Appends y = x W (+ bias) as a GEMV host step when it applies: x is one row
// of K floats, `weights` is a constant K x N matrix (any strides) of at
// least kGemvMinWeights elements, `bias` (when given) holds N values or one.
// Returns dst, or nullopt (nothing appended) when it does not apply.
constexpr int64_t kGemvMinWeights = 64 * 1024;
std::optional<ValueId> build_gemv(ProgramBuilder& b, ValueId x, ValueId weights, std::optional<ValueId> bias,
                                  const std::vector<int64_t>& dst_dims, const std::string& name,
                                  const std::string& label);

}  // namespace loom::onednn
