// read_value_pb / write_value_pb: tensors, sequences and optionals as the
// TensorProto / SequenceProto / OptionalProto files of the ONNX test data.
#include <gtest/gtest.h>
#include <onnx/onnx-data_pb.h>

#include <filesystem>
#include <fstream>

#include "loom/tensor_io.h"

namespace loom {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  fs::path dir = fs::path(testing::TempDir()) / "loom_value_io_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string serialized(const google::protobuf::Message& m) {
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  return bytes;
}

std::vector<float> floats_of(const Tensor& t) {
  return std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.element_count());
}

Tensor floats(const Dims& dims, std::vector<float> v) { return Tensor::from_vector(DType::kFloat, dims, v); }

// Writes `v` as `kind`, reads it back as `kind`; fails the test on any error.
Value round_trip(const Value& v, ValueKind kind, const fs::path& path, ValueKind read_as) {
  Status st = write_value_pb(v, kind, "v", path.string());
  EXPECT_TRUE(st) << st.message();
  auto back = read_value_pb(path.string(), read_as);
  EXPECT_TRUE(back) << back.status().message();
  return back ? *back : Value::none();
}

// The message of a failed read, checked to start with "<path>: ".
std::string read_error(const fs::path& path, ValueKind kind) {
  auto r = read_value_pb(path.string(), kind);
  EXPECT_FALSE(r);
  if (r) return "";
  EXPECT_EQ(r.status().message().rfind(path.string() + ": ", 0), 0u) << r.status().message();
  return r.status().message();
}

// ---------------------------------------------------------------- round trips

TEST(ValueIoTest, TensorRoundTrip) {
  const fs::path dir = fresh_dir("tensor");
  const Tensor t = floats({2, 2}, {1, 2, 3, 4});
  for (ValueKind read_as : {ValueKind::kTensor, ValueKind::kUnknown}) {
    Value back = round_trip(Value(t), ValueKind::kTensor, dir / "t.pb", read_as);
    ASSERT_TRUE(back.is_tensor());
    EXPECT_EQ(back.tensor().dims(), (Dims{2, 2}));
    EXPECT_EQ(floats_of(back.tensor()), (std::vector<float>{1, 2, 3, 4}));
  }
  // A tensor value file is a plain TensorProto, named.
  auto named = read_tensor_pb((dir / "t.pb").string());
  ASSERT_TRUE(named) << named.status().message();
  EXPECT_EQ(named->name, "v");
}

TEST(ValueIoTest, SequenceRoundTripKeepsOrderShapesAndType) {
  const fs::path dir = fresh_dir("sequence");
  const Value seq = Value::sequence(DType::kFloat, {floats({2}, {1, 2}), floats({1, 3}, {3, 4, 5})});
  for (ValueKind read_as : {ValueKind::kSequence, ValueKind::kUnknown}) {
    Value back = round_trip(seq, ValueKind::kSequence, dir / "s.pb", read_as);
    ASSERT_TRUE(back.is_sequence());
    EXPECT_EQ(back.sequence_dtype(), DType::kFloat);
    ASSERT_EQ(back.elements().size(), 2u);
    EXPECT_EQ(back.elements()[0].dims(), (Dims{2}));
    EXPECT_EQ(back.elements()[1].dims(), (Dims{1, 3}));
    EXPECT_EQ(floats_of(back.elements()[1]), (std::vector<float>{3, 4, 5}));
  }
  // The layout numpy_helper.from_list writes.
  ::onnx::SequenceProto proto;
  ASSERT_TRUE(proto.ParseFromString(read_file(dir / "s.pb")));
  EXPECT_EQ(proto.name(), "v");
  EXPECT_EQ(proto.elem_type(), ::onnx::SequenceProto::TENSOR);
  EXPECT_EQ(proto.tensor_values_size(), 2);
}

TEST(ValueIoTest, StringSequenceRoundTrip) {
  const fs::path dir = fresh_dir("strings");
  const Value seq = Value::sequence(DType::kString, {Tensor::from_strings({2}, {"a", "bc"})});
  Value back = round_trip(seq, ValueKind::kSequence, dir / "s.pb", ValueKind::kSequence);
  ASSERT_TRUE(back.is_sequence());
  ASSERT_EQ(back.elements().size(), 1u);
  EXPECT_EQ(back.elements()[0].strings(), (std::vector<std::string>{"a", "bc"}));
}

