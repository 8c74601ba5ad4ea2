// ONNX's 8-, 4- and 2-bit element types: conversions to and from float, Cast's
// rules (Cast-19/21/23/24/25, CastLike), the element step of QuantizeLinear /
// DequantizeLinear (-21/23/25). Files pack the sub-byte types; the core
// unpacks them on load (core/onnx/sub_byte.h), so kernels see codes only.
//
// Loom stores these types unpacked, one element per byte (a "code"):
//   float8 e4m3fn / e4m3fnuz / e5m2 / e5m2fnuz / e8m0: the 8-bit encoding;
//   float4e2m1: the 4-bit encoding in the low nibble, high nibble 0;
//   int4 / int2: the value as a signed byte (-8..7 / -2..1);
//   uint4 / uint2: the value (0..15 / 0..3).
// Readers of a code look only at its low bit-width bits (sign-extended for
// int4 / int2), so a packed nibble can be passed as is.
//
// Sources: onnx/docs/Operators.md (Cast, QuantizeLinear, DequantizeLinear),
// docs/docsgen/source/technical/{float8,float4,int4,int2}.md, onnx.proto, and
// the reference implementation (onnx/reference/ops/op_cast.py,
// op_quantize_linear.py, op_dequantize_linear.py, onnx/numpy_helper.py, which
// since ONNX 1.19 delegate element conversions to ml_dtypes).
//
// Results assume IEEE float arithmetic without flush-to-zero: e8m0's code 0
// is 2^-127, a float subnormal.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace loom::reference::small {

// The enumerators carry their TensorProto.DataType numbers.
enum class Type : int32_t {
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUInt2 = 25,
  kInt2 = 26,
};

// Cast-24/25 `round_mode`, used only when the target is float8e8m0.
//   kUp:      toward +infinity on the magnitude (Cast's default, "up");
//   kDown:    toward zero on the magnitude ("down");
//   kNearest: nearest power of two, a tie (mantissa exactly 1.5) rounds up
//             ("nearest"; the spec's "ties round up", numpy_helper.to_float8e8m0).
enum class RoundMode { kNearest, kUp, kDown };

// The Type for an ONNX data type number, or nullopt when it is not one of these.
inline std::optional<Type> type_from_onnx(int32_t onnx_data_type) {
  if (onnx_data_type < 17 || onnx_data_type > 26) return std::nullopt;
  return static_cast<Type>(onnx_data_type);
}
inline int32_t onnx_data_type(Type t) { return static_cast<int32_t>(t); }

// "up" / "down" / "nearest" (the attribute's spellings), else nullopt.
inline std::optional<RoundMode> round_mode_from_string(std::string_view s) {
  if (s == "up") return RoundMode::kUp;
  if (s == "down") return RoundMode::kDown;
  if (s == "nearest") return RoundMode::kNearest;
  return std::nullopt;
}

// Bits per element in ONNX's storage: 8, 4 or 2.
inline int bit_width(Type t) {
  switch (t) {
    case Type::kUInt4: case Type::kInt4: case Type::kFloat4E2M1: return 4;
    case Type::kUInt2: case Type::kInt2: return 2;
    default: return 8;
  }
}
inline bool is_integer(Type t) {
  return t == Type::kUInt4 || t == Type::kInt4 || t == Type::kUInt2 || t == Type::kInt2;
}
inline bool is_signed_integer(Type t) { return t == Type::kInt4 || t == Type::kInt2; }
// The four float8 types Cast's and QuantizeLinear's `saturate` applies to.
inline bool is_float8(Type t) {
  return t == Type::kFloat8E4M3FN || t == Type::kFloat8E4M3FNUZ || t == Type::kFloat8E5M2 ||
         t == Type::kFloat8E5M2FNUZ;
}
// Value range of an integer type: int4 [-8, 7], uint4 [0, 15], int2 [-2, 1], uint2 [0, 3].
inline int int_min(Type t) { return is_signed_integer(t) ? -(1 << (bit_width(t) - 1)) : 0; }
inline int int_max(Type t) {
  return is_signed_integer(t) ? (1 << (bit_width(t) - 1)) - 1 : (1 << bit_width(t)) - 1;
}

