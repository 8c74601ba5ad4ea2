// A self-contained snapshot of one graph node: what claim() inspects and what
// a compiled partition keeps after the host's graph view is gone (views live
// only during get_capability / compile).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "loom/sdk.h"

namespace loom::onednn {

struct NodeSpec {
  std::string op_type, domain, name;
  int64_t opset = 0;
  std::vector<std::string> inputs, outputs;  // "" for an omitted optional one
  std::vector<int32_t> input_dtypes, output_dtypes;
  // Inferred shapes (nullopt: unknown rank; -1: unknown dim).
  std::vector<std::optional<std::vector<int64_t>>> input_shapes;
  std::vector<bool> input_is_constant;
  // Values of small constant inputs (<= 64 elements: Reshape shapes, Clip
  // bounds), by input index; read at snapshot time.
  std::map<size_t, std::vector<double>> small_constants;
  // Constant element counts, by input index (e.g. LayerNorm scale size).
  std::map<size_t, std::vector<int64_t>> constant_shapes;
  // Integer constant inputs whose elements are all zero, of any size (e.g. a
  // per-channel weight zero point, which int8 kernels require to be zero).
  std::set<size_t> zero_constants;

  std::map<std::string, int64_t> ints;
  std::map<std::string, float> floats;
  std::map<std::string, std::string> strings;
  std::map<std::string, std::vector<int64_t>> int_lists;
  std::map<std::string, std::vector<float>> float_lists;
  std::vector<std::string> other_attrs;  // present attributes of kinds not copied (tensors, graphs)

  static NodeSpec from(const sdk::Node& node);

  // "Conv node 'conv1'": the prefix every error about this node uses.
  std::string label() const { return op_type + " node '" + name + "'"; }
  bool has_input(size_t i) const { return i < inputs.size() && !inputs[i].empty(); }
  // `op` of the ONNX domain ("" or "ai.onnx").
  bool is_onnx_op(const char* op) const { return op_type == op && (domain.empty() || domain == "ai.onnx"); }
  int64_t attr_int(const std::string& key, int64_t fallback) const {
    auto it = ints.find(key);
    return it == ints.end() ? fallback : it->second;
  }
  float attr_float(const std::string& key, float fallback) const {
    auto it = floats.find(key);
    return it == floats.end() ? fallback : it->second;
  }
  std::string attr_string(const std::string& key, const std::string& fallback) const {
    auto it = strings.find(key);
    return it == strings.end() ? fallback : it->second;
  }
  std::vector<int64_t> attr_ints(const std::string& key, std::vector<int64_t> fallback = {}) const {
    auto it = int_lists.find(key);
    return it == int_lists.end() ? fallback : it->second;
  }
  // An integer list ONNX moved from attribute `attr` to input `i` at opset
  // `input_since` (axes, starts, split...): the attribute before it, the
  // constant input from it on; empty when absent, nullopt when the input is
  // computed at run time.
  std::optional<std::vector<int64_t>> ints_operand(size_t i, const std::string& attr, int input_since) const {
    if (opset < input_since) return attr_ints(attr);
    if (!has_input(i)) return std::vector<int64_t>{};
    auto it = small_constants.find(i);
    if (it == small_constants.end()) return std::nullopt;
    std::vector<int64_t> out;
    for (double v : it->second) out.push_back(static_cast<int64_t>(v));
    return out;
  }
  bool has_attr(const std::string& key) const {
    return ints.count(key) || floats.count(key) || strings.count(key) || int_lists.count(key) ||
           float_lists.count(key);
  }
  // Rank of input i when statically known.
  std::optional<size_t> input_rank(size_t i) const {
    if (i >= input_shapes.size() || !input_shapes[i]) return std::nullopt;
    return input_shapes[i]->size();
  }
  // Number of outputs with a name (trailing optional outputs are often empty).
  size_t used_output_count() const {
    size_t n = 0;
    for (const auto& o : outputs)
      if (!o.empty()) ++n;
    return n;
  }
  [[noreturn]] void fail(const std::string& message) const {
    throw sdk::Error("cpu_onednn: " + label() + ": " + message, LOOM_STATUS_INVALID_ARGUMENT);
  }
};

// The elements of a numeric tensor as doubles (node constants, and small
// inputs read when a program is built); nullopt for strings and other kinds.
std::optional<std::vector<double>> numbers_of(const sdk::ConstTensor& t);

}  // namespace loom::onednn
