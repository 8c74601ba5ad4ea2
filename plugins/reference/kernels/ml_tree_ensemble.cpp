// ai.onnx.ml TreeEnsemble (5): the unified tree-ensemble op. Each tree is
// walked from its root by the nodes' comparisons (<=, <, >=, >, ==, != or
// set membership) to a leaf, whose weight goes to its target; the trees'
// weights are aggregated per target (sum, average, min or max) and post-
// transformed. The attributes are checked once, when the kernel is built:
// every index in range, and every walk bounded by the node count (a cycle
// is an error, not a hang).
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "common/dispatch.h"
#include "common/reduction_common.h"
#include "kernels/ml_internal.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;
const std::string kOp = "TreeEnsemble";

enum Mode { kLeq = 0, kLt, kGte, kGt, kEq, kNeq, kMember };

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

class TreeEnsemble {
 public:
  explicit TreeEnsemble(const sdk::Node& node) {
    splits_ = tensor_attr(node, "nodes_splits", true);
    const std::vector<double> modes = tensor_attr(node, "nodes_modes", true);
    features_ = node.attr_ints("nodes_featureids");
    true_ids_ = node.attr_ints("nodes_truenodeids");
    false_ids_ = node.attr_ints("nodes_falsenodeids");
    true_leaf_ = node.attr_ints("nodes_trueleafs");
    false_leaf_ = node.attr_ints("nodes_falseleafs");
    missing_true_ = node.attr_ints("nodes_missing_value_tracks_true", {});
    leaf_targets_ = node.attr_ints("leaf_targetids");
    leaf_weights_ = tensor_attr(node, "leaf_weights", true);
    roots_ = node.attr_ints("tree_roots");
    targets_ = node.attr_int("n_targets", 0);
    aggregate_ = node.attr_int("aggregate_function", 1);
    post_ = node.attr_int("post_transform", 0);
    const size_t n = splits_.size();
    if (modes.size() != n || features_.size() != n || true_ids_.size() != n || false_ids_.size() != n ||
        true_leaf_.size() != n || false_leaf_.size() != n || (!missing_true_.empty() && missing_true_.size() != n))
      sdk::fail_invalid(kOp + ": the nodes_* attributes must all have " + std::to_string(n) + " entries");
    if (leaf_targets_.size() != leaf_weights_.size())
      sdk::fail_invalid(kOp + ": leaf_targetids and leaf_weights differ in length");
    if (targets_ <= 0) sdk::fail_invalid(kOp + ": n_targets must be positive");
    if (aggregate_ < 0 || aggregate_ > 3) sdk::fail_invalid(kOp + ": aggregate_function must be 0 to 3");
    if (post_ < 0 || post_ > 3)
      sdk::fail_invalid(kOp + ": post_transform " + std::to_string(post_) + " is not supported (NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO)");
    for (double m : modes) {
      if (!(m >= kLeq && m <= kMember)) sdk::fail_invalid(kOp + ": node mode " + std::to_string(m) + " is not 0 to 6");
      modes_.push_back(static_cast<int>(m));
    }
    for (size_t i = 0; i < n; ++i) {
      check_child(true_ids_[i], true_leaf_[i] != 0);
      check_child(false_ids_[i], false_leaf_[i] != 0);
      if (features_[i] < 0) sdk::fail_invalid(kOp + ": negative feature id");
    }
    for (int64_t t : leaf_targets_)
      if (t < 0 || t >= targets_) sdk::fail_invalid(kOp + ": leaf target " + std::to_string(t) + " out of range");
    // A root whose two branches are the same leaf is that leaf itself (the
    // root's index is then a leaf index), as in ONNX's reference.
    for (int64_t r : roots_)
      if (r < 0 || static_cast<size_t>(r) >= (root_is_leaf(r) ? leaf_weights_.size() : n))
        sdk::fail_invalid(kOp + ": tree root " + std::to_string(r) + " out of range");
    assign_sets(tensor_attr(node, "membership_values", false));
  }

  void compute(KernelContext& ctx) const {
    const sdk::ConstTensor x_t = ctx.required_input(0);
    const Shape xs = x_t.shape();
    if (xs.size() != 2) sdk::fail_invalid(kOp + ": X must be [N, features], got " + shape_string(xs));
    const int64_t rows = xs[0], features = xs[1];
    for (int64_t f : features_)
      if (f >= features) sdk::fail_invalid(kOp + ": feature id " + std::to_string(f) + " out of range for " + std::to_string(features) + " features");
    const std::vector<double> x = float_tensor_to_doubles(x_t, kOp);
    sdk::checked_mul(rows, targets_, kOp + ": output size");
    // The output first: n_targets comes from an attribute, and the host
    // checks the size against the run's limits before anything is allocated.
    sdk::Tensor result = ctx.output(0, {rows, targets_}, x_t.dtype());
    if (result.size() == 0) return;
    const double init = aggregate_ == 2 ? std::numeric_limits<double>::max()
                        : aggregate_ == 3 ? std::numeric_limits<double>::lowest() : 0.0;
    std::vector<double> row_scores(static_cast<size_t>(targets_));
    for (int64_t r = 0; r < rows; ++r) {
      double* out = row_scores.data();
      std::fill(out, out + targets_, init);
      for (int64_t root : roots_) {
        const size_t leaf = walk(x.data() + r * features, root);
        double& slot = out[leaf_targets_[leaf]];
        const double w = leaf_weights_[leaf];
        if (aggregate_ == 0) slot += w / static_cast<double>(roots_.size());
        else if (aggregate_ == 1) slot += w;
        else if (aggregate_ == 2) slot = std::min(slot, w);
        else slot = std::max(slot, w);
      }
      post_transform(out);
      dispatch<FloatTypes>(x_t.dtype(), kOp, [&](auto tag) {
        using T = decltype(tag);
        T* p = result.mutable_data<T>() + r * targets_;
        for (int64_t t = 0; t < targets_; ++t) p[t] = to_elem<T>(out[t]);
      });
    }
  }

