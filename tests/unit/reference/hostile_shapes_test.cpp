// Hostile shape values through the reference EP (issue 26): one-node models
// whose attributes or constant inputs ask for sizes that overflow int64, go
// negative, or would take terabytes. Each must end in a clean error naming
// the op -- never a crash, a wrapped size or a huge allocation -- both when
// the node runs and when constant folding evaluates it at load. Under the
// sanitizer pass (scripts/sanitize.sh) signed overflow on the way is a
// failure too.
#include <gtest/gtest.h>

#include <cstdint>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using ::onnx::TensorProto;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t k2e62 = int64_t{1} << 62;
constexpr int64_t k2e40 = int64_t{1} << 40;

struct Case {
  std::string name;
  std::string op;  // named in the error
  std::function<void(testing::ModelBuilder&)> build;  // reads graph input "x" [2, 3] float
  int64_t opset = 17;
  // False where the values are legal ONNX (a result is fine, as long as
  // nothing overflows on the way there).
  bool must_fail = true;
};

void add_node(testing::ModelBuilder& m, const std::string& op, std::vector<std::string> inputs,
              const std::function<void(::onnx::NodeProto&)>& attrs = nullptr) {
  auto& n = m.node(op, inputs, {"y"}, "hostile");
  if (attrs) attrs(n);
}

