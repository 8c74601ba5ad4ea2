// The ai.onnx.ml ops on map values (ONNX Runtime semantics, which
// scikit-learn converters target):
//  - ZipMap: X [N, C] (or [C]) float -> a sequence of N maps, each the class
//    labels (classlabels_int64s or classlabels_strings, C of them) to row n;
//  - CastMap: map(int64 -> string | float) -> [1, K] of cast_to (TO_FLOAT,
//    TO_STRING, TO_INT64): map_form DENSE puts the values in ascending key
//    order (K = the map's size), SPARSE puts value k at index k (K =
//    max_map, missing keys 0 / "0", keys outside [0, max_map) an error);
//  - DictVectorizer: map(string | int64 -> int64 | float | double | string)
//    -> [1, V]: the value of each vocabulary entry (int64_vocabulary or
//    string_vocabulary, V of them) at its index, 0 ("" for strings) where
//    the map has no such key.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "common/dispatch.h"
#include "kernels/ml_common.h"

namespace loom::reference {
namespace {

using sdk::ConstTensor;
using sdk::KernelContext;
using sdk::OwnedValue;

[[noreturn]] void fail(const std::string& op, const std::string& why) { sdk::fail_invalid(op + ": " + why); }

void zip_map(KernelContext& ctx) {
  const sdk::Node node = ctx.node();
  const ConstTensor x = ctx.required_input(0);
  const auto ints = node.find_ints("classlabels_int64s");
  const auto strings = node.find_strings("classlabels_strings");
  if (ints.has_value() == strings.has_value())
    fail("ZipMap", "exactly one of classlabels_int64s and classlabels_strings must be given");
  const int64_t classes = static_cast<int64_t>(ints ? ints->size() : strings->size());
  const std::vector<int64_t> xs = x.shape();
  if (x.dtype() != LOOM_DTYPE_FLOAT) fail("ZipMap", "X must be float, got " + sdk::dtype_name(x.dtype()));
  if (xs.empty() || xs.size() > 2) fail("ZipMap", "X must be 1-D or 2-D");
  if (xs.back() != classes)
    fail("ZipMap", "X has " + std::to_string(xs.back()) + " columns, the labels are " + std::to_string(classes));
  const int64_t rows = xs.size() == 2 ? xs[0] : 1;
  const float* px = x.data<float>();
  OwnedValue seq = OwnedValue::sequence(LOOM_DTYPE_FLOAT);
  for (int64_t r = 0; r < rows; ++r) {
    if (r % 1024 == 0) ctx.stop_if_asked();
    OwnedValue keys = OwnedValue::tensor(ints ? LOOM_DTYPE_INT64 : LOOM_DTYPE_STRING, {classes});
    const sdk::Tensor k = keys.mutable_tensor();
    if (ints) std::copy(ints->begin(), ints->end(), k.mutable_data<int64_t>());
    else
      for (int64_t c = 0; c < classes; ++c) k.set_string(c, (*strings)[static_cast<size_t>(c)]);
    OwnedValue values = OwnedValue::tensor(LOOM_DTYPE_FLOAT, {classes});
    std::copy(px + r * classes, px + (r + 1) * classes, values.mutable_tensor().mutable_data<float>());
    seq.append(OwnedValue::map(std::move(keys), std::move(values)));
  }
  ctx.set_output(0, std::move(seq));
}

// The map input `i` of a kernel.
sdk::ConstValue map_input(KernelContext& ctx, size_t i, const std::string& op) {
  const sdk::ConstValue v = ctx.input_value(i);
  if (!v.exists() || !v.is_map()) fail(op, "input " + std::to_string(i) + " must be a map");
  return v;
}

// Value i of a float or string tensor as a double (strings parsed, as
// ONNX Runtime's CastMap parses them).
double number_at(const ConstTensor& t, int64_t i, const std::string& op) {
  if (t.dtype() == LOOM_DTYPE_FLOAT) return t.data<float>()[i];
  const std::string s(t.string_at(i));
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) fail(op, "map value '" + s + "' is not a number");
  return d;
}

void cast_map(KernelContext& ctx) {
  const std::string op = "CastMap";
  const sdk::Node node = ctx.node();
  const sdk::ConstValue m = map_input(ctx, 0, op);
  const ConstTensor keys = m.map_keys(), values = m.map_values();
  if (keys.dtype() != LOOM_DTYPE_INT64) fail(op, "map keys must be int64");
  if (values.dtype() != LOOM_DTYPE_FLOAT && values.dtype() != LOOM_DTYPE_STRING)
    fail(op, "map values must be float or string, got " + sdk::dtype_name(values.dtype()));
  const std::string cast_to = node.attr_string("cast_to", "TO_FLOAT");
  const std::string form = node.attr_string("map_form", "DENSE");
  const int32_t to = cast_to == "TO_FLOAT"    ? LOOM_DTYPE_FLOAT
                     : cast_to == "TO_STRING" ? LOOM_DTYPE_STRING
                     : cast_to == "TO_INT64"  ? LOOM_DTYPE_INT64
                                              : (fail(op, "unknown cast_to '" + cast_to + "'"), 0);
  if (form != "DENSE" && form != "SPARSE") fail(op, "unknown map_form '" + form + "'");
  const int64_t n = keys.size();
  const int64_t* pk = keys.data<int64_t>();
  // Source index for each output position (-1: missing, the default value).
  std::vector<int64_t> source;
  if (form == "DENSE") {
    source.resize(static_cast<size_t>(n));
    std::iota(source.begin(), source.end(), 0);
    std::stable_sort(source.begin(), source.end(), [&](int64_t a, int64_t b) { return pk[a] < pk[b]; });
  } else {
    const int64_t max_map = node.attr_int("max_map", 1);
    if (max_map < 0 || max_map > (int64_t{1} << 30)) fail(op, "max_map must be in [0, 2^30]");
    source.assign(static_cast<size_t>(max_map), -1);
    for (int64_t i = 0; i < n; ++i) {
      if (pk[i] < 0 || pk[i] >= max_map)
        fail(op, "key " + std::to_string(pk[i]) + " is outside [0, max_map = " + std::to_string(max_map) + ")");
      source[static_cast<size_t>(pk[i])] = i;
    }
  }
  const int64_t k = static_cast<int64_t>(source.size());
  sdk::Tensor y = ctx.output(0, {1, k}, to);
  for (int64_t j = 0; j < k; ++j) {
    const int64_t s = source[static_cast<size_t>(j)];
    if (to == LOOM_DTYPE_STRING) {
      if (s < 0) y.set_string(j, "0");
      else if (values.dtype() == LOOM_DTYPE_STRING) y.set_string(j, values.string_at(s));
      else y.set_string(j, std::to_string(values.data<float>()[s]));
    } else {
      const double v = s < 0 ? 0.0 : number_at(values, s, op);
      if (to == LOOM_DTYPE_FLOAT) y.mutable_data<float>()[j] = static_cast<float>(v);
      else y.mutable_data<int64_t>()[j] = static_cast<int64_t>(v);
    }
  }
}

void dict_vectorizer(KernelContext& ctx) {
  const std::string op = "DictVectorizer";
  const sdk::Node node = ctx.node();
  const sdk::ConstValue m = map_input(ctx, 0, op);
  const ConstTensor keys = m.map_keys(), values = m.map_values();
  const auto int_vocab = node.find_ints("int64_vocabulary");
  const auto str_vocab = node.find_strings("string_vocabulary");
  if (int_vocab.has_value() == str_vocab.has_value())
    fail(op, "exactly one of int64_vocabulary and string_vocabulary must be given");
  if ((int_vocab && keys.dtype() != LOOM_DTYPE_INT64) || (str_vocab && keys.dtype() != LOOM_DTYPE_STRING))
    fail(op, "map keys of type " + sdk::dtype_name(keys.dtype()) + " do not match the vocabulary");
  // Position of each vocabulary entry.
  std::map<std::string, int64_t> str_index;
  std::map<int64_t, int64_t> int_index;
  const int64_t size = static_cast<int64_t>(int_vocab ? int_vocab->size() : str_vocab->size());
  for (int64_t i = 0; i < size; ++i) {
    if (int_vocab) int_index.emplace((*int_vocab)[static_cast<size_t>(i)], i);
    else str_index.emplace((*str_vocab)[static_cast<size_t>(i)], i);
  }
  sdk::Tensor y = ctx.output(0, {1, size}, values.dtype());
  for (int64_t i = 0; i < keys.size(); ++i) {
    int64_t at = -1;
    if (int_vocab) {
      auto it = int_index.find(keys.data<int64_t>()[i]);
      if (it != int_index.end()) at = it->second;
    } else {
      auto it = str_index.find(std::string(keys.string_at(i)));
      if (it != str_index.end()) at = it->second;
    }
    if (at < 0) continue;  // a key outside the vocabulary is dropped
    if (values.dtype() == LOOM_DTYPE_STRING) {
      y.set_string(at, values.string_at(i));
      continue;
    }
    dispatch<TypeList<int64_t, float, double>>(values.dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      y.template mutable_data<T>()[at] = values.data<T>()[i];
    });
  }
}

}  // namespace

void register_ml_map_kernels(sdk::KernelRegistry& r) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  r.add("ai.onnx.ml", "ZipMap", 1, kOpen, zip_map);
  r.add("ai.onnx.ml", "CastMap", 1, kOpen, cast_map);
  r.add("ai.onnx.ml", "DictVectorizer", 1, kOpen, dict_vectorizer);
}

}  // namespace loom::reference
