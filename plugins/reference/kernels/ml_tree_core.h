// The tree walk shared by the ai.onnx.ml tree ensembles: a flat table of
// nodes (a comparison of one feature against a threshold, or a leaf holding
// weights for targets / classes), the trees' roots, and a walk from a root
// to a leaf for one row of features. Ops build it from their own attribute
// layout (TreeEnsembleClassifier / Regressor 1 and 3 in ml_tree_classic.cpp
// through add_node / set_children; TreeEnsemble-5 can do the same, with
// kMember nodes for its set membership), then call finish(), which checks
// every index and refuses a cycle, so a walk always ends at a leaf.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loom::reference::ml {

class TreeCore {
 public:
  enum class Mode : uint8_t { kLeaf, kLeq, kLt, kGte, kGt, kEq, kNeq, kMember };
  enum class Aggregate { kSum, kAverage, kMin, kMax };

  struct Weight {
    int64_t target = 0;
    double value = 0;
  };

  explicit TreeCore(std::string op) : op_(std::move(op)) {}

  // Parses a BRANCH_* / LEAF name; throws naming the op otherwise.
  Mode parse_mode(const std::string& name) const;

  // Appends a node and returns its index. A branch's children are set with
  // set_children once every node exists; a kMember node's set is `members`.
  int32_t add_node(Mode mode, int64_t feature, double threshold, bool missing_goes_true,
                   std::vector<double> members = {});
  void set_children(int32_t node, int32_t if_true, int32_t if_false);
  void add_weight(int32_t leaf, int64_t target, double value);
  void add_root(int32_t node);

  // Validates the table against `targets` output columns: children and
  // roots in range, weights on leaves only, targets in [0, targets), no
  // cycle reachable from a root. Throws INVALID_ARGUMENT naming the op.
  void finish(int64_t targets);

  // The leaf reached from root `tree` for a row of `cols` features (NaN
  // follows missing_goes_true).
  int32_t leaf(size_t tree, const double* row) const;

  // Aggregates every tree's leaf weights for one row into scores[targets]
  // and has[targets] (whether any weight reached that column). Sum and
  // average sum (average divides by the tree count afterwards); min and max
  // keep the extreme; a column no leaf reached stays 0.
  void aggregate(const double* row, Aggregate how, double* scores, uint8_t* has) const;

  size_t tree_count() const { return roots_.size(); }
  size_t node_count() const { return nodes_.size(); }
  // The largest feature index any branch reads (-1 when none).
  int64_t max_feature() const { return max_feature_; }
  // Refuses X rows of `cols` features when a branch reads past them.
  void check_features(int64_t cols) const;
  // Whether every leaf weight is >= 0.
  bool weights_non_negative() const;

 private:
  struct Node {
    Mode mode = Mode::kLeaf;
    int64_t feature = 0;
    double threshold = 0;
    bool missing_true = false;
    int32_t if_true = -1, if_false = -1;
    std::vector<double> members;  // sorted, for kMember
    std::vector<Weight> weights;  // for leaves
  };
  bool goes_true(const Node& n, double x) const;

  std::string op_;
  std::vector<Node> nodes_;
  std::vector<int32_t> roots_;
  int64_t max_feature_ = -1;
  bool finished_ = false;
};

}  // namespace loom::reference::ml
