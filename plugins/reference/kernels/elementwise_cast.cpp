// Cast, CastLike and Identity. Numeric casts follow numpy's astype (float to
// integer truncates toward zero, integers narrow modulo 2^bits, anything to
// bool is "!= 0"); numbers become strings in numpy's str() form (shortest
// round-trip digits) and strings parse as decimal or scientific literals,
// with case-insensitive "INF", "+INF", "-INF" and "NaN".
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/elementwise_helpers.h"
#include "common/small_types.h"
#include "kernels/elementwise_internal.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

// double -> float rounding to odd: a following float -> half/bfloat16
// rounding then equals a direct, correctly rounded double -> half.
float to_float_round_odd(double d) {
  float f = static_cast<float>(d);
  if (std::isfinite(f) && static_cast<double>(f) != d) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if ((bits & 1u) == 0) f = std::nextafter(f, d > static_cast<double>(f) ? HUGE_VALF : -HUGE_VALF);
  }
  return f;
}

template <class To, class From>
To cast_value(From v) {
  using CF = compute_t<From>;
  using CT = compute_t<To>;
  if constexpr (std::is_same_v<From, double> && !std::is_same_v<CT, To>) {
    return static_cast<To>(to_float_round_odd(v));  // double -> Float16/BFloat16
  } else {
    return static_cast<To>(convert_value<CT>(static_cast<CF>(v)));
  }
}

// ---- numbers to strings ----------------------------------------------------

template <class T>
bool round_trips(const char* s, T v) {
  if constexpr (std::is_same_v<T, double>) {
    return std::strtod(s, nullptr) == v;
  } else if constexpr (std::is_same_v<T, float>) {
    return std::strtof(s, nullptr) == v;
  } else {
    return static_cast<T>(std::strtof(s, nullptr)).bits == v.bits;
  }
}

// numpy's str() of a floating scalar: shortest digits that read back as the
// same value; positional for 1e-4 <= |v| < 1e16, else scientific ("1e-05").
template <class T>
std::string float_to_string(T v) {
  const double d = static_cast<double>(static_cast<compute_t<T>>(v));
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  char buf[64];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p - 1, d);
    if (round_trips<T>(buf, v)) break;
  }
  // buf is "[-]D[.DDD]e[+-]XX".
  std::string s(buf);
  const bool negative = s[0] == '-';
  if (negative) s.erase(0, 1);
  const size_t epos = s.find('e');
  const int exp = std::atoi(s.c_str() + epos + 1);
  std::string digits = s.substr(0, epos);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = negative ? "-" : "";
  // numpy compares the value itself (not its rounded digits) with the bounds.
  if (std::fabs(d) >= 1e-4 && std::fabs(d) < 1e16) {
    if (exp >= 0) {
      const size_t int_len = static_cast<size_t>(exp) + 1;
      if (digits.size() <= int_len) {
        out += digits + std::string(int_len - digits.size(), '0') + ".0";
      } else {
        out += digits.substr(0, int_len) + "." + digits.substr(int_len);
      }
    } else {
      out += "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    }
  } else {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char e[16];
    std::snprintf(e, sizeof e, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    out += e;
  }
  return out;
}

template <class T>
std::string value_to_string(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "True" : "False";  // numpy str(np.bool_)
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(v);
  } else {
    return float_to_string(v);
  }
}

// ---- strings to numbers ----------------------------------------------------

[[noreturn]] void fail_parse(std::string_view s, int32_t to) {
  sdk::fail_invalid("Cast: cannot convert string '" + std::string(s) + "' to " + sdk::dtype_name(to));
}

double parse_double(const std::string& s, int32_t to) {
  const char* begin = s.c_str();
  char* end = nullptr;
  const double d = std::strtod(begin, &end);
  if (end == begin) fail_parse(s, to);
  return d;
}

template <class T>
T parse_string(std::string_view view) {
  const std::string s(view);
  constexpr int32_t kTo = sdk::DTypeOf<T>::value;
  if constexpr (std::is_same_v<T, float>) {
    const char* begin = s.c_str();
    char* end = nullptr;
    const float f = std::strtof(begin, &end);
    if (end == begin) fail_parse(s, kTo);
    return f;
  } else if constexpr (std::is_same_v<T, double>) {
    return parse_double(s, kTo);
  } else if constexpr (std::is_same_v<T, bool>) {
    std::string lower = s;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "true") return true;
    if (lower == "false") return false;
    return parse_double(s, kTo) != 0.0;
  } else if constexpr (std::is_integral_v<T>) {
    const char* begin = s.c_str();
    char* end = nullptr;
    errno = 0;
    T v;
    if constexpr (std::is_signed_v<T>) {
      v = static_cast<T>(std::strtoll(begin, &end, 10));
    } else {
      v = static_cast<T>(std::strtoull(begin, &end, 10));
    }
    // Not a plain integer literal ("2.5", "1e3", "inf"): go through double.
    if (end == begin || errno != 0 || (*end != '\0' && !std::isspace(static_cast<unsigned char>(*end))))
      return float_to_int<T>(parse_double(s, kTo));
    return v;
  } else {
    return cast_value<T>(parse_double(s, kTo));  // Float16, BFloat16
  }
}

