// Loom plugin SDK: element types and their C++ counterparts.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "loom/abi/base.h"

namespace loom::sdk {

// IEEE half precision, stored as its bit pattern.
struct Float16 {
  uint16_t bits = 0;
  Float16() = default;
  explicit Float16(float f) : bits(from_float(f)) {}
  operator float() const { return to_float(bits); }

  static float to_float(uint16_t h) {
    const uint32_t sign = (h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ffu;
    uint32_t out;
    if (exp == 0) {
      if (mant == 0) {
        out = sign;
      } else {  // subnormal: normalise
        exp = 127 - 15 + 1;
        while ((mant & 0x400u) == 0) {
          mant <<= 1;
          --exp;
        }
        mant &= 0x3ffu;
        out = sign | (exp << 23) | (mant << 13);
      }
    } else if (exp == 0x1f) {
      out = sign | 0x7f800000u | (mant << 13);
    } else {
      out = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &out, 4);
    return f;
  }
  // Round to nearest even.
  static uint16_t from_float(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (x > 0x7f800000u ? 0x200u : 0));
    if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow
    if (x < 0x38800000u) {  // subnormal or zero in half
      if (x < 0x33000000u) return static_cast<uint16_t>(sign);
      const uint32_t e = x >> 23;
      uint32_t m = (x & 0x7fffffu) | 0x800000u;
      const uint32_t shift = 126 - e;  // 14 + (113 - e) - 1 ... see derivation
      uint32_t half = m >> (shift + 0);
      const uint32_t rem = m & ((1u << shift) - 1);
      const uint32_t mid = 1u << (shift - 1);
      if (rem > mid || (rem == mid && (half & 1))) ++half;
      return static_cast<uint16_t>(sign | half);
    }
    uint32_t h = ((x - 0x38000000u) >> 13);
    const uint32_t rem = x & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
};

// bfloat16, stored as its bit pattern (round to nearest even).
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) {
      bits = static_cast<uint16_t>((x >> 16) | 0x40u);
    } else {
      const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
      bits = static_cast<uint16_t>((x + rounding) >> 16);
    }
  }
  operator float() const {
    const uint32_t x = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
  }
};

template <class T> struct DTypeOf;
#define LOOM_SDK_DTYPE(T, V) \
  template <> struct DTypeOf<T> { static constexpr int32_t value = V; };
LOOM_SDK_DTYPE(float, LOOM_DTYPE_FLOAT)
LOOM_SDK_DTYPE(double, LOOM_DTYPE_DOUBLE)
LOOM_SDK_DTYPE(int8_t, LOOM_DTYPE_INT8)
LOOM_SDK_DTYPE(int16_t, LOOM_DTYPE_INT16)
LOOM_SDK_DTYPE(int32_t, LOOM_DTYPE_INT32)
LOOM_SDK_DTYPE(int64_t, LOOM_DTYPE_INT64)
LOOM_SDK_DTYPE(uint8_t, LOOM_DTYPE_UINT8)
LOOM_SDK_DTYPE(uint16_t, LOOM_DTYPE_UINT16)
LOOM_SDK_DTYPE(uint32_t, LOOM_DTYPE_UINT32)
LOOM_SDK_DTYPE(uint64_t, LOOM_DTYPE_UINT64)
LOOM_SDK_DTYPE(bool, LOOM_DTYPE_BOOL)
LOOM_SDK_DTYPE(Float16, LOOM_DTYPE_FLOAT16)
LOOM_SDK_DTYPE(BFloat16, LOOM_DTYPE_BFLOAT16)
#undef LOOM_SDK_DTYPE

// Bytes per element; 0 for STRING and unknown types.
inline size_t dtype_size(int32_t dtype) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT: case LOOM_DTYPE_INT32: case LOOM_DTYPE_UINT32: return 4;
    case LOOM_DTYPE_DOUBLE: case LOOM_DTYPE_INT64: case LOOM_DTYPE_UINT64:
    case LOOM_DTYPE_COMPLEX64: return 8;
    case LOOM_DTYPE_COMPLEX128: return 16;
    case LOOM_DTYPE_INT16: case LOOM_DTYPE_UINT16: case LOOM_DTYPE_FLOAT16:
    case LOOM_DTYPE_BFLOAT16: return 2;
    case LOOM_DTYPE_INT8: case LOOM_DTYPE_UINT8: case LOOM_DTYPE_BOOL: return 1;
    case LOOM_DTYPE_FLOAT8E4M3FN: case LOOM_DTYPE_FLOAT8E4M3FNUZ: case LOOM_DTYPE_FLOAT8E5M2:
    case LOOM_DTYPE_FLOAT8E5M2FNUZ: case LOOM_DTYPE_UINT4: case LOOM_DTYPE_INT4: case LOOM_DTYPE_FLOAT4E2M1:
    case LOOM_DTYPE_FLOAT8E8M0: case LOOM_DTYPE_UINT2: case LOOM_DTYPE_INT2: return 1;  // one element per byte
    default: return 0;
  }
}

inline std::string dtype_name(int32_t dtype) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT: return "float";
    case LOOM_DTYPE_UINT8: return "uint8";
    case LOOM_DTYPE_INT8: return "int8";
    case LOOM_DTYPE_UINT16: return "uint16";
    case LOOM_DTYPE_INT16: return "int16";
    case LOOM_DTYPE_INT32: return "int32";
    case LOOM_DTYPE_INT64: return "int64";
    case LOOM_DTYPE_STRING: return "string";
    case LOOM_DTYPE_BOOL: return "bool";
    case LOOM_DTYPE_FLOAT16: return "float16";
    case LOOM_DTYPE_DOUBLE: return "double";
    case LOOM_DTYPE_UINT32: return "uint32";
    case LOOM_DTYPE_UINT64: return "uint64";
    case LOOM_DTYPE_COMPLEX64: return "complex64";
    case LOOM_DTYPE_COMPLEX128: return "complex128";
    case LOOM_DTYPE_BFLOAT16: return "bfloat16";
    case LOOM_DTYPE_FLOAT8E4M3FN: return "float8e4m3fn";
    case LOOM_DTYPE_FLOAT8E4M3FNUZ: return "float8e4m3fnuz";
    case LOOM_DTYPE_FLOAT8E5M2: return "float8e5m2";
    case LOOM_DTYPE_FLOAT8E5M2FNUZ: return "float8e5m2fnuz";
    case LOOM_DTYPE_UINT4: return "uint4";
    case LOOM_DTYPE_INT4: return "int4";
    case LOOM_DTYPE_FLOAT4E2M1: return "float4e2m1";
    case LOOM_DTYPE_FLOAT8E8M0: return "float8e8m0";
    case LOOM_DTYPE_UINT2: return "uint2";
    case LOOM_DTYPE_INT2: return "int2";
    default: return "undefined(" + std::to_string(dtype) + ")";
  }
}

}  // namespace loom::sdk
