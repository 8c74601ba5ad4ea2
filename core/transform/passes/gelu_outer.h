// The part every GELU form shares, after its inner function t (Erf of
// x / sqrt(2), or Tanh of the cubic approximation):
//   0.5 * x * (1 + t)  as  (x * (1 + t)) * 0.5,  x * ((1 + t) * 0.5)  or
//   (x * 0.5) * (1 + t), operands of Add / Mul either way round,
// each intermediate read only by the next node.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "transform/framework/graph_matcher.h"

namespace loom::transform {

struct GeluOuter {
  std::vector<ir::NodeId> nodes;  // the Add and the Muls
  std::string y;                  // the GELU's result
  std::string name;               // the last node's name
};

// `t` is the inner function's output, `x` the GELU's input; `not_half` is a
// node that may not serve as the x * 0.5 Mul (the inner pattern's own).
std::optional<GeluOuter> match_gelu_outer(const GraphMatcher& m, const std::string& t, const std::string& x,
                                          const ir::Node* not_half = nullptr);

}  // namespace loom::transform
