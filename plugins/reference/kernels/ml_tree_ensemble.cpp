// ai.onnx.ml TreeEnsemble (5): the unified tree-ensemble op. Each tree is
// walked from its root by the nodes' comparisons (<=, <, >=, >, ==, != or
// set membership) to a leaf, whose weight goes to its target; the trees'
// weights are aggregated per target (sum, average, min or max) and post-
// transformed. The attributes are checked once, when the kernel is built
// (ml::TreeCore::finish: every index in range, no cycle reachable from a
// root). MIN / MAX leave a target no leaf reached at 0, and post_transform
// PROBIT applies, as for the v1/v3 ensembles (ml_tree_classic.cpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "common/dispatch.h"
#include "common/reduction_common.h"
#include "kernels/ml_common.h"
#include "kernels/ml_internal.h"
#include "kernels/ml_tree_core.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;
const std::string kOp = "TreeEnsemble";

std::vector<double> tensor_attr(const sdk::Node& node, const char* name, bool required) {
  const sdk::ConstTensor t = node.attr_tensor(name);
  if (!t.exists()) {
    if (required) sdk::fail_invalid(kOp + ": attribute '" + name + "' is required");
    return {};
  }
  if (t.dtype() == LOOM_DTYPE_UINT8 || t.dtype() == LOOM_DTYPE_INT32 || t.dtype() == LOOM_DTYPE_INT64) {
    std::vector<double> out;
    for (int64_t v : t.to_int64_vector()) out.push_back(static_cast<double>(v));
    return out;
  }
  return float_tensor_to_doubles(t, kOp);
}

