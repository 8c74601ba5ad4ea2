// The element conversions of ONNX's 8-, 4- and 2-bit types
// (plugins/reference/common/small_types.h) against values taken from ONNX's
// spec (Operators.md Cast / QuantizeLinear / DequantizeLinear tables,
// technical/float8.md, float4.md, int4.md, int2.md, onnx.proto) and from the
// ONNX 1.23 backend test data (test_cast_*, test_quantizelinear_*, ...).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "reference/common/small_types.h"

namespace loom {
namespace {

using namespace reference::small;  // NOLINT(build/namespaces)

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
const Type kFloat8[] = {Type::kFloat8E4M3FN, Type::kFloat8E4M3FNUZ, Type::kFloat8E5M2, Type::kFloat8E5M2FNUZ};
const Type kInts[] = {Type::kInt4, Type::kUInt4, Type::kInt2, Type::kUInt2};

// float8.md: value = (-1)^S 2^(E - bias) (1 + M / 2^mbits), or 2^(1 - bias) M / 2^mbits for E = 0.
struct Layout {
  Type type;
  int mbits;
  int bias;
};
const Layout kLayouts[] = {{Type::kFloat8E4M3FN, 3, 7},
                           {Type::kFloat8E4M3FNUZ, 3, 8},
                           {Type::kFloat8E5M2, 2, 15},
                           {Type::kFloat8E5M2FNUZ, 2, 16}};

bool spec_is_nan(Type t, int c) {
  switch (t) {
    case Type::kFloat8E4M3FN: return (c & 0x7F) == 0x7F;
    case Type::kFloat8E5M2: return (c & 0x7F) > 0x7C;
    default: return c == 0x80;  // FNUZ
  }
}

double spec_value(const Layout& l, int c) {
  const int s = c >> 7, e = (c & 0x7F) >> l.mbits, m = c & ((1 << l.mbits) - 1);
  const double frac = m / std::pow(2.0, l.mbits);
  const double mag = e == 0 ? std::pow(2.0, 1 - l.bias) * frac : std::pow(2.0, e - l.bias) * (1 + frac);
  return s ? -mag : mag;
}

TEST(SmallTypes, TypeNumbersAndWidths) {
  EXPECT_EQ(type_from_onnx(17), Type::kFloat8E4M3FN);
  EXPECT_EQ(type_from_onnx(21), Type::kUInt4);
  EXPECT_EQ(type_from_onnx(22), Type::kInt4);
  EXPECT_EQ(type_from_onnx(23), Type::kFloat4E2M1);
  EXPECT_EQ(type_from_onnx(24), Type::kFloat8E8M0);
  EXPECT_EQ(type_from_onnx(25), Type::kUInt2);
  EXPECT_EQ(type_from_onnx(26), Type::kInt2);
  EXPECT_FALSE(type_from_onnx(1).has_value());
  EXPECT_FALSE(type_from_onnx(16).has_value());
  EXPECT_FALSE(type_from_onnx(27).has_value());
  EXPECT_EQ(bit_width(Type::kFloat8E8M0), 8);
  EXPECT_EQ(bit_width(Type::kFloat4E2M1), 4);
  EXPECT_EQ(bit_width(Type::kUInt2), 2);
  EXPECT_EQ(round_mode_from_string("nearest"), RoundMode::kNearest);
  EXPECT_EQ(round_mode_from_string("up"), RoundMode::kUp);
  EXPECT_EQ(round_mode_from_string("down"), RoundMode::kDown);
  EXPECT_FALSE(round_mode_from_string("nearest_even").has_value());
}

TEST(SmallTypes, Float8Anchors) {
  EXPECT_EQ(to_float(Type::kFloat8E4M3FN, 0x7E), 448.0f);
  EXPECT_EQ(to_float(Type::kFloat8E4M3FN, 0xFE), -448.0f);
  EXPECT_EQ(to_float(Type::kFloat8E4M3FN, 0x38), 1.0f);
  EXPECT_EQ(to_float(Type::kFloat8E4M3FN, 0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(to_float(Type::kFloat8E4M3FN, 0x08), std::ldexp(1.0f, -6));
  EXPECT_TRUE(std::signbit(to_float(Type::kFloat8E4M3FN, 0x80)));
  EXPECT_TRUE(std::isnan(to_float(Type::kFloat8E4M3FN, 0x7F)));
  EXPECT_TRUE(std::isnan(to_float(Type::kFloat8E4M3FN, 0xFF)));
  EXPECT_EQ(to_float(Type::kFloat8E4M3FNUZ, 0x7F), 240.0f);
  EXPECT_EQ(to_float(Type::kFloat8E4M3FNUZ, 0xFF), -240.0f);
  EXPECT_EQ(to_float(Type::kFloat8E4M3FNUZ, 0x40), 1.0f);
  EXPECT_EQ(to_float(Type::kFloat8E4M3FNUZ, 0x01), std::ldexp(1.0f, -10));
  EXPECT_TRUE(std::isnan(to_float(Type::kFloat8E4M3FNUZ, 0x80)));
  EXPECT_EQ(to_float(Type::kFloat8E5M2, 0x7B), 57344.0f);
  EXPECT_EQ(to_float(Type::kFloat8E5M2, 0x3C), 1.0f);
  EXPECT_EQ(to_float(Type::kFloat8E5M2, 0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(to_float(Type::kFloat8E5M2, 0x7C), kInf);
  EXPECT_EQ(to_float(Type::kFloat8E5M2, 0xFC), -kInf);
  for (int c : {0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF}) EXPECT_TRUE(std::isnan(to_float(Type::kFloat8E5M2, uint8_t(c))));
  EXPECT_EQ(to_float(Type::kFloat8E5M2FNUZ, 0x7F), 57344.0f);
  EXPECT_EQ(to_float(Type::kFloat8E5M2FNUZ, 0x40), 1.0f);
  EXPECT_EQ(to_float(Type::kFloat8E5M2FNUZ, 0x01), std::ldexp(1.0f, -17));
  EXPECT_TRUE(std::isnan(to_float(Type::kFloat8E5M2FNUZ, 0x80)));
}

TEST(SmallTypes, Float8EveryCodeMatchesTheSpecFormula) {
  for (const Layout& l : kLayouts) {
    for (int c = 0; c < 256; ++c) {
      const float v = to_float(l.type, uint8_t(c));
      if (spec_is_nan(l.type, c)) {
        EXPECT_TRUE(std::isnan(v)) << int(l.type) << " code " << c;
      } else if (l.type == Type::kFloat8E5M2 && (c & 0x7F) == 0x7C) {
        EXPECT_EQ(v, c & 0x80 ? -kInf : kInf);
      } else {
        EXPECT_EQ(double(v), spec_value(l, c)) << int(l.type) << " code " << c;
      }
    }
  }
}

TEST(SmallTypes, Float4EveryCode) {
  // float4.md: 000..111 = 0, 0.5, 1, 1.5, 2, 3, 4, 6; bit 3 the sign.
  const float mag[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int c = 0; c < 16; ++c) {
    const float v = to_float(Type::kFloat4E2M1, uint8_t(c));
    EXPECT_EQ(v, c & 8 ? -mag[c & 7] : mag[c & 7]) << c;
    EXPECT_EQ(std::signbit(v), (c & 8) != 0) << c;
    EXPECT_EQ(from_float(Type::kFloat4E2M1, v), c) << c;
  }
}

TEST(SmallTypes, E8M0EveryCode) {
  for (int c = 0; c < 255; ++c) {
    EXPECT_EQ(double(to_float(Type::kFloat8E8M0, uint8_t(c))), std::pow(2.0, c - 127)) << c;
    for (bool sat : {true, false})
      for (RoundMode m : {RoundMode::kNearest, RoundMode::kUp, RoundMode::kDown})
        EXPECT_EQ(from_float(Type::kFloat8E8M0, std::ldexp(1.0f, c - 127), sat, m), c) << c;
  }
  EXPECT_TRUE(std::isnan(to_float(Type::kFloat8E8M0, 0xFF)));
}

TEST(SmallTypes, Float8RoundTripEveryCode) {
  for (Type t : kFloat8) {
    for (int c = 0; c < 256; ++c) {
      const float v = to_float(t, uint8_t(c));
      if (std::isnan(v)) continue;
      EXPECT_EQ(from_float(t, v, false), c) << int(t) << " code " << c;
      if (!std::isinf(v)) {
        EXPECT_EQ(from_float(t, v, true), c) << int(t) << " code " << c;
      }
    }
  }
  EXPECT_EQ(from_float(Type::kFloat8E5M2, kInf, true), 0x7B);  // Inf saturates
}

TEST(SmallTypes, Float8TiesToEven) {
  // e4m3fn around 1: 1.0 (0x38), 1.125 (0x39), 1.25 (0x3A).
  EXPECT_EQ(from_float(Type::kFloat8E4M3FN, 1.0625f), 0x38);
  EXPECT_EQ(from_float(Type::kFloat8E4M3FN, std::nextafter(1.0625f, 2.0f)), 0x39);
  EXPECT_EQ(from_float(Type::kFloat8E4M3FN, 1.1875f), 0x3A);
  EXPECT_EQ(from_float(Type::kFloat8E4M3FN, -1.1875f), 0xBA);
  EXPECT_EQ(from_float(Type::kFloat8E4M3FN, std::nextafter(1.1875f, 0.0f)), 0x39);
  // Subnormals: 2^-9 steps; half a step rounds to (even) zero, 1.5 steps to 2.
  EXPECT_EQ(from_float(Type::kFloat8E4M3FN, std::ldexp(1.0f, -10)), 0x00);
  EXPECT_EQ(from_float(Type::kFloat8E4M3FN, std::ldexp(3.0f, -10)), 0x02);
  EXPECT_EQ(from_float(Type::kFloat8E4M3FN, std::ldexp(1.0f, -10) * 1.01f), 0x01);
  // Largest subnormal 7 * 2^-9 and smallest normal 2^-6 = 8 * 2^-9: the tie goes to 8.
  EXPECT_EQ(from_float(Type::kFloat8E4M3FN, std::ldexp(7.5f, -9)), 0x08);
  // e5m2: 1.0 (0x3C), 1.25 (0x3D), 1.5 (0x3E).
  EXPECT_EQ(from_float(Type::kFloat8E5M2, 1.125f), 0x3C);
  EXPECT_EQ(from_float(Type::kFloat8E5M2, 1.375f), 0x3E);
  EXPECT_EQ(from_float(Type::kFloat8E5M2FNUZ, 1.375f), 0x42);
  EXPECT_EQ(from_float(Type::kFloat8E4M3FNUZ, 1.1875f), 0x42);
  // A float16 input widened to float: 0.47892547 in e4m3fn is 0x2F (backend data).
  EXPECT_EQ(from_float(Type::kFloat8E4M3FN, 0.47892547f), 0x2F);
}

TEST(SmallTypes, Float8SaturateEdges) {
  // Saturate on: beyond the largest finite and +/-Inf clamp; off: Operators.md's second table.
  struct Case {
    Type t;
    float v;
    int sat, nosat;
  };
  const Case cases[] = {
      {Type::kFloat8E4M3FN, 464.0f, 0x7E, 0x7E},  // tie 448 / 480: even is 448
      {Type::kFloat8E4M3FN, std::nextafter(464.0f, 1e9f), 0x7E, 0x7F},
      {Type::kFloat8E4M3FN, -1e6f, 0xFE, 0xFF},
      {Type::kFloat8E4M3FN, kInf, 0x7E, 0x7F},
      {Type::kFloat8E4M3FN, -kInf, 0xFE, 0xFF},
      {Type::kFloat8E4M3FNUZ, std::nextafter(248.0f, 0.0f), 0x7F, 0x7F},
      {Type::kFloat8E4M3FNUZ, 248.0f, 0x7F, 0x80},  // tie 240 / 256: even is 256, past the max
      {Type::kFloat8E4M3FNUZ, -kInf, 0xFF, 0x80},
      {Type::kFloat8E5M2, std::nextafter(61440.0f, 0.0f), 0x7B, 0x7B},
      {Type::kFloat8E5M2, 61440.0f, 0x7B, 0x7C},  // tie 57344 / 65536: even is 65536 = Inf
      {Type::kFloat8E5M2, -1e6f, 0xFB, 0xFC},
      {Type::kFloat8E5M2, kInf, 0x7B, 0x7C},
      {Type::kFloat8E5M2FNUZ, 61440.0f, 0x7F, 0x80},
      {Type::kFloat8E5M2FNUZ, -kInf, 0xFF, 0x80},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(from_float(c.t, c.v, true), c.sat) << int(c.t) << " " << c.v;
    EXPECT_EQ(from_float(c.t, c.v, false), c.nosat) << int(c.t) << " " << c.v;
  }
}

TEST(SmallTypes, NaNsAndZeros) {
  for (bool sat : {true, false}) {
    EXPECT_EQ(from_float(Type::kFloat8E4M3FN, kNaN, sat), 0x7F);
    EXPECT_EQ(from_float(Type::kFloat8E4M3FN, -kNaN, sat), 0xFF);
    EXPECT_EQ(from_float(Type::kFloat8E5M2, kNaN, sat), 0x7E);
    EXPECT_EQ(from_float(Type::kFloat8E5M2, -kNaN, sat), 0xFE);
    EXPECT_EQ(from_float(Type::kFloat8E4M3FNUZ, -kNaN, sat), 0x80);
    EXPECT_EQ(from_float(Type::kFloat8E5M2FNUZ, kNaN, sat), 0x80);
    // Negative zero and negative underflow: -0 where the type has it, +0 in FNUZ.
    EXPECT_EQ(from_float(Type::kFloat8E4M3FN, -0.0f, sat), 0x80);
    EXPECT_EQ(from_float(Type::kFloat8E5M2, -1e-7f, sat), 0x80);
    EXPECT_EQ(from_float(Type::kFloat8E4M3FNUZ, -0.0f, sat), 0x00);
    EXPECT_EQ(from_float(Type::kFloat8E4M3FNUZ, -1e-7f, sat), 0x00);
    EXPECT_EQ(from_float(Type::kFloat8E5M2FNUZ, -0.0f, sat), 0x00);
    EXPECT_EQ(from_float(Type::kFloat8E5M2FNUZ, -1e-9f, sat), 0x00);
    EXPECT_EQ(from_float(Type::kFloat4E2M1, -0.0f, sat), 0x8);
  }
  // float4e2m1 has no NaN: the reference (and the backend data) give 0b1000.
  EXPECT_EQ(from_float(Type::kFloat4E2M1, kNaN), 0x8);
  EXPECT_TRUE(std::signbit(to_float(Type::kFloat8E4M3FNUZ, 0x80)));
}

TEST(SmallTypes, Float4Rounding) {
  struct Case {
    float v;
    int code;
  };
  // float4.md: round to nearest even inside [-6, 6], +/-6 beyond and for +/-Inf.
  const Case cases[] = {{0.25f, 0x0}, {0.26f, 0x1}, {0.75f, 0x2},  {1.25f, 0x2}, {1.75f, 0x4},
                        {2.5f, 0x4},  {3.5f, 0x6},  {5.0f, 0x6},   {5.01f, 0x7}, {7.0f, 0x7},
                        {1e6f, 0x7},  {kInf, 0x7},  {-kInf, 0xF},  {-8.0f, 0xF}, {-3.5f, 0xE},
                        {0.48f, 0x1}, {1.05f, 0x2}, {1e-7f, 0x0},  {-0.01f, 0x8}};
  for (const Case& c : cases) {
    EXPECT_EQ(from_float(Type::kFloat4E2M1, c.v, true), c.code) << c.v;
    EXPECT_EQ(from_float(Type::kFloat4E2M1, c.v, false), c.code) << c.v;  // saturate does not apply
  }
}

TEST(SmallTypes, E8M0RoundModes) {
  using R = RoundMode;
  struct Case {
    float v;
    int nearest, up, down;
  };
  const Case cases[] = {
      {1.5f, 0x80, 0x80, 0x7F},   // the tie rounds up under "nearest"
      {std::nextafter(1.5f, 0.0f), 0x7F, 0x80, 0x7F},
      {3.0f, 0x81, 0x81, 0x80},
      {0.124f, 0x7C, 0x7C, 0x7B},  // backend data: 0.124 "up" -> 2^-3
      {1.1f, 0x7F, 0x80, 0x7F},
      {-4.0f, 0x81, 0x81, 0x81},   // negative: unspecified, the magnitude is used
  };
  for (const Case& c : cases) {
    EXPECT_EQ(from_float(Type::kFloat8E8M0, c.v, true, R::kNearest), c.nearest) << c.v;
    EXPECT_EQ(from_float(Type::kFloat8E8M0, c.v, true, R::kUp), c.up) << c.v;
    EXPECT_EQ(from_float(Type::kFloat8E8M0, c.v, true, R::kDown), c.down) << c.v;
  }
  // Operators.md's FLOAT8E8M0 table: saturate -> E8M0_MAX / E8M0_MIN, else NaN.
  const float big = std::ldexp(1.75f, 127);
  EXPECT_EQ(from_float(Type::kFloat8E8M0, big, true, R::kNearest), 0xFE);
  EXPECT_EQ(from_float(Type::kFloat8E8M0, big, false, R::kNearest), 0xFF);
  EXPECT_EQ(from_float(Type::kFloat8E8M0, big, false, R::kDown), 0xFE);
  EXPECT_EQ(from_float(Type::kFloat8E8M0, kInf, true, R::kUp), 0xFE);
  EXPECT_EQ(from_float(Type::kFloat8E8M0, kInf, false, R::kNearest), 0xFF);
  EXPECT_EQ(from_float(Type::kFloat8E8M0, kNaN, true, R::kUp), 0xFF);
  EXPECT_EQ(from_float(Type::kFloat8E8M0, 0.0f, true, R::kUp), 0x00);
  EXPECT_EQ(from_float(Type::kFloat8E8M0, 0.0f, false, R::kNearest), 0xFF);
  const float tiny = std::ldexp(1.0f, -130);
  EXPECT_EQ(from_float(Type::kFloat8E8M0, tiny, true, R::kDown), 0x00);
  EXPECT_EQ(from_float(Type::kFloat8E8M0, tiny, false, R::kDown), 0xFF);
  EXPECT_EQ(from_float(Type::kFloat8E8M0, tiny, false, R::kUp), 0xFF);  // 2^-130 up is 2^-130
  EXPECT_EQ(from_float(Type::kFloat8E8M0, std::ldexp(1.5f, -128), false, R::kNearest), 0x00);
}

TEST(SmallTypes, IntCastFromFloatRoundsHalfEvenAndWraps) {
  // Backend test_cast_FLOAT_to_INT4 / UINT4: -9..15 wrap modulo 16.
  for (int v = -9; v <= 15; ++v) {
    const int wrapped_s = ((v + 8) % 16 + 16) % 16 - 8;
    EXPECT_EQ(to_int(Type::kInt4, from_float(Type::kInt4, float(v))), wrapped_s) << v;
    EXPECT_EQ(to_int(Type::kUInt4, from_float(Type::kUInt4, float(v))), (v % 16 + 16) % 16) << v;
  }
  EXPECT_EQ(from_float(Type::kInt4, 8.0f), 0xF8);  // -8 as a signed byte
  EXPECT_EQ(from_float(Type::kInt4, -1.0f), 0xFF);
  EXPECT_EQ(from_float(Type::kInt4, 2.5f), 2);
  EXPECT_EQ(from_float(Type::kInt4, 3.5f), 4);
  EXPECT_EQ(from_float(Type::kInt4, 2.7f), 3);
  EXPECT_EQ(from_float(Type::kInt4, -2.5f), 0xFE);
  EXPECT_EQ(from_float(Type::kUInt4, 15.5f), 0);  // 16 wraps
  EXPECT_EQ(from_float(Type::kInt4, 1e9f), 0);    // a multiple of 16
  EXPECT_EQ(from_float(Type::kInt4, kNaN), 0);
  EXPECT_EQ(from_float(Type::kUInt2, kInf), 0);
  // Backend test_cast_FLOAT_to_INT2 / UINT2: -3..3.
  const int int2[] = {1, -2, -1, 0, 1, -2, -1};
  const int uint2[] = {1, 2, 3, 0, 1, 2, 3};
  for (int v = -3; v <= 3; ++v) {
    EXPECT_EQ(to_int(Type::kInt2, from_float(Type::kInt2, float(v))), int2[v + 3]) << v;
    EXPECT_EQ(to_int(Type::kUInt2, from_float(Type::kUInt2, float(v))), uint2[v + 3]) << v;
  }
}

TEST(SmallTypes, IntCastFromIntWraps) {
  EXPECT_EQ(to_int(Type::kInt4, from_int(Type::kInt4, 200)), -8);
  EXPECT_EQ(to_int(Type::kInt4, from_int(Type::kInt4, -9)), 7);
  EXPECT_EQ(to_int(Type::kUInt4, from_int(Type::kUInt4, -1)), 15);
  EXPECT_EQ(to_int(Type::kUInt4, from_int(Type::kUInt4, 0x123456789LL)), 9);
  EXPECT_EQ(to_int(Type::kInt2, from_int(Type::kInt2, 3)), -1);
  EXPECT_EQ(to_int(Type::kUInt2, from_int(Type::kUInt2, 6)), 2);
  for (Type t : kInts)
    for (int v = int_min(t); v <= int_max(t); ++v) {
      EXPECT_EQ(to_int(t, from_int(t, v)), v);
      EXPECT_EQ(to_float(t, from_float(t, float(v))), float(v));
    }
  // Integers into a float type go through float.
  EXPECT_EQ(from_int(Type::kFloat8E4M3FN, 1000), 0x7E);
  EXPECT_EQ(from_int(Type::kFloat8E4M3FN, 1000, false), 0x7F);
  EXPECT_EQ(from_int(Type::kFloat4E2M1, -3), 0xD);
}

TEST(SmallTypes, QuantizeLinear) {
  // Backend test_quantizelinear_int4: x / scale per row, zero point 1, clamp to [-8, 7].
  const float x[3][4] = {{0.0f, 2.5f, 4.8f, 8.6f}, {-30, -20, 6, 9}, {12, 15, 16, 40}};
  const float scale[3] = {2, 3, 4};
  const int want_i4[12] = {1, 2, 3, 5, -8, -6, 3, 4, 4, 5, 5, 7};
  const int want_u4[12] = {1, 2, 3, 5, 0, 0, 3, 4, 4, 5, 5, 11};
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(to_int(Type::kInt4, quantize(Type::kInt4, x[r][k] / scale[r], from_int(Type::kInt4, 1))),
                want_i4[r * 4 + k]);
      EXPECT_EQ(quantize(Type::kUInt4, x[r][k] / scale[r], 1), want_u4[r * 4 + k]);
    }
  EXPECT_EQ(to_int(Type::kInt2, quantize(Type::kInt2, -8.6f / 4, 0)), -2);
  EXPECT_EQ(to_int(Type::kInt2, quantize(Type::kInt2, 0.5f, 0)), 0);  // half to even
  EXPECT_EQ(to_int(Type::kInt2, quantize(Type::kInt2, 1.5f, 0)), 1);  // 2 clamps to 1
  EXPECT_EQ(quantize(Type::kUInt2, kInf, 0), 3);
  EXPECT_EQ(quantize(Type::kUInt2, -kInf, 2), 0);
  EXPECT_EQ(quantize(Type::kUInt4, kNaN, 5), 5);
  // Backend test_quantizelinear_e4m3fn: [0, 1, 2, 100000, 200] / 2.
  const int want_f8[5] = {0x00, 0x30, 0x38, 0x7E, 0x6C};
  const float xs[5] = {0, 1, 2, 100000, 200};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(quantize(Type::kFloat8E4M3FN, xs[i] / 2, 0), want_f8[i]);
  EXPECT_EQ(quantize(Type::kFloat8E4M3FN, 50000.0f, 0, false), 0x7F);
  EXPECT_EQ(quantize(Type::kFloat8E5M2, 50000.0f, 0), 0x7A);  // 49152
  // float4e2m1 (backend test_quantizelinear_float4e2m1): -0 + zero point 0 is +0.
  EXPECT_EQ(quantize(Type::kFloat4E2M1, -0.0f / 4, 0), 0x0);
  EXPECT_EQ(quantize(Type::kFloat4E2M1, -2.5f / 4, 0), 0x9);
  EXPECT_EQ(quantize(Type::kFloat4E2M1, -30.0f / 3, 0), 0xF);
  EXPECT_EQ(quantize(Type::kFloat4E2M1, 0.5f, 0x2), 0x3);  // 0.5 + 1 = 1.5
}

TEST(SmallTypes, DequantizeLinear) {
  // Backend test_dequantizelinear_int4: (x - 1) * 2.
  const int xs[5] = {0, 1, 7, -4, -8};
  const float want[5] = {-2, 0, 12, -10, -18};
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(dequantize(Type::kInt4, from_int(Type::kInt4, xs[i]), from_int(Type::kInt4, 1), 2.0f), want[i]);
  // Backend test_dequantizelinear_e4m3fn: codes [0, 48, 56, 126, 237] * 2.
  const uint8_t f8[5] = {0, 48, 56, 126, 237};
  const float want_f8[5] = {0, 1, 2, 896, -208};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(dequantize(Type::kFloat8E4M3FN, f8[i], 0, 2.0f), want_f8[i]);
  EXPECT_TRUE(std::signbit(dequantize(Type::kFloat8E4M3FN, 0x80, 0, 2.0f)));
  EXPECT_TRUE(std::isnan(dequantize(Type::kFloat8E5M2FNUZ, 0x80, 0, 2.0f)));
  EXPECT_EQ(dequantize(Type::kUInt2, 0, 1, 2.0f), -2.0f);
  EXPECT_EQ(dequantize(Type::kFloat4E2M1, 0xF, 0, 2.0f), -12.0f);
  EXPECT_EQ(dequantize(Type::kUInt4, 9, 1, to_float(Type::kFloat8E8M0, 0x7E)), 4.0f);  // e8m0 scale 0.5
}

}  // namespace
}  // namespace loom
