// The ranges file: a round trip keeps every float bit and every count, and
// a malformed file is refused with a message naming the file and the key.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "quantization/calibrator.h"
#include "quantization/ranges_json.h"
#include "unit/quantization/calibration_data.h"

namespace loom::quant {
namespace {

namespace fs = std::filesystem;

class RangesJsonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("loom_ranges_json_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  // Expects `text` to be refused with a message naming the file and `key`.
  void expect_refused(const std::string& text, const std::string& key) {
    const std::string path = write("bad.json", text);
    auto r = read_ranges_json(path);
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(key), std::string::npos) << r.status().message();
  }

  fs::path dir_;
};

std::map<std::string, TensorRange> calibrated(const CalibrationOptions& o) {
  Calibrator c(o);
  for (int b = 0; b < testing::kNumBatches; ++b) {
    for (bool relu : {false, true}) {
      const auto data = testing::batch(b, relu);
      EXPECT_TRUE(c.observe(relu ? "relu" : "act/out:0", data.data(), static_cast<int64_t>(data.size())).is_ok());
    }
  }
  auto ranges = c.compute();
  EXPECT_TRUE(ranges.has_value());
  return ranges.has_value() ? *ranges : std::map<std::string, TensorRange>{};
}

TEST_F(RangesJsonTest, RoundTripKeepsEverything) {
  for (auto m : {CalibrationMethod::kMinMax, CalibrationMethod::kEntropy, CalibrationMethod::kPercentile,
                 CalibrationMethod::kDistribution}) {
    CalibrationOptions o;
    o.method = m;
    o.symmetric = m == CalibrationMethod::kPercentile;
    o.percentile = 99.9;
    o.moving_average = m == CalibrationMethod::kMinMax;
    o.averaging_constant = 0.05f;
    const auto ranges = calibrated(o);
    ASSERT_EQ(ranges.size(), 2u);
    const std::string path = (dir_ / "ranges.json").string();
    ASSERT_TRUE(write_ranges_json(path, o, ranges).is_ok());

    auto back = read_ranges_json(path);
    ASSERT_TRUE(back.has_value()) << back.status().message();
    EXPECT_EQ(back->options.method, m);
    EXPECT_EQ(back->options.symmetric, o.symmetric);
    EXPECT_EQ(back->options.moving_average, o.moving_average);
    EXPECT_EQ(back->options.averaging_constant, 0.05f);
    EXPECT_EQ(back->options.percentile, 99.9);
    EXPECT_EQ(back->options.num_bins, effective_num_bins(o));
    EXPECT_EQ(back->options.num_quantized_bins, 128);
    ASSERT_EQ(back->ranges.size(), 2u);
    for (const auto& [name, r] : ranges) {
      ASSERT_EQ(back->ranges.count(name), 1u) << name;
      const TensorRange& b = back->ranges.at(name);
      EXPECT_EQ(b.low, r.low) << name;
      EXPECT_EQ(b.high, r.high) << name;
      EXPECT_EQ(b.hist, r.hist) << name;
      EXPECT_EQ(b.bin_edges, r.bin_edges) << name;
      if (m == CalibrationMethod::kDistribution) {
        EXPECT_EQ(b.mean, r.mean);
        EXPECT_EQ(b.stddev, r.stddev);
      } else {
        EXPECT_TRUE(std::isnan(b.mean));
        EXPECT_TRUE(std::isnan(b.stddev));
      }
    }
    const std::string text = ranges_to_json(o, ranges);
    EXPECT_EQ(text.find("\"hist\"") != std::string::npos, m != CalibrationMethod::kMinMax);
    EXPECT_NE(text.find(std::string("\"method\": \"") + calibration_method_name(m) + "\""), std::string::npos);
  }
}

TEST_F(RangesJsonTest, MinimalFileUsesDefaultOptions) {
  auto r = read_ranges_json(write("min.json", R"({"method": "minmax", "ranges": {"x": {"low": -1, "high": 2}}})"));
  ASSERT_TRUE(r.has_value()) << r.status().message();
  EXPECT_EQ(r->options.method, CalibrationMethod::kMinMax);
  EXPECT_FALSE(r->options.symmetric);
  EXPECT_EQ(r->ranges.at("x").low, -1.0f);
  EXPECT_EQ(r->ranges.at("x").high, 2.0f);
  EXPECT_TRUE(r->ranges.at("x").hist.empty());
}

TEST_F(RangesJsonTest, MalformedFilesAreRefused) {
  expect_refused("{\"method\": \"minmax\", \"ranges\": {", "not valid JSON");
  expect_refused("[1, 2]", "top level");
  expect_refused(R"({"ranges": {}})", "method");
  expect_refused(R"({"method": "kl", "ranges": {}})", "method");
  expect_refused(R"({"method": 3, "ranges": {}})", "method");
  expect_refused(R"({"method": "minmax"})", "ranges");
  expect_refused(R"({"method": "minmax", "ranges": []})", "ranges");
  expect_refused(R"({"method": "minmax", "ranges": {"x": {"low": "a", "high": 1}}})", "ranges.x.low");
  expect_refused(R"({"method": "minmax", "ranges": {"x": {"low": 0}}})", "ranges.x.high");
  expect_refused(R"({"method": "minmax", "ranges": {"x": {"low": 2, "high": 1}}})", "ranges.x");
  expect_refused(R"({"method": "minmax", "ranges": {"x": {"low": 0, "high": 1e300}}})", "ranges.x.high");
  expect_refused(R"({"method": "minmax", "ranges": {"x": 5}})", "ranges.x");
  expect_refused(R"({"method": "entropy", "ranges": {"x": {"low": 0, "high": 1, "hist": [1, 2]}}})",
                 "ranges.x.bin_edges");
  expect_refused(R"({"method": "entropy", "ranges": {"x": {"low": 0, "high": 1, "hist": [1, 2], "bin_edges": [0, 1]}}})",
                 "ranges.x.bin_edges");
  expect_refused(
      R"({"method": "entropy", "ranges": {"x": {"low": 0, "high": 1, "hist": [1, -2], "bin_edges": [0, 1, 2]}}})",
      "ranges.x.hist[1]");
  expect_refused(
      R"({"method": "entropy", "ranges": {"x": {"low": 0, "high": 1, "hist": [1, 2], "bin_edges": [0, 2, 1]}}})",
      "ranges.x.bin_edges[2]");
  expect_refused(R"({"method": "minmax", "options": {"symmetric": 1}, "ranges": {}})", "options.symmetric");
  expect_refused(R"({"method": "minmax", "options": {"num_bins": -3}, "ranges": {}})", "options.num_bins");
  expect_refused(R"({"method": "percentile", "options": {"percentile": 101}, "ranges": {}})", "options");
  expect_refused(R"({"version": 7, "method": "minmax", "ranges": {}})", "version");
}

TEST_F(RangesJsonTest, MissingFileIsNotFound) {
  const std::string path = (dir_ / "absent.json").string();
  auto r = read_ranges_json(path);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find(path), std::string::npos);
}

TEST_F(RangesJsonTest, UnwritablePathFails) {
  std::map<std::string, TensorRange> ranges{{"x", TensorRange{}}};
  const Status st = write_ranges_json((dir_ / "no_such_dir" / "r.json").string(), CalibrationOptions{}, ranges);
  EXPECT_EQ(st.code(), StatusCode::kFail);
}

}  // namespace
}  // namespace loom::quant