 private:
  void check_child(int64_t id, bool leaf) const {
    const size_t limit = leaf ? leaf_weights_.size() : splits_.size();
    if (id < 0 || static_cast<size_t>(id) >= limit)
      sdk::fail_invalid(kOp + ": " + (leaf ? "leaf" : "node") + " id " + std::to_string(id) + " out of range");
  }

  // Set-membership nodes take the NaN-terminated groups of
  // membership_values in the order a depth-first walk (true branch first)
  // from each root meets them, as ONNX's reference does.
  void assign_sets(const std::vector<double>& values) {
    sets_.resize(splits_.size());
    size_t next = 0;
    std::vector<bool> seen(splits_.size(), false);
    std::vector<size_t> stack;
    for (int64_t root : roots_) {
      if (root_is_leaf(root)) continue;
      stack.push_back(static_cast<size_t>(root));
      size_t steps = 0;
      while (!stack.empty()) {
        if (++steps > 4 * splits_.size() + 4) sdk::fail_invalid(kOp + ": the trees are not trees (a cycle)");
        const size_t i = stack.back();
        stack.pop_back();
        if (seen[i]) continue;
        seen[i] = true;
        if (modes_[i] == kMember) {
          while (next < values.size() && !std::isnan(values[next])) sets_[i].insert(values[next++]);
          if (next >= values.size()) sdk::fail_invalid(kOp + ": membership_values has too few NaN-terminated sets");
          ++next;
        }
        if (!false_leaf_[i]) stack.push_back(static_cast<size_t>(false_ids_[i]));
        if (!true_leaf_[i]) stack.push_back(static_cast<size_t>(true_ids_[i]));
      }
    }
  }

  bool root_is_leaf(int64_t r) const {
    if (r < 0 || static_cast<size_t>(r) >= splits_.size()) return true;
    const size_t i = static_cast<size_t>(r);
    return true_leaf_[i] && false_leaf_[i] && true_ids_[i] == false_ids_[i];
  }

  size_t walk(const double* x, int64_t root) const {
    if (root_is_leaf(root)) return static_cast<size_t>(root);
    size_t i = static_cast<size_t>(root);
    for (size_t steps = 0; steps <= splits_.size(); ++steps) {
      const double v = x[features_[i]];
      bool go_true = false;
      switch (modes_[i]) {
        case kLeq: go_true = v <= splits_[i]; break;
        case kLt: go_true = v < splits_[i]; break;
        case kGte: go_true = v >= splits_[i]; break;
        case kGt: go_true = v > splits_[i]; break;
        case kEq: go_true = v == splits_[i]; break;
        case kNeq: go_true = v != splits_[i]; break;
        default: go_true = sets_[i].count(v) > 0; break;
      }
      if (!go_true && std::isnan(v) && !missing_true_.empty() && missing_true_[i] != 0) go_true = true;
      const int64_t next = go_true ? true_ids_[i] : false_ids_[i];
      if (go_true ? true_leaf_[i] : false_leaf_[i]) return static_cast<size_t>(next);
      i = static_cast<size_t>(next);
    }
    sdk::fail_invalid(kOp + ": a tree walk from root " + std::to_string(root) + " never reaches a leaf (a cycle)");
  }

  void post_transform(double* out) const {
    if (post_ == 2) {
      for (int64_t t = 0; t < targets_; ++t) out[t] = 1.0 / (1.0 + std::exp(-out[t]));
    } else if (post_ == 1 || post_ == 3) {
      double max = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t t = 0; t < targets_; ++t) max = std::max(max, out[t]);
      for (int64_t t = 0; t < targets_; ++t) sum += (out[t] = post_ == 3 && out[t] == 0 ? 0.0 : std::exp(out[t] - max));
      for (int64_t t = 0; t < targets_ && sum > 0; ++t) out[t] /= sum;
    }
  }

  std::vector<double> splits_, leaf_weights_;
  std::vector<int> modes_;
  std::vector<int64_t> features_, true_ids_, false_ids_, true_leaf_, false_leaf_, missing_true_, leaf_targets_, roots_;
  std::vector<std::set<double>> sets_;
  int64_t targets_ = 0, aggregate_ = 1, post_ = 0;
};

}  // namespace

void register_ml_tree_ensemble_kernels(sdk::KernelRegistry& r) {
  r.add_class<TreeEnsemble>("ai.onnx.ml", "TreeEnsemble", 5, LOOM_OPSET_OPEN_END);
}

}  // namespace loom::reference
