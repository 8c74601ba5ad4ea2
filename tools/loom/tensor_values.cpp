#include "tensor_values.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdio>

namespace loom::tools {

uint16_t float_to_half(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past the largest half
  if (abs < 0x38800000u) {
    // Subnormal half (or zero): scale by 2^24 and round in float arithmetic.
    const float scaled = std::bit_cast<float>(abs) * 16777216.0f;
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(scaled)));
  }
  const uint32_t mantissa_odd = (abs >> 13) & 1u;
  const uint32_t rounded = abs + 0xfffu + mantissa_odd - (0x70u << 23);
  return static_cast<uint16_t>(sign | (rounded >> 13));
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

uint16_t float_to_bfloat16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // keep NaN a NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

float bfloat16_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

namespace {

template <class T, class Gen>
void fill(Tensor& t, Gen gen) {
  T* p = t.mutable_data_as<T>();
  for (int64_t i = 0; i < t.element_count(); ++i) p[i] = gen();
}

std::string format_float(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string format_value(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat: return format_float(t.data_as<float>()[i]);
    case DType::kDouble: return format_float(t.data_as<double>()[i]);
    case DType::kFloat16: return format_float(half_to_float(t.data_as<uint16_t>()[i]));
    case DType::kBFloat16: return format_float(bfloat16_to_float(t.data_as<uint16_t>()[i]));
    case DType::kComplex64: {
      const float* p = t.data_as<float>() + 2 * i;
      return format_float(p[0]) + (p[1] < 0 ? "" : "+") + format_float(p[1]) + "i";
    }
    case DType::kComplex128: {
      const double* p = t.data_as<double>() + 2 * i;
      return format_float(p[0]) + (p[1] < 0 ? "" : "+") + format_float(p[1]) + "i";
    }
    case DType::kInt8: return std::to_string(t.data_as<int8_t>()[i]);
    case DType::kUint8: return std::to_string(t.data_as<uint8_t>()[i]);
    case DType::kInt16: return std::to_string(t.data_as<int16_t>()[i]);
    case DType::kUint16: return std::to_string(t.data_as<uint16_t>()[i]);
    case DType::kInt32: return std::to_string(t.data_as<int32_t>()[i]);
    case DType::kUint32: return std::to_string(t.data_as<uint32_t>()[i]);
    case DType::kInt64: return std::to_string(t.data_as<int64_t>()[i]);
    case DType::kUint64: return std::to_string(t.data_as<uint64_t>()[i]);
    case DType::kBool: return t.data_as<uint8_t>()[i] ? "true" : "false";
    case DType::kInt4:
    case DType::kInt2: return std::to_string(t.data_as<int8_t>()[i]);
    case DType::kUint4:
    case DType::kUint2: return std::to_string(t.data_as<uint8_t>()[i]);
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat8E8M0:
    case DType::kFloat4E2M1: {  // the code: decoding is the kernels' (reference common/small_types.h)
      static constexpr char kHex[] = "0123456789abcdef";
      const uint8_t c = t.data_as<uint8_t>()[i];
      return std::string{'0', 'x', kHex[c >> 4], kHex[c & 15]};
    }
    case DType::kString: {
      std::string s = t.strings()[static_cast<size_t>(i)];
      if (s.size() > 32) s = s.substr(0, 29) + "...";
      return "\"" + s + "\"";
    }
    case DType::kUndefined: break;
  }
  return "?";
}

}  // namespace

