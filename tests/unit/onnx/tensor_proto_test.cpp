#include "onnx/tensor_proto.h"

#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "loom/tensor_io.h"

namespace loom::onnxio {
namespace {

namespace fs = std::filesystem;

using Proto = ::onnx::TensorProto;

// A fresh folder per test under the GoogleTest temp dir.
fs::path fresh_dir(const std::string& name) {
  fs::path dir = fs::path(testing::TempDir()) / "loom_tensor_proto_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string bytes_of(const Tensor& t) {
  return std::string(static_cast<const char*>(t.data()), t.byte_size());
}

template <class T>
std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

Proto make_proto(const std::string& name, DType dtype, const Dims& dims) {
  Proto p;
  p.set_name(name);
  p.set_data_type(static_cast<int32_t>(dtype));
  for (int64_t d : dims) p.add_dims(d);
  return p;
}

std::string error_of(const Proto& p, const std::string& model_dir = "") {
  auto t = tensor_from_proto(p, model_dir);
  EXPECT_FALSE(t.has_value());
  return t.has_value() ? "" : t.status().message();
}

// ---------------------------------------------------------------- round trips

TEST(TensorProtoTest, RawDataRoundTripEveryFixedSizeType) {
  const DType types[] = {DType::kFloat,   DType::kUint8,     DType::kInt8,       DType::kUint16,
                         DType::kInt16,   DType::kInt32,     DType::kInt64,      DType::kBool,
                         DType::kFloat16, DType::kDouble,    DType::kUint32,     DType::kUint64,
                         DType::kComplex64, DType::kComplex128, DType::kBFloat16};
  for (DType dtype : types) {
    SCOPED_TRACE(dtype_name(dtype));
    const Dims dims{2, 3};
    std::string bytes(6 * dtype_size(dtype), '\0');
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(dtype == DType::kBool ? (i & 1) : i * 7 + 1);
    auto t = Tensor::from_bytes(dtype, dims, bytes.data(), bytes.size());
    ASSERT_TRUE(t) << t.status().message();
    const Proto p = tensor_to_proto(*t, "x");
    EXPECT_EQ(p.name(), "x");
    EXPECT_EQ(p.data_type(), static_cast<int32_t>(dtype));
    EXPECT_TRUE(p.has_raw_data());
    auto back = tensor_from_proto(p, "");
    ASSERT_TRUE(back) << back.status().message();
    EXPECT_EQ(back->dtype(), dtype);
    EXPECT_EQ(back->dims(), dims);
    EXPECT_EQ(bytes_of(*back), bytes);
  }
}

// Loading takes raw_data out of the proto instead of copying it; a tensor it
// refuses keeps its proto whole.
TEST(TensorProtoTest, TakeMovesRawDataOut) {
  const std::vector<float> values{1.5f, -2.f, 3.25f, 0.f, 7.f, 8.f};
  Proto p;
  p.set_name("w");
  p.set_data_type(Proto::FLOAT);
  p.add_dims(2);
  p.add_dims(3);
  p.set_raw_data(raw(values));
  const void* bytes_before = p.raw_data().data();
  auto t = take_tensor_from_proto(p, "");
  ASSERT_TRUE(t.has_value()) << t.status().message();
  EXPECT_EQ(bytes_of(*t), raw(values));
  EXPECT_EQ(t->dims(), (Dims{2, 3}));
  EXPECT_TRUE(p.raw_data().empty()) << "the bytes moved";
  EXPECT_EQ(t->data(), bytes_before) << "not copied (24 bytes: past the short-string buffer)";
  Tensor copy = *t;  // copies share the adopted bytes
  EXPECT_EQ(copy.data(), t->data());

  Proto bad = p;
  bad.set_raw_data(raw(std::vector<float>{1.f, 2.f}));
  auto refused = take_tensor_from_proto(bad, "");
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find("tensor 'w'"), std::string::npos) << refused.status().message();
  EXPECT_EQ(bad.raw_data(), raw(std::vector<float>{1.f, 2.f})) << "a refused tensor keeps its data";