// TreeEnsemble-5's attribute layout (nodes and leaves in tables of their
// own, children flagged as leaf or node) turned into ml::TreeCore's one
// table, whose walk, checks and aggregation the v1/v3 ensembles share.
class TreeEnsemble {
 public:
  explicit TreeEnsemble(const sdk::Node& node) : core_(kOp) {
    const std::vector<double> splits = tensor_attr(node, "nodes_splits", true);
    const std::vector<double> modes = tensor_attr(node, "nodes_modes", true);
    const std::vector<int64_t> features = node.attr_ints("nodes_featureids");
    true_ids_ = node.attr_ints("nodes_truenodeids");
    false_ids_ = node.attr_ints("nodes_falsenodeids");
    true_leaf_ = node.attr_ints("nodes_trueleafs");
    false_leaf_ = node.attr_ints("nodes_falseleafs");
    const std::vector<int64_t> missing_true = node.attr_ints("nodes_missing_value_tracks_true", {});
    const std::vector<int64_t> leaf_targets = node.attr_ints("leaf_targetids");
    const std::vector<double> leaf_weights = tensor_attr(node, "leaf_weights", true);
    roots_ = node.attr_ints("tree_roots");
    targets_ = node.attr_int("n_targets", 0);
    const int64_t aggregate = node.attr_int("aggregate_function", 1);
    const int64_t post = node.attr_int("post_transform", 0);
    const size_t n = splits.size();
    if (modes.size() != n || features.size() != n || true_ids_.size() != n || false_ids_.size() != n ||
        true_leaf_.size() != n || false_leaf_.size() != n || (!missing_true.empty() && missing_true.size() != n))
      sdk::fail_invalid(kOp + ": the nodes_* attributes must all have " + std::to_string(n) + " entries");
    if (leaf_targets.size() != leaf_weights.size())
      sdk::fail_invalid(kOp + ": leaf_targetids and leaf_weights differ in length");
    if (targets_ <= 0) sdk::fail_invalid(kOp + ": n_targets must be positive");
    static const ml::TreeCore::Aggregate kAggregates[] = {ml::TreeCore::Aggregate::kAverage,
                                                          ml::TreeCore::Aggregate::kSum,
                                                          ml::TreeCore::Aggregate::kMin, ml::TreeCore::Aggregate::kMax};
    if (aggregate < 0 || aggregate > 3) sdk::fail_invalid(kOp + ": aggregate_function must be 0 to 3");
    aggregate_ = kAggregates[aggregate];
    static const ml::PostTransform kPosts[] = {ml::PostTransform::kNone, ml::PostTransform::kSoftmax,
                                               ml::PostTransform::kLogistic, ml::PostTransform::kSoftmaxZero,
                                               ml::PostTransform::kProbit};
    if (post < 0 || post > 4) sdk::fail_invalid(kOp + ": post_transform must be 0 to 4");
    post_ = kPosts[post];
    static const ml::TreeCore::Mode kModes[] = {ml::TreeCore::Mode::kLeq, ml::TreeCore::Mode::kLt,
                                                ml::TreeCore::Mode::kGte, ml::TreeCore::Mode::kGt,
                                                ml::TreeCore::Mode::kEq,  ml::TreeCore::Mode::kNeq,
                                                ml::TreeCore::Mode::kMember};
    std::vector<ml::TreeCore::Mode> node_modes;
    for (double m : modes) {
      if (!(m >= 0 && m <= 6)) sdk::fail_invalid(kOp + ": node mode " + std::to_string(m) + " is not 0 to 6");
      node_modes.push_back(kModes[static_cast<int>(m)]);
    }
    for (size_t i = 0; i < n; ++i) {
      check_child(true_ids_[i], true_leaf_[i] != 0, n, leaf_weights.size());
      check_child(false_ids_[i], false_leaf_[i] != 0, n, leaf_weights.size());
      if (features[i] < 0) sdk::fail_invalid(kOp + ": negative feature id");
    }
    // A root whose two branches are the same leaf is that leaf itself (the
    // root's index is then a leaf index), as in ONNX's reference.
    for (int64_t r : roots_)
      if (r < 0 || static_cast<size_t>(r) >= (root_is_leaf(r) ? leaf_weights.size() : n))
        sdk::fail_invalid(kOp + ": tree root " + std::to_string(r) + " out of range");
    const std::vector<std::vector<double>> sets = member_sets(node_modes, tensor_attr(node, "membership_values", false));
    std::vector<int32_t> branch(n), leaf(leaf_weights.size());
    for (size_t i = 0; i < n; ++i)
      branch[i] = core_.add_node(node_modes[i], features[i], splits[i], !missing_true.empty() && missing_true[i] != 0,
                                 sets[i]);
    for (size_t j = 0; j < leaf_weights.size(); ++j) {
      leaf[j] = core_.add_node(ml::TreeCore::Mode::kLeaf, 0, 0, false);
      core_.add_weight(leaf[j], leaf_targets[j], leaf_weights[j]);
    }
    auto index = [&](int64_t id, bool is_leaf) { return is_leaf ? leaf[static_cast<size_t>(id)] : branch[static_cast<size_t>(id)]; };
    for (size_t i = 0; i < n; ++i)
      core_.set_children(branch[i], index(true_ids_[i], true_leaf_[i] != 0), index(false_ids_[i], false_leaf_[i] != 0));
    for (int64_t r : roots_) core_.add_root(index(r, root_is_leaf(r)));
    core_.finish(targets_);  // every index in range, leaf targets too, and no cycle
  }

