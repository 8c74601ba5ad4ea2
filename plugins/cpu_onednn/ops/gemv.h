// Single-row matrix products (y = x W + bias with x of one row and W a large
// constant) as a host step (host_kernels/gemv.h). Measurements:
// bench/results/2026-11-28-cpu-onednn-host-kernels.md.
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