// ---- kernels ---------------------------------------------------------------

void copy_tensor(const sdk::ConstTensor& x, const sdk::Tensor& y) {
  const int64_t n = x.size();
  if (n == 0) return;
  if (x.dtype() == LOOM_DTYPE_STRING) {
    for (int64_t i = 0; i < n; ++i) y.set_string(i, x.string_at(i));
    return;
  }
  const size_t bytes = sdk::dtype_size(x.dtype());
  if (bytes == 0) unsupported_type("copy", x.dtype());
  std::memcpy(y.raw_mutable_data(), x.raw_data(), bytes * static_cast<size_t>(n));
}

// Cast's `saturate` (float8 targets) and `round_mode` (float8e8m0).
struct SmallCastRules {
  bool saturate = true;
  small::RoundMode round_mode = small::RoundMode::kUp;
};

// Casts where `from` or `to` is one of ONNX's 8/4/2-bit types
// (common/small_types.h): their values go through float (floating kinds) or
// int64 (integer kinds), with Cast's rules for the target.
void cast_small(const sdk::ConstTensor& x, const sdk::Tensor& y, int32_t to, const SmallCastRules& rules,
                std::string_view name) {
  const int64_t n = x.size();
  const int32_t from = x.dtype();
  const auto src = small::type_from_onnx(from), dst = small::type_from_onnx(to);
  const auto* codes = src ? static_cast<const uint8_t*>(x.raw_data()) : nullptr;
  auto* out = dst ? static_cast<uint8_t*>(y.raw_mutable_data()) : nullptr;
  if (src && dst) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = small::is_integer(*src)
                   ? small::from_int(*dst, small::to_int(*src, codes[i]), rules.saturate, rules.round_mode)
                   : small::from_float(*dst, small::to_float(*src, codes[i]), rules.saturate, rules.round_mode);
    return;
  }
  if (src) {  // small -> a wider type
    if (to == LOOM_DTYPE_STRING) {
      for (int64_t i = 0; i < n; ++i)
        y.set_string(i, small::is_integer(*src) ? std::to_string(small::to_int(*src, codes[i]))
                                                : float_to_string(small::to_float(*src, codes[i])));
      return;
    }
    dispatch<PodTypes>(to, name, [&](auto tag) {
      using To = decltype(tag);
      To* py = y.template mutable_data<To>();
      for (int64_t i = 0; i < n; ++i)
        py[i] = small::is_integer(*src) ? cast_value<To>(static_cast<int64_t>(small::to_int(*src, codes[i])))
                                        : cast_value<To>(small::to_float(*src, codes[i]));
    });
    return;
  }
  if (from == LOOM_DTYPE_STRING) {  // a decimal literal, through float
    for (int64_t i = 0; i < n; ++i)
      out[i] = small::from_float(*dst, static_cast<float>(parse_double(std::string(x.string_at(i)), to)),
                                 rules.saturate, rules.round_mode);
    return;
  }
  dispatch<PodTypes>(from, name, [&](auto tag) {
    using From = decltype(tag);
    const From* px = x.data<From>();
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_integral_v<From>)
        out[i] = small::from_int(*dst, static_cast<int64_t>(px[i]), rules.saturate, rules.round_mode);
      else
        out[i] = small::from_float(*dst, static_cast<float>(static_cast<compute_t<From>>(px[i])), rules.saturate,
                                   rules.round_mode);
    }
  });
}

