// Making and showing tensor values in the tools: random inputs for
// `loom run` and short previews of outputs.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "loom/tensor.h"

namespace loom::tools {

// A tensor of `dtype` and `dims` with random values: floats uniform in
// [-1, 1), integers in [0, 10), booleans either way, strings "s<i>".
Expected<Tensor> random_tensor(DType dtype, const Dims& dims, std::mt19937_64& rng);

// "[v0, v1, ...]" with at most `max_values` values.
std::string preview_values(const Tensor& t, size_t max_values = 8);

// IEEE half and bfloat16 bit patterns <-> float (round to nearest even).
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);
uint16_t float_to_bfloat16(float f);
float bfloat16_to_float(uint16_t b);

}  // namespace loom::tools
