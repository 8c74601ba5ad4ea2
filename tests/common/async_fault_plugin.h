// The test_async plugin (tests/plugins/test_async_ep.cpp) as a plugin that
// fails on demand: its exported hooks (live objects, calls per fault point,
// switching faults off), an environment armed with fault options, and a
// small model that runs entirely on its asynchronous device.
#pragma once

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom::testing {

struct FaultHooks {
  uint64_t (*live_allocations)() = nullptr;
  int (*live_streams)() = nullptr;
  int (*live_events)() = nullptr;
  int (*live_partitions)() = nullptr;
  int (*live_states)() = nullptr;
  int (*live_kernels)() = nullptr;
  uint64_t (*calls)(const char*) = nullptr;
  void (*disarm)() = nullptr;
};

// Valid once an environment has loaded the async test plugin.
inline FaultHooks hooks() {
  const std::string lib = test_plugin_dir("async") + "/libloom_test_async_ep.so";
  FaultHooks h;
  h.live_allocations = plugin_symbol<uint64_t (*)()>(lib, "loom_test_async_live_allocations");
  h.live_streams = plugin_symbol<int (*)()>(lib, "loom_test_async_live_streams");
  h.live_events = plugin_symbol<int (*)()>(lib, "loom_test_async_live_events");
  h.live_partitions = plugin_symbol<int (*)()>(lib, "loom_test_async_live_partitions");
  h.live_states = plugin_symbol<int (*)()>(lib, "loom_test_async_live_states");
  h.live_kernels = plugin_symbol<int (*)()>(lib, "loom_test_async_live_kernels");
  h.calls = plugin_symbol<uint64_t (*)(const char*)>(lib, "loom_test_async_fault_point_calls");
  h.disarm = plugin_symbol<void (*)()>(lib, "loom_test_async_disarm_faults");
  return h;
}

// What the plugin holds alive; equal before a session and after it is gone.
struct Live {
  uint64_t allocations;
  int streams, events, partitions, states, kernels;
  bool operator==(const Live& o) const {
    return allocations == o.allocations && streams == o.streams && events == o.events && partitions == o.partitions &&
           states == o.states && kernels == o.kernels;
  }
};
inline std::ostream& operator<<(std::ostream& os, const Live& l) {
  return os << "allocations " << l.allocations << ", streams " << l.streams << ", events " << l.events
            << ", partitions " << l.partitions << ", states " << l.states << ", kernels " << l.kernels;
}
inline Live live(const FaultHooks& h) {
  return {h.live_allocations(), h.live_streams(), h.live_events(), h.live_partitions(), h.live_states(),
          h.live_kernels()};
}

// x -> Relu (relu1) -> Mul with x (mul) -> Add the Relu (add) -> Relu (relu2)
// -> y, every node on the asynchronous device; `rows` -1 makes the shapes
// dynamic, so intermediates come from the arena one by one.
inline std::string chain_model(int64_t rows = 4, int64_t cols = 256) {
  ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {rows, cols});
  m.node("Relu", {"x"}, {"a"}, "relu1");
  m.node("Mul", {"a", "x"}, {"b"}, "mul");
  m.node("Add", {"b", "a"}, {"c"}, "add");
  m.node("Relu", {"c"}, {"y"}, "relu2");
  m.output("y", ::onnx::TensorProto::FLOAT, {rows, cols});
  return m.bytes();
}

inline Tensor chain_input(int64_t rows = 4, int64_t cols = 256) {
  std::vector<float> x(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((static_cast<int>(i) * 7 + 3) % 23) * 0.1f - 1.1f;
  return float_tensor({rows, cols}, x);
}

inline std::vector<float> expected_chain_output(const Tensor& x) {
  std::vector<float> y = values_of(x);
  for (float& v : y) {
    const float a = v > 0 ? v : 0;
    const float c = a * v + a;
    v = c > 0 ? c : 0;
  }
  return y;
}

inline std::shared_ptr<Environment> fault_env(std::map<std::string, std::string> options, Config config = {}) {
  config.providers = {"test_async", "reference"};
  config.provider_options["test_async"] = std::move(options);
  config.optimization_level = OptimizationLevel::kDisabled;
  return make_env(config, "async");
}

// An environment with the fault options and the plugin's hooks, read while
// the environment keeps the library loaded; the fault is switched off when
// it goes, so no later test in the process inherits it.
struct FaultEnv {
  explicit FaultEnv(std::map<std::string, std::string> options, Config config = {})
      : env(fault_env(std::move(options), std::move(config))), hooks(testing::hooks()) {
    if (hooks.live_kernels != nullptr) baseline = live(hooks);
  }
  ~FaultEnv() {
    if (hooks.disarm != nullptr) hooks.disarm();
  }
  bool ready() const { return env != nullptr && hooks.disarm != nullptr && hooks.live_kernels != nullptr; }
  std::shared_ptr<Environment> env;
  FaultHooks hooks;
  Live baseline{};
};

}  // namespace loom::testing
