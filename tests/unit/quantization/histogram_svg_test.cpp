// The histogram picture: one panel per chosen tensor, named, widest ranges
// first, XML-safe.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "quantization/calibrator.h"
#include "quantization/histogram_svg.h"
#include "unit/quantization/calibration_data.h"

namespace loom::quant {
namespace {

namespace fs = std::filesystem;

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(HistogramSvgTest, FileNamesEveryTensor) {
  Calibrator c([] {
    CalibrationOptions o;
    o.method = CalibrationMethod::kEntropy;
    return o;
  }());
  const auto act = testing::batch(1), relu = testing::batch(0, true), small = testing::batch(2);
  ASSERT_TRUE(c.observe("conv1/out", act.data(), static_cast<int64_t>(act.size())).is_ok());
  ASSERT_TRUE(c.observe("relu<2>&x", relu.data(), static_cast<int64_t>(relu.size())).is_ok());
  ASSERT_TRUE(c.observe("small", small.data(), static_cast<int64_t>(small.size())).is_ok());
  auto ranges = c.compute();
  ASSERT_TRUE(ranges.has_value());

  const fs::path path = fs::temp_directory_path() / "loom_histogram_svg_test.svg";
  ASSERT_TRUE(write_histogram_svg(path.string(), *ranges).is_ok());
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  fs::remove(path);
  const std::string svg = text.str();
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find(">conv1/out<"), std::string::npos);
  EXPECT_NE(svg.find(">small<"), std::string::npos);
  EXPECT_NE(svg.find(">relu&lt;2&gt;&amp;x<"), std::string::npos);
  EXPECT_EQ(svg.find("relu<2>"), std::string::npos);
  EXPECT_EQ(occurrences(svg, "<title>"), 3u);
  // Bars were drawn, and each panel marks its range with two lines.
  EXPECT_GT(occurrences(svg, "fill=\"#4a7ab5\""), 0u);
  EXPECT_EQ(occurrences(svg, "stroke=\"#d62728\""), 6u);
}

TEST(HistogramSvgTest, KeepsTheWidestRanges) {
  std::map<std::string, TensorRange> ranges;
  auto range = [](float low, float high) {
    TensorRange r;
    r.low = low;
    r.high = high;
    return r;
  };
  ranges["narrow"] = range(-0.1f, 0.1f);
  ranges["wide"] = range(-10.0f, 10.0f);
  ranges["middle"] = range(0.0f, 3.0f);
  const std::string svg = histogram_svg(ranges, 2);
  EXPECT_NE(svg.find(">wide<"), std::string::npos);
  EXPECT_NE(svg.find(">middle<"), std::string::npos);
  EXPECT_EQ(svg.find(">narrow<"), std::string::npos);
  EXPECT_NE(svg.find("no histogram"), std::string::npos);
  EXPECT_LT(svg.find(">wide<"), svg.find(">middle<"));
  EXPECT_NE(histogram_svg({}).find("nothing to show"), std::string::npos);
}

}  // namespace
}  // namespace loom::quant
