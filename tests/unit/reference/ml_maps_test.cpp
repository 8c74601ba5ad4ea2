// The ai.onnx.ml ops on map values on the reference EP: ZipMap's sequence
// of maps (what every scikit-learn classifier converted by skl2onnx ends
// with), CastMap and DictVectorizer reading a map fed as input, the types
// the session reports for them, and bad maps refused with the reason.
#include <gtest/gtest.h>

#include <functional>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using P = ::onnx::TensorProto;

::onnx::TypeProto map_type(int32_t key, int32_t value, bool in_sequence) {
  ::onnx::TypeProto t;
  ::onnx::TypeProto_Map* m = in_sequence ? t.mutable_sequence_type()->mutable_elem_type()->mutable_map_type()
                                         : t.mutable_map_type();
  m->set_key_type(key);
  m->mutable_value_type()->mutable_tensor_type()->set_elem_type(value);
  return t;
}

// One ai.onnx.ml node; `in` / `out` types are set by the callers through the proto.
struct MapModel {
  testing::ModelBuilder m{17};
  ::onnx::NodeProto* node = nullptr;
  MapModel(const std::string& op, const ::onnx::TypeProto& in_type, const ::onnx::TypeProto& out_type) {
    m.import_domain("ai.onnx.ml", 1);
    auto* g = m.proto().mutable_graph();
    auto* in = g->add_input();
    in->set_name("x");
    *in->mutable_type() = in_type;
    auto* out = g->add_output();
    out->set_name("y");
    *out->mutable_type() = out_type;
    node = &m.node(op, {"x"}, {"y"}, op, "ai.onnx.ml");
  }
};

::onnx::TypeProto tensor_type(int32_t elem) {
  ::onnx::TypeProto t;
  t.mutable_tensor_type()->set_elem_type(elem);
  return t;
}

std::unique_ptr<Session> session_of(MapModel& mm) {
  Config c;
  c.providers = {"reference"};
  auto s = Session::create_from_bytes(testing::make_env(c), mm.m.bytes());
  EXPECT_TRUE(s.has_value()) << s.status().message();
  return s ? std::move(*s) : nullptr;
}

Expected<Value> run_one(Session& s, Value input) {
  auto out = s.run_values(std::map<std::string, Value>{{"x", std::move(input)}});
  if (!out) return out.status();
  return out->at(0);
}

Tensor strings(std::vector<std::string> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_strings({n}, std::move(v));
}

TEST(MlMapsTest, ZipMapGivesOneMapPerRow) {
  MapModel mm("ZipMap", tensor_type(P::FLOAT), map_type(P::INT64, P::FLOAT, true));
  testing::add_ints_attr(*mm.node, "classlabels_int64s", {10, 20, 30});
  auto s = session_of(mm);
  ASSERT_TRUE(s);
  // The declared type, as ONNX Runtime reports it.
  const ValueInfo& out = s->outputs().at(0);
  EXPECT_EQ(out.kind, ValueKind::kSequence);
  EXPECT_EQ(out.key_dtype, DType::kInt64);
  EXPECT_EQ(out.dtype, DType::kFloat);
  auto y = run_one(*s, testing::float_tensor({2, 3}, {0.1f, 0.2f, 0.7f, 0.5f, 0.25f, 0.25f}));
  ASSERT_TRUE(y.has_value()) << y.status().message();
  ASSERT_TRUE(y->is_sequence_of_maps());
  ASSERT_EQ(y->maps().size(), 2u);
  const Value& second = y->maps()[1];
  ASSERT_TRUE(second.is_map());
  EXPECT_EQ(second.map_keys().dtype(), DType::kInt64);
  EXPECT_EQ(std::vector<int64_t>(second.map_keys().data_as<int64_t>(), second.map_keys().data_as<int64_t>() + 3),
            (std::vector<int64_t>{10, 20, 30}));
  EXPECT_EQ(std::vector<float>(second.map_values().data_as<float>(), second.map_values().data_as<float>() + 3),
            (std::vector<float>{0.5f, 0.25f, 0.25f}));

  // String labels, a 1-D X: one map.
  MapModel sm("ZipMap", tensor_type(P::FLOAT), map_type(P::STRING, P::FLOAT, true));
  testing::add_strings_attr(*sm.node, "classlabels_strings", {"cat", "dog"});
  auto ss = session_of(sm);
  ASSERT_TRUE(ss);
  auto z = run_one(*ss, testing::float_tensor({2}, {0.3f, 0.7f}));
  ASSERT_TRUE(z.has_value()) << z.status().message();
  ASSERT_EQ(z->maps().size(), 1u);
  EXPECT_EQ(z->maps()[0].map_keys().strings(), (std::vector<std::string>{"cat", "dog"}));
  // As many labels as columns.
  auto bad = run_one(*s, testing::float_tensor({1, 2}, {0.5f, 0.5f}));
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("X has 2 columns, the labels are 3"), std::string::npos)
      << bad.status().message();
}