Expected<Tensor> random_tensor(DType dtype, const Dims& dims, std::mt19937_64& rng) {
  if (dtype == DType::kString) {
    LOOM_ASSIGN_OR_RETURN(int64_t count, checked_element_count(dims));
    std::vector<std::string> values;
    values.reserve(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) values.push_back("s" + std::to_string(i));
    return Tensor::from_strings(dims, std::move(values));
  }
  LOOM_ASSIGN_OR_RETURN(Tensor t, Tensor::zeros(dtype, dims));
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 9);
  std::uniform_int_distribution<int> coin(0, 1);
  auto r = [&] { return real(rng); };
  auto s = [&] { return small(rng); };
  switch (dtype) {
    case DType::kFloat: fill<float>(t, [&] { return static_cast<float>(r()); }); break;
    case DType::kDouble: fill<double>(t, r); break;
    case DType::kFloat16: fill<uint16_t>(t, [&] { return float_to_half(static_cast<float>(r())); }); break;
    case DType::kBFloat16: fill<uint16_t>(t, [&] { return float_to_bfloat16(static_cast<float>(r())); }); break;
    case DType::kComplex64: fill<std::complex<float>>(t, [&] { return std::complex<float>(r(), r()); }); break;
    case DType::kComplex128: fill<std::complex<double>>(t, [&] { return std::complex<double>(r(), r()); }); break;
    case DType::kInt8: fill<int8_t>(t, s); break;
    case DType::kUint8: fill<uint8_t>(t, s); break;
    case DType::kInt16: fill<int16_t>(t, s); break;
    case DType::kUint16: fill<uint16_t>(t, s); break;
    case DType::kInt32: fill<int32_t>(t, s); break;
    case DType::kUint32: fill<uint32_t>(t, s); break;
    case DType::kInt64: fill<int64_t>(t, s); break;
    case DType::kUint64: fill<uint64_t>(t, s); break;
    case DType::kBool: fill<uint8_t>(t, [&] { return static_cast<uint8_t>(coin(rng)); }); break;
    // The 8/4/2-bit types: small values of each (finite codes for the floats).
    case DType::kInt4:
    case DType::kInt2: fill<int8_t>(t, [&] { return static_cast<int8_t>(coin(rng) - coin(rng)); }); break;
    case DType::kUint4:
    case DType::kUint2: fill<uint8_t>(t, [&] { return static_cast<uint8_t>(s() % 4); }); break;
    case DType::kFloat4E2M1: fill<uint8_t>(t, [&] { return static_cast<uint8_t>(s() % 8 + 8 * coin(rng)); }); break;
    case DType::kFloat8E8M0: fill<uint8_t>(t, [&] { return static_cast<uint8_t>(122 + s()); }); break;  // 2^-5..2^4
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:  // exponent fields 5..8 of both formats, either sign: finite, about 2^-3..2^1
      fill<uint8_t>(t, [&] { return static_cast<uint8_t>(0x28 + s() * 3 + 0x80 * coin(rng)); });
      break;
    case DType::kString:
    case DType::kUndefined: return invalid_argument("cannot generate values of type " + dtype_name(dtype));
  }
  return t;
}

std::string preview_values(const Tensor& t, size_t max_values) {
  std::string s = "[";
  const int64_t n = t.element_count();
  const int64_t shown = std::min<int64_t>(n, static_cast<int64_t>(max_values));
  for (int64_t i = 0; i < shown; ++i) s += (i ? ", " : "") + format_value(t, i);
  if (n > shown) s += ", ...";
  return s + "]";
}

std::string describe_value(const Value& v, ValueKind declared, bool with_values, size_t max_elements) {
  const std::string prefix = declared == ValueKind::kOptional ? "optional " : "";
  if (v.is_none()) return declared == ValueKind::kOptional ? "optional, empty" : "none";
  if (v.is_tensor()) {
    const Tensor& t = v.tensor();
    std::string s = prefix + dtype_name(t.dtype()) + " " + dims_string(t.dims());
    return with_values ? s + " " + preview_values(t) : s;
  }
  // A map: its pairs, keys first ("{10: 0.25, 20: 0.75}").
  auto map_text = [&](const Value& m) {
    const Tensor &k = m.map_keys(), &x = m.map_values();
    std::string t = "map(" + dtype_name(k.dtype()) + ", " + dtype_name(x.dtype()) + ") of " +
                    std::to_string(k.element_count());
    if (!with_values) return t;
    t += " {";
    const int64_t shown_pairs = std::min<int64_t>(k.element_count(), static_cast<int64_t>(max_elements));
    for (int64_t i = 0; i < shown_pairs; ++i)
      t += (i ? ", " : "") + format_value(k, i) + ": " + format_value(x, i);
    return t + (k.element_count() > shown_pairs ? ", ...}" : "}");
  };
  if (v.is_map()) return prefix + map_text(v);
  if (v.is_sequence_of_maps()) {
    std::string s = prefix + "sequence of " + std::to_string(v.maps().size()) + " maps";
    const size_t shown = std::min(v.maps().size(), max_elements);
    for (size_t i = 0; i < shown; ++i) s += "\n  [" + std::to_string(i) + "]: " + map_text(v.maps()[i]);
    if (v.maps().size() > shown) s += "\n  ... " + std::to_string(v.maps().size() - shown) + " more";
    return s;
  }
  const auto& elements = v.elements();
  std::string s = prefix + "sequence of " + std::to_string(elements.size()) + " " + dtype_name(v.sequence_dtype());
  const size_t shown = std::min(elements.size(), max_elements);
  for (size_t i = 0; i < shown; ++i) {
    const Tensor& t = elements[i];
    if (with_values)
      s += "\n  [" + std::to_string(i) + "]: " + dims_string(t.dims()) + " " + preview_values(t);
    else
      s += (i ? ", " : ": ") + dims_string(t.dims());
  }
  if (elements.size() > shown)
    s += (with_values ? "\n  ... " : ", ... ") + std::to_string(elements.size() - shown) + " more";
  return s;
}

}  // namespace loom::tools