std::vector<Case> cases() {
  using testing::add_int_attr;
  using testing::add_ints_attr;
  using testing::add_float_attr;
  using testing::add_floats_attr;
  std::vector<Case> c;
  auto ints = [](testing::ModelBuilder& m, const std::string& name, std::vector<int64_t> v) {
    m.int64_initializer(name, {static_cast<int64_t>(v.size())}, v);
  };
  c.push_back({"tile wraps to zero bytes", "Tile", [=](auto& m) {
                 ints(m, "r", {k2e62, 4});
                 add_node(m, "Tile", {"x", "r"});
               }});
  c.push_back({"tile past int64", "Tile", [=](auto& m) {
                 ints(m, "r", {k2e40, k2e40});
                 add_node(m, "Tile", {"x", "r"});
               }});
  c.push_back({"expand past int64", "Expand", [=](auto& m) {
                 ints(m, "s", {k2e40, k2e40, 3});
                 add_node(m, "Expand", {"x", "s"});
               }});
  c.push_back({"constant of shape past int64", "ConstantOfShape", [=](auto& m) {
                 ints(m, "s", {k2e62, 8});
                 add_node(m, "ConstantOfShape", {"s"});
               }});
  c.push_back({"pad by int64 max", "Pad", [=](auto& m) {
                 ints(m, "p", {0, kMax, 0, kMax});
                 add_node(m, "Pad", {"x", "p"});
               }});
  c.push_back({"pad below zero", "Pad", [=](auto& m) {
                 ints(m, "p", {0, -5, 0, 0});
                 add_node(m, "Pad", {"x", "p"});
               }});
  c.push_back({"range span past int64", "Range", [=](auto& m) {
                 m.int64_initializer("a", {}, {kMin + 1});
                 m.int64_initializer("b", {}, {kMax});
                 m.int64_initializer("d", {}, {1});
                 add_node(m, "Range", {"a", "b", "d"});
               }});
  c.push_back({"range of 2^62 elements", "Range", [=](auto& m) {
                 m.int64_initializer("a", {}, {0});
                 m.int64_initializer("b", {}, {k2e62});
                 m.int64_initializer("d", {}, {1});
                 add_node(m, "Range", {"a", "b", "d"});
               }});
  c.push_back({"reshape to a wrapped count", "Reshape", [=](auto& m) {
                 ints(m, "s", {k2e62, 4, 0});
                 add_node(m, "Reshape", {"x", "s"}, [](auto& n) { testing::add_int_attr(n, "allowzero", 1); });
               }});
  c.push_back({"one hot of depth 2^62", "OneHot", [=](auto& m) {
                 ints(m, "i", {0, 1});
                 m.int64_initializer("depth", {}, {k2e62});
                 m.float_initializer("v", {2}, {0.f, 1.f});
                 add_node(m, "OneHot", {"i", "depth", "v"});
               }});
  c.push_back({"resize to 2^40 squared", "Resize", [=](auto& m) {
                 m.float_initializer("roi", {0}, {});
                 m.float_initializer("scales", {0}, {});
                 ints(m, "sizes", {k2e40, k2e40});
                 add_node(m, "Resize", {"x", "roi", "scales", "sizes"});
               }});
  c.push_back({"resize by 1e30", "Resize", [=](auto& m) {
                 m.float_initializer("roi", {0}, {});
                 m.float_initializer("scales", {2}, {1e30f, 1e30f});
                 add_node(m, "Resize", {"x", "roi", "scales"});
               }});
  c.push_back({"depth to space block 2^32", "DepthToSpace", [=](auto& m) {
                 m.float_initializer("t", {1, 4, 1, 1}, {1, 2, 3, 4});
                 add_node(m, "DepthToSpace", {"t"}, [](auto& n) { testing::add_int_attr(n, "blocksize", int64_t{1} << 32); });
               }});
  c.push_back({"space to depth block 2^32", "SpaceToDepth", [=](auto& m) {
                 m.float_initializer("t", {1, 1, 2, 2}, {1, 2, 3, 4});
                 add_node(m, "SpaceToDepth", {"t"}, [](auto& n) { testing::add_int_attr(n, "blocksize", int64_t{1} << 32); });
               }});
  c.push_back({"split sizes past int64", "Split", [=](auto& m) {
                 ints(m, "s", {kMax, 2});
                 add_node(m, "Split", {"x", "s"}, [](auto& n) { testing::add_int_attr(n, "axis", 1); });
               }});
  c.push_back({"topk of int64 max", "TopK", [=](auto& m) {
                 ints(m, "k", {kMax});
                 add_node(m, "TopK", {"x", "k"});
               }});
  c.push_back({"slice step int64 min", "Slice", [=](auto& m) {
                 ints(m, "st", {kMax});
                 ints(m, "en", {kMin});
                 ints(m, "ax", {1});
                 ints(m, "sp", {kMin});
                 add_node(m, "Slice", {"x", "st", "en", "ax", "sp"});
               }, 17, false});
  c.push_back({"conv dilation 2^62", "Conv", [=](auto& m) {
                 m.float_initializer("t", {1, 1, 3, 3}, std::vector<float>(9, 1.f));
                 m.float_initializer("w", {1, 1, 2, 2}, {1, 1, 1, 1});
                 add_node(m, "Conv", {"t", "w"}, [](auto& n) { testing::add_ints_attr(n, "dilations", {k2e62, k2e62}); });
               }});
  c.push_back({"conv pads int64 max", "Conv", [=](auto& m) {
                 m.float_initializer("t", {1, 1, 3, 3}, std::vector<float>(9, 1.f));
                 m.float_initializer("w", {1, 1, 2, 2}, {1, 1, 1, 1});
                 add_node(m, "Conv", {"t", "w"}, [](auto& n) { testing::add_ints_attr(n, "pads", {0, 0, kMax, kMax}); });
               }});
  c.push_back({"conv stride 0", "Conv", [=](auto& m) {
                 m.float_initializer("t", {1, 1, 3, 3}, std::vector<float>(9, 1.f));
                 m.float_initializer("w", {1, 1, 2, 2}, {1, 1, 1, 1});
                 add_node(m, "Conv", {"t", "w"}, [](auto& n) { testing::add_ints_attr(n, "strides", {0, 0}); });
               }});
  c.push_back({"conv dilation -3", "Conv", [=](auto& m) {
                 m.float_initializer("t", {1, 1, 3, 3}, std::vector<float>(9, 1.f));
                 m.float_initializer("w", {1, 1, 2, 2}, {1, 1, 1, 1});
                 add_node(m, "Conv", {"t", "w"}, [](auto& n) { testing::add_ints_attr(n, "dilations", {-3, -3}); });
               }});
  c.push_back({"max pool stride 0", "MaxPool", [=](auto& m) {
                 m.float_initializer("t", {1, 1, 3, 3}, std::vector<float>(9, 1.f));
                 add_node(m, "MaxPool", {"t"}, [](auto& n) {
                   testing::add_ints_attr(n, "kernel_shape", {2, 2});
                   testing::add_ints_attr(n, "strides", {0, 0});
                 });
               }});
  c.push_back({"conv transpose stride 2^62", "ConvTranspose", [=](auto& m) {
                 m.float_initializer("t", {1, 1, 3, 3}, std::vector<float>(9, 1.f));
                 m.float_initializer("w", {1, 1, 2, 2}, {1, 1, 1, 1});
                 add_node(m, "ConvTranspose", {"t", "w"}, [](auto& n) { testing::add_ints_attr(n, "strides", {k2e62, k2e62}); });
               }});
  c.push_back({"max pool pads int64 max", "MaxPool", [=](auto& m) {
                 m.float_initializer("t", {1, 1, 3, 3}, std::vector<float>(9, 1.f));
                 add_node(m, "MaxPool", {"t"}, [](auto& n) {
                   testing::add_ints_attr(n, "kernel_shape", {2, 2});
                   testing::add_ints_attr(n, "pads", {kMax, kMax, kMax, kMax});
                 });
               }});
  // Pads whose sum with the input size is exactly int64 max: the output
  // size's "+ 1" is the step that overflows.
  c.push_back({"max pool pads summing to int64 max", "MaxPool", [=](auto& m) {
                 m.float_initializer("t", {1, 1, 3, 3}, std::vector<float>(9, 1.f));
                 add_node(m, "MaxPool", {"t"}, [](auto& n) {
                   testing::add_ints_attr(n, "kernel_shape", {2, 2});
                   testing::add_ints_attr(n, "pads", {kMax, 0, -1, 0});
                 });
               }});
  c.push_back({"average pool kernel 2^62", "AveragePool", [=](auto& m) {
                 m.float_initializer("t", {1, 1, 3, 3}, std::vector<float>(9, 1.f));
                 add_node(m, "AveragePool", {"t"}, [](auto& n) { testing::add_ints_attr(n, "kernel_shape", {k2e62, k2e62}); });
               }});
  // Legal: SAME pads make every window fit; each window's taps are found
  // by division (stepping through 2^62 kernel positions never ended).
  c.push_back({"average pool SAME kernel 2^62", "AveragePool", [=](auto& m) {
                 m.float_initializer("t", {1, 1, 3, 3}, std::vector<float>(9, 1.f));
                 add_node(m, "AveragePool", {"t"}, [](auto& n) {
                   testing::add_ints_attr(n, "kernel_shape", {k2e62, k2e62});
                   testing::add_string_attr(n, "auto_pad", "SAME_UPPER");
                   testing::add_int_attr(n, "count_include_pad", 1);
                 });
               }, 17, false});
  c.push_back({"max pool SAME kernel 2^62 dilated", "MaxPool", [=](auto& m) {
                 m.float_initializer("t", {1, 1, 3, 3}, std::vector<float>(9, 1.f));
                 add_node(m, "MaxPool", {"t"}, [](auto& n) {
                   testing::add_ints_attr(n, "kernel_shape", {k2e62, 3});
                   testing::add_ints_attr(n, "dilations", {1, 2});
                   testing::add_string_attr(n, "auto_pad", "SAME_LOWER");
                 });
               }, 17, false});
  c.push_back({"max unpool strides 2^62", "MaxUnpool", [=](auto& m) {
                 m.float_initializer("t", {1, 1, 2, 2}, {1, 2, 3, 4});
                 m.int64_initializer("idx", {1, 1, 2, 2}, {0, 1, 2, 3});
                 add_node(m, "MaxUnpool", {"t", "idx"}, [](auto& n) {
                   testing::add_ints_attr(n, "kernel_shape", {2, 2});
                   testing::add_ints_attr(n, "strides", {k2e62, k2e62});
                 });
               }});
  c.push_back({"upsample by 1e30", "Upsample", [=](auto& m) {
                 m.float_initializer("scales", {2}, {1e30f, 1e30f});
                 add_node(m, "Upsample", {"x", "scales"});
               }, 9});
  c.push_back({"dft length 2^40", "DFT", [=](auto& m) {
                 m.float_initializer("sig", {1, 4, 1}, {1, 2, 3, 4});
                 m.int64_initializer("len", {}, {k2e40});
                 add_node(m, "DFT", {"sig", "len"});
               }});
  c.push_back({"non max suppression of int64 max boxes out", "NonMaxSuppression", [=](auto& m) {
                 m.float_initializer("boxes", {1, 2, 4}, {0, 0, 1, 1, 2, 2, 3, 3});
                 m.float_initializer("scores", {1, 1, 2}, {0.9f, 0.8f});
                 ints(m, "max_out", {kMax});
                 add_node(m, "NonMaxSuppression", {"boxes", "scores", "max_out"});
               }, 17, false});
  c.push_back({"eye like with k int64 min", "EyeLike", [=](auto& m) {
                 add_node(m, "EyeLike", {"x"}, [](auto& n) { testing::add_int_attr(n, "k", kMin); });
               }, 17, false});
  c.push_back({"trilu k int64 min", "Trilu", [=](auto& m) {
                 m.int64_initializer("k", {}, {kMin});
                 add_node(m, "Trilu", {"x", "k"});
               }, 17, false});
  // Ops of opsets 18 to 27 (issue 29), whose sizes come from input values
  // or from products of input dims.
  auto floats = [](testing::ModelBuilder& m, const std::string& name, const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    m.float_initializer(name, dims, std::vector<float>(static_cast<size_t>(n), 0.5f));
  };
  c.push_back({"affine grid past int64", "AffineGrid", [=](auto& m) {
                 floats(m, "theta", {1, 2, 3});
                 ints(m, "size", {1, 1, k2e40, k2e40});
                 add_node(m, "AffineGrid", {"theta", "size"});
               }, 20});
  c.push_back({"affine grid of terabytes", "AffineGrid", [=](auto& m) {
                 floats(m, "theta", {1, 2, 3});
                 ints(m, "size", {1, 1, int64_t{1} << 20, int64_t{1} << 20});
                 add_node(m, "AffineGrid", {"theta", "size"});
               }, 20});
  c.push_back({"col2im image past int64", "Col2Im", [=](auto& m) {
                 floats(m, "cols", {1, 2, 3});
                 ints(m, "image", {k2e62, 4});
                 ints(m, "block", {1, 2});
                 add_node(m, "Col2Im", {"cols", "image", "block"});
               }, 18});
  c.push_back({"center crop pad to 2^62", "CenterCropPad", [=](auto& m) {
                 ints(m, "shape", {k2e62, k2e62});
                 add_node(m, "CenterCropPad", {"x", "shape"});
               }, 18});
  c.push_back({"tensor scatter at int64 max", "TensorScatter", [=](auto& m) {
                 floats(m, "past", {1, 4, 2});
                 floats(m, "update", {1, 1, 2});
                 ints(m, "at", {kMax});
                 add_node(m, "TensorScatter", {"past", "update", "at"});
               }, 24});
  c.push_back({"rotary position past the caches", "RotaryEmbedding", [=](auto& m) {
                 floats(m, "in", {1, 1, 1, 4});
                 floats(m, "cache", {2, 2});
                 ints(m, "pos", {kMax});
                 m.proto().mutable_graph()->mutable_initializer()->rbegin()->clear_dims();
                 m.proto().mutable_graph()->mutable_initializer()->rbegin()->add_dims(1);
                 m.proto().mutable_graph()->mutable_initializer()->rbegin()->add_dims(1);
                 add_node(m, "RotaryEmbedding", {"in", "cache", "cache", "pos"});
               }, 23});
  c.push_back({"linear attention state of 2^34", "LinearAttention", [=](auto& m) {
                 // dk = dv = 2^17 from 0.5 MB inputs: a 128 GiB state.
                 for (const char* name : {"q", "k", "v"}) floats(m, name, {1, 1, int64_t{1} << 17});
                 auto& n = m.node("LinearAttention", {"q", "k", "v"}, {"y"}, "hostile");
                 testing::add_int_attr(n, "q_num_heads", 1);
                 testing::add_int_attr(n, "kv_num_heads", 1);
                 testing::add_string_attr(n, "update_rule", "linear");
               }, 27});
  c.push_back({"dft length 2^62", "DFT", [=](auto& m) {
                 floats(m, "signal", {1, 4, 1});
                 ints(m, "len", {k2e62});
                 add_node(m, "DFT", {"signal", "len"});
               }, 20});
  return c;
}

