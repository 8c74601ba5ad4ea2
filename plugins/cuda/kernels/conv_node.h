// What the convolution, pooling and normalisation kernel classes share on
// the SDK side: turning the cuDNN geometry helpers' errors
// (kernels/conv_geometry.h) into SDK errors, and the claim-time check of a
// window op's attributes and rank. Window attributes and their resolution
// are loom/sdk/window.h's, called with "cuda <op>" so that its errors name
// the op as this EP's others do.
#pragma once

#include <stdexcept>
#include <string>

#include "kernels/conv_geometry.h"
#include "loom/sdk.h"

namespace loom::cuda {

// f(), with std::invalid_argument as INVALID_ARGUMENT and std::out_of_range
// (valid, but beyond what the kernels take) as NOT_IMPLEMENTED, naming the op.
// An sdk::Error (the SDK's window resolution) passes through unchanged.
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
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  if (!sdk::find_auto_pad(auto_pad)) return "unknown auto_pad '" + auto_pad + "'";
  const auto shape = n.input_shape(0);
  if (shape && (shape->size() < min_rank || shape->size() > max_rank))
    return "input of rank " + std::to_string(shape->size()) + " (this kernel takes ranks " + std::to_string(min_rank) +
           " to " + std::to_string(max_rank) + ")";
  return {};
}

}  // namespace loom::cuda