namespace detail {

// Sign-magnitude layout of the float8 types and float4e2m1 (technical/float8.md,
// float4.md): value = (-1)^s * 2^(e - bias) * 1.m, or 2^(1 - bias) * 0.m when e = 0.
struct Format {
  int mbits;
  int ebits;
  int bias;
  double max;        // largest finite magnitude
  uint8_t max_code;  // its positive encoding
  bool fnuz;         // 0x80 is the only NaN; no negative zero, no infinity
};
inline Format format(Type t) {
  switch (t) {
    case Type::kFloat8E4M3FN: return {3, 4, 7, 448.0, 0x7E, false};
    case Type::kFloat8E4M3FNUZ: return {3, 4, 8, 240.0, 0x7F, true};
    case Type::kFloat8E5M2: return {2, 5, 15, 57344.0, 0x7B, false};
    case Type::kFloat8E5M2FNUZ: return {2, 5, 16, 57344.0, 0x7F, true};
    default: return {1, 2, 1, 6.0, 0x07, false};  // float4e2m1: no Inf, no NaN
  }
}

// Round half to even, exact for any double.
inline double round_half_even(double y) {
  double f = std::floor(y);
  const double d = y - f;
  if (d > 0.5 || (d == 0.5 && std::fmod(f, 2.0) != 0.0)) f += 1.0;
  return f;
}

inline float nan_with_sign(bool negative) {
  const float n = std::numeric_limits<float>::quiet_NaN();
  return negative ? -n : n;
}

// The code of an integer type for an already wrapped or clamped value.
inline uint8_t int_code(int v) { return static_cast<uint8_t>(static_cast<int8_t>(v)); }

// Wraps an integer-valued double modulo 2^bits into the type's range
// (Cast from fixed point: "discard higher bits and reinterpret").
inline uint8_t wrap(Type t, double integral) {
  const double m = std::ldexp(1.0, bit_width(t));
  double r = std::fmod(integral, m);
  if (r < 0) r += m;
  int v = static_cast<int>(r);
  if (is_signed_integer(t) && v > int_max(t)) v -= 1 << bit_width(t);
  return int_code(v);
}

inline uint8_t encode_e8m0(float v, bool saturate, RoundMode mode) {
  // Operators.md Cast, FLOAT8E8M0 table: NaN -> NaN; Inf -> E8M0_MAX when
  // saturating, else NaN; 0 and magnitudes outside [2^-127, 2^127] after
  // rounding -> E8M0_MIN / E8M0_MAX when saturating, else NaN. Negative
  // inputs are unspecified; the magnitude is used (as the reference does).
  // ONNX's reference (numpy_helper.to_float8e8m0) departs from the table for
  // Inf when saturating (NaN), for 0 when not saturating (2^-127), and rounds
  // float subnormal inputs on their bit fields; elsewhere the two agree.
  if (std::isnan(v)) return 0xFF;
  if (std::isinf(v)) return saturate ? 0xFE : 0xFF;
  const double a = std::fabs(static_cast<double>(v));
  if (a == 0.0) return saturate ? 0x00 : 0xFF;
  int e = 0;
  const double m = 2.0 * std::frexp(a, &e);  // a = m * 2^(e-1), m in [1, 2)
  int exp = e - 1;
  if ((mode == RoundMode::kUp && m > 1.0) || (mode == RoundMode::kNearest && m >= 1.5)) ++exp;
  if (exp > 127) return saturate ? 0xFE : 0xFF;
  if (exp < -127) return saturate ? 0x00 : 0xFF;
  return static_cast<uint8_t>(exp + 127);
}

// Infinity, or a finite value whose rounding lies past the largest finite.
inline uint8_t encode_overflow(Type t, const Format& f, bool negative, bool saturate) {
  const uint8_t sign = static_cast<uint8_t>(negative ? 1u << (f.mbits + f.ebits) : 0u);
  if (saturate || t == Type::kFloat4E2M1) return static_cast<uint8_t>(sign | f.max_code);
  if (f.fnuz) return 0x80;
  return static_cast<uint8_t>(sign | (t == Type::kFloat8E5M2 ? 0x7C : 0x7F));  // Inf, NaN
}

inline uint8_t encode_float(Type t, float v, bool saturate) {
  const Format f = format(t);
  const bool negative = std::signbit(v);
  const uint8_t sign = static_cast<uint8_t>(negative ? 1u << (f.mbits + f.ebits) : 0u);
  if (std::isnan(v)) {
    if (f.fnuz) return 0x80;
    if (t == Type::kFloat8E4M3FN) return static_cast<uint8_t>(sign | 0x7F);
    if (t == Type::kFloat8E5M2) return static_cast<uint8_t>(sign | 0x7E);
    // float4e2m1 has no NaN; ONNX's reference (ml_dtypes) gives the code 0b1000
    // for NaN, and flips its sign bit for a negative NaN (0b0000).
    return negative ? 0x0 : 0x8;
  }
  if (std::isinf(v)) return encode_overflow(t, f, negative, saturate);
  const uint8_t zero = f.fnuz ? 0 : sign;
  const double a = std::fabs(static_cast<double>(v));
  if (a == 0.0) return zero;
  // Round to nearest, ties to even, at the quantum of a's binade (that of the
  // subnormals below the smallest normal), the exponent left unbounded above.
  int e = 0;
  std::frexp(a, &e);
  int exp = e - 1;
  if (exp < 1 - f.bias) exp = 1 - f.bias;
  double n = round_half_even(std::ldexp(a, f.mbits - exp));
  if (n == 0.0) return zero;
  if (std::ldexp(n, exp - f.mbits) > f.max) return encode_overflow(t, f, negative, saturate);
  uint32_t mant = static_cast<uint32_t>(n);
  if (mant == (2u << f.mbits)) {  // rounded up into the next binade
    mant >>= 1;
    ++exp;
  }
  const uint32_t field = mant < (1u << f.mbits) ? 0u : static_cast<uint32_t>(exp + f.bias);
  return static_cast<uint8_t>(sign | (field << f.mbits) | (mant & ((1u << f.mbits) - 1)));
}

}  // namespace detail