// Provider lists each case runs under: the reference EP alone, and the fast
// CPU EP first (it computes window geometry and sizes of its own).
// The CPU EPs of this build, each first in a priority list (cpu_onednn is
// not in every build: LOOM_WITH_ONEDNN, sanitizer builds).
// Asked once: has_provider loads the plugins.
const std::vector<std::vector<std::string>>& cpu_provider_lists() {
  static const std::vector<std::vector<std::string>> lists = [] {
    std::vector<std::vector<std::string>> l = {{"reference"}};
    if (testing::has_provider("cpu_onednn")) l.push_back({"cpu_onednn", "reference"});
    return l;
  }();
  return lists;
}

// With LOOM_HOSTILE_SEED_DIR set, each model is also written there as
// hostile_<name>.onnx: fuzz/regressions/session_run/ keeps them as seeds
// (and replays them) for the fuzzers.
void keep_as_seed(const std::string& name, const std::string& bytes) {
  const char* dir = std::getenv("LOOM_HOSTILE_SEED_DIR");
  if (dir == nullptr || *dir == 0) return;
  std::string file = "hostile_" + name;
  for (char& ch : file)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  std::ofstream(std::string(dir) + "/" + file + ".onnx", std::ios::binary) << bytes;
}

// Runs the case at `level`: Ok(empty) when it ran, else the error.
Status run_case(const Case& c, OptimizationLevel level,
                const std::vector<std::string>& providers = {"reference"}) {
  testing::ModelBuilder m(c.opset);
  m.input("x", TensorProto::FLOAT, {2, 3});
  c.build(m);
  m.output("y", TensorProto::FLOAT, {});
  keep_as_seed(c.name, m.bytes());
  Config config;
  config.providers = providers;
  config.optimization_level = level;
  // A bound on what one tensor may take, so a size that slips through is
  // refused by the limit rather than allocated.
  config.max_tensor_mb = 64;
  auto env = testing::make_env(config);
  if (!env) return fail("no environment");
  auto s = Session::create_from_bytes(env, m.bytes());
  if (!s.has_value()) return s.status();
  auto out = (*s)->run({{"x", Tensor::from_vector(DType::kFloat, {2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6})}});
  if (!out.has_value()) return out.status();
  return Status::ok();
}

