// What every kernel of one CUDA EP shares: its device, its options, and
// caches keyed by problem (a convolution's chosen algorithm). Owned by the
// EP; kernels get a const reference when they are created
// (KernelRegistry::add_class_with) and may read it from concurrent runs.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "ep_options.h"

namespace loom::cuda {

// A thread-safe map from a problem key (shapes, types, layout, settings) to
// what was chosen for it, so each problem is searched once per EP.
template <class Value>
class ChoiceCache {
 public:
  std::optional<Value> find(const std::string& key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    return it->second;
  }
  void put(const std::string& key, const Value& value) {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.emplace(key, value);
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Value> entries_;
};

// A convolution's chosen algorithm and the workspace it needs.
struct ConvChoice {
  int algorithm = 0;  // cudnnConvolutionFwdAlgo_t / BwdDataAlgo_t value
  size_t workspace_bytes = 0;
  int math_type = 0;  // cudnnMathType_t value
};

// A cuBLASLt product's chosen algorithm (the bytes of cublasLtMatmulAlgo_t,
// kept as plain data so this header needs no CUDA), or none found.
struct LtChoice {
  std::array<uint64_t, 8> algo{};
  bool found = false;
  size_t workspace_bytes = 0;
};

struct EpContext {
  int device = 0;
  EpOptions options;
  size_t conv_workspace_bytes = size_t{256} << 20;  // conv_workspace_bytes(options, free memory at creation)
  mutable ChoiceCache<ConvChoice> conv_choices;
  mutable ChoiceCache<LtChoice> lt_choices;
};

}  // namespace loom::cuda
