// TreeCore (ml_tree_core.h): building, checking and walking tree tables.
#include "kernels/ml_tree_core.h"

#include <algorithm>
#include <cmath>

#include "loom/sdk.h"

namespace loom::reference::ml {

TreeCore::Mode TreeCore::parse_mode(const std::string& name) const {
  if (name == "LEAF") return Mode::kLeaf;
  if (name == "BRANCH_LEQ") return Mode::kLeq;
  if (name == "BRANCH_LT") return Mode::kLt;
  if (name == "BRANCH_GTE") return Mode::kGte;
  if (name == "BRANCH_GT") return Mode::kGt;
  if (name == "BRANCH_EQ") return Mode::kEq;
  if (name == "BRANCH_NEQ") return Mode::kNeq;
  if (name == "BRANCH_MEMBER") return Mode::kMember;
  sdk::fail_invalid(op_ + ": node mode '" + name +
                    "' is not one of BRANCH_LEQ, BRANCH_LT, BRANCH_GTE, BRANCH_GT, BRANCH_EQ, BRANCH_NEQ, LEAF");
}

int32_t TreeCore::add_node(Mode mode, int64_t feature, double threshold, bool missing_goes_true,
                           std::vector<double> members) {
  if (nodes_.size() >= static_cast<size_t>(INT32_MAX)) sdk::fail_invalid(op_ + ": too many tree nodes");
  if (mode != Mode::kLeaf && feature < 0)
    sdk::fail_invalid(op_ + ": nodes_featureids holds a negative feature id " + std::to_string(feature));
  Node n;
  n.mode = mode;
  n.feature = feature;
  n.threshold = threshold;
  n.missing_true = missing_goes_true;
  std::sort(members.begin(), members.end());
  n.members = std::move(members);
  if (mode != Mode::kLeaf) max_feature_ = std::max(max_feature_, feature);
  nodes_.push_back(std::move(n));
  return static_cast<int32_t>(nodes_.size() - 1);
}

void TreeCore::set_children(int32_t node, int32_t if_true, int32_t if_false) {
  nodes_.at(static_cast<size_t>(node)).if_true = if_true;
  nodes_.at(static_cast<size_t>(node)).if_false = if_false;
}

void TreeCore::add_weight(int32_t leaf, int64_t target, double value) {
  if (leaf < 0 || static_cast<size_t>(leaf) >= nodes_.size())
    sdk::fail_invalid(op_ + ": a weight names node index " + std::to_string(leaf) + ", out of range");
  nodes_[static_cast<size_t>(leaf)].weights.push_back({target, value});
}

void TreeCore::add_root(int32_t node) { roots_.push_back(node); }

void TreeCore::finish(int64_t targets) {
  const int64_t n = static_cast<int64_t>(nodes_.size());
  auto in_range = [&](int32_t i) { return i >= 0 && i < n; };
  for (int64_t i = 0; i < n; ++i) {
    const Node& node = nodes_[static_cast<size_t>(i)];
    if (node.mode == Mode::kLeaf) {
      for (const Weight& w : node.weights)
        if (w.target < 0 || w.target >= targets)
          sdk::fail_invalid(op_ + ": a leaf weight is for target / class " + std::to_string(w.target) +
                            ", out of range [0, " + std::to_string(targets) + ")");
      continue;
    }
    if (!node.weights.empty())
      sdk::fail_invalid(op_ + ": node index " + std::to_string(i) + " is a branch but holds leaf weights");
    if (!in_range(node.if_true) || !in_range(node.if_false))
      sdk::fail_invalid(op_ + ": node index " + std::to_string(i) + " has a child out of range");
  }
  if (roots_.empty() && n > 0) sdk::fail_invalid(op_ + ": the ensemble has nodes but no tree");
  for (int32_t r : roots_)
    if (!in_range(r)) sdk::fail_invalid(op_ + ": tree root " + std::to_string(r) + " out of range");
  // A cycle reachable from a root would make a walk endless: depth-first
  // search with colours (0 unseen, 1 on the path, 2 done), iteratively.
  std::vector<uint8_t> colour(static_cast<size_t>(n), 0);
  std::vector<std::pair<int32_t, int>> stack;
  for (int32_t r : roots_) {
    if (colour[static_cast<size_t>(r)] != 0) continue;
    stack.push_back({r, 0});
    colour[static_cast<size_t>(r)] = 1;
    while (!stack.empty()) {
      auto& [i, next] = stack.back();
      const Node& node = nodes_[static_cast<size_t>(i)];
      if (node.mode == Mode::kLeaf || next == 2) {
        colour[static_cast<size_t>(i)] = 2;
        stack.pop_back();
        continue;
      }
      const int32_t child = next++ == 0 ? node.if_true : node.if_false;
      if (colour[static_cast<size_t>(child)] == 1)
        sdk::fail_invalid(op_ + ": the tree from root " + std::to_string(r) + " has a cycle through node index " +
                          std::to_string(child));
      if (colour[static_cast<size_t>(child)] == 0) {
        colour[static_cast<size_t>(child)] = 1;
        stack.push_back({child, 0});
      }
    }
  }
  finished_ = true;
}

void TreeCore::check_features(int64_t cols) const {
  if (max_feature_ >= cols)
    sdk::fail_invalid(op_ + ": a node reads feature " + std::to_string(max_feature_) + " but X has " +
                      std::to_string(cols) + " features");
}

bool TreeCore::weights_non_negative() const {
  for (const Node& n : nodes_)
    for (const Weight& w : n.weights)
      if (w.value < 0) return false;
  return true;
}

bool TreeCore::goes_true(const Node& n, double x) const {
  if (std::isnan(x)) return n.missing_true;
  switch (n.mode) {
    case Mode::kLeq: return x <= n.threshold;
    case Mode::kLt: return x < n.threshold;
    case Mode::kGte: return x >= n.threshold;
    case Mode::kGt: return x > n.threshold;
    case Mode::kEq: return x == n.threshold;
    case Mode::kNeq: return x != n.threshold;
    case Mode::kMember: return std::binary_search(n.members.begin(), n.members.end(), x);
    case Mode::kLeaf: break;
  }
  return false;
}

int32_t TreeCore::leaf(size_t tree, const double* row) const {
  if (!finished_) sdk::fail_invalid(op_ + ": tree table used before it was checked");
  int32_t i = roots_.at(tree);
  // finish() refused cycles; the bound is a second guard.
  for (size_t steps = 0; steps <= nodes_.size(); ++steps) {
    const Node& n = nodes_[static_cast<size_t>(i)];
    if (n.mode == Mode::kLeaf) return i;
    i = goes_true(n, row[n.feature]) ? n.if_true : n.if_false;
  }
  sdk::fail_invalid(op_ + ": a tree walk did not reach a leaf");
}

void TreeCore::aggregate(const double* row, Aggregate how, double* scores, uint8_t* has) const {
  for (size_t t = 0; t < roots_.size(); ++t) {
    const Node& l = nodes_[static_cast<size_t>(leaf(t, row))];
    for (const Weight& w : l.weights) {
      double& s = scores[w.target];
      uint8_t& h = has[w.target];
      switch (how) {
        case Aggregate::kSum:
        case Aggregate::kAverage: s += w.value; break;
        case Aggregate::kMin: s = h ? std::min(s, w.value) : w.value; break;
        case Aggregate::kMax: s = h ? std::max(s, w.value) : w.value; break;
      }
      h = 1;
    }
  }
}

}  // namespace loom::reference::ml
