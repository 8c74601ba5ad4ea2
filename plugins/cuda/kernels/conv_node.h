// What the convolution, pooling and normalisation kernel classes share on
// the SDK side: reading the window attributes off a node, turning the
// geometry helpers' errors (kernels/conv_geometry.h) into SDK errors, and
// the claim-time check of a window op's attributes and rank.
#pragma once

#include <stdexcept>
#include <string>

#include "kernels/conv_geometry.h"
#include "loom/sdk.h"

namespace loom::cuda {

// Throws std::invalid_argument on an unknown auto_pad.
inline WindowAttrs window_attrs_of(const sdk::Node& n) {
  WindowAttrs a;
  a.kernel = n.attr_ints("kernel_shape");
  a.strides = n.attr_ints("strides");
  a.dilations = n.attr_ints("dilations");
  a.pads = n.attr_ints("pads");
  a.auto_pad = parse_auto_pad(n.attr_string("auto_pad", "NOTSET"));
  a.ceil_mode = n.attr_int("ceil_mode", 0) != 0;
  return a;
}

// f(), with std::invalid_argument as INVALID_ARGUMENT and std::out_of_range
// (valid, but beyond what the kernels take) as NOT_IMPLEMENTED, naming the op.
template <class F>
auto with_geometry_errors(const std::string& op, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::out_of_range& e) {
    throw sdk::Error("cuda " + op + ": " + e.what(), LOOM_STATUS_NOT_IMPLEMENTED);
  } catch (const std::invalid_argument& e) {
    throw sdk::Error("cuda " + op + ": " + e.what(), LOOM_STATUS_INVALID_ARGUMENT);
  }
}

// Claim-time: the auto_pad value is known and input 0's rank, where known,
// is in [min_rank, max_rank]. Empty when supported, else why not.
inline std::string window_node_supported(const sdk::Node& n, size_t min_rank, size_t max_rank) {
  try {
    parse_auto_pad(n.attr_string("auto_pad", "NOTSET"));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  const auto shape = n.input_shape(0);
  if (shape && (shape->size() < min_rank || shape->size() > max_rank))
    return "input of rank " + std::to_string(shape->size()) + " (this kernel takes ranks " + std::to_string(min_rank) +
           " to " + std::to_string(max_rank) + ")";
  return {};
}

}  // namespace loom::cuda
