// The Open Inference Protocol's (KServe v2) tensor datatype names and their
// mapping to Loom's element types; float16 / bfloat16 conversions for JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "loom/tensor.h"

namespace loom::serve {

// "BOOL", "UINT8" ... "FP16", "FP32", "BF16", "BYTES" for the types the
// protocol names; empty for Loom types it has no name for (float8, int4, ...).
std::string protocol_datatype(DType dtype);
// The Loom type of a protocol datatype name; nullopt for unknown names.
std::optional<DType> dtype_from_protocol(const std::string& name);

// IEEE half and bfloat16 bits <-> float, rounding to nearest even.
float half_to_float(uint16_t bits);
uint16_t float_to_half(float value);
float bfloat16_to_float(uint16_t bits);
uint16_t float_to_bfloat16(float value);

}  // namespace loom::serve
