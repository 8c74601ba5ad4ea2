// ai.onnx.ml TreeEnsembleClassifier and TreeEnsembleRegressor (opsets 1 and
// 3; opset 3 adds the double `*_as_tensor` forms of the float lists). The
// trees come as parallel nodes_* lists keyed by (tree id, node id); leaves
// carry class_* / target_* votes keyed the same way. They are turned into a
// TreeCore (ml_tree_core.h) once, when the kernel is built, with every id,
// length and child checked and cycles refused.
//
// Semantics follow ONNX's reference implementation (NaN follows
// nodes_missing_value_tracks_true in every mode), with ONNX Runtime's
// choices where they differ visibly: MIN / MAX leave a target no
// leaf voted for at 0 (ORT) rather than at the float extreme; the binary
// classifier (two labels, every vote for one class) scores [1 - s, s] with
// post_transform NONE when all weights are >= 0 (probabilities) and
// [-s, s] (a margin, as ORT) otherwise, and that one class may be either
// column (ORT; the reference assumes class 0); the regressor applies any
// post_transform to each row of targets (the reference implements NONE
// only; ORT applies only PROBIT to a single target).
#include <map>
#include <utility>

#include "kernels/ml_common.h"
#include "kernels/ml_tree_core.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;
using ml::TreeCore;

// The nodes of a v1 / v3 ensemble, with the (tree id, node id) -> index map
// the votes are resolved through.
struct TreeTable {
  std::string op;
  TreeCore core;
  std::map<std::pair<int64_t, int64_t>, int32_t> index;

  TreeTable(const sdk::Node& node, const std::string& op_name) : op(op_name), core(op_name) {
    const std::vector<int64_t> tree_ids = node.attr_ints("nodes_treeids");
    const std::vector<int64_t> node_ids = node.attr_ints("nodes_nodeids");
    const std::vector<int64_t> features = node.attr_ints("nodes_featureids");
    const std::vector<std::string> modes = node.attr_strings("nodes_modes");
    const std::vector<int64_t> true_ids = node.attr_ints("nodes_truenodeids");
    const std::vector<int64_t> false_ids = node.attr_ints("nodes_falsenodeids");
    const std::vector<int64_t> missing = node.attr_ints("nodes_missing_value_tracks_true");
    const std::vector<double> values = ml::floats_or_tensor(node, "nodes_values", op);
    const size_t n = node_ids.size();
    const std::string against = std::to_string(n) + " nodes_nodeids";
    ml::expect_length(op, "nodes_treeids", tree_ids.size(), n, against);
    ml::expect_length(op, "nodes_featureids", features.size(), n, against);
    ml::expect_length(op, "nodes_modes", modes.size(), n, against);
    ml::expect_length(op, "nodes_truenodeids", true_ids.size(), n, against);
    ml::expect_length(op, "nodes_falsenodeids", false_ids.size(), n, against);
    ml::expect_length(op, "nodes_values", values.size(), n, against);
    if (!missing.empty()) ml::expect_length(op, "nodes_missing_value_tracks_true", missing.size(), n, against);
    std::map<int64_t, int32_t> roots;  // tree id -> its first node, in tree-id order
    for (size_t i = 0; i < n; ++i) {
      const TreeCore::Mode mode = core.parse_mode(modes[i]);
      if (mode == TreeCore::Mode::kMember)
        sdk::fail_invalid(op + ": BRANCH_MEMBER needs TreeEnsemble (ai.onnx.ml 5)");
      const int32_t at = core.add_node(mode, features[i], values[i], !missing.empty() && missing[i] != 0);
      if (!index.emplace(std::make_pair(tree_ids[i], node_ids[i]), at).second)
        sdk::fail_invalid(op + ": node id " + std::to_string(node_ids[i]) + " appears twice in tree " +
                          std::to_string(tree_ids[i]));
      roots.emplace(tree_ids[i], at);
    }
    for (size_t i = 0; i < n; ++i) {
      if (modes[i] == "LEAF") continue;
      core.set_children(static_cast<int32_t>(i), find(tree_ids[i], true_ids[i], "nodes_truenodeids"),
                        find(tree_ids[i], false_ids[i], "nodes_falsenodeids"));
    }
    for (const auto& [tree, at] : roots) core.add_root(at);
  }