class HostileShapes : public ::testing::TestWithParam<Case> {};

TEST_P(HostileShapes, FailCleanlyNamingTheOp) {
  const Case& c = GetParam();
  for (const std::vector<std::string>& providers : cpu_provider_lists())
    for (OptimizationLevel level : {OptimizationLevel::kDisabled, OptimizationLevel::kBasic}) {
      const Status st = run_case(c, level, providers);
      if (!c.must_fail && st.is_ok()) continue;
      EXPECT_FALSE(st.is_ok()) << c.name << " on " << providers[0] << ": accepted";
      EXPECT_NE(st.message().find(c.op), std::string::npos) << c.name << " on " << providers[0] << ": " << st.message();
    }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.name;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(ReferenceEp, HostileShapes, ::testing::ValuesIn(cases()), case_name);

// Window attributes on a graph input, so that an EP which claims windows on
// run-time tensors (cpu_onednn: at session creation, from static shapes)
// computes the geometry itself rather than constant folding doing it.
TEST(HostileWindows, FailCleanlyOnEveryCpuEp) {
  struct Window {
    std::string name, op;
    std::vector<int64_t> strides, dilations, pads, kernel;
  };
  const std::vector<Window> windows = {
      {"conv dilation 2^62", "Conv", {1, 1}, {k2e62, k2e62}, {0, 0, 0, 0}, {}},
      {"conv pads int64 max", "Conv", {1, 1}, {1, 1}, {0, 0, kMax, kMax}, {}},
      {"conv stride 0", "Conv", {0, 0}, {1, 1}, {0, 0, 0, 0}, {}},
      {"conv transpose stride 2^62", "ConvTranspose", {k2e62, k2e62}, {1, 1}, {0, 0, 0, 0}, {}},
      {"conv transpose dilation 2^62", "ConvTranspose", {1, 1}, {k2e62, k2e62}, {0, 0, 0, 0}, {}},
      {"max pool pads int64 max", "MaxPool", {1, 1}, {}, {0, 0, kMax, kMax}, {2, 2}},
      {"average pool kernel 2^62", "AveragePool", {1, 1}, {}, {0, 0, 0, 0}, {k2e62, k2e62}},
  };
  for (const Window& w : windows) {
    for (const std::vector<std::string>& providers : cpu_provider_lists()) {
      testing::ModelBuilder m;
      m.input("x", TensorProto::FLOAT, {1, 1, 3, 3});
      std::vector<std::string> inputs = {"x"};
      const bool conv = w.op.rfind("Conv", 0) == 0;
      if (conv) {
        m.float_initializer("w", {1, 1, 2, 2}, {1, 1, 1, 1});
        inputs.push_back("w");
      }
      auto& n = m.node(w.op, inputs, {"y"}, "window");
      testing::add_ints_attr(n, "strides", w.strides);
      testing::add_ints_attr(n, "pads", w.pads);
      if (!w.dilations.empty()) testing::add_ints_attr(n, "dilations", w.dilations);
      if (!w.kernel.empty()) testing::add_ints_attr(n, "kernel_shape", w.kernel);
      m.output("y", TensorProto::FLOAT, {-1, -1, -1, -1});
      keep_as_seed(w.name + " on a graph input", m.bytes());
      Config config;
      config.providers = providers;
      auto env = testing::make_env(config);
      ASSERT_TRUE(env);
      Status st = Status::ok();
      auto s = Session::create_from_bytes(env, m.bytes());
      if (!s) {
        st = s.status();
      } else {
        auto out = (*s)->run({{"x", testing::float_tensor({1, 1, 3, 3}, std::vector<float>(9, 1.f))}});
        if (!out) st = out.status();
      }
      EXPECT_FALSE(st.is_ok()) << w.name << " on " << providers[0] << ": accepted";
      EXPECT_NE(st.message().find(w.op), std::string::npos) << w.name << " on " << providers[0] << ": " << st.message();
    }
  }
}

// A kernel's working memory counts against the limits before it is taken:
// a 64x64 kernel padded to 127x127 output positions asks Conv for a 264 MB
// im2col buffer (and ConvTranspose for 151 MB of col2im columns) although
// X, W and Y each take under 100 KB. Under a 64 MiB tensor limit both are
// refused as out of memory naming the buffer, at every optimization level
// (constant folding evaluates them at load).
TEST(HostileKernelScratch, CountsAgainstTheTensorLimitBeforeItIsTaken) {
  struct ScratchCase {
    std::string op, buffer;
    int64_t kernel;
    std::function<void(::onnx::NodeProto&)> attrs;
  };
  const std::vector<ScratchCase> scratch_cases = {
      {"Conv", "Conv im2col buffer", 64, [](auto& n) { testing::add_ints_attr(n, "pads", {63, 63, 63, 63}); }},
      {"ConvTranspose", "ConvTranspose col2im buffer", 96, nullptr},
  };
  for (const ScratchCase& sc : scratch_cases) {
    Case c{sc.op + " scratch", sc.op, [&](testing::ModelBuilder& m) {
             m.float_initializer("t", {1, 1, 64, 64}, std::vector<float>(64 * 64, 1.f));
             m.float_initializer("w", {1, 1, sc.kernel, sc.kernel},
                                 std::vector<float>(static_cast<size_t>(sc.kernel * sc.kernel), 1.f));
             add_node(m, sc.op, {"t", "w"}, sc.attrs);
           }};
    for (OptimizationLevel level : {OptimizationLevel::kDisabled, OptimizationLevel::kBasic}) {
      const Status st = run_case(c, level);
      EXPECT_EQ(st.code(), StatusCode::kOutOfMemory) << sc.op << ": " << st.message();
      EXPECT_NE(st.message().find(sc.buffer), std::string::npos) << st.message();
      EXPECT_NE(st.message().find("limits.max_tensor_mb (64 MiB)"), std::string::npos) << st.message();
    }
  }
}

}  // namespace
}  // namespace loom
