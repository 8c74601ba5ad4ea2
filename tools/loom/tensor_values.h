// Making and showing values in the tools: random tensors for `loom run` and
// short previews of outputs.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "loom/tensor.h"
#include "loom/value.h"

namespace loom::tools {

// A tensor of `dtype` and `dims` with random values: floats uniform in
// [-1, 1), integers in [0, 10), booleans either way, strings "s<i>".
Expected<Tensor> random_tensor(DType dtype, const Dims& dims, std::mt19937_64& rng);

// "[v0, v1, ...]" with at most `max_values` values.
std::string preview_values(const Tensor& t, size_t max_values = 8);

// One-line summary of a value of declared kind `declared`, e.g.
// "float [3,4]", "optional float [3]", "optional, empty",
// "sequence of 2 float: [2,3], [4]". With `with_values`, tensors are followed
// by a preview_values() and a sequence by one indented line per element
// (at most `max_elements`).
std::string describe_value(const Value& v, ValueKind declared, bool with_values, size_t max_elements = 8);

// IEEE half and bfloat16 bit patterns <-> float (round to nearest even).
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);
uint16_t float_to_bfloat16(float f);
float bfloat16_to_float(uint16_t b);

}  // namespace loom::tools
