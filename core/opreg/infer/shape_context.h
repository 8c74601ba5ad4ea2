// What a shape rule (shape_rules.h) reads and writes while the registry's
// in-process shape inference (shapes.h) walks a graph: value types, the
// values of small int tensors that hold shapes (Shape outputs and what is
// computed from them, int constants), and a checked way to record a more
// precise type (ir/type_precision.h: types never become less precise, and
// nothing the model declared is contradicted).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace loom::opreg {

using Shape = std::vector<DimInfo>;

inline DimInfo known_dim(int64_t v) { return DimInfo{v, ""}; }
inline DimInfo unknown_dim() { return DimInfo{-1, ""}; }

class ShapeContext {
 public:
  explicit ShapeContext(ir::Graph& graph);

  const ir::Graph& graph() const { return g_; }
  // Input i of n, "" (an absent optional) past its last: nodes of opsets
  // past the ONNX library's are checked for what later versions keep only.
  static const std::string& input(const ir::Node& n, size_t i);

  // The value's shape (rank known) and element type, from its recorded type
  // or its initializer.
  std::optional<Shape> shape(const std::string& v) const;
  DType dtype_of(const std::string& v) const;
  // The dims a shape-holding int tensor holds (symbolic where a dim is).
  std::optional<Shape> value(const std::string& v) const;
  void set_value(const std::string& v, Shape dims);
  // The raw values of a constant int tensor (an initializer or a Constant
  // node's), which may be negative (axes, -1 in shapes).
  std::optional<std::vector<int64_t>> const_ints(const std::string& v) const;
  void set_constant(const std::string& v, std::vector<int64_t> ints);
  // The same for small float constants (Resize's scales).
  std::optional<std::vector<float>> const_floats(const std::string& v) const;
  void set_float_constant(const std::string& v, std::vector<float> floats);

  // Records `dims` (and `dtype`) for v when more precise than what is known.
  void set(const std::string& v, DType dtype, Shape dims);
  // Records an element type for v where none is known.
  void set_dtype(const std::string& v, DType dtype);
  int gained() const { return gained_; }

 private:
  ir::Graph& g_;
  std::map<std::string, Shape> values_;
  std::map<std::string, std::vector<int64_t>> constants_;
  std::map<std::string, std::vector<float>> float_constants_;
  int gained_ = 0;
};

// Checked int64 arithmetic for sizes computed from a model (false on
// overflow, *r then unspecified): a hostile attribute gives "unknown".
inline bool add(int64_t a, int64_t b, int64_t* r) { return !__builtin_add_overflow(a, b, r); }
inline bool sub(int64_t a, int64_t b, int64_t* r) { return !__builtin_sub_overflow(a, b, r); }
inline bool mul(int64_t a, int64_t b, int64_t* r) { return !__builtin_mul_overflow(a, b, r); }

// The values of a small int32 / int64 tensor (rank <= 1, at most 64
// elements) as shape values hold them, or nullopt.
std::optional<std::vector<int64_t>> small_int_values(const Tensor& t);

// Helpers the rules share.
// The length of a 1-D shape-holding tensor of shape `s` when it is known
// and a rank a tensor may have (onnx/tensor_proto.h's kMaxTensorRank).
std::optional<size_t> rank_held(const std::optional<Shape>& s);
int64_t attr_int(const ir::Node& n, const std::string& name, int64_t fallback);
// An ints attribute's values; empty when absent or of another type.
std::vector<int64_t> attr_ints(const ir::Node& n, const std::string& name);
// numpy broadcasting, assuming a valid model (a dim that is not 1 wins).
Shape broadcast(const Shape& a, const Shape& b);
// An axis in [-rank, rank) made non-negative; nullopt out of range.
std::optional<size_t> normalize_axis(int64_t axis, size_t rank);

}  // namespace loom::opreg
