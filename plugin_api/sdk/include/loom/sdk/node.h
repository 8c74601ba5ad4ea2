// Loom plugin SDK: read-only views of graph nodes and graphs, with typed
// attribute getters. Valid as long as the underlying view.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loom/sdk/host.h"
#include "loom/sdk/tensor.h"

namespace loom::sdk {

class Node {
 public:
  explicit Node(const LOOM_NodeView* n) : n_(n) {}
  const LOOM_NodeView* raw() const { return n_; }

  uint64_t id() const { return host().node_id(n_); }
  std::string_view name() const { return from_view(host().node_name(n_)); }
  std::string_view op_type() const { return from_view(host().node_op_type(n_)); }
  std::string_view domain() const { return from_view(host().node_domain(n_)); }
  int64_t opset() const { return host().node_opset(n_); }
  size_t input_count() const { return static_cast<size_t>(host().node_input_count(n_)); }
  size_t output_count() const { return static_cast<size_t>(host().node_output_count(n_)); }
  std::string_view input_name(size_t i) const { return from_view(host().node_input_name(n_, i)); }
  std::string_view output_name(size_t i) const { return from_view(host().node_output_name(n_, i)); }
  int32_t input_dtype(size_t i) const { return host().node_input_dtype(n_, i); }
  int32_t output_dtype(size_t i) const { return host().node_output_dtype(n_, i); }
  // Shape after inference; nullopt when the rank is unknown, -1 for unknown dims.
  std::optional<std::vector<int64_t>> input_shape(size_t i) const {
    const int64_t* dims = nullptr;
    const int64_t rank = host().node_input_shape(n_, i, &dims);
    if (rank < 0) return std::nullopt;
    return std::vector<int64_t>(dims, dims + rank);
  }
  // Initializer data for an input, or an empty view.
  ConstTensor input_constant(size_t i) const { return ConstTensor(host().node_input_constant(n_, i)); }

  bool has_attr(std::string_view name) const { return attr_type(name) != LOOM_ATTR_UNDEFINED; }
  int32_t attr_type(std::string_view name) const { return host().node_attr_type(n_, to_view(name)); }

  std::optional<int64_t> find_int(std::string_view name) const {
    int64_t v;
    if (host().node_attr_int(n_, to_view(name), &v)) return v;
    return std::nullopt;
  }
  std::optional<float> find_float(std::string_view name) const {
    float v;
    if (host().node_attr_float(n_, to_view(name), &v)) return v;
    return std::nullopt;
  }
  std::optional<std::string> find_string(std::string_view name) const {
    LOOM_StringView v;
    if (host().node_attr_string(n_, to_view(name), &v)) return std::string(from_view(v));
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> find_ints(std::string_view name) const {
    const int64_t* p = nullptr;
    uint64_t n = 0;
    if (!host().node_attr_ints(n_, to_view(name), &p, &n)) return std::nullopt;
    return std::vector<int64_t>(p, p + n);
  }
  std::optional<std::vector<float>> find_floats(std::string_view name) const {
    const float* p = nullptr;
    uint64_t n = 0;
    if (!host().node_attr_floats(n_, to_view(name), &p, &n)) return std::nullopt;
    return std::vector<float>(p, p + n);
  }
  std::optional<std::vector<std::string>> find_strings(std::string_view name) const {
    uint64_t n = 0;
    if (!host().node_attr_strings(n_, to_view(name), &n)) return std::nullopt;
    std::vector<std::string> out;
    for (uint64_t i = 0; i < n; ++i)
      out.emplace_back(from_view(host().node_attr_string_at(n_, to_view(name), i)));
    return out;
  }

  int64_t attr_int(std::string_view name, int64_t fallback) const { return find_int(name).value_or(fallback); }
  float attr_float(std::string_view name, float fallback) const { return find_float(name).value_or(fallback); }
  std::string attr_string(std::string_view name, std::string fallback) const {
    return find_string(name).value_or(std::move(fallback));
  }
  std::vector<int64_t> attr_ints(std::string_view name, std::vector<int64_t> fallback = {}) const {
    return find_ints(name).value_or(std::move(fallback));
  }
  std::vector<float> attr_floats(std::string_view name, std::vector<float> fallback = {}) const {
    return find_floats(name).value_or(std::move(fallback));
  }
  std::vector<std::string> attr_strings(std::string_view name, std::vector<std::string> fallback = {}) const {
    return find_strings(name).value_or(std::move(fallback));
  }
  // Empty view when absent.
  ConstTensor attr_tensor(std::string_view name) const {
    const LOOM_Tensor* t = nullptr;
    host().node_attr_tensor(n_, to_view(name), &t);
    return ConstTensor(t);
  }
  // NULL when absent.
  const LOOM_GraphView* attr_graph(std::string_view name) const {
    const LOOM_GraphView* g = nullptr;
    host().node_attr_graph(n_, to_view(name), &g);
    return g;
  }
  // Required attribute: throws INVALID_ARGUMENT naming the node when absent.
  int64_t required_int(std::string_view name) const {
    auto v = find_int(name);
    if (!v) missing(name);
    return *v;
  }
  std::vector<int64_t> required_ints(std::string_view name) const {
    auto v = find_ints(name);
    if (!v) missing(name);
    return *v;
  }

 private:
  [[noreturn]] void missing(std::string_view attr) const {
    throw Error(std::string(op_type()) + " node '" + std::string(name()) +
                    "' lacks required attribute '" + std::string(attr) + "'",
                LOOM_STATUS_INVALID_ARGUMENT);
  }
  const LOOM_NodeView* n_;
};

class Graph {
 public:
  explicit Graph(const LOOM_GraphView* g) : g_(g) {}
  const LOOM_GraphView* raw() const { return g_; }
  size_t node_count() const { return static_cast<size_t>(host().graph_node_count(g_)); }
  Node node(size_t i) const { return Node(host().graph_node(g_, i)); }
  size_t input_count() const { return static_cast<size_t>(host().graph_input_count(g_)); }
  std::string_view input_name(size_t i) const { return from_view(host().graph_input_name(g_, i)); }
  size_t output_count() const { return static_cast<size_t>(host().graph_output_count(g_)); }
  std::string_view output_name(size_t i) const { return from_view(host().graph_output_name(g_, i)); }
  int64_t opset(std::string_view domain) const { return host().graph_opset(g_, to_view(domain)); }
  // Inside Ep::compile: the partition keeps its own (packed) copy of input
  // `i`, an initializer: the host may free its copy now, before any run
  // (LOOM_HostApi::graph_release_constant_input). Read no more through
  // Node::input_constant for it afterwards. False when the host is too
  // old to take it back.
  bool release_constant_input(size_t i) const {
    if (!LOOM_HAS_FIELD(&host(), LOOM_HostApi, graph_release_constant_input)) return false;
    host().graph_release_constant_input(g_, i);
    return true;
  }

 private:
  const LOOM_GraphView* g_;
};

}  // namespace loom::sdk