  Proto flags;
  flags.set_name("b");
  flags.set_data_type(Proto::BOOL);
  flags.add_dims(2);
  flags.set_raw_data(std::string("\x01\x02", 2));
  EXPECT_FALSE(take_tensor_from_proto(flags, "").has_value()) << "bool bytes are checked as when copied";
}

TEST(TensorProtoTest, StringRoundTrip) {
  Tensor t = Tensor::from_strings({3}, {"a", "", std::string("n\0l", 3)});
  const Proto p = tensor_to_proto(t, "s");
  EXPECT_EQ(p.string_data_size(), 3);
  auto back = tensor_from_proto(p, "");
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(back->dtype(), DType::kString);
  EXPECT_EQ(back->dims(), Dims{3});
  EXPECT_EQ(back->strings(), t.strings());
}

TEST(TensorProtoTest, ScalarAndEmptyTensors) {
  Proto scalar = make_proto("s", DType::kFloat, {});
  scalar.add_float_data(2.5f);
  auto s = tensor_from_proto(scalar, "");
  ASSERT_TRUE(s) << s.status().message();
  EXPECT_TRUE(s->dims().empty());
  EXPECT_EQ(s->data_as<float>()[0], 2.5f);

  Proto empty = make_proto("e", DType::kInt64, {3, 0});
  auto e = tensor_from_proto(empty, "");
  ASSERT_TRUE(e) << e.status().message();
  EXPECT_EQ(e->element_count(), 0);
  EXPECT_EQ(e->dims(), (Dims{3, 0}));

  auto round = tensor_from_proto(tensor_to_proto(*e, "e"), "");
  ASSERT_TRUE(round);
  EXPECT_EQ(round->dims(), (Dims{3, 0}));
}

// --------------------------------------------------------------- typed fields

TEST(TensorProtoTest, FloatDoubleAndInt64Fields) {
  Proto f = make_proto("f", DType::kFloat, {2});
  f.add_float_data(1.5f);
  f.add_float_data(-2.0f);
  auto ft = tensor_from_proto(f, "");
  ASSERT_TRUE(ft);
  EXPECT_EQ(bytes_of(*ft), raw(std::vector<float>{1.5f, -2.0f}));

  Proto d = make_proto("d", DType::kDouble, {2});
  d.add_double_data(0.25);
  d.add_double_data(1e300);
  auto dt = tensor_from_proto(d, "");
  ASSERT_TRUE(dt);
  EXPECT_EQ(bytes_of(*dt), raw(std::vector<double>{0.25, 1e300}));

  Proto i = make_proto("i", DType::kInt64, {2});
  i.add_int64_data(-5);
  i.add_int64_data(int64_t{1} << 40);
  auto it = tensor_from_proto(i, "");
  ASSERT_TRUE(it);
  EXPECT_EQ(bytes_of(*it), raw(std::vector<int64_t>{-5, int64_t{1} << 40}));
}

TEST(TensorProtoTest, Int32DataCarriesNarrowTypes) {
  auto from_int32 = [](DType dtype, std::vector<int32_t> values) {
    Proto p = make_proto("n", dtype, {static_cast<int64_t>(values.size())});
    for (int32_t v : values) p.add_int32_data(v);
    auto t = tensor_from_proto(p, "");
    EXPECT_TRUE(t) << t.status().message();
    return t ? bytes_of(*t) : std::string();
  };
  EXPECT_EQ(from_int32(DType::kInt32, {-7, 100000}), raw(std::vector<int32_t>{-7, 100000}));
  EXPECT_EQ(from_int32(DType::kInt8, {-128, 127, -1}), raw(std::vector<int8_t>{-128, 127, -1}));
  EXPECT_EQ(from_int32(DType::kUint8, {0, 255}), raw(std::vector<uint8_t>{0, 255}));
  EXPECT_EQ(from_int32(DType::kInt16, {-32768, 32767}), raw(std::vector<int16_t>{-32768, 32767}));
  EXPECT_EQ(from_int32(DType::kUint16, {0, 65535}), raw(std::vector<uint16_t>{0, 65535}));
  EXPECT_EQ(from_int32(DType::kBool, {0, 1, 2}), raw(std::vector<uint8_t>{0, 1, 1}));
  // float16 1.0 = 0x3c00, -2.0 = 0xc000; bfloat16 1.0 = 0x3f80.
  EXPECT_EQ(from_int32(DType::kFloat16, {0x3c00, 0xc000}), raw(std::vector<uint16_t>{0x3c00, 0xc000}));
  EXPECT_EQ(from_int32(DType::kBFloat16, {0x3f80}), raw(std::vector<uint16_t>{0x3f80}));
}

TEST(TensorProtoTest, Uint64DataCarriesUnsignedTypes) {
  Proto u32 = make_proto("u32", DType::kUint32, {2});
  u32.add_uint64_data(4000000000u);
  u32.add_uint64_data(1);
  auto a = tensor_from_proto(u32, "");
  ASSERT_TRUE(a);
  EXPECT_EQ(bytes_of(*a), raw(std::vector<uint32_t>{4000000000u, 1}));

  Proto u64 = make_proto("u64", DType::kUint64, {1});
  u64.add_uint64_data(~uint64_t{0});
  auto b = tensor_from_proto(u64, "");
  ASSERT_TRUE(b);
  EXPECT_EQ(bytes_of(*b), raw(std::vector<uint64_t>{~uint64_t{0}}));
}

TEST(TensorProtoTest, ComplexTypesUsePairs) {
  Proto c64 = make_proto("c64", DType::kComplex64, {2});
  for (float v : {1.0f, 2.0f, -3.0f, 4.0f}) c64.add_float_data(v);
  auto a = tensor_from_proto(c64, "");
  ASSERT_TRUE(a) << a.status().message();
  EXPECT_EQ(bytes_of(*a), raw(std::vector<std::complex<float>>{{1, 2}, {-3, 4}}));

  Proto c128 = make_proto("c128", DType::kComplex128, {1});
  c128.add_double_data(0.5);
  c128.add_double_data(-0.5);
  auto b = tensor_from_proto(c128, "");
  ASSERT_TRUE(b) << b.status().message();
  EXPECT_EQ(bytes_of(*b), raw(std::vector<std::complex<double>>{{0.5, -0.5}}));

  Proto odd = make_proto("odd", DType::kComplex64, {2});
  for (float v : {1.0f, 2.0f, 3.0f}) odd.add_float_data(v);
  const std::string e = error_of(odd);
  EXPECT_NE(e.find("tensor 'odd'"), std::string::npos) << e;
  EXPECT_NE(e.find("float_data"), std::string::npos) << e;
}

TEST(TensorProtoTest, TypedFieldCountMismatchNamesTensorAndField) {
  Proto p = make_proto("w", DType::kFloat, {2, 2});
  p.add_float_data(1);
  const std::string e = error_of(p);
  EXPECT_NE(e.find("tensor 'w'"), std::string::npos) << e;
  EXPECT_NE(e.find("float_data"), std::string::npos) << e;
  EXPECT_NE(e.find("4"), std::string::npos) << e;

  Proto wrong_field = make_proto("w2", DType::kInt64, {1});
  wrong_field.add_int32_data(1);
  EXPECT_NE(error_of(wrong_field).find("int64_data"), std::string::npos);

  Proto strings = make_proto("s", DType::kString, {2});
  strings.add_string_data("a");
  EXPECT_NE(error_of(strings).find("string_data"), std::string::npos);
}

TEST(TensorProtoTest, UnsupportedDataTypes) {
  EXPECT_NE(error_of(make_proto("u", DType::kUndefined, {1})).find("tensor 'u': unsupported data type 0"),
            std::string::npos);
  Proto future = make_proto("f", DType::kFloat, {1});
  future.set_data_type(kLastDType + 1);  // a type newer than Loom knows
  EXPECT_NE(error_of(future).find("unsupported data type " + std::to_string(kLastDType + 1)), std::string::npos);
}

// ---------------------------------------------------------- shape validation

TEST(TensorProtoTest, RankAboveLimitIsRefused) {
  Proto ok = make_proto("r64", DType::kFloat, Dims(64, 1));
  ok.add_float_data(1);
  EXPECT_TRUE(tensor_from_proto(ok, ""));
  Proto deep = make_proto("r65", DType::kFloat, Dims(65, 1));
  deep.add_float_data(1);
  const std::string e = error_of(deep);
  EXPECT_NE(e.find("tensor 'r65'"), std::string::npos) << e;
  EXPECT_NE(e.find("rank 65"), std::string::npos) << e;
}

TEST(TensorProtoTest, NegativeDimIsRefused) {
  Proto p = make_proto("neg", DType::kFloat, {2, -1});
  const std::string e = error_of(p);
  EXPECT_NE(e.find("tensor 'neg'"), std::string::npos) << e;
  EXPECT_NE(e.find("negative"), std::string::npos) << e;
}

TEST(TensorProtoTest, OverflowingCountIsRefused) {
  Proto p = make_proto("big", DType::kFloat, {int64_t{1} << 40, int64_t{1} << 40});
  p.set_raw_data(std::string(4, '\0'));
  const std::string e = error_of(p);
  EXPECT_NE(e.find("tensor 'big'"), std::string::npos) << e;
  EXPECT_NE(e.find("overflow"), std::string::npos) << e;
  // Count fits int64 but bytes do not.
  Proto bytes = make_proto("bytes", DType::kComplex128, {int64_t{1} << 60});
  EXPECT_NE(error_of(bytes).find("overflow"), std::string::npos);
}

TEST(TensorProtoTest, RawDataSizeMismatchIsRefusedBeforeAllocating) {
  Proto p = make_proto("m", DType::kFloat, {2, 3});
  p.set_raw_data(std::string(20, '\0'));
  const std::string e = error_of(p);
  EXPECT_NE(e.find("tensor 'm'"), std::string::npos) << e;
  EXPECT_NE(e.find("20"), std::string::npos) << e;
  EXPECT_NE(e.find("24"), std::string::npos) << e;
  // A huge claimed shape with a tiny payload fails fast (no 4 TiB allocation).
  Proto huge = make_proto("huge", DType::kFloat, {int64_t{1} << 40});
  huge.set_raw_data(std::string(4, '\0'));
  EXPECT_NE(error_of(huge).find("tensor 'huge'"), std::string::npos);
  Proto huge_typed = make_proto("huge_typed", DType::kFloat, {int64_t{1} << 40});
  huge_typed.add_float_data(1);
  EXPECT_NE(error_of(huge_typed).find("tensor 'huge_typed'"), std::string::npos);
}

TEST(TensorProtoTest, UnnamedTensorIsStillIdentified) {
  Proto p = make_proto("", DType::kFloat, {2});
  EXPECT_NE(error_of(p).find("tensor (unnamed)"), std::string::npos);
}

// ------------------------------------------------------------- external data

Proto external_proto(const std::string& name, const Dims& dims, const std::string& location,
                     std::optional<int64_t> offset = {}, std::optional<int64_t> length = {}) {
  Proto p = make_proto(name, DType::kFloat, dims);
  p.set_data_location(::onnx::TensorProto_DataLocation_EXTERNAL);
  auto add = [&](const std::string& k, const std::string& v) {
    auto* e = p.add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  if (offset) add("offset", std::to_string(*offset));
  if (length) add("length", std::to_string(*length));
  return p;
}

TEST(TensorProtoTest, ExternalDataWithOffsetAndLength) {
  const fs::path dir = fresh_dir("external_ok");
  const std::vector<float> values{1, 2, 3};
  write_file(dir / "weights.bin", std::string(16, 'x') + raw(values) + "tail");
  auto t = tensor_from_proto(external_proto("w", {3}, "weights.bin", 16, 12), dir.string());
  ASSERT_TRUE(t) << t.status().message();
  EXPECT_EQ(bytes_of(*t), raw(values));

  // No length: the rest of the file from offset.
  write_file(dir / "exact.bin", raw(values));
  auto whole = tensor_from_proto(external_proto("w", {3}, "exact.bin"), dir.string());
  ASSERT_TRUE(whole) << whole.status().message();
  EXPECT_EQ(bytes_of(*whole), raw(values));

  // Inside a subfolder, and with a ".." that stays inside.
  fs::create_directories(dir / "sub");
  write_file(dir / "sub" / "w.bin", raw(values));
  EXPECT_TRUE(tensor_from_proto(external_proto("w", {3}, "sub/w.bin"), dir.string()));
  EXPECT_TRUE(tensor_from_proto(external_proto("w", {3}, "sub/../exact.bin"), dir.string()));
  // model_dir given with a trailing separator.
  EXPECT_TRUE(tensor_from_proto(external_proto("w", {3}, "exact.bin"), dir.string() + "/"));
}

TEST(TensorProtoTest, ExternalDataEscapingWithDotDotIsRefused) {
  const fs::path root = fresh_dir("external_dotdot");
  fs::create_directories(root / "model");
  write_file(root / "secret.bin", std::string(12, '\0'));  // exists, so only the escape can fail it
  const std::string e = error_of(external_proto("w", {3}, "../secret.bin"), (root / "model").string());
  EXPECT_NE(e.find("tensor 'w'"), std::string::npos) << e;
  EXPECT_NE(e.find("outside the model's folder"), std::string::npos) << e;
  // A sibling folder sharing the model folder's name as a prefix is outside too.
  fs::create_directories(root / "model2");
  write_file(root / "model2" / "w.bin", std::string(12, '\0'));
  EXPECT_NE(error_of(external_proto("w", {3}, "../model2/w.bin"), (root / "model").string())
                .find("outside the model's folder"),
            std::string::npos);
}

TEST(TensorProtoTest, ExternalDataAbsolutePathIsRefused) {
  const fs::path dir = fresh_dir("external_abs");
  write_file(dir / "w.bin", std::string(12, '\0'));
  const std::string e = error_of(external_proto("w", {3}, (dir / "w.bin").string()), dir.string());
  EXPECT_NE(e.find("tensor 'w'"), std::string::npos) << e;
  EXPECT_NE(e.find("absolute"), std::string::npos) << e;
}

TEST(TensorProtoTest, ExternalDataSymlinkEscapeIsRefused) {
  const fs::path root = fresh_dir("external_symlink");
  fs::create_directories(root / "model");
  fs::create_directories(root / "outside");
  write_file(root / "outside" / "w.bin", std::string(12, '\0'));
  std::error_code ec;
  fs::create_symlink(root / "outside" / "w.bin", root / "model" / "link.bin", ec);
  if (ec) GTEST_SKIP() << "cannot create symlinks here: " << ec.message();
  fs::create_directory_symlink(root / "outside", root / "model" / "linkdir", ec);
  ASSERT_FALSE(ec) << ec.message();
  const std::string model_dir = (root / "model").string();
  EXPECT_NE(error_of(external_proto("w", {3}, "link.bin"), model_dir).find("outside the model's folder"),
            std::string::npos);
  EXPECT_NE(error_of(external_proto("w", {3}, "linkdir/w.bin"), model_dir).find("outside the model's folder"),
            std::string::npos);
}

TEST(TensorProtoTest, ExternalDataOffsetsOutsideTheFileAreRefused) {
  const fs::path dir = fresh_dir("external_range");
  write_file(dir / "w.bin", std::string(12, '\0'));
  const std::string beyond = error_of(external_proto("w", {3}, "w.bin", 13), dir.string());
  EXPECT_NE(beyond.find("offset 13"), std::string::npos) << beyond;
  EXPECT_NE(beyond.find("beyond the end"), std::string::npos) << beyond;
  const std::string too_long = error_of(external_proto("w", {3}, "w.bin", 4, 12), dir.string());
  EXPECT_NE(too_long.find("beyond the end"), std::string::npos) << too_long;
  // In range but the wrong size for the shape.
  const std::string short_data = error_of(external_proto("w", {3}, "w.bin", 4), dir.string());
  EXPECT_NE(short_data.find("holds 8 bytes"), std::string::npos) << short_data;
  EXPECT_NE(error_of(external_proto("w", {3}, "w.bin", -1), dir.string()).find("offset"), std::string::npos);
  Proto bad_offset = external_proto("w", {3}, "w.bin");
  auto* e = bad_offset.add_external_data();
  e->set_key("offset");
  e->set_value("12abc");
  EXPECT_NE(error_of(bad_offset, dir.string()).find("'12abc'"), std::string::npos);
}

TEST(TensorProtoTest, ExternalDataMissingFileOrFolder) {
  const fs::path dir = fresh_dir("external_missing");
  const std::string missing = error_of(external_proto("w", {3}, "nope.bin"), dir.string());
  EXPECT_NE(missing.find("tensor 'w'"), std::string::npos) << missing;
  EXPECT_NE(missing.find("nope.bin"), std::string::npos) << missing;
  EXPECT_NE(missing.find("does not exist"), std::string::npos) << missing;
  fs::create_directories(dir / "d");
  EXPECT_NE(error_of(external_proto("w", {3}, "d"), dir.string()).find("not a regular file"), std::string::npos);
  EXPECT_NE(error_of(external_proto("w", {3}, ""), dir.string()).find("no 'location'"), std::string::npos);
  // Model given as bytes: no folder to resolve against.
  EXPECT_NE(error_of(external_proto("w", {3}, "w.bin"), "").find("folder is unknown"), std::string::npos);
}

// ------------------------------------------------------------------ .pb files

TEST(TensorIoTest, WriteAndReadBack) {
  const fs::path dir = fresh_dir("io_roundtrip");
  const std::vector<int64_t> values{1, -2, 3, -4};
  Tensor t = Tensor::from_vector(DType::kInt64, {2, 2}, values);
  ASSERT_TRUE(write_tensor_pb(t, "y", (dir / "y.pb").string()));
  auto back = read_tensor_pb((dir / "y.pb").string());
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(back->name, "y");
  EXPECT_EQ(back->tensor.dtype(), DType::kInt64);
  EXPECT_EQ(back->tensor.dims(), (Dims{2, 2}));
  EXPECT_EQ(bytes_of(back->tensor), raw(values));

  Tensor s = Tensor::from_strings({2}, {"p", "q"});
  ASSERT_TRUE(write_tensor_pb(s, "s", (dir / "s.pb").string()));
  auto sb = read_tensor_pb((dir / "s.pb").string());
  ASSERT_TRUE(sb) << sb.status().message();
  EXPECT_EQ(sb->tensor.strings(), s.strings());
}

TEST(TensorIoTest, ExternalDataIsResolvedAgainstThePbFolder) {
  const fs::path dir = fresh_dir("io_external");
  const std::vector<float> values{5, 6, 7};
  write_file(dir / "data.bin", raw(values));
  std::string bytes;
  ASSERT_TRUE(external_proto("w", {3}, "data.bin").SerializeToString(&bytes));
  write_file(dir / "w.pb", bytes);
  auto t = read_tensor_pb((dir / "w.pb").string());
  ASSERT_TRUE(t) << t.status().message();
  EXPECT_EQ(bytes_of(t->tensor), raw(values));
}

TEST(TensorIoTest, BadFilesAreClearErrors) {
  const fs::path dir = fresh_dir("io_bad");
  Tensor t = Tensor::from_vector(DType::kFloat, {64}, std::vector<float>(64, 1.0f));
  ASSERT_TRUE(write_tensor_pb(t, "x", (dir / "full.pb").string()));
  std::ifstream in(dir / "full.pb", std::ios::binary);
  std::string full((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write_file(dir / "truncated.pb", full.substr(0, full.size() / 2));
  write_file(dir / "garbage.pb", "this is not a tensor proto at all\n");
  write_file(dir / "empty.pb", "");

  for (const char* name : {"truncated.pb", "garbage.pb", "empty.pb", "missing.pb"}) {
    SCOPED_TRACE(name);
    const std::string path = (dir / name).string();
    auto r = read_tensor_pb(path);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.status().message().rfind(path + ": ", 0), 0u) << r.status().message();
  }
  EXPECT_EQ(read_tensor_pb((dir / "missing.pb").string()).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(write_tensor_pb(t, "x", (dir / "no_such_dir" / "x.pb").string()));
}

}  // namespace
}  // namespace loom::onnxio
