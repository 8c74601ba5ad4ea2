// Whole hostile models given to the loader (onnxio::load_model_bytes /
// load_model_file) and to sessions: each is refused with a Status naming the
// tensor, node or value at fault, nothing large is allocated on the way, and
// the process still loads and runs a good model afterwards.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>

#include "common/model_builder.h"
#include "common/rss.h"
#include "common/test_env.h"
#include "hostile_model_support.h"
#include "onnx/model_loader.h"

namespace loom {
namespace {

using namespace hostile_testing;  // the helpers the hostile-model tests share
using testing::rss_bytes;

// Refusals must not touch more than this much new memory.
constexpr int64_t kRssSlack = 64 << 20;

// ------------------------------------------------------------ initializers

TEST(HostileModelTest, HugeInitializerDimsAreRefusedBeforeAnyAllocation) {
  const int64_t before = rss_bytes();
  {
    // 2^40 x 2^40 floats: the element count overflows 64 bits.
    ModelBuilder m = add_model();
    add_initializer(m, "w", {int64_t{1} << 40, int64_t{1} << 40});
    const std::string e = load_error(m.bytes());
    EXPECT_HAS(e, "'w'");
    EXPECT_HAS(e, "overflow");
    EXPECT_HAS(session_error(m.bytes()), "'w'");
  }
  {
    // 2^20 x 2^20 floats (4 TiB) claimed by 4 bytes of raw_data.
    ModelBuilder m = add_model();
    add_initializer(m, "w", {int64_t{1} << 20, int64_t{1} << 20}).set_raw_data(std::string(4, '\0'));
    const std::string e = load_error(m.bytes());
    EXPECT_HAS(e, "'w'");
    EXPECT_HAS(e, "raw_data holds 4 bytes");
  }
  {
    // The same claimed through float_data.
    ModelBuilder m = add_model();
    add_initializer(m, "w", {int64_t{1} << 20, int64_t{1} << 20}).add_float_data(1);
    const std::string e = load_error(m.bytes());
    EXPECT_HAS(e, "'w'");
    EXPECT_HAS(e, "float_data");
  }
  EXPECT_LT(rss_bytes() - before, kRssSlack);
  expect_good_model_runs();
}

TEST(HostileModelTest, NegativeDimIsRefused) {
  ModelBuilder m = add_model();
  add_initializer(m, "w", {2, -3});
  const std::string e = load_error(m.bytes());
  EXPECT_HAS(e, "'w'");
  EXPECT_HAS(e, "negative");
  EXPECT_HAS(session_error(m.bytes()), "'w'");
  expect_good_model_runs();
}

TEST(HostileModelTest, OverflowingElementAndByteCountsAreRefused) {
  ModelBuilder elements = add_model();
  add_initializer(elements, "w", {int64_t{1} << 32, int64_t{1} << 32, int64_t{1} << 32});
  EXPECT_HAS(load_error(elements.bytes()), "overflows int64");
  // 2^62 elements fit in int64, their 2^64 bytes do not.
  ModelBuilder bytes = add_model();
  add_initializer(bytes, "w", {int64_t{1} << 31, int64_t{1} << 31});
  const std::string e = load_error(bytes.bytes());
  EXPECT_HAS(e, "'w'");
  EXPECT_HAS(e, "byte size");
  expect_good_model_runs();
}

TEST(HostileModelTest, RankAboveTheLimitIsRefused) {
  ModelBuilder m = add_model();
  add_initializer(m, "w", std::vector<int64_t>(65, 1)).add_float_data(1);
  const std::string e = load_error(m.bytes());
  EXPECT_HAS(e, "'w'");
  EXPECT_HAS(e, "rank 65");
  expect_good_model_runs();
}

TEST(HostileModelTest, RawDataSizeMismatchIsRefused) {
  ModelBuilder m = add_model();
  add_initializer(m, "w", {2, 3}).set_raw_data(std::string(8, '\0'));
  const std::string e = load_error(m.bytes());
  EXPECT_HAS(e, "'w'");
  EXPECT_HAS(e, "raw_data holds 8 bytes");
  EXPECT_HAS(e, "needs 24");
  EXPECT_HAS(session_error(m.bytes()), "raw_data holds 8 bytes");
  expect_good_model_runs();
}

TEST(HostileModelTest, HostileConstantNodeValueIsRefusedLikeAnInitializer) {
  auto constant_model = [](const std::function<void(TensorProto&)>& spoil) {
    ModelBuilder m;
    m.input("x", TensorProto::FLOAT, {2});
    auto& c = m.node("Constant", {}, {"w"}, "const_w");
    auto* a = c.add_attribute();
    a->set_name("value");
    a->set_type(::onnx::AttributeProto::TENSOR);
    TensorProto* t = a->mutable_t();
    t->set_name("w_value");
    t->set_data_type(TensorProto::FLOAT);
    spoil(*t);
    m.node("Add", {"x", "w"}, {"y"}, "add");
    m.output("y", TensorProto::FLOAT, {2});
    return m.bytes();
  };
  const int64_t before = rss_bytes();
  const std::string huge = load_error(constant_model([](TensorProto& t) {
    t.add_dims(int64_t{1} << 40);
    t.add_dims(int64_t{1} << 40);
  }));
  EXPECT_HAS(huge, "'const_w'");
  EXPECT_HAS(huge, "'value'");
  EXPECT_HAS(huge, "overflow");
  const std::string mismatch = load_error(constant_model([](TensorProto& t) {
    t.add_dims(int64_t{1} << 20);
    t.add_dims(int64_t{1} << 20);
    t.set_raw_data(std::string(4, '\0'));
  }));
  EXPECT_HAS(mismatch, "'const_w'");
  EXPECT_HAS(mismatch, "raw_data holds 4 bytes");
  EXPECT_HAS(load_error(constant_model([](TensorProto& t) { t.add_dims(-1); })), "negative");
  EXPECT_HAS(load_error(constant_model([](TensorProto& t) {
               for (int i = 0; i < 65; ++i) t.add_dims(1);
             })),
             "rank 65");
  EXPECT_HAS(session_error(constant_model([](TensorProto& t) { t.add_dims(-1); })), "'const_w'");
  EXPECT_LT(rss_bytes() - before, kRssSlack);
  expect_good_model_runs();
}

// ----------------------------------------------------------- external data

// A model folder with model.onnx whose initializer 'w' (float[2]) lives in
// external data as `location` (offset / length when >= 0).
fs::path write_external_model(const fs::path& dir, const std::string& location, int64_t offset = -1,
                              int64_t length = -1) {
  ModelBuilder m = add_model();
  set_external(add_initializer(m, "w", {2}), location, offset, length);
  const fs::path path = dir / "model.onnx";
  write_file(path, m.bytes());
  return path;
}

TEST(HostileModelTest, ExternalDataInsideTheFolderLoads) {
  const fs::path dir = fresh_dir("external_ok");
  const float w[] = {10, 20};
  write_file(dir / "w.bin", std::string(8, 'x') + std::string(reinterpret_cast<const char*>(w), sizeof w));
  const fs::path model = write_external_model(dir, "w.bin", 8, 8);
  auto s = Session::create(testing::reference_env(), model.string());
  ASSERT_TRUE(s) << s.status().message();
  auto out = (*s)->run({{"x", testing::float_tensor({2}, {1, 2})}});
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(testing::values_of((*out)[0]), (std::vector<float>{11, 22}));
  remove_fresh_dir(dir);
}

TEST(HostileModelTest, ExternalDataEscapingTheFolderIsRefused) {
  const fs::path root = fresh_dir("external_escape");
  const fs::path dir = root / "model";
  fs::create_directories(dir);
  write_file(root / "secret.bin", std::string(8, '\0'));  // exists: only the escape can fail it

  std::string e = file_error(write_external_model(dir, "../secret.bin"));
  EXPECT_HAS(e, "'w'");
  EXPECT_HAS(e, "outside the model's folder");

  e = file_error(write_external_model(dir, (root / "secret.bin").string()));
  EXPECT_HAS(e, "'w'");
  EXPECT_HAS(e, "absolute");

  std::error_code ec;
  fs::create_symlink(root / "secret.bin", dir / "link.bin", ec);
  if (!ec) {
    e = file_error(write_external_model(dir, "link.bin"));
    EXPECT_HAS(e, "'w'");
    EXPECT_HAS(e, "outside the model's folder");
    // Through Session::create as well.
    auto s = Session::create(testing::reference_env(), (dir / "model.onnx").string());
    ASSERT_FALSE(s);
    EXPECT_HAS(s.status().message(), "outside the model's folder");
  }
  expect_good_model_runs();
  remove_fresh_dir(root);
}

TEST(HostileModelTest, ExternalDataOffsetOrLengthBeyondTheFileIsRefused) {
  const fs::path dir = fresh_dir("external_range");
  write_file(dir / "w.bin", std::string(8, '\0'));
  std::string e = file_error(write_external_model(dir, "w.bin", 9));
  EXPECT_HAS(e, "'w'");
  EXPECT_HAS(e, "beyond the end");
  e = file_error(write_external_model(dir, "w.bin", 4, 8));
  EXPECT_HAS(e, "'w'");
  EXPECT_HAS(e, "beyond the end");
  // A huge declared length cannot make the loader allocate it.
  const int64_t before = rss_bytes();
  e = file_error(write_external_model(dir, "w.bin", 0, int64_t{1} << 62));
  EXPECT_HAS(e, "beyond the end");
  EXPECT_LT(rss_bytes() - before, kRssSlack);
  expect_good_model_runs();
  remove_fresh_dir(dir);
}

TEST(HostileModelTest, ExternalDataInAModelGivenAsBytesIsRefused) {
  ModelBuilder m = add_model();
  set_external(add_initializer(m, "w", {2}), "w.bin");
  const std::string e = load_error(m.bytes(), "");
  EXPECT_HAS(e, "'w'");
  EXPECT_HAS(e, "folder is unknown");
}

// A session from bytes has no folder either, even when the location names a
// file in the current directory.
TEST(HostileModelTest, ExternalDataInASessionFromBytesIsRefused) {
  const std::string name = "loom_hostile_model_test_w." + std::to_string(::getpid()) + ".bin";
  write_file(name, std::string(8, '\0'));
  ModelBuilder m = add_model();
  set_external(add_initializer(m, "w", {2}), name);
  const std::string e = session_error(m.bytes());
  fs::remove(name);
  EXPECT_HAS(e, "folder is unknown");
}

// ------------------------------------------------------- declared types

TEST(HostileModelTest, AbsurdDeclaredShapesDoNotAllocate) {
  const int64_t huge = std::numeric_limits<int64_t>::max();
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, {-1});
  m.node("Relu", {"x"}, {"h1"}, "relu1");
  m.node("Relu", {"h1"}, {"h2"}, "relu2");
  m.node("Relu", {"h2"}, {"h3"}, "relu3");
  m.node("Relu", {"h3"}, {"h4"}, "relu4");
  m.node("Add", {"h1", "h2"}, {"s1"}, "add1");
  m.node("Add", {"h3", "h4"}, {"s2"}, "add2");
  m.node("Add", {"s1", "s2"}, {"y"}, "add3");
  m.output("y", TensorProto::FLOAT, {-1});
  // Intermediates declared far larger than any run can make them: sizes
  // that overflow when summed, and one whose byte size wraps to zero.
  auto declare = [&](const std::string& name, std::vector<int64_t> dims) {
    auto* vi = m.proto().mutable_graph()->add_value_info();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(TensorProto::FLOAT);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  declare("h1", {int64_t{1} << 60});  // 2^62 bytes each: their sum overflows
  declare("h2", {int64_t{1} << 60});
  declare("h3", {int64_t{1} << 60});
  declare("h4", {int64_t{1} << 62});  // 2^64 bytes: wraps to 0
  declare("s1", {int64_t{1} << 40});  // 4 TiB: no overflow, just more than any memory
  declare("s2", {huge});
  const int64_t before = rss_bytes();
  Config c;
  c.providers = {"reference"};
  c.optimization_level = OptimizationLevel::kDisabled;  // keep every intermediate
  auto s = Session::create_from_bytes(testing::make_env(c), m.bytes());
  ASSERT_TRUE(s) << s.status().message();
  EXPECT_LT(rss_bytes() - before, kRssSlack);
  // Sizes no run could allocate are not planned: the planned arena neither
  // overflows nor claims the declared terabytes.
  EXPECT_GE((*s)->planned_peak_bytes(), 0);
  EXPECT_LT((*s)->planned_peak_bytes(), int64_t{1} << 30) << (*s)->describe_plan();
  // A real, small input runs: its buffers are sized by the real tensors.
  for (int i = 0; i < 2; ++i) {
    auto out = (*s)->run({{"x", testing::float_tensor({3}, {-1, 2, 3})}});
    ASSERT_TRUE(out) << out.status().message();
    EXPECT_EQ(testing::values_of((*out)[0]), (std::vector<float>{0, 8, 12}));
  }
  EXPECT_LT(rss_bytes() - before, kRssSlack);
  expect_good_model_runs();
}

TEST(HostileModelTest, AbsurdGraphInputShapeRefusesRealInputsCleanly) {
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, {int64_t{1} << 40, int64_t{1} << 40});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y", TensorProto::FLOAT, {int64_t{1} << 40, int64_t{1} << 40});
  const int64_t before = rss_bytes();
  auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
  ASSERT_TRUE(s) << s.status().message();
  auto out = (*s)->run({{"x", testing::float_tensor({1, 2}, {1, 2})}});
  ASSERT_FALSE(out);
  EXPECT_HAS(out.status().message(), "'x'");
  EXPECT_LT(rss_bytes() - before, kRssSlack);
  expect_good_model_runs();
}


// ------------------------------------------------------- large models

// Protobuf cannot parse a file of 2 GiB or more: the loader says so (and
// reads nothing) instead of reporting a truncated model.
TEST(HostileModelTest, ModelFileOfTwoGiBOrMoreIsRefusedClearly) {
  const fs::path dir = fresh_dir("huge_file");
  const fs::path path = dir / "huge.onnx";
  {
    const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, int64_t{1} << 31), 0);  // sparse: no disk written
    ::close(fd);
  }
  const std::string e = file_error(path);
  EXPECT_HAS(e, "huge.onnx");
  EXPECT_HAS(e, "external data");
  remove_fresh_dir(dir);
}