// The integer value of an int4 / uint4 / int2 / uint2 code (low bits only).
inline int to_int(Type t, uint8_t code) {
  const int bits = bit_width(t);
  int v = code & ((1 << bits) - 1);
  if (is_signed_integer(t) && v > int_max(t)) v -= 1 << bits;
  return v;
}

// The exact value of a code; the integer value for integer types. NaN codes
// give a NaN with the code's sign bit (the FNUZ NaN 0x80 gives -NaN, like the
// reference); e5m2's 0x7C / 0xFC give +/-Inf; e8m0 code c gives 2^(c-127).
inline float to_float(Type t, uint8_t code) {
  if (is_integer(t)) return static_cast<float>(to_int(t, code));
  if (t == Type::kFloat8E8M0) {
    if (code == 0xFF) return std::numeric_limits<float>::quiet_NaN();
    return std::ldexp(1.0f, static_cast<int>(code) - 127);
  }
  const detail::Format f = detail::format(t);
  const int sign_bit = 1 << (f.mbits + f.ebits);
  code = static_cast<uint8_t>(code & ((sign_bit << 1) - 1));
  const bool negative = (code & sign_bit) != 0;
  const int mag = code & (sign_bit - 1);
  const int e = mag >> f.mbits;
  const int m = mag & ((1 << f.mbits) - 1);
  if (f.fnuz && code == 0x80) return detail::nan_with_sign(true);
  if (t == Type::kFloat8E4M3FN && mag == 0x7F) return detail::nan_with_sign(negative);
  if (t == Type::kFloat8E5M2 && e == 31) {
    if (m != 0) return detail::nan_with_sign(negative);
    return negative ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  }
  const double v = e == 0 ? std::ldexp(static_cast<double>(m), 1 - f.bias - f.mbits)
                          : std::ldexp(static_cast<double>((1 << f.mbits) + m), e - f.bias - f.mbits);
  return static_cast<float>(negative ? -v : v);
}

