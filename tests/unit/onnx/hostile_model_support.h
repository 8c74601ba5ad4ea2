// Helpers of the hostile-model tests (hostile_model_test.cpp,
// hostile_graph_structure_test.cpp): spoilable models, temporary model
// folders, and the loader's or a session's error for a model.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/model_builder.h"
#include "common/test_env.h"
#include "onnx/model_loader.h"

namespace loom::hostile_testing {

namespace fs = std::filesystem;
using ::onnx::TensorProto;
using testing::ModelBuilder;

// A fresh folder per test and process (test binaries may run side by side).
inline fs::path fresh_dir(const std::string& name) {
  fs::path dir = fs::path(::testing::TempDir()) / ("loom_hostile_model_test." + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

inline void remove_fresh_dir(const fs::path& dir) {
  fs::remove_all(dir);
  std::error_code ec;
  fs::remove(dir.parent_path(), ec);  // the process's folder, once empty
}

inline void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// y = x + w with w an initializer the caller spoils; x and y are float[2].
inline ModelBuilder add_model() {
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, {2});
  m.node("Add", {"x", "w"}, {"y"}, "add");
  m.output("y", TensorProto::FLOAT, {2});
  return m;
}

inline TensorProto& add_initializer(ModelBuilder& m, const std::string& name, const std::vector<int64_t>& dims) {
  TensorProto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  return *t;
}

inline void set_external(TensorProto& t, const std::string& location, int64_t offset = -1, int64_t length = -1) {
  t.set_data_location(TensorProto::EXTERNAL);
  auto add = [&](const std::string& k, const std::string& v) {
    auto* e = t.add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  if (offset >= 0) add("offset", std::to_string(offset));
  if (length >= 0) add("length", std::to_string(length));
}

// The loader's error for `bytes` (model folder `dir`; empty: given as bytes).
inline std::string load_error(const std::string& bytes, const std::string& dir = "") {
  auto m = onnxio::load_model_bytes(bytes, dir, "<hostile>");
  EXPECT_FALSE(m.has_value()) << "the hostile model loaded";
  return m.has_value() ? "" : m.status().message();
}

inline std::string file_error(const fs::path& path) {
  auto m = onnxio::load_model_file(path.string());
  EXPECT_FALSE(m.has_value()) << "the hostile model loaded";
  return m.has_value() ? "" : m.status().message();
}

inline std::string session_error(const std::string& bytes) {
  auto s = Session::create_from_bytes(testing::reference_env(), bytes);
  EXPECT_FALSE(s.has_value()) << "a session was created for the hostile model";
  return s.has_value() ? "" : s.status().message();
}

// The process is still usable: a good model loads and runs.
inline void expect_good_model_runs() {
  ModelBuilder m = add_model();
  m.float_initializer("w", {2}, {10, 20});
  auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
  ASSERT_TRUE(s) << s.status().message();
  auto out = (*s)->run({{"x", testing::float_tensor({2}, {1, 2})}});
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(testing::values_of((*out)[0]), (std::vector<float>{11, 22}));
}

}  // namespace loom::hostile_testing

#define EXPECT_HAS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)
