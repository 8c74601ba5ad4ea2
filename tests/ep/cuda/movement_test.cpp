// The CUDA EP's data-movement family against the reference EP, part one:
// the shape copies (Reshape, Flatten, Squeeze, Unsqueeze, Identity,
// Dropout), Shape and Size, Transpose, DepthToSpace / SpaceToDepth, Concat,
// Split, Expand and Tile, over float, float16, int64 and bool (and a few
// other types), opset variants, negative axes, odd sizes and empty tensors.
// Movement is exact: outputs must match bit for bit. slicing_test.cpp and
// resize_test.cpp hold the rest.
#include <gtest/gtest.h>

#include "ep/cuda/movement_case.h"

namespace loom {
namespace {

using namespace cuda_testing;
using namespace cuda_testing::movement;

TEST(CudaMovement, ReshapeFlattenSqueezeUnsqueeze) {
  LOOM_SKIP_WITHOUT_GPU();
  for (DType t : kTypes) {
    check_unary(13, "Reshape", t, kOdd, {{"s", {0, -1}}}, nullptr, "Reshape 0 -1");
    check_unary(14, "Reshape", t, kOdd, {{"s", {3, 0, -1}}}, nullptr, "Reshape 0 copies");
    check_unary(13, "Flatten", t, kOdd, {}, [](auto& n) { testing::add_int_attr(n, "axis", -1); }, "Flatten -1");
    check_unary(13, "Squeeze", t, {3, 1, 5, 1}, {{"a", {-1}}}, nullptr, "Squeeze-13 axes");
    check_unary(13, "Unsqueeze", t, kOdd, {{"a", {1, -1}}}, nullptr, "Unsqueeze-13");
    check_unary(13, "Identity", t, kOdd, {}, nullptr, "Identity-13");
  }
  const DType f = DType::kFloat;
  check_unary(14, "Reshape", f, {0, 5}, {{"s", {5, 0}}}, [](auto& n) { testing::add_int_attr(n, "allowzero", 1); },
              "Reshape allowzero empty");
  check_unary(14, "Reshape", f, {2, 0, 3}, {{"s", {0, -1, 3}}}, nullptr, "Reshape empty");
  check_unary(5, "Reshape", f, kOdd, {{"s", {-1, 129}}}, nullptr, "Reshape-5");
  check_unary(1, "Flatten", f, kOdd, {}, nullptr, "Flatten-1 default");
  check_unary(13, "Flatten", f, kOdd, {}, [](auto& n) { testing::add_int_attr(n, "axis", 0); }, "Flatten 0");
  check_unary(13, "Flatten", f, {2, 0, 3}, {}, [](auto& n) { testing::add_int_attr(n, "axis", 3); }, "Flatten empty");
  check_unary(11, "Squeeze", f, {1, 3, 1, 5, 1}, {}, [](auto& n) { testing::add_ints_attr(n, "axes", {0, -1}); },
              "Squeeze-11 attr");
  check_unary(11, "Squeeze", f, {1, 3, 1, 5, 1}, {}, nullptr, "Squeeze-11 all ones");
  check_unary(13, "Squeeze", f, {1, 3, 1, 5, 1}, {}, nullptr, "Squeeze-13 no axes");
  check_unary(11, "Unsqueeze", f, {3, 5}, {}, [](auto& n) { testing::add_ints_attr(n, "axes", {0, -1}); },
              "Unsqueeze-11 attr");
  check_unary(1, "Unsqueeze", f, {3, 5}, {}, [](auto& n) { testing::add_ints_attr(n, "axes", {2}); }, "Unsqueeze-1");
  check_unary(16, "Identity", DType::kUint8, kOdd, {}, nullptr, "Identity-16");
  check_unary(13, "Identity", f, {4, 0}, {}, nullptr, "Identity empty");
}

TEST(CudaMovement, DropoutAtInference) {
  LOOM_SKIP_WITHOUT_GPU();
  for (DType t : {DType::kFloat, DType::kFloat16}) {
    {
      Case c(7);  // mask of the input's type
      c.data("x", t, kOdd);
      c.node("Dropout", {"x"}, {"y", "mask"});
      c.out("y", t).out("mask", t).check("Dropout-7 with mask");
    }
    {
      Case c(10);  // bool mask
      c.data("x", t, {5, 67});
      c.node("Dropout", {"x"}, {"y", "mask"});
      c.out("y", t).out("mask", DType::kBool).check("Dropout-10 with mask");
    }
    {
      Case c(13);
      c.data("x", t, {5, 67}).scalar("ratio", DType::kFloat, 0.3).scalar("train", DType::kBool, 0);
      c.node("Dropout", {"x", "ratio", "train"}, {"y", "mask"});
      c.out("y", t).out("mask", DType::kBool).check("Dropout-13 training_mode false");
    }
    {
      Case c(13);
      c.data("x", t, {5, 67});
      c.node("Dropout", {"x"}, {"y"});
      c.out("y", t).check("Dropout-13");
    }
  }
}

TEST(CudaMovement, ShapeAndSize) {
  LOOM_SKIP_WITHOUT_GPU();
  for (DType t : {DType::kFloat, DType::kInt64}) {
    Case c(13);
    c.data("x", t, kOdd);
    c.node("Shape", {"x"}, {"s"});
    c.node("Size", {"x"}, {"n"});
    c.out("s", DType::kInt64, false).out("n", DType::kInt64, false).check("Shape and Size");
  }
  const std::vector<std::pair<int64_t, int64_t>> ranges = {{1, kMax}, {-2, -1}, {-10, 10}, {2, 1}, {0, 0}};
  for (const auto& [start, end] : ranges) {
    Case c(15);
    c.data("x", DType::kFloat16, {2, 3, 5, 7});
    auto& n = c.node("Shape", {"x"}, {"s"});
    testing::add_int_attr(n, "start", start);
    if (end != kMax) testing::add_int_attr(n, "end", end);
    c.out("s", DType::kInt64, false).check("Shape-15 " + std::to_string(start) + ":" + std::to_string(end));
  }
  Case c(13);
  c.data("x", DType::kFloat, {2, 0, 7});
  c.node("Size", {"x"}, {"n"});
  c.node("Shape", {"x"}, {"s"});
  c.out("n", DType::kInt64, false).out("s", DType::kInt64, false).check("Size of empty");
}

TEST(CudaMovement, Transpose) {
  LOOM_SKIP_WITHOUT_GPU();
  auto perm = [](std::vector<int64_t> p) {
    return [p](::onnx::NodeProto& n) { testing::add_ints_attr(n, "perm", p); };
  };
  for (DType t : {DType::kFloat, DType::kFloat16, DType::kInt64, DType::kBool, DType::kInt8}) {
    check_unary(13, "Transpose", t, kOdd, {}, nullptr, "Transpose default perm");
    check_unary(13, "Transpose", t, {2, 3, 5, 7}, {}, perm({0, 2, 3, 1}), "Transpose NCHW->NHWC");
  }
  const DType f = DType::kFloat;
  check_unary(1, "Transpose", f, kOdd, {}, perm({1, 0, 2}), "Transpose-1");
  check_unary(13, "Transpose", f, {2, 1, 3, 2, 5, 3}, {}, perm({5, 0, 3, 1, 4, 2}), "Transpose rank 6");
  check_unary(13, "Transpose", f, {2, 1, 2, 3, 1, 2, 2, 3}, {}, nullptr, "Transpose rank 8");
  check_unary(13, "Transpose", f, {0, 3, 4}, {}, perm({2, 0, 1}), "Transpose empty");
  check_unary(13, "Transpose", f, {300}, {}, nullptr, "Transpose rank 1");
  check_unary(13, "Transpose", f, {2, 3, 5}, {}, perm({0, 1, 2}), "Transpose identity");
}

TEST(CudaMovement, DepthToSpaceAndSpaceToDepth) {
  LOOM_SKIP_WITHOUT_GPU();
  auto attrs = [](int64_t b, const std::string& mode) {
    return [b, mode](::onnx::NodeProto& n) {
      testing::add_int_attr(n, "blocksize", b);
      if (!mode.empty()) testing::add_string_attr(n, "mode", mode);
    };
  };
  for (DType t : {DType::kFloat, DType::kFloat16, DType::kInt64}) {
    check_unary(13, "DepthToSpace", t, {2, 8, 3, 5}, {}, attrs(2, "DCR"), "DepthToSpace DCR");
    check_unary(13, "DepthToSpace", t, {2, 8, 3, 5}, {}, attrs(2, "CRD"), "DepthToSpace CRD");
    check_unary(13, "SpaceToDepth", t, {2, 3, 6, 4}, {}, attrs(2, ""), "SpaceToDepth");
  }
  check_unary(1, "DepthToSpace", DType::kFloat, {1, 18, 4, 3}, {}, attrs(3, ""), "DepthToSpace-1");
  check_unary(1, "SpaceToDepth", DType::kFloat, {1, 2, 9, 6}, {}, attrs(3, ""), "SpaceToDepth-1");
}

TEST(CudaMovement, Concat) {
  LOOM_SKIP_WITHOUT_GPU();
  for (DType t : kTypes) {
    Case c(13);
    c.data("a", t, {2, 3, 5}).data("b", t, {2, 7, 5}).data("c", t, {2, 0, 5}).data("d", t, {2, 1, 5});
    testing::add_int_attr(c.node("Concat", {"a", "b", "c", "d"}, {"y"}), "axis", 1);
    c.out("y", t).check("Concat axis 1 " + dtype_name(t));
  }
  {
    Case c(13);
    c.data("a", DType::kFloat, kOdd).data("b", DType::kFloat, {3, 37, 5});
    testing::add_int_attr(c.node("Concat", {"a", "b"}, {"y"}), "axis", -1);
    c.out("y", DType::kFloat).check("Concat axis -1");
  }
  {
    Case c(4);
    c.data("a", DType::kFloat, {3, 7}).data("b", DType::kFloat, {1, 7});
    testing::add_int_attr(c.node("Concat", {"a", "b"}, {"y"}), "axis", 0);
    c.out("y", DType::kFloat).check("Concat-4 axis 0");
  }
  {
    Case c(13);
    c.data("a", DType::kFloat16, {0, 4}).data("b", DType::kFloat16, {0, 4});
    testing::add_int_attr(c.node("Concat", {"a", "b"}, {"y"}), "axis", 0);
    c.out("y", DType::kFloat16).check("Concat empty");
  }
}

TEST(CudaMovement, Split) {
  LOOM_SKIP_WITHOUT_GPU();
  for (DType t : kTypes) {
    Case c(11);
    c.data("x", t, {3, 10, 7});
    auto& n = c.node("Split", {"x"}, {"a", "b", "c"});
    testing::add_int_attr(n, "axis", 1);
    testing::add_ints_attr(n, "split", {2, 5, 3});
    c.out("a", t).out("b", t).out("c", t).check("Split-11 attr " + dtype_name(t));
  }
  {
    Case c(2);
    c.data("x", DType::kFloat, {3, 4, 10});
    testing::add_int_attr(c.node("Split", {"x"}, {"a", "b"}), "axis", 2);
    c.out("a", DType::kFloat).out("b", DType::kFloat).check("Split-2 equal");
  }
  {
    Case c(13);
    c.data("x", DType::kFloat, kOdd).ints("s", {3}, {1, 0, 36});
    testing::add_int_attr(c.node("Split", {"x", "s"}, {"a", "b", "c"}), "axis", -2);
    c.out("a", DType::kFloat).out("b", DType::kFloat).out("c", DType::kFloat).check("Split-13 input, empty part");
  }
  {
    Case c(13);
    c.data("x", DType::kFloat16, {2, 10, 3});
    testing::add_int_attr(c.node("Split", {"x"}, {"a", "b", "c", "d", "e"}), "axis", 1);
    for (const char* o : {"a", "b", "c", "d", "e"}) c.out(o, DType::kFloat16);
    c.check("Split-13 five equal");
  }
  {
    Case c(18);
    c.data("x", DType::kFloat, {4, 7});
    auto& n = c.node("Split", {"x"}, {"a", "b", "c"});
    testing::add_int_attr(n, "axis", -1);
    testing::add_int_attr(n, "num_outputs", 3);
    c.out("a", DType::kFloat).out("b", DType::kFloat).out("c", DType::kFloat).check("Split-18 num_outputs");
  }
}

TEST(CudaMovement, Expand) {
  LOOM_SKIP_WITHOUT_GPU();
  for (DType t : kTypes) {
    check_unary(13, "Expand", t, {3, 1, 5}, {{"s", {2, 3, 4, 5}}}, nullptr, "Expand to higher rank");
    check_unary(13, "Expand", t, {3, 1}, {{"s", {3, 1, 1}}}, nullptr, "Expand bidirectional");
  }
  const DType f = DType::kFloat;
  check_unary(8, "Expand", f, {1, 37, 1}, {{"s", {3, 1, 129}}}, nullptr, "Expand-8 odd");
  check_unary(13, "Expand", f, {2, 5}, {{"s", {5}}}, nullptr, "Expand to a lower-rank shape");
  check_unary(13, "Expand", f, {1, 4}, {{"s", {0, 4}}}, nullptr, "Expand to empty");
  check_unary(13, "Expand", f, kOdd, {{"s", {1, 1, 1}}}, nullptr, "Expand as a copy");
}

TEST(CudaMovement, Tile) {
  LOOM_SKIP_WITHOUT_GPU();
  for (DType t : kTypes) check_unary(13, "Tile", t, {3, 37, 5}, {{"r", {2, 1, 3}}}, nullptr, "Tile");
  const DType f = DType::kFloat;
  check_unary(6, "Tile", f, {2, 3}, {{"r", {0, 2}}}, nullptr, "Tile-6 zero repeat");
  check_unary(13, "Tile", f, {2, 1, 3, 1, 2}, {{"r", {1, 3, 1, 2, 1}}}, nullptr, "Tile rank 5");
  check_unary(13, "Tile", DType::kUint8, {7, 11}, {{"r", {3, 5}}}, nullptr, "Tile uint8");
}

}  // namespace
}  // namespace loom
