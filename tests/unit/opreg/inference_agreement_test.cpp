// The registry's in-process inference (element types and shapes) against
// ONNX's, on every model of the ONNX backend node suites with the file's
// own output and value types removed: where both tell something of a
// value, they must agree (same element type, same rank, same known dims),
// and the in-process one must tell most of what ONNX's does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <vector>
#include <string>

#include "onnx/model_loader.h"

namespace loom::opreg {
namespace {

struct Agreement {
  int models = 0;
  int dtypes_onnx = 0, dtypes_both = 0, dtype_contradictions = 0;
  int shapes_onnx = 0, shapes_both = 0, shape_contradictions = 0;
  int onnx_wrong = 0;  // disagreements where the suite's expected output shows ONNX 1.12's inference wrong
  int dims_onnx_only = 0;  // dims ONNX's inference knows and the in-process one leaves unknown
  std::string first_contradiction;
  std::map<std::string, int> shapes_onnx_only_by_op;  // op -> shapes only ONNX's inference gives, inputs' shapes known

  void contradiction(int& count, const std::string& what) {
    if (count++ == 0 && first_contradiction.empty()) first_contradiction = what;
  }
};

onnxio::LoadOptions only(bool onnx) {
  onnxio::LoadOptions o;
  o.onnx_inference = onnx;
  o.loom_inference = !onnx;
  return o;
}

std::string show(const ir::ValueType& t) { return t.to_string(); }

// The dims of the suite's expected output `index` of the model in `dir`
// (test_data_set_0), or nullopt.
std::optional<std::vector<int64_t>> expected_dims(const std::filesystem::path& dir, size_t index) {
  ::onnx::TensorProto t;
  std::ifstream in(dir / "test_data_set_0" / ("output_" + std::to_string(index) + ".pb"), std::ios::binary);
  if (!in || !t.ParseFromIstream(&in)) return std::nullopt;
  return std::vector<int64_t>(t.dims().begin(), t.dims().end());
}

bool has_dims(const ir::ValueType& t, const std::vector<int64_t>& dims) {
  if (!t.has_shape || t.dims.size() != dims.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i)
    if (t.dims[i].value >= 0 && t.dims[i].value != dims[i]) return false;
  return true;
}

void compare(const ir::Graph& onnx, const ir::Graph& loom, const std::filesystem::path& dir, Agreement& a) {
  const std::string model = dir.filename().string();
  // Each value's producing op, counted where the in-process inference knew
  // the shapes of all its inputs (so that its own rule is what is missing,
  // not an input's).
  std::map<std::string, std::string> producer;
  for (const auto& n : loom.nodes()) {
    bool inputs_known = true;
    for (const std::string& in : n->inputs) {
      if (in.empty()) continue;
      const ir::ValueType* t = loom.type_of(in);
      if ((t == nullptr || !t->has_shape) && loom.initializer_in_scope(in) == nullptr) inputs_known = false;
    }
    if (inputs_known)
      for (const std::string& o : n->outputs) producer[o] = (n->domain.empty() ? "" : n->domain + ".") + n->op_type;
  }
  for (const auto& [name, o] : onnx.value_types) {
    if (o.kind != ValueKind::kTensor || onnx.is_initializer(name) || onnx.is_graph_input(name)) continue;
    const ir::ValueType* l = loom.type_of(name);
    const std::string where = model + ": '" + name + "' is ";
    if (o.dtype != DType::kUndefined) {
      ++a.dtypes_onnx;
      if (l != nullptr && l->dtype != DType::kUndefined) {
        ++a.dtypes_both;
        if (l->dtype != o.dtype) a.contradiction(a.dtype_contradictions, where + show(*l) + " in process, " + show(o) + " by ONNX");
      }
    }
    if (!o.has_shape) continue;
    ++a.shapes_onnx;
    if (l == nullptr || !l->has_shape) {
      if (auto p = producer.find(name); p != producer.end()) ++a.shapes_onnx_only_by_op[p->second];
      continue;
    }
    ++a.shapes_both;
    bool same = l->dims.size() == o.dims.size();
    for (size_t i = 0; same && i < o.dims.size(); ++i) {
      same = o.dims[i].value < 0 || l->dims[i].value < 0 || o.dims[i].value == l->dims[i].value;
      if (o.dims[i].value >= 0 && l->dims[i].value < 0) ++a.dims_onnx_only;
    }
    if (same) continue;
    // A graph output's true shape is in the suite: ONNX 1.12 serves newer
    // opsets with older versions' inference (pools ignore the dilations
    // opsets 18-19 added, say).
    const auto out = std::find(onnx.outputs.begin(), onnx.outputs.end(), name);
    if (onnx.parent == nullptr && out != onnx.outputs.end())
      if (auto truth = expected_dims(dir, static_cast<size_t>(out - onnx.outputs.begin()));
          truth && has_dims(*l, *truth) && !has_dims(o, *truth)) {
        ++a.onnx_wrong;
        continue;
      }
    a.contradiction(a.shape_contradictions, where + show(*l) + " in process, " + show(o) + " by ONNX");
  }
  // Control-flow bodies, node by node (both loads keep the file's order).
  const auto& onnx_nodes = onnx.nodes();
  const auto& loom_nodes = loom.nodes();
  for (size_t i = 0; i < onnx_nodes.size() && i < loom_nodes.size(); ++i)
    for (size_t k = 0; k < onnx_nodes[i]->attributes.size() && k < loom_nodes[i]->attributes.size(); ++k) {
      const ir::Attribute &x = onnx_nodes[i]->attributes[k], &y = loom_nodes[i]->attributes[k];
      if (x.graph && y.graph) compare(*x.graph, *y.graph, dir, a);
    }
}

// `file` loaded once with each inference alone, after dropping its
// value_info (and, with `drop_outputs`, its outputs' types), so that only
// inference types those values; nullopt when it cannot be read or loaded.
struct BothWays {
  onnxio::LoadedModel onnx, loom;
};
std::optional<BothWays> load_both_ways(const std::filesystem::path& file, bool drop_outputs) {
  ::onnx::ModelProto proto;
  std::ifstream in(file, std::ios::binary);
  if (!in || !proto.ParseFromIstream(&in)) return std::nullopt;
  proto.mutable_graph()->clear_value_info();
  if (drop_outputs)
    for (auto& out : *proto.mutable_graph()->mutable_output()) out.clear_type();
  const std::string bytes = proto.SerializeAsString(), dir = file.parent_path().string();
  auto with_onnx = onnxio::load_model_bytes(bytes, dir, file.filename().string(), only(true));
  auto with_loom = onnxio::load_model_bytes(bytes, dir, file.filename().string(), only(false));
  if (!with_onnx.has_value() || !with_loom.has_value()) return std::nullopt;
  return BothWays{std::move(*with_onnx), std::move(*with_loom)};
}

void compare_suite(const std::filesystem::path& dir, Agreement& a) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    auto both = load_both_ways(entry.path() / "model.onnx", /*drop_outputs=*/true);
    if (!both) continue;  // unreadable or refused: the conformance suites' business
    ++a.models;
    compare(*both->onnx.graph, *both->loom.graph, entry.path(), a);
  }
}

