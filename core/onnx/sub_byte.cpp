#include "onnx/sub_byte.h"

namespace loom::onnxio {

int packed_bits(DType t) {
  switch (t) {
    case DType::kInt4: case DType::kUint4: case DType::kFloat4E2M1: return 4;
    case DType::kInt2: case DType::kUint2: return 2;
    default: return 0;
  }
}

int64_t packed_bytes(DType t, int64_t count) {
  const int64_t per_byte = 8 / packed_bits(t);
  return count / per_byte + (count % per_byte != 0 ? 1 : 0);
}

void unpack_sub_byte(DType t, const uint8_t* packed, int64_t count, uint8_t* out) {
  const int bits = packed_bits(t);
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  const bool is_signed = t == DType::kInt4 || t == DType::kInt2;
  for (int64_t i = 0; i < count; ++i) {
    uint8_t v = static_cast<uint8_t>(packed[i / per_byte] >> ((i % per_byte) * bits)) & mask;
    if (is_signed && (v >> (bits - 1)) != 0) v = static_cast<uint8_t>(v | ~mask);  // sign-extend
    out[i] = v;
  }
}

std::string pack_sub_byte(DType t, const uint8_t* values, int64_t count) {
  const int bits = packed_bits(t);
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  std::string out(static_cast<size_t>(packed_bytes(t, count)), '\0');
  for (int64_t i = 0; i < count; ++i)
    out[static_cast<size_t>(i / per_byte)] =
        static_cast<char>(static_cast<uint8_t>(out[static_cast<size_t>(i / per_byte)]) |
                          ((values[i] & mask) << ((i % per_byte) * bits)));
  return out;
}

}  // namespace loom::onnxio