TEST(ValueIoTest, EmptySequenceRoundTrip) {
  const fs::path dir = fresh_dir("empty_sequence");
  for (ValueKind read_as : {ValueKind::kSequence, ValueKind::kUnknown}) {
    Value back = round_trip(Value::sequence(DType::kInt64, {}), ValueKind::kSequence, dir / "e.pb", read_as);
    ASSERT_TRUE(back.is_sequence());
    EXPECT_TRUE(back.elements().empty());
    // The file cannot say the element type of an empty sequence.
    EXPECT_EQ(back.sequence_dtype(), DType::kUndefined);
  }
  ::onnx::SequenceProto proto;
  ASSERT_TRUE(proto.ParseFromString(read_file(dir / "e.pb")));
  EXPECT_EQ(proto.elem_type(), ::onnx::SequenceProto::TENSOR);
}

TEST(ValueIoTest, EmptyOptionalRoundTrip) {
  const fs::path dir = fresh_dir("empty_optional");
  for (ValueKind read_as : {ValueKind::kOptional, ValueKind::kUnknown})
    EXPECT_TRUE(round_trip(Value::none(), ValueKind::kOptional, dir / "o.pb", read_as).is_none());
  // As numpy_helper.from_optional(None) writes it.
  ::onnx::OptionalProto proto;
  ASSERT_TRUE(proto.ParseFromString(read_file(dir / "o.pb")));
  EXPECT_EQ(proto.name(), "v");
  EXPECT_EQ(proto.elem_type(), ::onnx::OptionalProto::UNDEFINED);
  EXPECT_FALSE(proto.has_tensor_value());
  EXPECT_FALSE(proto.has_sequence_value());
}

TEST(ValueIoTest, EmptyOptionalWithDeclaredTypeIsStillEmpty) {
  const fs::path dir = fresh_dir("typed_empty_optional");
  ::onnx::OptionalProto proto;
  proto.set_elem_type(::onnx::OptionalProto::TENSOR);
  write_file(dir / "o.pb", serialized(proto));
  auto back = read_value_pb((dir / "o.pb").string(), ValueKind::kOptional);
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_TRUE(back->is_none());
}

TEST(ValueIoTest, OptionalTensorRoundTrip) {
  const fs::path dir = fresh_dir("optional_tensor");
  Value back = round_trip(Value(floats({3}, {7, 8, 9})), ValueKind::kOptional, dir / "o.pb", ValueKind::kOptional);
  ASSERT_TRUE(back.is_tensor());
  EXPECT_EQ(floats_of(back.tensor()), (std::vector<float>{7, 8, 9}));
  ::onnx::OptionalProto proto;
  ASSERT_TRUE(proto.ParseFromString(read_file(dir / "o.pb")));
  EXPECT_EQ(proto.elem_type(), ::onnx::OptionalProto::TENSOR);
  EXPECT_TRUE(proto.has_tensor_value());
  // Undeclared, the same bytes are a one-element SequenceProto: the
  // documented reading is the sequence.
  auto unknown = read_value_pb((dir / "o.pb").string(), ValueKind::kUnknown);
  ASSERT_TRUE(unknown) << unknown.status().message();
  ASSERT_TRUE(unknown->is_sequence());
  EXPECT_EQ(unknown->elements().size(), 1u);
}

TEST(ValueIoTest, OptionalSequenceReadsAsSequence) {
  const fs::path dir = fresh_dir("optional_sequence");
  const Value seq = Value::sequence(DType::kInt32, {Tensor::from_vector(DType::kInt32, {2}, std::vector<int32_t>{4, 5})});
  for (ValueKind read_as : {ValueKind::kOptional, ValueKind::kUnknown}) {
    Value back = round_trip(seq, ValueKind::kOptional, dir / "o.pb", read_as);
    ASSERT_TRUE(back.is_sequence());
    EXPECT_EQ(back.sequence_dtype(), DType::kInt32);
    ASSERT_EQ(back.elements().size(), 1u);
    EXPECT_EQ(back.elements()[0].data_as<int32_t>()[1], 5);
  }
  ::onnx::OptionalProto proto;
  ASSERT_TRUE(proto.ParseFromString(read_file(dir / "o.pb")));
  EXPECT_EQ(proto.elem_type(), ::onnx::OptionalProto::SEQUENCE);
  EXPECT_EQ(proto.sequence_value().elem_type(), ::onnx::SequenceProto::TENSOR);
}

