// cast_elimination (basic): Casts to the type a value already has go away,
// and Cast pairs whose first step is exact collapse; pairs that change
// values stay.
#include <gtest/gtest.h>

#include "common/model_builder.h"
#include "unit/transform/fusion_checks.h"

namespace loom {
namespace {

using P = ::onnx::TensorProto;
constexpr auto kBasic = OptimizationLevel::kBasic;

::onnx::NodeProto& cast(testing::ModelBuilder& m, const std::string& in, const std::string& out, int64_t to) {
  auto& n = m.node("Cast", {in}, {out});
  testing::add_int_attr(n, "to", to);
  return n;
}

std::map<std::string, Tensor> float_x() {
  // Fractions, negatives and values beyond float16's precision.
  return {{"x", testing::float_tensor({2, 5}, {-2.7f, -1.5f, -0.3f, 0.f, 0.3f, 1.5f, 2.7f, 1000.123f, -65519.7f, 3.1e-5f})}};
}

// x(T0) -> Cast(T1) -> Cast(T2) -> Relu -> y, optionally with the middle value also an output.
std::string chain(int32_t t0, int32_t t1, int32_t t2, bool leak_middle = false) {
  testing::ModelBuilder m(17);
  m.input("x", t0, {2, 5});
  cast(m, "x", "a", t1);
  cast(m, "a", "b", t2);
  m.node("Neg", {"b"}, {"y"});
  m.output("y", t2, {2, 5});
  if (leak_middle) m.output("a", t1, {2, 5});
  return m.bytes();
}

TEST(CastEliminationTest, Listed) { testing::expect_listed_pass("cast_elimination", kBasic); }

TEST(CastEliminationTest, CastToOwnTypeIsRemoved) {
  testing::ModelBuilder m(17);
  m.input("x", P::FLOAT, {2, 5});
  cast(m, "x", "a", P::FLOAT);
  m.node("Neg", {"a"}, {"y"});
  m.output("y", P::FLOAT, {2, 5});
  testing::expect_fuses(m.bytes(), float_x(), {{"Neg", 1}}, "Cast(float) of float", kBasic, 0);

  // A graph output keeps its name (through an Identity of the input).
  testing::ModelBuilder out(17);
  out.input("x", P::FLOAT, {2, 5});
  cast(out, "x", "y", P::FLOAT);
  out.output("y", P::FLOAT, {2, 5});
  testing::expect_fuses(out.bytes(), float_x(), {{"Identity", 1}}, "Cast(float) as the graph output", kBasic, 0);
}

TEST(CastEliminationTest, ExactRoundTripsVanish) {
  testing::expect_fuses(chain(P::FLOAT, P::DOUBLE, P::FLOAT), float_x(), {{"Neg", 1}}, "float->double->float", kBasic,
                        0);
  testing::expect_fuses(chain(P::FLOAT, P::DOUBLE, P::INT32), float_x(), {{"Cast", 1}, {"Neg", 1}},
                        "float->double->int32 becomes float->int32", kBasic, 0);
  std::map<std::string, Tensor> ints = {
      {"x", Tensor::from_vector(DType::kInt32, {2, 5}, std::vector<int32_t>{-7, 0, 1, 16777217, -16777219, 5, 9,
                                                                             2147483647, -2147483647, 3})}};
  testing::expect_fuses(chain(P::INT32, P::INT64, P::FLOAT), ints, {{"Cast", 1}, {"Neg", 1}},
                        "int32->int64->float becomes int32->float", kBasic, 0);
  testing::expect_fuses(chain(P::INT32, P::DOUBLE, P::INT32), ints, {{"Neg", 1}}, "int32->double->int32", kBasic, 0);
}

TEST(CastEliminationTest, LossyChainsStay) {
  testing::expect_no_fusion(chain(P::FLOAT, P::INT32, P::FLOAT), float_x(), "Cast", "float->int32->float", kBasic);
  testing::expect_no_fusion(chain(P::FLOAT, P::FLOAT16, P::FLOAT), float_x(), "Cast", "float->float16->float", kBasic);
  testing::expect_no_fusion(chain(P::FLOAT, P::INT64, P::INT32), float_x(), "Cast", "float->int64->int32", kBasic);
  auto s = testing::session(chain(P::FLOAT, P::INT32, P::FLOAT), kBasic);
  ASSERT_TRUE(s);
  EXPECT_EQ(testing::op_counts(*s)["Cast"], 2);
}

TEST(CastEliminationTest, MiddleReadElsewhereOnlyRewiresTheOuterCast) {
  // a = Cast(x, double) is also an output: it stays; the outer Cast reads x,
  // which makes it a Cast to x's own type, removed in turn.
  testing::expect_fuses(chain(P::FLOAT, P::DOUBLE, P::FLOAT, true), float_x(), {{"Cast", 1}, {"Neg", 1}},
                        "middle value also an output", kBasic, 0);
}

}  // namespace
}  // namespace loom
