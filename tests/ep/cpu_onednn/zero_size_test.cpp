// Zero-sized tensors (a batch of 0, a detector's empty box list): cpu_onednn
// declines them at run time, and the partition's nodes then run on the
// fallback provider (exec/partition_fallback.h), before and after the
// partition packed and released its weights. A run that would need a
// released weight's values fails naming it; none returns wrong values.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

// cpu_onednn first, the reference EP as the fallback.
std::shared_ptr<Environment> onednn_with_fallback() {
  static auto env = environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow, 2);
  return env;
}

void expect_runs_like_reference(Session& s, Session& ref, const std::vector<int64_t>& dims, uint32_t seed,
                                const std::string& what) {
  const std::map<std::string, Tensor> in = {{"x", random_tensor(dims, seed)}};
  auto got = s.run(in);
  auto want = ref.run(in);
  ASSERT_TRUE(want.has_value()) << what << ": " << want.status().message();
  ASSERT_TRUE(got.has_value()) << what << ": " << got.status().message();
  for (size_t o = 0; o < want->size(); ++o) expect_close((*want)[o], (*got)[o], {}, what + ", output " + std::to_string(o));
}

void expect_on_onednn(const Session& s, const std::string& op) {
  bool found = false;
  for (const auto& n : s.placement().nodes)
    if (n.op_type == op) {
      found = true;
      EXPECT_EQ(n.provider, "cpu_onednn") << op;
    }
  EXPECT_TRUE(found) << op;
}

// x [n, 3, 8, 8] -> Conv -> Relu -> Reshape [n, 256] -> MatMul [256, 10] -> Sigmoid
std::string conv_head_model() {
  testing::ModelBuilder m;
  m.input("x", kFloat, {-1, 3, 8, 8});
  random_weights(m, "w", {4, 3, 3, 3}, 1, 27);
  random_weights(m, "b", {4}, 2);
  random_weights(m, "m", {256, 10}, 3, 256);
  int64_initializer(m, "shape", {-1, 256});
  auto& conv = m.node("Conv", {"x", "w", "b"}, {"c"});
  auto* pads = conv.add_attribute();
  pads->set_name("pads");
  pads->set_type(::onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  m.node("Relu", {"c"}, {"r"});
  m.node("Reshape", {"r", "shape"}, {"f"});
  m.node("MatMul", {"f", "m"}, {"mm"});
  m.node("Sigmoid", {"mm"}, {"y"});
  m.output("y", kFloat, {});
  return m.bytes();
}

TEST(OnednnZeroSize, EmptyBatchesRunBeforeAndAfterWeightsArePacked) {
  const std::string model = conv_head_model();
  auto s = make_session(onednn_with_fallback(), model);
  auto ref = make_session(reference_env(), model);
  ASSERT_TRUE(s && ref);
  expect_on_onednn(*s, "MatMul");
  uint32_t seed = 10;
  // 0 first (weights not packed yet), then 2 (packed and released), then 0 again.
  for (int64_t batch : {0, 2, 0, 3, 0}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    expect_runs_like_reference(*s, *ref, {batch, 3, 8, 8}, seed++, "batch " + std::to_string(batch));
  }
}

// A detector's box post-processing on n boxes: scaled, offset, squashed and
// joined with the scores; n is 0 when nothing was found.
TEST(OnednnZeroSize, PostProcessingOfNoDetections) {
  testing::ModelBuilder m;
  m.input("x", kFloat, {-1, 4});
  m.float_initializer("scale", {4}, {2, 2, 3, 3});
  m.float_initializer("offset", {4}, {0.5f, 0.5f, -1, -1});
  m.node("Mul", {"x", "scale"}, {"scaled"});
  m.node("Add", {"scaled", "offset"}, {"boxes"});
  m.node("Sigmoid", {"x"}, {"scores4"});
  m.node("Concat", {"boxes", "scores4"}, {"y"}).add_attribute()->CopyFrom([] {
    ::onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(::onnx::AttributeProto::INT);
    a.set_i(1);
    return a;
  }());
  m.output("y", kFloat, {});
  const std::string model = m.bytes();
  auto s = make_session(onednn_with_fallback(), model);
  auto ref = make_session(reference_env(), model);
  ASSERT_TRUE(s && ref);
  expect_on_onednn(*s, "Mul");
  for (int64_t boxes : {5, 0, 1, 0}) {
    SCOPED_TRACE(std::to_string(boxes) + " boxes");
    expect_runs_like_reference(*s, *ref, {boxes, 4}, 20 + static_cast<uint32_t>(boxes), "boxes");
  }
}

// An empty input whose partition still makes values from a packed weight
// (here only its bias survives the empty sum): the fallback has no bytes
// for the weight, so the run must fail naming it, never return zeros for b.
TEST(OnednnZeroSize, ValuesFromAReleasedWeightAreNeverMadeUp) {
  testing::ModelBuilder m;
  m.input("x", kFloat, {-1, 16});
  random_weights(m, "w", {16, 8}, 4, 16);
  random_weights(m, "b", {8}, 5);
  m.node("MatMul", {"x", "w"}, {"mm"});
  auto& sum = m.node("ReduceSum", {"mm"}, {"s"});
  auto* keep = sum.add_attribute();
  keep->set_name("keepdims");
  keep->set_type(::onnx::AttributeProto::INT);
  keep->set_i(0);
  m.node("Add", {"s", "b"}, {"y"});
  m.output("y", kFloat, {});
  const std::string model = m.bytes();
  auto s = make_session(onednn_with_fallback(), model);
  auto ref = make_session(reference_env(), model);
  ASSERT_TRUE(s && ref);
  expect_runs_like_reference(*s, *ref, {3, 16}, 30, "3 rows");  // packs w
  const std::map<std::string, Tensor> empty = {{"x", random_tensor({0, 16}, 31)}};
  auto got = s->run(empty);
  auto want = ref->run(empty);
  ASSERT_TRUE(want.has_value()) << want.status().message();
  if (got.has_value()) {
    expect_close((*want)[0], (*got)[0], {}, "0 rows");
  } else {
    EXPECT_NE(got.status().message().find("packed and released"), std::string::npos) << got.status().message();
  }
}

}  // namespace
}  // namespace loom::ep_testing
