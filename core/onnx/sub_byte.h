// ONNX's file layout of the sub-byte element types. In memory Loom keeps one
// element per byte (loom/tensor.h); TensorProto packs them: int4, uint4 and
// float4e2m1 two per byte, int2 and uint2 four per byte, the first element
// in the lowest bits, the last byte padded with zeros. In int32_data each
// int32 holds one such packed byte.
#pragma once

#include <cstdint>
#include <string>

#include "loom/tensor.h"

namespace loom::onnxio {

// Bits per element in files: 4 or 2 for the sub-byte types, 0 for others.
int packed_bits(DType t);

// Bytes that `count` packed elements of `t` take (ceil(count * bits / 8));
// `count` must be non-negative and `t` a sub-byte type.
int64_t packed_bytes(DType t, int64_t count);

// Unpacks `count` elements of `t` from `packed` (packed_bytes(t, count)
// bytes) into `out`, one per byte: int4 and int2 sign-extended to int8,
// the others zero-extended.
void unpack_sub_byte(DType t, const uint8_t* packed, int64_t count, uint8_t* out);

// Packs `count` one-byte elements of `t` (only their low bits count).
std::string pack_sub_byte(DType t, const uint8_t* values, int64_t count);

}  // namespace loom::onnxio