  int32_t find(int64_t tree, int64_t id, const std::string& attr) const {
    auto it = index.find({tree, id});
    if (it == index.end())
      sdk::fail_invalid(op + ": " + attr + " names node " + std::to_string(id) + " which tree " +
                        std::to_string(tree) + " does not have");
    return it->second;
  }
  // Attaches the votes `<prefix>_treeids / _nodeids / _ids / _weights`.
  // Returns the vote targets (class / target ids) in order.
  std::vector<int64_t> add_votes(const sdk::Node& node, const std::string& prefix, const std::string& ids_name) {
    const std::vector<int64_t> trees = node.attr_ints(prefix + "_treeids");
    const std::vector<int64_t> nodes = node.attr_ints(prefix + "_nodeids");
    const std::vector<int64_t> ids = node.attr_ints(ids_name);
    const std::vector<double> weights = ml::floats_or_tensor(node, prefix + "_weights", op);
    const std::string against = std::to_string(ids.size()) + " " + ids_name;
    ml::expect_length(op, prefix + "_treeids", trees.size(), ids.size(), against);
    ml::expect_length(op, prefix + "_nodeids", nodes.size(), ids.size(), against);
    ml::expect_length(op, prefix + "_weights", weights.size(), ids.size(), against);
    for (size_t i = 0; i < ids.size(); ++i)
      core.add_weight(find(trees[i], nodes[i], prefix + "_nodeids"), ids[i], weights[i]);
    return ids;
  }
};

// base_values (or base_values_as_tensor): none, one for every column, or as
// many as columns.
std::vector<double> read_base_values(const sdk::Node& node, int64_t columns, const std::string& op) {
  std::vector<double> b = ml::floats_or_tensor(node, "base_values", op);
  if (b.empty()) return std::vector<double>(static_cast<size_t>(columns), 0.0);
  if (b.size() == 1) return std::vector<double>(static_cast<size_t>(columns), b[0]);
  ml::expect_length(op, "base_values", b.size(), static_cast<size_t>(columns), "one per output column");
  return b;
}

class TreeEnsembleClassifier {
 public:
  explicit TreeEnsembleClassifier(const sdk::Node& node) : table_(node, kOp) {
    labels_ = ml::ClassLabels::read(node, "classlabels_int64s", kOp);
    classes_ = static_cast<int64_t>(labels_.size());
    if (classes_ < 2)
      sdk::fail_invalid(kOp + ": needs at least two class labels (classlabels_int64s or classlabels_strings), got " +
                        std::to_string(classes_));
    const std::vector<int64_t> ids = table_.add_votes(node, "class", "class_ids");
    table_.core.finish(classes_);
    base_ = read_base_values(node, classes_, kOp);
    post_ = ml::read_post_transform(node, kOp);
    // Binary: two labels and every vote for the same class; the other
    // class's score is derived from it.
    if (classes_ == 2 && !ids.empty() && std::all_of(ids.begin(), ids.end(), [&](int64_t i) { return i == ids[0]; }))
      binary_column_ = ids[0];
    non_negative_ = table_.core.weights_non_negative();
  }

  void compute(KernelContext& ctx) const {
    const ml::Features x = ml::read_features(ctx.required_input(0), kOp);
    table_.core.check_features(x.cols);
    std::vector<double> z(static_cast<size_t>(sdk::checked_mul(x.rows, classes_, kOp + ": output size")));
    std::vector<int64_t> picked(static_cast<size_t>(x.rows));
    std::vector<uint8_t> has(static_cast<size_t>(classes_));
    for (int64_t r = 0; r < x.rows; ++r) {
      double* s = z.data() + r * classes_;
      std::fill(has.begin(), has.end(), 0);
      table_.core.aggregate(x.row(r), TreeCore::Aggregate::kSum, s, has.data());
      for (int64_t c = 0; c < classes_; ++c) s[c] += base_[static_cast<size_t>(c)];
      if (binary_column_ >= 0) {
        const double v = s[binary_column_];
        const bool probability = post_ == ml::PostTransform::kProbit || (post_ == ml::PostTransform::kNone && non_negative_);
        s[0] = probability ? 1.0 - v : -v;
        s[1] = v;
      }
      ml::apply_post_transform(post_, s, classes_);
      picked[static_cast<size_t>(r)] = ml::argmax(s, classes_);
    }
    labels_.write(ctx, 0, picked, {});
    ml::write_floats(ctx, 1, {x.rows, classes_}, z);
  }

