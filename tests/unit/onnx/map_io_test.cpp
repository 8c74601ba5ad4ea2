// Map values in .pb files (ai.onnx.ml): MapProto as onnx.numpy_helper's
// from_dict writes it (int64 or string keys, one 0-d tensor per value) and
// sequences of maps (ZipMap's output, a SequenceProto of elem_type MAP),
// read and written by read_value_pb / write_value_pb.
#include <gtest/gtest.h>
#include <onnx/onnx-data_pb.h>

#include <filesystem>
#include <fstream>

#include "loom/tensor_io.h"

namespace loom {
namespace {

namespace fs = std::filesystem;

fs::path file_in_fresh_dir(const std::string& name) {
  fs::path dir = fs::path(::testing::TempDir()) / "loom_map_io_test";
  fs::create_directories(dir);
  fs::remove(dir / name);
  return dir / name;
}

void write_proto(const fs::path& path, const google::protobuf::Message& m) {
  std::string bytes;
  ASSERT_TRUE(m.SerializeToString(&bytes));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// {10: 0.25, 20: 0.75} as numpy_helper.from_dict({10: np.float32(.25), 20: np.float32(.75)}) writes it.
::onnx::MapProto from_dict_int64_to_float() {
  ::onnx::MapProto m;
  m.set_name("probabilities");
  m.set_key_type(::onnx::TensorProto::INT64);
  m.add_keys(10);
  m.add_keys(20);
  auto* values = m.mutable_values();
  values->set_elem_type(::onnx::SequenceProto::TENSOR);
  for (float v : {0.25f, 0.75f}) {
    auto* t = values->add_tensor_values();
    t->set_data_type(::onnx::TensorProto::FLOAT);
    t->add_float_data(v);  // 0-d: no dims
  }
  return m;
}

std::vector<int64_t> int64s(const Tensor& t) {
  return std::vector<int64_t>(t.data_as<int64_t>(), t.data_as<int64_t>() + t.element_count());
}
std::vector<float> floats(const Tensor& t) {
  return std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.element_count());
}

TEST(MapIoTest, ReadsAMapProtoAsNumpyHelperWritesIt) {
  const fs::path path = file_in_fresh_dir("map.pb");
  write_proto(path, from_dict_int64_to_float());
  auto v = read_value_pb(path.string(), ValueKind::kMap);
  ASSERT_TRUE(v) << v.status().message();
  ASSERT_TRUE(v->is_map());
  EXPECT_EQ(int64s(v->map_keys()), (std::vector<int64_t>{10, 20}));
  EXPECT_EQ(floats(v->map_values()), (std::vector<float>{0.25f, 0.75f}));
}

TEST(MapIoTest, MapsRoundTripWithIntegerAndStringKeys) {
  const Value ints = Value::map(Tensor::from_vector(DType::kInt64, {3}, std::vector<int64_t>{1, -2, 3}),
                                Tensor::from_vector(DType::kDouble, {3}, std::vector<double>{0.5, 1.5, -2}));
  const fs::path a = file_in_fresh_dir("ints.pb");
  ASSERT_TRUE(write_value_pb(ints, ValueKind::kMap, "m", a.string()));
  auto back = read_value_pb(a.string(), ValueKind::kMap);
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(int64s(back->map_keys()), (std::vector<int64_t>{1, -2, 3}));
  ASSERT_EQ(back->map_values().dtype(), DType::kDouble);
  EXPECT_EQ(back->map_values().data_as<double>()[2], -2);

  const Value strings = Value::map(Tensor::from_strings({2}, {"cat", "dog"}), Tensor::from_strings({2}, {"x", "y"}));
  const fs::path b = file_in_fresh_dir("strings.pb");
  ASSERT_TRUE(write_value_pb(strings, ValueKind::kUnknown, "m", b.string()));  // the value says it is a map
  auto back_s = read_value_pb(b.string(), ValueKind::kMap);
  ASSERT_TRUE(back_s) << back_s.status().message();
  EXPECT_EQ(back_s->map_keys().strings(), (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(back_s->map_values().strings(), (std::vector<std::string>{"x", "y"}));
}

TEST(MapIoTest, SequenceOfMapsRoundTrips) {
  std::vector<Value> maps;
  for (float p : {0.1f, 0.6f})
    maps.push_back(Value::map(Tensor::from_vector(DType::kInt64, {2}, std::vector<int64_t>{0, 1}),
                              Tensor::from_vector(DType::kFloat, {2}, std::vector<float>{p, 1 - p})));
  const Value seq = Value::sequence_of_maps(DType::kFloat, maps);
  const fs::path path = file_in_fresh_dir("zipmap.pb");
  ASSERT_TRUE(write_value_pb(seq, ValueKind::kSequence, "output_probability", path.string()));
  ::onnx::SequenceProto proto;
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(proto.ParseFromIstream(&in));
  EXPECT_EQ(proto.elem_type(), ::onnx::SequenceProto::MAP);
  EXPECT_EQ(proto.map_values_size(), 2);
  auto back = read_value_pb(path.string(), ValueKind::kSequence);
  ASSERT_TRUE(back) << back.status().message();
  ASSERT_TRUE(back->is_sequence_of_maps());
  ASSERT_EQ(back->maps().size(), 2u);
  EXPECT_EQ(floats(back->maps()[1].map_values()), (std::vector<float>{0.6f, 1 - 0.6f}));
}

TEST(MapIoTest, MalformedMapsAreNamedErrors) {
  auto expect_error = [](const ::onnx::MapProto& m, const std::string& what) {
    const fs::path path = file_in_fresh_dir("bad.pb");
    write_proto(path, m);
    auto v = read_value_pb(path.string(), ValueKind::kMap);
    ASSERT_FALSE(v) << what;
    EXPECT_NE(v.status().message().find(what), std::string::npos) << v.status().message();
    EXPECT_NE(v.status().message().find("probabilities"), std::string::npos) << v.status().message();
  };
  ::onnx::MapProto more_keys = from_dict_int64_to_float();
  more_keys.add_keys(30);
  expect_error(more_keys, "3 keys but 2 values");
  ::onnx::MapProto int32_keys = from_dict_int64_to_float();
  int32_keys.set_key_type(::onnx::TensorProto::INT32);
  expect_error(int32_keys, "key type");
  ::onnx::MapProto vector_value = from_dict_int64_to_float();
  vector_value.mutable_values()->mutable_tensor_values(1)->add_dims(1);
  vector_value.mutable_values()->mutable_tensor_values(1)->add_float_data(1);
  expect_error(vector_value, "value 1");
  ::onnx::MapProto mixed = from_dict_int64_to_float();
  mixed.mutable_values()->mutable_tensor_values(1)->set_data_type(::onnx::TensorProto::DOUBLE);
  mixed.mutable_values()->mutable_tensor_values(1)->clear_float_data();
  mixed.mutable_values()->mutable_tensor_values(1)->add_double_data(0.75);
  expect_error(mixed, "value 1 is double");
}

}  // namespace
}  // namespace loom