TEST(ValueIoTest, UnknownKindOnWriteFollowsTheValue) {
  const fs::path dir = fresh_dir("unknown_write");
  const Value seq = Value::sequence(DType::kFloat, {floats({1}, {1})});
  ASSERT_TRUE(write_value_pb(seq, ValueKind::kUnknown, "s", (dir / "s.pb").string()));
  ::onnx::SequenceProto proto;
  ASSERT_TRUE(proto.ParseFromString(read_file(dir / "s.pb")));
  EXPECT_EQ(proto.name(), "s");
  EXPECT_EQ(proto.tensor_values_size(), 1);
  ASSERT_TRUE(write_value_pb(Value::none(), ValueKind::kUnknown, "o", (dir / "o.pb").string()));
  auto back = read_value_pb((dir / "o.pb").string(), ValueKind::kOptional);
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_TRUE(back->is_none());
}

// --------------------------------------------------------------------- errors

TEST(ValueIoTest, WritingAValueAsTheWrongKindIsRefused) {
  const fs::path dir = fresh_dir("wrong_write");
  const std::string path = (dir / "x.pb").string();
  const Value seq = Value::sequence(DType::kFloat, {});
  for (auto [value, kind] : {std::pair{Value(floats({1}, {1})), ValueKind::kSequence},
                             std::pair{Value::none(), ValueKind::kTensor}, std::pair{seq, ValueKind::kTensor},
                             std::pair{Value::none(), ValueKind::kSequence}}) {
    Status st = write_value_pb(value, kind, "x", path);
    ASSERT_FALSE(st);
    EXPECT_EQ(st.message().rfind(path + ": ", 0), 0u) << st.message();
    EXPECT_NE(st.message().find("'x' is declared a"), std::string::npos) << st.message();
  }
  EXPECT_FALSE(write_value_pb(seq, ValueKind::kSequence, "x", (dir / "no_such_dir" / "x.pb").string()));
}

TEST(ValueIoTest, GarbageTruncatedEmptyAndMissingFilesNameThePath) {
  const fs::path dir = fresh_dir("bad");
  const Value seq = Value::sequence(DType::kFloat, {floats({64}, std::vector<float>(64, 1)), floats({64}, std::vector<float>(64, 2))});
  ASSERT_TRUE(write_value_pb(seq, ValueKind::kSequence, "s", (dir / "seq.pb").string()));
  ASSERT_TRUE(write_value_pb(seq, ValueKind::kOptional, "o", (dir / "opt.pb").string()));
  const std::string full_seq = read_file(dir / "seq.pb");
  const std::string full_opt = read_file(dir / "opt.pb");
  write_file(dir / "truncated_seq.pb", full_seq.substr(0, full_seq.size() / 2));
  write_file(dir / "truncated_opt.pb", full_opt.substr(0, full_opt.size() / 2));
  write_file(dir / "garbage.pb", "this is not a proto at all\n");
  write_file(dir / "empty.pb", "");

  for (ValueKind kind : {ValueKind::kTensor, ValueKind::kSequence, ValueKind::kOptional, ValueKind::kUnknown}) {
    for (const char* name : {"truncated_seq.pb", "truncated_opt.pb", "garbage.pb", "empty.pb", "missing.pb"}) {
      SCOPED_TRACE(std::string(name) + " as kind " + std::to_string(static_cast<int>(kind)));
      read_error(dir / name, kind);
    }
    auto missing = read_value_pb((dir / "missing.pb").string(), kind);
    EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
    EXPECT_NE(read_error(dir, kind).find("is a directory"), std::string::npos);
  }
}

TEST(ValueIoTest, AFileOfTheWrongKindIsAClearError) {
  const fs::path dir = fresh_dir("wrong_kind");
  ASSERT_TRUE(write_tensor_pb(floats({2}, {1, 2}), "t", (dir / "t.pb").string()));
  const Value seq = Value::sequence(DType::kFloat, {floats({2}, {1, 2})});
  ASSERT_TRUE(write_value_pb(seq, ValueKind::kSequence, "s", (dir / "s.pb").string()));

  EXPECT_NE(read_error(dir / "t.pb", ValueKind::kSequence).find("not a serialized SequenceProto"), std::string::npos);
  EXPECT_NE(read_error(dir / "t.pb", ValueKind::kOptional).find("not a serialized OptionalProto"), std::string::npos);
  EXPECT_NE(read_error(dir / "s.pb", ValueKind::kTensor).find("SequenceProto or OptionalProto"), std::string::npos);
}

TEST(ValueIoTest, MixedElementTypesAreRefused) {
  const fs::path dir = fresh_dir("mixed");
  ::onnx::SequenceProto proto;
  proto.set_name("mixed");
  proto.set_elem_type(::onnx::SequenceProto::TENSOR);
  for (DType t : {DType::kFloat, DType::kInt64}) {
    auto* tp = proto.add_tensor_values();
    tp->set_data_type(static_cast<int32_t>(t));
    tp->add_dims(0);
  }
  write_file(dir / "m.pb", serialized(proto));
  const std::string msg = read_error(dir / "m.pb", ValueKind::kSequence);
  EXPECT_NE(msg.find("sequence 'mixed': element 1 is int64 but element 0 is float"), std::string::npos) << msg;
}