double share(int part, int whole) { return whole == 0 ? 1.0 : double(part) / whole; }

TEST(InferenceAgreementTest, InProcessInferenceAgreesWithOnnxOnTheBackendNodeSuites) {
  Agreement a;
  for (const std::string dir : {std::string("/usr/share/libonnx-testdata/data/node"),
                                std::string(LOOM_SOURCE_DIR) + "/../shared/onnx-backend-tests/node"})
    if (std::filesystem::is_directory(dir)) compare_suite(dir, a);
  if (a.models == 0) GTEST_SKIP() << "no ONNX backend node suite here";
  std::printf("%d models; element types: ONNX %d, in process %d of them (%.1f %%); shapes: ONNX %d, in process %d "
              "of them (%.1f %%), %d dims only ONNX knows; %d shapes ONNX's inference gets wrong\n",
              a.models, a.dtypes_onnx, a.dtypes_both, 100 * share(a.dtypes_both, a.dtypes_onnx), a.shapes_onnx,
              a.shapes_both, 100 * share(a.shapes_both, a.shapes_onnx), a.dims_onnx_only, a.onnx_wrong);
  EXPECT_EQ(a.dtype_contradictions, 0) << a.first_contradiction;
  EXPECT_EQ(a.shape_contradictions, 0) << a.first_contradiction;
  EXPECT_GE(share(a.dtypes_both, a.dtypes_onnx), 0.99);
  // 98.1 % when written: the remaining ops (sequences, strings, DFT,
  // opset-8 Scan, ...) have no shape rule yet.
  EXPECT_GE(share(a.shapes_both, a.shapes_onnx), 0.98);
  // Why ONNX's inference (in its server) is still asked for values the
  // registry's leaves untyped: it still types values the registry cannot.
  // When this fails, the fallback has nothing left to add and can go.
  std::vector<std::pair<int, std::string>> ops;
  for (const auto& [op, count] : a.shapes_onnx_only_by_op) ops.emplace_back(count, op);
  std::sort(ops.rbegin(), ops.rend());
  std::string top;
  for (size_t i = 0; i < ops.size() && i < 12; ++i) top += " " + ops[i].second + " " + std::to_string(ops[i].first);
  std::printf("shapes only ONNX's inference gives where the inputs\' are known, by op (%zu ops):%s\n", ops.size(), top.c_str());
  EXPECT_GT(a.shapes_onnx - a.shapes_both, 0) << "the ONNX inference fallback adds nothing on the suites any more";
}

// The real models the model tests make (build/models), each as it is: the
// in-process inference never contradicts ONNX's on them.
TEST(InferenceAgreementTest, InProcessInferenceAgreesWithOnnxOnTheRealModels) {
  const std::filesystem::path models = std::filesystem::path(LOOM_BINARY_DIR) / "models";
  int compared = 0;
  for (const char* name : {"resnet50.onnx", "mobilenetv2.onnx", "bert_encoder.onnx", "ocr-models/ch_PP-OCRv4_det_infer.onnx",
                           "ocr-models/ch_PP-OCRv4_rec_infer.onnx", "ocr-models/ch_ppocr_mobile_v2.0_cls_infer.onnx"}) {
    const std::filesystem::path file = models / name;
    if (!std::filesystem::exists(file)) continue;
    auto both = load_both_ways(file, /*drop_outputs=*/false);
    ASSERT_TRUE(both.has_value()) << name;
    Agreement a;
    compare(*both->onnx.graph, *both->loom.graph, file, a);
    std::printf("%s: element types %d of ONNX's %d, shapes %d of %d, %d dims only ONNX knows\n", name, a.dtypes_both,
                a.dtypes_onnx, a.shapes_both, a.shapes_onnx, a.dims_onnx_only);
    EXPECT_EQ(a.dtype_contradictions + a.shape_contradictions, 0) << a.first_contradiction;
    // The loader skips ONNX's server when the in-process inference gives
    // every output a type and rank: it must then know every dim ONNX would.
    EXPECT_EQ(a.dims_onnx_only, 0) << name;
    ++compared;
  }
  if (compared == 0) GTEST_SKIP() << "no model under " << models << " (the model tests make them)";
}

}  // namespace
}  // namespace loom::opreg