  void compute(KernelContext& ctx) const {
    const sdk::ConstTensor x_t = ctx.required_input(0);
    const Shape xs = x_t.shape();
    if (xs.size() != 2) sdk::fail_invalid(kOp + ": X must be [N, features], got " + shape_string(xs));
    const int64_t rows = xs[0], features = xs[1];
    core_.check_features(features);
    const std::vector<double> x = float_tensor_to_doubles(x_t, kOp);
    sdk::checked_mul(rows, targets_, kOp + ": output size");
    // The output first: n_targets comes from an attribute, and the host
    // checks the size against the run's limits before anything is allocated.
    sdk::Tensor result = ctx.output(0, {rows, targets_}, x_t.dtype());
    if (result.size() == 0) return;
    std::vector<double> scores(static_cast<size_t>(targets_));
    std::vector<uint8_t> has(static_cast<size_t>(targets_));
    const double trees = static_cast<double>(core_.tree_count());
    for (int64_t r = 0; r < rows; ++r) {
      double* out = scores.data();
      std::fill(scores.begin(), scores.end(), 0.0);
      std::fill(has.begin(), has.end(), uint8_t{0});
      core_.aggregate(x.data() + r * features, aggregate_, out, has.data());
      if (aggregate_ == ml::TreeCore::Aggregate::kAverage && trees > 0)
        for (int64_t t = 0; t < targets_; ++t) out[t] /= trees;
      ml::apply_post_transform(post_, out, targets_);
      dispatch<FloatTypes>(x_t.dtype(), kOp, [&](auto tag) {
        using T = decltype(tag);
        T* p = result.mutable_data<T>() + r * targets_;
        for (int64_t t = 0; t < targets_; ++t) p[t] = to_elem<T>(out[t]);
      });
    }
  }

 private:
  static void check_child(int64_t id, bool leaf, size_t nodes, size_t leaves) {
    const size_t limit = leaf ? leaves : nodes;
    if (id < 0 || static_cast<size_t>(id) >= limit)
      sdk::fail_invalid(kOp + ": " + (leaf ? "leaf" : "node") + " id " + std::to_string(id) + " out of range");
  }

  // Set-membership nodes take the NaN-terminated groups of
  // membership_values in the order a depth-first walk (true branch first)
  // from each root meets them, as ONNX's reference does.
  std::vector<std::vector<double>> member_sets(const std::vector<ml::TreeCore::Mode>& modes,
                                               const std::vector<double>& values) const {
    const size_t n = modes.size();
    std::vector<std::vector<double>> sets(n);
    size_t next = 0;
    std::vector<bool> seen(n, false);
    std::vector<size_t> stack;
    for (int64_t root : roots_) {
      if (root_is_leaf(root)) continue;
      stack.push_back(static_cast<size_t>(root));
      size_t steps = 0;
      while (!stack.empty()) {
        if (++steps > 4 * n + 4) sdk::fail_invalid(kOp + ": the trees are not trees (a cycle)");
        const size_t i = stack.back();
        stack.pop_back();
        if (seen[i]) continue;
        seen[i] = true;
        if (modes[i] == ml::TreeCore::Mode::kMember) {
          while (next < values.size() && !std::isnan(values[next])) sets[i].push_back(values[next++]);
          if (next >= values.size()) sdk::fail_invalid(kOp + ": membership_values has too few NaN-terminated sets");
          ++next;
        }
        if (!false_leaf_[i]) stack.push_back(static_cast<size_t>(false_ids_[i]));
        if (!true_leaf_[i]) stack.push_back(static_cast<size_t>(true_ids_[i]));
      }
    }
    return sets;
  }

  bool root_is_leaf(int64_t r) const {
    if (r < 0 || static_cast<size_t>(r) >= true_ids_.size()) return true;
    const size_t i = static_cast<size_t>(r);
    return true_leaf_[i] && false_leaf_[i] && true_ids_[i] == false_ids_[i];
  }

  ml::TreeCore core_;
  std::vector<int64_t> true_ids_, false_ids_, true_leaf_, false_leaf_, roots_;
  int64_t targets_ = 0;
  ml::TreeCore::Aggregate aggregate_ = ml::TreeCore::Aggregate::kSum;
  ml::PostTransform post_ = ml::PostTransform::kNone;
};

}  // namespace

void register_ml_tree_ensemble_kernels(sdk::KernelRegistry& r) {
  r.add_class<TreeEnsemble>("ai.onnx.ml", "TreeEnsemble", 5, LOOM_OPSET_OPEN_END);
}

}  // namespace loom::reference