TEST(MlMapsTest, DictVectorizerPlacesValuesByVocabulary) {
  MapModel mm("DictVectorizer", map_type(P::STRING, P::FLOAT, false), tensor_type(P::FLOAT));
  testing::add_strings_attr(*mm.node, "string_vocabulary", {"a", "b", "c", "d"});
  auto s = session_of(mm);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->inputs().at(0).kind, ValueKind::kMap);
  EXPECT_EQ(s->inputs().at(0).key_dtype, DType::kString);
  // "z" is outside the vocabulary: dropped.
  auto y = run_one(*s, Value::map(strings({"c", "a", "z"}), testing::float_tensor({3}, {3.f, 1.f, 9.f})));
  ASSERT_TRUE(y.has_value()) << y.status().message();
  EXPECT_EQ(y->tensor().dims(), (Dims{1, 4}));
  EXPECT_EQ(std::vector<float>(y->tensor().data_as<float>(), y->tensor().data_as<float>() + 4),
            (std::vector<float>{1.f, 0.f, 3.f, 0.f}));
  // A map whose keys are not what the model declares is refused.
  auto wrong = run_one(*s, Value::map(Tensor::from_vector<int64_t>(DType::kInt64, {1}, {1}),
                                      testing::float_tensor({1}, {1.f})));
  ASSERT_FALSE(wrong.has_value());
  EXPECT_NE(wrong.status().message().find("map keys must be string, got int64"), std::string::npos)
      << wrong.status().message();
  auto uneven = run_one(*s, Value::map(strings({"a", "b"}), testing::float_tensor({1}, {1.f})));
  ASSERT_FALSE(uneven.has_value());
  EXPECT_NE(uneven.status().message().find("must be 1-D of one length"), std::string::npos)
      << uneven.status().message();
}

TEST(MlMapsTest, CastMapDenseAndSparse) {
  MapModel dense("CastMap", map_type(P::INT64, P::FLOAT, false), tensor_type(P::FLOAT));
  auto s = session_of(dense);
  ASSERT_TRUE(s);
  const Value in = Value::map(Tensor::from_vector<int64_t>(DType::kInt64, {3}, {4, 1, 2}),
                              testing::float_tensor({3}, {40.f, 10.f, 20.f}));
  auto y = run_one(*s, in);
  ASSERT_TRUE(y.has_value()) << y.status().message();
  EXPECT_EQ(y->tensor().dims(), (Dims{1, 3}));  // ascending keys
  EXPECT_EQ(std::vector<float>(y->tensor().data_as<float>(), y->tensor().data_as<float>() + 3),
            (std::vector<float>{10.f, 20.f, 40.f}));

  MapModel sparse("CastMap", map_type(P::INT64, P::FLOAT, false), tensor_type(P::INT64));
  testing::add_string_attr(*sparse.node, "map_form", "SPARSE");
  testing::add_string_attr(*sparse.node, "cast_to", "TO_INT64");
  testing::add_int_attr(*sparse.node, "max_map", 6);
  auto sp = session_of(sparse);
  ASSERT_TRUE(sp);
  auto z = run_one(*sp, in);
  ASSERT_TRUE(z.has_value()) << z.status().message();
  EXPECT_EQ(std::vector<int64_t>(z->tensor().data_as<int64_t>(), z->tensor().data_as<int64_t>() + 6),
            (std::vector<int64_t>{0, 10, 20, 0, 40, 0}));
  // A key past max_map.
  auto bad = run_one(*sp, Value::map(Tensor::from_vector<int64_t>(DType::kInt64, {1}, {7}),
                                     testing::float_tensor({1}, {1.f})));
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("outside [0, max_map = 6)"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace loom