 private:
  inline static const std::string kOp = "TreeEnsembleClassifier";
  TreeTable table_;
  ml::ClassLabels labels_;
  int64_t classes_ = 0;
  std::vector<double> base_;
  ml::PostTransform post_ = ml::PostTransform::kNone;
  int64_t binary_column_ = -1;
  bool non_negative_ = true;
};

class TreeEnsembleRegressor {
 public:
  explicit TreeEnsembleRegressor(const sdk::Node& node) : table_(node, kOp) {
    targets_ = node.attr_int("n_targets", 0);
    // Targets are kept per row as doubles: a bound keeps a hostile count from
    // asking for gigabytes before any input is seen.
    if (targets_ <= 0 || targets_ > kMaxTargets)
      sdk::fail_invalid(kOp + ": n_targets must be in [1, " + std::to_string(kMaxTargets) + "], got " +
                        std::to_string(targets_));
    table_.add_votes(node, "target", "target_ids");
    table_.core.finish(targets_);
    base_ = read_base_values(node, targets_, kOp);
    post_ = ml::read_post_transform(node, kOp);
    const std::string agg = node.attr_string("aggregate_function", "SUM");
    if (agg == "SUM") aggregate_ = TreeCore::Aggregate::kSum;
    else if (agg == "AVERAGE") aggregate_ = TreeCore::Aggregate::kAverage;
    else if (agg == "MIN") aggregate_ = TreeCore::Aggregate::kMin;
    else if (agg == "MAX") aggregate_ = TreeCore::Aggregate::kMax;
    else sdk::fail_invalid(kOp + ": aggregate_function '" + agg + "' is not one of SUM, AVERAGE, MIN, MAX");
  }

  void compute(KernelContext& ctx) const {
    const ml::Features x = ml::read_features(ctx.required_input(0), kOp);
    table_.core.check_features(x.cols);
    std::vector<double> y(static_cast<size_t>(sdk::checked_mul(x.rows, targets_, kOp + ": output size")));
    std::vector<uint8_t> has(static_cast<size_t>(targets_));
    const double trees = static_cast<double>(std::max<size_t>(table_.core.tree_count(), 1));
    for (int64_t r = 0; r < x.rows; ++r) {
      double* s = y.data() + r * targets_;
      std::fill(has.begin(), has.end(), 0);
      table_.core.aggregate(x.row(r), aggregate_, s, has.data());
      for (int64_t t = 0; t < targets_; ++t) {
        if (aggregate_ == TreeCore::Aggregate::kAverage) s[t] /= trees;
        s[t] += base_[static_cast<size_t>(t)];
      }
      ml::apply_post_transform(post_, s, targets_);
    }
    ml::write_floats(ctx, 0, {x.rows, targets_}, y);
  }

 private:
  inline static const std::string kOp = "TreeEnsembleRegressor";
  static constexpr int64_t kMaxTargets = int64_t{1} << 24;
  TreeTable table_;
  int64_t targets_ = 0;
  std::vector<double> base_;
  ml::PostTransform post_ = ml::PostTransform::kNone;
  TreeCore::Aggregate aggregate_ = TreeCore::Aggregate::kSum;
};

}  // namespace

void register_ml_tree_classic_kernels(sdk::KernelRegistry& r) {
  r.add_class<TreeEnsembleClassifier>("ai.onnx.ml", "TreeEnsembleClassifier", 1, LOOM_OPSET_OPEN_END);
  r.add_class<TreeEnsembleRegressor>("ai.onnx.ml", "TreeEnsembleRegressor", 1, LOOM_OPSET_OPEN_END);
}

}  // namespace loom::reference