TEST(ValueIoTest, BadElementsAndUnsupportedContentsAreNamed) {
  const fs::path dir = fresh_dir("bad_elements");
  ::onnx::SequenceProto bad;
  bad.set_name("s");
  bad.set_elem_type(::onnx::SequenceProto::TENSOR);
  auto* tp = bad.add_tensor_values();
  tp->set_data_type(static_cast<int32_t>(DType::kFloat));
  tp->add_dims(4);  // and no data
  write_file(dir / "bad.pb", serialized(bad));
  EXPECT_NE(read_error(dir / "bad.pb", ValueKind::kSequence).find("sequence 's', element 0"), std::string::npos);

  ::onnx::SequenceProto nested;
  nested.set_elem_type(::onnx::SequenceProto::SEQUENCE);
  nested.add_sequence_values()->set_elem_type(::onnx::SequenceProto::TENSOR);
  write_file(dir / "nested.pb", serialized(nested));
  EXPECT_NE(read_error(dir / "nested.pb", ValueKind::kSequence).find("only sequences of tensors"), std::string::npos);

  ::onnx::OptionalProto mismatch;
  mismatch.set_name("o");
  mismatch.set_elem_type(::onnx::OptionalProto::SEQUENCE);
  mismatch.mutable_tensor_value()->set_data_type(static_cast<int32_t>(DType::kFloat));
  write_file(dir / "mismatch.pb", serialized(mismatch));
  EXPECT_NE(read_error(dir / "mismatch.pb", ValueKind::kOptional).find("optional 'o': holds a tensor but its elem_type"),
            std::string::npos);
}

// The files of the ONNX backend test data, where installed.
TEST(ValueIoTest, ReadsOnnxBackendTestData) {
  const fs::path node = "/usr/share/libonnx-testdata/data/node";
  if (!fs::exists(node / "test_identity_opt")) GTEST_SKIP() << "no ONNX backend test data at " << node;
  auto opt_seq = read_value_pb((node / "test_identity_opt/test_data_set_0/input_0.pb").string(), ValueKind::kOptional);
  ASSERT_TRUE(opt_seq) << opt_seq.status().message();
  ASSERT_TRUE(opt_seq->is_sequence());
  EXPECT_EQ(opt_seq->elements().size(), 1u);

  auto seq = read_value_pb((node / "test_identity_sequence/test_data_set_0/input_0.pb").string(), ValueKind::kSequence);
  ASSERT_TRUE(seq) << seq.status().message();
  ASSERT_TRUE(seq->is_sequence());
  EXPECT_EQ(seq->elements().size(), 2u);
  EXPECT_EQ(seq->sequence_dtype(), DType::kFloat);

  auto empty = read_value_pb((node / "test_optional_has_element_empty/test_data_set_0/input_0.pb").string(),
                             ValueKind::kOptional);
  ASSERT_TRUE(empty) << empty.status().message();
  EXPECT_TRUE(empty->is_none());

  auto opt_tensor =
      read_value_pb((node / "test_optional_get_element/test_data_set_0/input_0.pb").string(), ValueKind::kOptional);
  ASSERT_TRUE(opt_tensor) << opt_tensor.status().message();
  EXPECT_TRUE(opt_tensor->is_tensor());

  // Without a declared kind, tensors stay tensors and sequences sequences.
  auto tensor = read_value_pb((node / "test_relu/test_data_set_0/input_0.pb").string(), ValueKind::kUnknown);
  ASSERT_TRUE(tensor) << tensor.status().message();
  EXPECT_TRUE(tensor->is_tensor());
  auto unknown_seq = read_value_pb((node / "test_sequence_insert_at_back/test_data_set_0/input_0.pb").string(),
                                   ValueKind::kUnknown);
  ASSERT_TRUE(unknown_seq) << unknown_seq.status().message();
  EXPECT_TRUE(unknown_seq->is_sequence());
  auto unknown_opt_seq =
      read_value_pb((node / "test_identity_opt/test_data_set_0/input_0.pb").string(), ValueKind::kUnknown);
  ASSERT_TRUE(unknown_opt_seq) << unknown_opt_seq.status().message();
  EXPECT_TRUE(unknown_opt_seq->is_sequence());
}

}  // namespace
}  // namespace loom