// A model over 2 GiB: its 2.1 GiB initializer lives in a sparse external
// data file (holes read as zeros, no disk written) with a few known values.
// Slow: the loader reads all of it.
TEST(HostileModelTest, ModelAboveTwoGiBWithExternalDataLoadsSlow) {
  const fs::path dir = fresh_dir("large");
  const int64_t count = (int64_t{21} << 30) / 10 / 4;  // 2.1 GiB of floats
  const int64_t bytes = count * 4;
  const fs::path data = dir / "big.bin";
  {
    const int fd = ::open(data.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, bytes), 0);
    const std::vector<std::pair<int64_t, float>> marks{{0, 1.5f}, {count / 2, -2.0f}, {count - 1, 7.0f}};
    for (const auto& [index, value] : marks)
      ASSERT_EQ(::pwrite(fd, &value, sizeof value, index * 4), static_cast<ssize_t>(sizeof value));
    ::close(fd);
  }
  ModelBuilder m;
  m.input("i", TensorProto::INT64, {1});
  m.node("Gather", {"big", "i"}, {"y"}, "gather");
  m.output("y", TensorProto::FLOAT, {1});
  set_external(add_initializer(m, "big", {count}), "big.bin", 0, bytes);
  write_file(dir / "model.onnx", m.bytes());

  {
    auto loaded = onnxio::load_model_file((dir / "model.onnx").string());
    ASSERT_TRUE(loaded) << loaded.status().message();
    const Tensor& big = loaded->graph->initializers.at("big");
    ASSERT_EQ(big.element_count(), count);
    const float* p = big.data_as<float>();
    EXPECT_EQ(p[0], 1.5f);
    EXPECT_EQ(p[1], 0.0f);
    EXPECT_EQ(p[count / 2], -2.0f);
    EXPECT_EQ(p[count / 2 + 1], 0.0f);
    EXPECT_EQ(p[count - 1], 7.0f);
  }
  {
    Config c;
    c.providers = {"reference"};
    auto s = Session::create(testing::make_env(c), (dir / "model.onnx").string());
    ASSERT_TRUE(s) << s.status().message();
    for (const auto& [index, value] : std::vector<std::pair<int64_t, float>>{
             {0, 1.5f}, {count / 2, -2.0f}, {count - 1, 7.0f}, {12345, 0.0f}}) {
      Tensor i = Tensor::from_vector(DType::kInt64, {1}, std::vector<int64_t>{index});
      auto out = (*s)->run({{"i", i}});
      ASSERT_TRUE(out) << out.status().message();
      EXPECT_EQ(testing::values_of((*out)[0]), std::vector<float>{value}) << "index " << index;
    }
  }
  remove_fresh_dir(dir);
}

}  // namespace
}  // namespace loom
