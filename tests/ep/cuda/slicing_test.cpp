// The CUDA EP's data-movement family against the reference EP, part two:
// Slice (opset 1 / 9 attributes, 10+ inputs, negative steps, clamping),
// Pad (every mode, attribute and input forms, axes, crops), the gathers
// (Gather with int32 / int64 and negative indices, GatherElements,
// GatherND with batch_dims), Range and ConstantOfShape. Exact comparison.
#include <gtest/gtest.h>

#include "ep/cuda/movement_case.h"

namespace loom {
namespace {

using namespace cuda_testing;
using namespace cuda_testing::movement;

// Indices of `type` and `dims`, in [-dim, dim) (negative ones included).
Tensor index_tensor(DType type, const Dims& dims, int64_t dim, uint32_t seed) {
  const int64_t n = count_of(dims);
  std::vector<int64_t> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 7u;
  for (int64_t& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<int64_t>((s >> 8) % static_cast<uint32_t>(2 * dim)) - dim;
  }
  if (type == DType::kInt64) return Tensor::from_vector(type, dims, v);
  return Tensor::from_vector(type, dims, std::vector<int32_t>(v.begin(), v.end()));
}

// GatherND tuples: the last dim of `dims` is k; coordinate j in
// [-coord_dims[j], coord_dims[j]).
Tensor tuple_tensor(const Dims& dims, const Dims& coord_dims, uint32_t seed) {
  const int64_t n = count_of(dims), k = dims.back();
  std::vector<int64_t> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 3u;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = coord_dims[static_cast<size_t>(i % k)];
    s = s * 1664525u + 1013904223u;
    v[static_cast<size_t>(i)] = static_cast<int64_t>((s >> 8) % static_cast<uint32_t>(2 * d)) - d;
  }
  return Tensor::from_vector(DType::kInt64, dims, v);
}

void check_slice(DType t, const Dims& dims, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                 const std::vector<int64_t>& axes, const std::vector<int64_t>& steps, const std::string& what) {
  Case c(13);
  const int64_t n = static_cast<int64_t>(starts.size());
  c.data("x", t, dims).ints("starts", {n}, starts).ints("ends", {n}, ends);
  std::vector<std::string> in = {"x", "starts", "ends", "", ""};
  if (!axes.empty()) c.ints("axes", {n}, axes), in[3] = "axes";
  if (!steps.empty()) c.ints("steps", {n}, steps), in[4] = "steps";
  while (in.back().empty()) in.pop_back();
  c.node("Slice", in, {"y"});
  c.out("y", t).check(what + " " + dtype_name(t));
}

TEST(CudaSlicing, Slice) {
  LOOM_SKIP_WITHOUT_GPU();
  for (DType t : kTypes) {
    check_slice(t, kOdd, {-1, 5}, {kMin, 100}, {1, -1}, {-1, 3}, "Slice reverse and step");
    check_slice(t, kOdd, {1}, {-1}, {}, {}, "Slice first axis");
  }
  const DType f = DType::kFloat;
  check_slice(f, kOdd, {kMax, 7}, {kMin, -kMax}, {2, 0}, {-2, 1}, "Slice clamped starts and ends");
  check_slice(f, kOdd, {5}, {2}, {1}, {}, "Slice empty result");
  check_slice(f, kOdd, {0, 0, 0}, {kMax, kMax, kMax}, {}, {}, "Slice everything");
  check_slice(f, {0, 5}, {1}, {4}, {1}, {}, "Slice of an empty tensor");
  check_slice(f, kOdd, {-100}, {kMin}, {0}, {-1}, "Slice negative step from below the start");
  check_slice(f, kOdd, {120, 2, 1}, {3, -kMax, 2}, {-1, 0, 1}, {-7, -1, 5}, "Slice three axes");
  check_slice(DType::kUint8, {4, 1, 6, 5}, {3, 1}, {0, 5}, {-1, 2}, {-2, 2}, "Slice rank 4");
  {
    Case c(9);
    c.data("x", f, kOdd);
    auto& n = c.node("Slice", {"x"}, {"y"});
    testing::add_ints_attr(n, "starts", {1, -10});
    testing::add_ints_attr(n, "ends", {3, 1000});
    testing::add_ints_attr(n, "axes", {0, 2});
    c.out("y", f).check("Slice-9 attributes");
  }
  {
    Case c(1);
    c.data("x", DType::kFloat16, {4, 6});
    auto& n = c.node("Slice", {"x"}, {"y"});
    testing::add_ints_attr(n, "starts", {1, 2});
    testing::add_ints_attr(n, "ends", {-1, 5});
    c.out("y", DType::kFloat16).check("Slice-1 without axes");
  }
  {
    Case c(10);
    c.data("x", f, {6, 9}).ints("st", {2}, {-4, 1}).ints("en", {2}, {5, -2});
    c.node("Slice", {"x", "st", "en"}, {"y"});
    c.out("y", f).check("Slice-10");
  }
}

// Pad-11+ with the pads (and optional value / axes) as initializers.
void check_pad(int64_t opset, DType t, const Dims& dims, const std::string& mode, const std::vector<int64_t>& pads,
               const std::vector<int64_t>& axes, bool with_value, const std::string& what) {
  Case c(opset);
  c.data("x", t, dims).ints("pads", {static_cast<int64_t>(pads.size())}, pads);
  std::vector<std::string> in = {"x", "pads"};
  if (with_value) c.scalar("value", t, 1.5), in.push_back("value");
  if (!axes.empty()) {
    if (!with_value) in.push_back("");
    c.ints("axes", {static_cast<int64_t>(axes.size())}, axes);
    in.push_back("axes");
  }
  auto& n = c.node("Pad", in, {"y"});
  if (!mode.empty()) testing::add_string_attr(n, "mode", mode);
  c.out("y", t).check(what + " " + mode + " " + dtype_name(t));
}

TEST(CudaSlicing, Pad) {
  LOOM_SKIP_WITHOUT_GPU();
  const Dims x = {2, 5, 7};
  for (DType t : kTypes) {
    check_pad(13, t, x, "constant", {0, 1, 2, 1, 0, 3}, {}, true, "Pad");
    check_pad(13, t, x, "reflect", {0, 2, 3, 0, 1, 4}, {}, false, "Pad");
    check_pad(13, t, x, "edge", {1, 2, 3, 2, 1, 0}, {}, false, "Pad");
  }
  const DType f = DType::kFloat;
  check_pad(11, f, x, "", {0, 1, 2, 1, 0, 3}, {}, false, "Pad-11 default constant");
  check_pad(19, f, x, "wrap", {0, 2, 3, 0, 4, 6}, {}, false, "Pad-19");
  check_pad(19, DType::kInt64, x, "wrap", {1, 2, 3, 0, 4, 6}, {}, false, "Pad-19");
  check_pad(13, f, x, "constant", {0, -1, 2, 0, 1, -3}, {}, true, "Pad crop");
  check_pad(13, f, x, "reflect", {0, -1, 2, 0, 2, -3}, {}, false, "Pad crop");
  check_pad(13, f, kOdd, "reflect", {1, 3, 5, 1, 2, 7}, {}, false, "Pad odd");
  check_pad(18, f, x, "constant", {2, 3}, {-1}, false, "Pad-18 axes");
  check_pad(18, DType::kFloat16, x, "edge", {1, 0, 2, 1}, {0, 2}, true, "Pad-18 axes");
  check_pad(13, f, {0, 3}, "constant", {1, 0, 1, 0}, {}, true, "Pad of an empty dim");
  for (DType t : {DType::kFloat, DType::kUint8, DType::kFloat16}) {  // Cast-1 has no int64 path
    Case c(2);
    c.data("x", t, {3, 5});
    auto& n = c.node("Pad", {"x"}, {"y"});
    testing::add_ints_attr(n, "pads", {0, 1, 1, 2});
    testing::add_float_attr(n, "value", 3.25f);
    c.out("y", t).check("Pad-2 attributes " + dtype_name(t));
  }
  Case c(2);
  c.data("x", f, {3, 5});
  auto& n = c.node("Pad", {"x"}, {"y"});
  testing::add_ints_attr(n, "pads", {1, 2, 1, 3});
  testing::add_string_attr(n, "mode", "reflect");
  c.out("y", f).check("Pad-2 reflect");
}

TEST(CudaSlicing, Gather) {
  LOOM_SKIP_WITHOUT_GPU();
  const Dims data = {5, 37, 11};
  for (DType t : kTypes) {
    Case c(13);
    c.data("x", t, data).feed("i", index_tensor(DType::kInt64, {2, 3}, 5, 1));
    c.node("Gather", {"x", "i"}, {"y"});
    c.out("y", t).check("Gather axis 0 " + dtype_name(t));
  }
  for (int64_t axis : {1, -1}) {
    Case c(13);
    c.data("x", DType::kFloat, data).feed("i", index_tensor(DType::kInt32, {4}, data[axis < 0 ? 2 : 1], 2));
    testing::add_int_attr(c.node("Gather", {"x", "i"}, {"y"}), "axis", axis);
    c.out("y", DType::kFloat).check("Gather int32 axis " + std::to_string(axis));
  }
  {
    Case c(1);  // a scalar index drops the axis
    c.data("x", DType::kFloat16, data).feed("i", Tensor::from_vector(DType::kInt64, {}, std::vector<int64_t>{-2}));
    testing::add_int_attr(c.node("Gather", {"x", "i"}, {"y"}), "axis", 2);
    c.out("y", DType::kFloat16).check("Gather-1 scalar index");
  }
  {
    Case c(13);  // constant indices (checked on the host)
    c.data("x", DType::kFloat, data).ints("i", {3}, {4, -5, 0});
    c.node("Gather", {"x", "i"}, {"y"});
    c.out("y", DType::kFloat).check("Gather constant indices");
  }
  {
    Case c(13);
    c.data("x", DType::kFloat, data).feed("i", index_tensor(DType::kInt64, {0}, 5, 3));
    testing::add_int_attr(c.node("Gather", {"x", "i"}, {"y"}), "axis", 1);
    c.out("y", DType::kFloat).check("Gather no indices");
  }
}

TEST(CudaSlicing, GatherElementsAndGatherNd) {
  LOOM_SKIP_WITHOUT_GPU();
  for (DType t : kTypes) {
    Case c(13);
    c.data("x", t, {4, 7, 9}).feed("i", index_tensor(DType::kInt64, {4, 3, 9}, 7, 4));
    testing::add_int_attr(c.node("GatherElements", {"x", "i"}, {"y"}), "axis", 1);
    c.out("y", t).check("GatherElements axis 1 " + dtype_name(t));
  }
  {
    Case c(11);
    c.data("x", DType::kFloat, {4, 7, 9}).feed("i", index_tensor(DType::kInt32, {2, 7, 5}, 9, 5));
    testing::add_int_attr(c.node("GatherElements", {"x", "i"}, {"y"}), "axis", -1);
    c.out("y", DType::kFloat).check("GatherElements int32 axis -1");
  }
  for (DType t : kTypes) {
    Case c(11);
    c.data("x", t, {3, 4, 5}).feed("i", tuple_tensor({6, 2}, {3, 4}, 6));
    c.node("GatherND", {"x", "i"}, {"y"});
    c.out("y", t).check("GatherND " + dtype_name(t));
  }
  {
    Case c(12);
    c.data("x", DType::kFloat, {2, 3, 4, 5}).feed("i", tuple_tensor({2, 6, 2}, {3, 4}, 7));
    testing::add_int_attr(c.node("GatherND", {"x", "i"}, {"y"}), "batch_dims", 1);
    c.out("y", DType::kFloat).check("GatherND batch_dims 1");
  }
  {
    Case c(13);
    c.data("x", DType::kFloat16, {3, 4}).feed("i", tuple_tensor({5, 2}, {3, 4}, 8));
    c.node("GatherND", {"x", "i"}, {"y"});
    c.out("y", DType::kFloat16).check("GatherND whole tuples");
  }
}

TEST(CudaSlicing, Range) {
  LOOM_SKIP_WITHOUT_GPU();
  struct R {
    DType type;
    double start, limit, delta;
  };
  const R cases[] = {{DType::kFloat, 0, 10.5, 0.7},  {DType::kFloat, 5, -3, -0.5}, {DType::kDouble, 1, 2, 0.1},
                     {DType::kInt32, 2, 30, 3},      {DType::kInt64, -7, 20, 4},   {DType::kInt64, 5, 0, 1},
                     {DType::kFloat, 0, 1000.25, 1.5}};
  for (const R& r : cases) {
    Case c(11);
    c.scalar("s", r.type, r.start).scalar("l", r.type, r.limit).scalar("d", r.type, r.delta);
    c.node("Range", {"s", "l", "d"}, {"y"});
    c.out("y", r.type).check("Range " + dtype_name(r.type) + " " + std::to_string(r.start) + " " +
                             std::to_string(r.limit) + " " + std::to_string(r.delta));
  }
}

void add_value(::onnx::NodeProto& n, DType t, double v) {
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(::onnx::AttributeProto::TENSOR);
  auto* p = a->mutable_t();
  p->set_data_type(onnx_type(t));
  p->add_dims(1);
  p->set_raw_data(Case::bytes_of(t, v));
}

TEST(CudaSlicing, ConstantOfShape) {
  LOOM_SKIP_WITHOUT_GPU();
  struct V {
    DType type;
    double value;
    Dims shape;
  };
  const V cases[] = {{DType::kFloat, 2.5, {2, 3, 5}}, {DType::kInt64, 7, {3, 37, 129}}, {DType::kFloat16, -1.25, {4, 9}},
                     {DType::kBool, 1, {5, 3}},       {DType::kFloat, 1, {0, 3}},         {DType::kInt32, -3, {}}};
  for (const V& v : cases) {
    Case c(9);
    c.ints("shape", {static_cast<int64_t>(v.shape.size())}, v.shape);
    add_value(c.node("ConstantOfShape", {"shape"}, {"y"}), v.type, v.value);
    c.out("y", v.type).check("ConstantOfShape " + dtype_name(v.type));
  }
  Case c(9);
  c.ints("shape", {2}, {7, 3});
  c.node("ConstantOfShape", {"shape"}, {"y"});
  c.out("y", DType::kFloat).check("ConstantOfShape default zeros");
}

}  // namespace
}  // namespace loom