void cast_to(KernelContext& ctx, const sdk::ConstTensor& x, int32_t to, std::string_view name,
             const SmallCastRules& rules = {}) {
  sdk::Tensor y = ctx.output(0, x.shape(), to);
  const int64_t n = x.size();
  if (n == 0) return;
  const int32_t from = x.dtype();
  if (from == to) return copy_tensor(x, y);
  if (small::type_from_onnx(from) || small::type_from_onnx(to)) return cast_small(x, y, to, rules, name);
  if (from == LOOM_DTYPE_STRING) {
    dispatch<PodTypes>(to, name, [&](auto tag) {
      using To = decltype(tag);
      To* py = y.template mutable_data<To>();
      for (int64_t i = 0; i < n; ++i) py[i] = parse_string<To>(x.string_at(i));
    });
    return;
  }
  dispatch<PodTypes>(from, name, [&](auto from_tag) {
    using From = decltype(from_tag);
    const From* px = x.data<From>();
    if (to == LOOM_DTYPE_STRING) {
      for (int64_t i = 0; i < n; ++i) y.set_string(i, value_to_string(px[i]));
      return;
    }
    dispatch<PodTypes>(to, name, [&](auto to_tag) {
      using To = decltype(to_tag);
      To* py = y.template mutable_data<To>();
      for (int64_t i = 0; i < n; ++i) py[i] = cast_value<To>(px[i]);
    });
  });
}

// Cast-1 names the target type as a string ("FLOAT"); later versions use the
// TensorProto.DataType number.
int32_t dtype_from_name(std::string name) {
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static const std::pair<const char*, int32_t> kNames[] = {
      {"FLOAT", LOOM_DTYPE_FLOAT},     {"UINT8", LOOM_DTYPE_UINT8},   {"INT8", LOOM_DTYPE_INT8},
      {"UINT16", LOOM_DTYPE_UINT16},   {"INT16", LOOM_DTYPE_INT16},   {"INT32", LOOM_DTYPE_INT32},
      {"INT64", LOOM_DTYPE_INT64},     {"STRING", LOOM_DTYPE_STRING}, {"BOOL", LOOM_DTYPE_BOOL},
      {"FLOAT16", LOOM_DTYPE_FLOAT16}, {"DOUBLE", LOOM_DTYPE_DOUBLE}, {"UINT32", LOOM_DTYPE_UINT32},
      {"UINT64", LOOM_DTYPE_UINT64},   {"BFLOAT16", LOOM_DTYPE_BFLOAT16}};
  // (Cast-1 predates the 8/4/2-bit types: later opsets name them by number.)
  for (const auto& [n, v] : kNames)
    if (name == n) return v;
  sdk::fail_invalid("Cast: unknown target type '" + name + "'");
}

SmallCastRules small_cast_rules(const sdk::Node& node, std::string_view op) {
  SmallCastRules r;
  r.saturate = node.find_int("saturate").value_or(1) != 0;
  if (auto mode = node.find_string("round_mode")) {
    const auto m = small::round_mode_from_string(*mode);
    if (!m) sdk::fail_invalid(std::string(op) + ": round_mode must be up, down or nearest, got '" + *mode + "'");
    r.round_mode = *m;
  }
  return r;
}

void cast(KernelContext& ctx) {
  const sdk::Node node = ctx.node();
  int32_t to;
  if (auto v = node.find_int("to")) {
    to = static_cast<int32_t>(*v);
  } else if (auto s = node.find_string("to")) {
    to = dtype_from_name(*s);
  } else {
    node.required_int("to");  // throws, naming the node
    return;
  }
  if (to <= LOOM_DTYPE_UNDEFINED || to > LOOM_DTYPE_INT2)
    sdk::fail_invalid("Cast: 'to' is " + std::to_string(to) + ", not an element type Loom knows (1 to " +
                      std::to_string(LOOM_DTYPE_INT2) + ")");
  cast_to(ctx, ctx.required_input(0), to, "Cast", small_cast_rules(node, "Cast"));
}

void cast_like(KernelContext& ctx) {
  cast_to(ctx, ctx.required_input(0), ctx.required_input(1).dtype(), "CastLike",
          small_cast_rules(ctx.node(), "CastLike"));
}

// Identity passes any value through: tensors are copied into the planned
// output; sequences and optionals (also empty ones) are cloned.
void identity(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.input(0);
  if (x.exists()) {
    copy_tensor(x, ctx.output(0, x.shape(), x.dtype()));
    return;
  }
  const sdk::ConstValue v = ctx.input_value(0);
  if (!v.exists()) sdk::fail_invalid("Identity: input 0 is missing");
  ctx.set_output(0, sdk::OwnedValue::clone(v));
}

}  // namespace

void register_elementwise_cast_kernels(sdk::KernelRegistry& r) {
  constexpr int kEnd = LOOM_OPSET_OPEN_END;
  r.add("", "Cast", 1, kEnd, cast);
  r.add("", "CastLike", 15, kEnd, cast_like);
  r.add("", "Identity", 1, kEnd, identity);
}

}  // namespace loom::reference
