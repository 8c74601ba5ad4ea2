// Whole hostile models given to the loader (onnxio::load_model_bytes /
// load_model_file) and to sessions: each is refused with a Status naming the
// tensor, node or value at fault, nothing large is allocated on the way, and
// the process still loads and runs a good model afterwards.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>

#include "common/model_builder.h"
#include "common/rss.h"
#include "common/test_env.h"
#include "onnx/model_loader.h"

namespace loom {
namespace {

namespace fs = std::filesystem;
using ::onnx::TensorProto;
using testing::ModelBuilder;

using testing::rss_bytes;

// Refusals must not touch more than this much new memory.
constexpr int64_t kRssSlack = 64 << 20;

// A fresh folder per test and process (test binaries may run side by side).
fs::path fresh_dir(const std::string& name) {
  fs::path dir = fs::path(::testing::TempDir()) / ("loom_hostile_model_test." + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void remove_fresh_dir(const fs::path& dir) {
  fs::remove_all(dir);
  std::error_code ec;
  fs::remove(dir.parent_path(), ec);  // the process's folder, once empty
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// y = x + w with w an initializer the caller spoils; x and y are float[2].
ModelBuilder add_model() {
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, {2});
  m.node("Add", {"x", "w"}, {"y"}, "add");
  m.output("y", TensorProto::FLOAT, {2});
  return m;
}

TensorProto& add_initializer(ModelBuilder& m, const std::string& name, const std::vector<int64_t>& dims) {
  TensorProto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  return *t;
}

void set_external(TensorProto& t, const std::string& location, int64_t offset = -1, int64_t length = -1) {
  t.set_data_location(TensorProto::EXTERNAL);
  auto add = [&](const std::string& k, const std::string& v) {
    auto* e = t.add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  if (offset >= 0) add("offset", std::to_string(offset));
  if (length >= 0) add("length", std::to_string(length));
}

// The loader's error for `bytes` (model folder `dir`; empty: given as bytes).
std::string load_error(const std::string& bytes, const std::string& dir = "") {
  auto m = onnxio::load_model_bytes(bytes, dir, "<hostile>");
  EXPECT_FALSE(m.has_value()) << "the hostile model loaded";
  return m.has_value() ? "" : m.status().message();
}

std::string file_error(const fs::path& path) {
  auto m = onnxio::load_model_file(path.string());
  EXPECT_FALSE(m.has_value()) << "the hostile model loaded";
  return m.has_value() ? "" : m.status().message();
}

std::string session_error(const std::string& bytes) {
  auto s = Session::create_from_bytes(testing::reference_env(), bytes);
  EXPECT_FALSE(s.has_value()) << "a session was created for the hostile model";
  return s.has_value() ? "" : s.status().message();
}

// The process is still usable: a good model loads and runs.
void expect_good_model_runs() {
  ModelBuilder m = add_model();
  m.float_initializer("w", {2}, {10, 20});
  auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
  ASSERT_TRUE(s) << s.status().message();
  auto out = (*s)->run({{"x", testing::float_tensor({2}, {1, 2})}});
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(testing::values_of((*out)[0]), (std::vector<float>{11, 22}));
}

#define EXPECT_HAS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

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

// ------------------------------------------------------------- structure

// An If nesting `depth` graphs below the main one; `x` flows to the bottom.
std::string nested_if_model(int depth) {
  auto leaf = [](const std::string& out) {
    ::onnx::GraphProto g;
    g.set_name("leaf_" + out);
    auto* n = g.add_node();
    n->set_op_type("Identity");
    n->add_input("x");
    n->add_output(out);
    auto* o = g.add_output();
    o->set_name(out);
    o->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
    return g;
  };
  ::onnx::GraphProto inner = leaf("o" + std::to_string(depth));
  for (int level = depth - 1; level >= 0; --level) {
    ::onnx::GraphProto g;
    g.set_name("level" + std::to_string(level));
    auto* n = g.add_node();
    n->set_op_type("If");
    n->set_name("if" + std::to_string(level));
    n->add_input("cond");
    n->add_output("o" + std::to_string(level));
    auto* then_branch = n->add_attribute();
    then_branch->set_name("then_branch");
    then_branch->set_type(::onnx::AttributeProto::GRAPH);
    *then_branch->mutable_g() = std::move(inner);
    auto* else_branch = n->add_attribute();
    else_branch->set_name("else_branch");
    else_branch->set_type(::onnx::AttributeProto::GRAPH);
    *else_branch->mutable_g() = leaf("e" + std::to_string(level));
    auto* o = g.add_output();
    o->set_name("o" + std::to_string(level));
    o->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
    inner = std::move(g);
  }
  ModelBuilder m;
  m.input("cond", TensorProto::BOOL, {});
  m.input("x", TensorProto::FLOAT, {2});
  // The main graph is level 0's body with the model's inputs.
  ::onnx::GraphProto* main = m.proto().mutable_graph();
  for (const auto& n : inner.node()) *main->add_node() = n;
  m.output("o0", TensorProto::FLOAT, {2});
  return m.bytes();
}

TEST(HostileModelTest, ShallowNestedSubgraphsLoad) {
  auto s = Session::create_from_bytes(testing::reference_env(), nested_if_model(4));
  ASSERT_TRUE(s) << s.status().message();
  Tensor cond = Tensor::from_vector(DType::kBool, {}, std::vector<uint8_t>{1});
  auto out = (*s)->run({{"cond", cond}, {"x", testing::float_tensor({2}, {1, 2})}});
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(testing::values_of((*out)[0]), (std::vector<float>{1, 2}));
}

TEST(HostileModelTest, SubgraphsNestedTooDeeplyAreRefused) {
  // Just past the loader's limit: refused by the loader, naming the limit.
  std::string e = load_error(nested_if_model(40));
  EXPECT_HAS(e, "nested deeper than");
  EXPECT_HAS(session_error(nested_if_model(40)), "nested deeper than");
  // Far past it: refused while parsing, still a Status, saying why it may be.
  e = load_error(nested_if_model(2000));
  EXPECT_HAS(e, "nested");
  expect_good_model_runs();
}

TEST(HostileModelTest, CyclicGraphIsRefused) {
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, {2});
  m.node("Add", {"x", "b"}, {"a"}, "node_a");
  m.node("Relu", {"a"}, {"b"}, "node_b");
  m.output("b", TensorProto::FLOAT, {2});
  const std::string e = session_error(m.bytes());
  EXPECT_HAS(e, "cycle");
  EXPECT_HAS(load_error(m.bytes()), "cycle");  // refused as loaded, not by a pass
  EXPECT_TRUE(e.find("'node_a'") != std::string::npos || e.find("'node_b'") != std::string::npos) << e;
  // Without graph passes too (the partitioner orders the graph itself).
  Config c;
  c.providers = {"reference"};
  c.optimization_level = OptimizationLevel::kDisabled;
  auto s = Session::create_from_bytes(testing::make_env(c), m.bytes());
  ASSERT_FALSE(s);
  EXPECT_HAS(s.status().message(), "cycle");
  expect_good_model_runs();
}

TEST(HostileModelTest, ReadingAValueNobodyProducesIsRefused) {
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, {2});
  m.node("Add", {"x", "ghost"}, {"y"}, "reader");
  m.output("y", TensorProto::FLOAT, {2});
  const std::string e = session_error(m.bytes());
  EXPECT_HAS(e, "'ghost'");
  EXPECT_HAS(e, "'reader'");
  EXPECT_HAS(load_error(m.bytes()), "'ghost'");
  expect_good_model_runs();
}

// The fuzzer's first loader finding (fuzz/regressions/model_loader): ONNX's
// data propagation for Shape dereferenced the type of an undefined input.
// Undefined reads are now refused before ONNX's inference runs, also inside
// subgraphs.
TEST(HostileModelTest, UndefinedReadIsRefusedBeforeOnnxInference) {
  ModelBuilder m(15);
  m.node("Shape", {"nowhere"}, {"y"}, "shape");
  m.output("y", TensorProto::INT64, {1});
  const std::string e = load_error(m.bytes());
  EXPECT_HAS(e, "node 'shape' (Shape) reads 'nowhere'");
  expect_good_model_runs();
}

// The fuzzer's second loader finding: a Scan without its body attribute
// crashed ONNX's Scan inference. Nodes are verified against their schema
// (ONNX's checker) before inference: missing, unknown or mistyped
// attributes and wrong arity are refused naming the node.
TEST(HostileModelTest, NodesNotMatchingTheirSchemaAreRefusedBeforeOnnxInference) {
  ModelBuilder m(9);
  m.input("x", TensorProto::FLOAT, {2, 3});
  auto& scan = m.node("Scan", {"x"}, {"y"}, "scan");
  testing::add_int_attr(scan, "num_scan_inputs", 1);  // no body
  m.output("y", TensorProto::FLOAT, {2, 3});
  const std::string e = load_error(m.bytes());
  EXPECT_HAS(e, "node 'scan' (Scan) does not match its op's schema at opset 9");
  EXPECT_HAS(e, "body");
  ModelBuilder extra;
  extra.input("x", TensorProto::FLOAT, {2});
  testing::add_int_attr(extra.node("Relu", {"x"}, {"y"}, "relu"), "bogus", 1);
  extra.output("y", TensorProto::FLOAT, {2});
  EXPECT_HAS(load_error(extra.bytes()), "bogus");
  expect_good_model_runs();
}

// Bytes other than 0 and 1 are not bools: kernels reading them would be
// undefined behaviour (the fuzzer's first session finding), so they are
// refused in initializers and in run inputs, naming the tensor or input.
TEST(HostileModelTest, BoolBytesOtherThanZeroOrOneAreRefused) {
  ModelBuilder m;
  m.input("x", TensorProto::BOOL, {2});
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name("flags");
  t->set_data_type(TensorProto::BOOL);
  t->add_dims(2);
  t->set_raw_data(std::string("\x01\x02", 2));
  m.node("And", {"x", "flags"}, {"y"}, "and");
  m.output("y", TensorProto::BOOL, {2});
  const std::string e = load_error(m.bytes());
  EXPECT_HAS(e, "'flags'");
  EXPECT_HAS(e, "bool element 1 holds byte value 2");

  ModelBuilder ok;
  ok.input("x", TensorProto::BOOL, {2});
  ok.node("Not", {"x"}, {"y"}, "not");
  ok.output("y", TensorProto::BOOL, {2});
  auto s = Session::create_from_bytes(testing::reference_env(), ok.bytes());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  const uint8_t bad[2] = {0, 7};
  auto refused = (*s)->run({{"x", Tensor::from_bytes(DType::kBool, {2}, bad, 2).value()}});
  ASSERT_FALSE(refused.has_value());
  EXPECT_HAS(refused.status().message(), "input 'x'");
  EXPECT_HAS(refused.status().message(), "byte value 7");
  const uint8_t good[2] = {0, 1};
  auto out = (*s)->run({{"x", Tensor::from_bytes(DType::kBool, {2}, good, 2).value()}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(static_cast<const uint8_t*>((*out)[0].data())[0], 1);
}

TEST(HostileModelTest, ValueProducedTwiceIsRefused) {
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, {2});
  m.node("Relu", {"x"}, {"v"}, "first");
  m.node("Neg", {"x"}, {"v"}, "second");
  m.output("v", TensorProto::FLOAT, {2});
  const std::string e = session_error(m.bytes());
  EXPECT_HAS(e, "'v'");
  EXPECT_HAS(e, "'first'");
  EXPECT_HAS(e, "'second'");
  EXPECT_HAS(load_error(m.bytes()), "produced by both");
  expect_good_model_runs();
}

TEST(HostileModelTest, NodeOverwritingAGraphInputOrInitializerIsRefused) {
  ModelBuilder input;
  input.input("x", TensorProto::FLOAT, {2});
  input.node("Relu", {"x"}, {"x"}, "clobber");
  input.output("x", TensorProto::FLOAT, {2});
  std::string e = session_error(input.bytes());
  EXPECT_HAS(e, "'x'");
  EXPECT_HAS(e, "'clobber'");

  ModelBuilder init = add_model();
  init.float_initializer("w", {2}, {1, 2});
  init.node("Neg", {"x"}, {"w"}, "clobber");
  e = session_error(init.bytes());
  EXPECT_HAS(e, "'w'");
  EXPECT_HAS(e, "'clobber'");
  expect_good_model_runs();
}

// Calls of model-local functions (which Loom does not run) are refused
// before ONNX's inference would expand them: 61 functions each calling the
// previous twice held the inference server for its whole timeout.
TEST(HostileModelTest, ModelLocalFunctionCallsAreRefusedBeforeInference) {
  ModelBuilder m;
  m.import_domain("local", 1);
  m.input("x", TensorProto::FLOAT, {2});
  m.node("f60", {"x"}, {"y"}, "call", "local");
  m.output("y", TensorProto::FLOAT, {2});
  for (int i = 0; i < 61; ++i) {
    auto* f = m.proto().add_functions();
    f->set_name("f" + std::to_string(i));
    f->set_domain("local");
    f->add_input("x");
    f->add_output("y");
    auto* op = f->add_opset_import();
    op->set_domain(i == 0 ? "" : "local");
    op->set_version(i == 0 ? 17 : 1);
    for (int k = 0; k < (i == 0 ? 1 : 2); ++k) {
      auto* n = f->add_node();
      n->set_op_type(i == 0 ? "Relu" : "f" + std::to_string(i - 1));
      n->set_domain(i == 0 ? "" : "local");
      n->add_input(k == 0 ? "x" : "t");
      n->add_output(i == 0 || k == 1 ? "y" : "t");
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string e = session_error(m.bytes());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_HAS(e, "node 'call' calls the model-local function 'local.f60'");
  expect_good_model_runs();
}

TEST(HostileModelTest, DeclaredRankAboveTheLimitIsRefused) {
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, std::vector<int64_t>(100000, 1));
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y", TensorProto::FLOAT, {});
  EXPECT_HAS(session_error(m.bytes()), "the declared type of 'x' has rank 100000, over the limit of 64");
  expect_good_model_runs();
}

TEST(HostileModelTest, InitializerDefinedTwiceIsRefused) {
  ModelBuilder m = add_model();
  m.float_initializer("w", {2}, {1, 2});
  m.float_initializer("w", {2}, {3, 4});
  const std::string e = session_error(m.bytes());
  EXPECT_HAS(e, "initializer 'w' is defined twice");
  expect_good_model_runs();
}

// An If branch whose node writes a name the main graph defines: the branch
// would shadow the outer value (ONNX forbids it).
TEST(HostileModelTest, SubgraphShadowingAnOuterValueIsRefused) {
  ModelBuilder m;
  m.input("cond", TensorProto::BOOL, {});
  m.input("x", TensorProto::FLOAT, {2});
  m.node("Relu", {"x"}, {"r"}, "outer");
  auto branch = [](const std::string& out_name) {
    ::onnx::GraphProto g;
    g.set_name("branch");
    auto* n = g.add_node();
    n->set_op_type("Neg");
    n->add_input("r");
    n->add_output(out_name);
    auto* o = g.add_output();
    o->set_name(out_name);
    o->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
    return g;
  };
  auto& node = m.node("If", {"cond"}, {"y"}, "if");
  auto* then_a = node.add_attribute();
  then_a->set_name("then_branch");
  then_a->set_type(::onnx::AttributeProto::GRAPH);
  *then_a->mutable_g() = branch("r");  // shadows the outer 'r'
  auto* else_a = node.add_attribute();
  else_a->set_name("else_branch");
  else_a->set_type(::onnx::AttributeProto::GRAPH);
  *else_a->mutable_g() = branch("e");
  m.output("y", TensorProto::FLOAT, {2});
  const std::string e = session_error(m.bytes());
  EXPECT_HAS(e, "'r' in a subgraph shadows a value of an enclosing graph");
  expect_good_model_runs();
}

TEST(HostileModelTest, EmptyGraphIsRefused) {
  ModelBuilder m;
  const std::string e = session_error(m.bytes());
  EXPECT_HAS(e, "no outputs");
  expect_good_model_runs();
}

TEST(HostileModelTest, GraphOutputNobodyProducesIsRefused) {
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, {2});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y", TensorProto::FLOAT, {2});
  m.output("missing", TensorProto::FLOAT, {2});
  const std::string e = session_error(m.bytes());
  EXPECT_HAS(e, "'missing'");
  expect_good_model_runs();
}

TEST(HostileModelTest, TruncatedAndRandomBytesAreRefused) {
  ModelBuilder good = add_model();
  good.float_initializer("w", {2}, {10, 20});
  const std::string bytes = good.bytes();
  for (size_t cut : {size_t{1}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
    auto m = onnxio::load_model_bytes(bytes.substr(0, cut), "", "<truncated>");
    EXPECT_FALSE(m.has_value()) << "cut at " << cut;
  }
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 200; ++trial) {
    std::string noise(1 + rng() % 4096, '\0');
    for (char& ch : noise) ch = static_cast<char>(rng());
    auto m = onnxio::load_model_bytes(noise, "", "<noise>");
    if (!m) {
      EXPECT_HAS(m.status().message(), "<noise>");
    }
  }
  const fs::path dir = fresh_dir("truncated");
  write_file(dir / "cut.onnx", bytes.substr(0, bytes.size() / 2));
  EXPECT_HAS(file_error(dir / "cut.onnx"), "cut.onnx");
  EXPECT_HAS(session_error(std::string("not a model at all")), "not a valid ONNX model");
  expect_good_model_runs();
  remove_fresh_dir(dir);
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
