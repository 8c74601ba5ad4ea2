// Datatype names as the protocol's "Tensor Data Types" table spells them.
#include "datatype.h"

#include <cmath>
#include <cstring>
#include <utility>

namespace loom::serve {
namespace {

constexpr std::pair<DType, const char*> kNames[] = {
    {DType::kBool, "BOOL"},     {DType::kUint8, "UINT8"},   {DType::kUint16, "UINT16"},
    {DType::kUint32, "UINT32"}, {DType::kUint64, "UINT64"}, {DType::kInt8, "INT8"},
    {DType::kInt16, "INT16"},   {DType::kInt32, "INT32"},   {DType::kInt64, "INT64"},
    {DType::kFloat16, "FP16"},  {DType::kFloat, "FP32"},    {DType::kDouble, "FP64"},
    {DType::kBFloat16, "BF16"}, {DType::kString, "BYTES"},
};

}  // namespace

std::string protocol_datatype(DType dtype) {
  for (const auto& [t, name] : kNames)
    if (t == dtype) return name;
  return "";
}

std::optional<DType> dtype_from_protocol(const std::string& name) {
  for (const auto& [t, n] : kNames)
    if (name == n) return t;
  return std::nullopt;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t float_to_half(float value) {
  uint32_t x;
  std::memcpy(&x, &value, sizeof x);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u);  // NaN / inf
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds past the largest half: inf
  if (abs < 0x38800000u) {                          // half subnormal or zero
    // Scale into the subnormal range with float arithmetic (exact rounding).
    float f;
    std::memcpy(&f, &abs, sizeof f);
    return sign | static_cast<uint16_t>(std::nearbyint(f * 16777216.0f));  // 2^24
  }
  const uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);  // to nearest even
  return sign | static_cast<uint16_t>((rounded - (112u << 23)) >> 13);
}

float bfloat16_to_float(uint16_t bits) {
  const uint32_t x = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}

uint16_t float_to_bfloat16(float value) {
  uint32_t x;
  std::memcpy(&x, &value, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace loom::serve