// Cast from a float value (a float16 / bfloat16 / double source is widened or
// rounded to float first; ONNX's reference also casts double through float).
// float8 (Operators.md Cast tables): round to nearest even; with `saturate`
//   +/-Inf and results beyond the largest finite give +/-largest finite;
//   without it: e5m2 -> +/-Inf; e4m3fn -> NaN keeping the sign (0x7F / 0xFF);
//   FNUZ -> NaN (0x80). NaN -> NaN (e4m3fn 0x7F, e5m2 0x7E, with the input's
//   sign; FNUZ 0x80). Zeros and underflows keep their sign, except in the FNUZ
//   types, which have no -0 (-> 0x00).
// float4e2m1 (technical/float4.md): round to nearest even, always saturating
//   to +/-6 (Inf too; `saturate` is ignored); NaN -> 0x8 (0x0 for a negative
//   NaN), the reference's and the backend test data's code (float4.md's table
//   says 6 instead).
// float8e8m0: see RoundMode and detail::encode_e8m0.
// int4 / uint4 / int2 / uint2 (technical/int4.md, int2.md: "rounding to the
//   nearest-integer (with ties to even) ... and truncating"): round half to
//   even, then wrap modulo 2^bits (8.0 -> int4 -8, -9.0 -> 7, -1.0 -> uint4 15).
//   NaN and +/-Inf (undefined in ONNX) give 0, as the reference does.
inline uint8_t from_float(Type t, float v, bool saturate = true, RoundMode mode = RoundMode::kUp) {
  if (is_integer(t)) {
    if (!std::isfinite(v)) return 0;
    return detail::wrap(t, detail::round_half_even(static_cast<double>(v)));
  }
  if (t == Type::kFloat8E8M0) return detail::encode_e8m0(v, saturate, mode);
  return detail::encode_float(t, v, saturate);
}

// Cast from an integer (int8..int64, uint8..uint32, bool). Integer targets
// keep the low bits (Cast: "discard higher bits and reinterpret", 200 -> int4
// -8); float targets go through float, as the reference (ml_dtypes) does. A
// uint64 above INT64_MAX may come in reinterpreted for an integer target (the
// low bits are the same); for a float target use from_float(float(u)).
inline uint8_t from_int(Type t, int64_t v, bool saturate = true, RoundMode mode = RoundMode::kUp) {
  if (is_integer(t)) {
    const uint64_t low = static_cast<uint64_t>(v) & ((1u << bit_width(t)) - 1);
    return detail::int_code(to_int(t, static_cast<uint8_t>(low)));
  }
  return from_float(t, static_cast<float>(v), saturate, mode);
}

// QuantizeLinear's element step, y = saturate(round(x / y_scale) + y_zero_point),
// given q = x / y_scale already computed in the op's precision (`precision`
// attribute, else y_scale's type).
// Integer types: q rounded half to even, plus the zero point, clamped to the
//   type's range (int4 [-8, 7], uint4 [0, 15], int2 [-2, 1], uint2 [0, 3]);
//   +/-Inf clamp; NaN (undefined in ONNX) gives the zero point.
// float8 / float4e2m1: the formula "remains the same for consistency": q plus
//   the zero point's value in float (usually 0; -0 + 0 is +0), then
//   from_float with `saturate` (ignored by float4e2m1, which always
//   saturates). ONNX's reference adds the zero point for float4e2m1 but skips
//   it for float8, so the two differ only for a nonzero float8 zero point or a
//   -0 input with a float8 zero point of 0. float8e8m0 is not an output type.
inline uint8_t quantize(Type t, float q, uint8_t zero_point_code, bool saturate = true) {
  if (is_integer(t)) {
    const int zp = to_int(t, zero_point_code);
    if (std::isnan(q)) return detail::int_code(zp);
    double y = detail::round_half_even(static_cast<double>(q)) + zp;
    if (y < int_min(t)) y = int_min(t);
    if (y > int_max(t)) y = int_max(t);
    return detail::int_code(static_cast<int>(y));
  }
  return from_float(t, q + to_float(t, zero_point_code), saturate);
}

// DequantizeLinear's element step, y = (x - x_zero_point) * x_scale, computed
// in float (the caller rounds to a float16 / bfloat16 output). For the float
// types the zero point is usually 0 (the reference rejects a nonzero float8
// one and ignores float4e2m1's); x - 0 keeps -0, NaN and Inf.
inline float dequantize(Type t, uint8_t code, uint8_t zero_point_code, float scale) {
  return (to_float(t, code) - to_float(t, zero_point_code)) * scale;
}

// ---- Storage in TensorProto ------------------------------------------------
}  // namespace loom::reference::small
