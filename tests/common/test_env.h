// Environments for tests: the bundled plugins (reference) plus, optionally,
// one folder of test plugins from ${CMAKE_BINARY_DIR}/test_plugins.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "loom/loom.h"

namespace loom::testing {

inline std::string test_plugin_dir(const std::string& name) { return std::string(LOOM_TEST_PLUGIN_DIR) + "/" + name; }

inline std::shared_ptr<Environment> make_env(Config config = {}, const std::string& test_plugins = "") {
  if (!test_plugins.empty()) config.plugin_dirs.push_back(test_plugin_dir(test_plugins));
  auto env = Environment::create(config);
  EXPECT_TRUE(env.has_value()) << env.status().message();
  return env.has_value() ? *env : nullptr;
}

// True when the bundled plugins offer `provider` (cpu_onednn is optional in
// a build: LOOM_WITH_ONEDNN).
inline bool has_provider(const std::string& provider) {
  auto env = Environment::create(Config{});
  if (!env.has_value()) return false;
  const auto names = (*env)->available_providers();
  return std::find(names.begin(), names.end(), provider) != names.end();
}

// The bundled plugins with only the reference EP in the priority list.
inline std::shared_ptr<Environment> reference_env() {
  Config c;
  c.providers = {"reference"};
  return make_env(c);
}

// A C function exported by a loaded test plugin (the library must already
// be loaded by an Environment).
template <class Fn>
Fn plugin_symbol(const std::string& library_path, const char* symbol) {
  void* handle = dlopen(library_path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  Fn fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  dlclose(handle);  // balances this dlopen; the environment keeps it loaded
  return fn;
}

inline Tensor float_tensor(Dims dims, std::vector<float> values) {
  return Tensor::from_vector(DType::kFloat, std::move(dims), values);
}

inline std::vector<float> values_of(const Tensor& t) {
  const float* p = t.data_as<float>();
  return std::vector<float>(p, p + t.element_count());
}

inline std::vector<int64_t> int64_values_of(const Tensor& t) {
  const int64_t* p = t.data_as<int64_t>();
  return std::vector<int64_t>(p, p + t.element_count());
}

}  // namespace loom::testing
