// Fuzz target: a session on the reference EP from the input bytes, then one
// run with small inputs of the declared element types (shapes: declared
// dims, unknown ones 1 or 2, drawn from the input's tail), under limits that
// bound time and memory. Any input must end in outputs or an error status:
// no crash, hang or leak.
#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "fuzz_input.h"
#include "loom/loom.h"

namespace {

constexpr int64_t kMaxInputElements = 1 << 12;

std::shared_ptr<loom::Environment> environment() {
  static std::shared_ptr<loom::Environment> env = [] {
    loom::Config config;
    config.providers = {"reference"};
    config.log_level = "off";
    config.max_tensor_mb = 64;
    // max_tensor_mb bounds one tensor; a run's total (the planned arena sums
    // every intermediate's declared size: one input planned 3.3 GB) is
    // bounded by the arena limit, as a service taking untrusted models sets.
    config.arena_limit_mb["*"] = 1024;
    config.max_nodes = 2000;
    config.run_timeout_ms = 2000;
    auto e = loom::Environment::create(config);
    return e.has_value() ? *e : nullptr;
  }();
  return env;
}

// A tensor for input `in`, or false when its type or size is out of scope.
bool make_input(const loom::ValueInfo& in, loom::fuzz::FuzzInput& pick, loom::Tensor* out) {
  if (in.kind != loom::ValueKind::kTensor || in.dtype == loom::DType::kUndefined) return false;
  loom::Dims dims;
  int64_t count = 1;
  if (in.has_shape) {
    for (const loom::DimInfo& d : in.shape) {
      const int64_t n = d.value >= 0 ? d.value : 1 + static_cast<int64_t>(pick.pick(2));
      if (n > kMaxInputElements || count * std::max<int64_t>(n, 1) > kMaxInputElements) return false;
      count *= n;
      dims.push_back(n);
    }
  } else {
    dims.push_back(1 + static_cast<int64_t>(pick.pick(2)));
  }
  if (in.dtype == loom::DType::kString) {
    *out = loom::Tensor::from_strings(dims, std::vector<std::string>(static_cast<size_t>(count), "a"));
    return true;
  }
  auto zeros = loom::Tensor::zeros(in.dtype, dims);
  if (!zeros.has_value()) return false;
  *out = std::move(*zeros);
  // Small varied values: zeros alone would hide division and indexing paths.
  uint8_t* bytes = static_cast<uint8_t*>(out->mutable_data());
  for (size_t i = 0; i < out->byte_size(); ++i) bytes[i] = static_cast<uint8_t>(pick.pick(4));
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto env = environment();
  if (!env) return 0;
  auto session = loom::Session::create_from_bytes(env, std::string(reinterpret_cast<const char*>(data), size));
  if (!session.has_value()) return 0;
  loom::fuzz::FuzzInput pick(data, size);
  std::map<std::string, loom::Tensor> inputs;
  for (const loom::ValueInfo& in : (*session)->inputs()) {
    loom::Tensor t;
    if (!make_input(in, pick, &t)) return 0;
    inputs.emplace(in.name, std::move(t));
  }
  (void)(*session)->run(inputs);
  return 0;
}
