// The calibrators against an independent numpy port of ONNX Runtime's
// (reference_calibration.py, run on the same batches; its printed numbers
// are pasted below). Histogram shapes are compared by bin count, total,
// sum of i * hist[i] and a few bins, so a count landing one bin off fails.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "quantization/calibrator.h"
#include "quantization/histogram_ranges.h"
#include "unit/quantization/calibration_data.h"

namespace loom::quant {
namespace {

using testing::batch;
using testing::kNumBatches;

// The reference and this code agree to the bit on these data; the
// tolerance only forgives a different but faithful float ordering.
constexpr double kTol = 1e-6;

CalibrationOptions with_method(CalibrationMethod m) {
  CalibrationOptions o;
  o.method = m;
  return o;
}

// Observes the first `batches` batches of "act" (or "relu") and returns its range.
TensorRange calibrate(const CalibrationOptions& o, bool relu = false, int batches = kNumBatches) {
  Calibrator c(o);
  for (int b = 0; b < batches; ++b) {
    const auto data = batch(b, relu);
    EXPECT_TRUE(c.observe("t", data.data(), static_cast<int64_t>(data.size())).is_ok());
  }
  auto ranges = c.compute();
  EXPECT_TRUE(ranges.has_value()) << ranges.status().message();
  if (!ranges.has_value() || !ranges->count("t")) return {};
  return ranges->at("t");
}

double total(const TensorRange& r) {
  double s = 0;
  for (double c : r.hist) s += c;
  return s;
}

double weighted(const TensorRange& r) {
  double s = 0;
  for (size_t i = 0; i < r.hist.size(); ++i) s += static_cast<double>(i) * r.hist[i];
  return s;
}

void expect_range(const TensorRange& r, double low, double high) {
  EXPECT_NEAR(r.low, low, kTol);
  EXPECT_NEAR(r.high, high, kTol);
}

void expect_histogram(const TensorRange& r, size_t bins, double count, double edge0, double edge_n, double weight) {
  ASSERT_EQ(r.hist.size(), bins);
  ASSERT_EQ(r.bin_edges.size(), bins + 1);
  EXPECT_EQ(total(r), count);
  EXPECT_NEAR(r.bin_edges.front(), edge0, kTol);
  EXPECT_NEAR(r.bin_edges.back(), edge_n, kTol);
  EXPECT_EQ(weighted(r), weight);
}

TEST(CalibrationMethodTest, NamesRoundTripAndUnknownIsRefused) {
  for (auto m : {CalibrationMethod::kMinMax, CalibrationMethod::kEntropy, CalibrationMethod::kPercentile,
                 CalibrationMethod::kDistribution}) {
    auto parsed = calibration_method_from_name(calibration_method_name(m));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, m);
  }
  EXPECT_EQ(*calibration_method_from_name("entropy"), CalibrationMethod::kEntropy);
  auto bad = calibration_method_from_name("kl");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("'kl'"), std::string::npos);
  EXPECT_FALSE(calibration_method_from_name("MinMax").has_value());
}

TEST(CalibrationMethodTest, DefaultBinsAreOrts) {
  EXPECT_EQ(effective_num_bins(with_method(CalibrationMethod::kEntropy)), 128);
  EXPECT_EQ(effective_num_bins(with_method(CalibrationMethod::kPercentile)), 2048);
  EXPECT_EQ(effective_num_bins(with_method(CalibrationMethod::kDistribution)), 2048);
  CalibrationOptions o = with_method(CalibrationMethod::kEntropy);
  o.num_bins = 512;
  EXPECT_EQ(effective_num_bins(o), 512);
  EXPECT_TRUE(ort_default_symmetric(CalibrationMethod::kPercentile));
  EXPECT_FALSE(ort_default_symmetric(CalibrationMethod::kMinMax));
}

TEST(MinMaxCalibratorTest, PlainIsGlobalMinMax) {
  const TensorRange r = calibrate(with_method(CalibrationMethod::kMinMax));
  expect_range(r, -1.9458510875701904, 7.5);
  EXPECT_TRUE(r.hist.empty());
  EXPECT_TRUE(r.bin_edges.empty());
  EXPECT_TRUE(std::isnan(r.mean));
  expect_range(calibrate(with_method(CalibrationMethod::kMinMax), /*relu=*/true), 0.0, 7.5);
}

TEST(MinMaxCalibratorTest, Symmetric) {
  CalibrationOptions o = with_method(CalibrationMethod::kMinMax);
  o.symmetric = true;
  expect_range(calibrate(o), -7.5, 7.5);
  expect_range(calibrate(o, true), -7.5, 7.5);
}

TEST(MinMaxCalibratorTest, MovingAverageStartsFromFirstBatch) {
  CalibrationOptions o = with_method(CalibrationMethod::kMinMax);
  o.moving_average = true;
  // One batch: its own min and max.
  expect_range(calibrate(o, false, 1), -1.75, 2.2359941005706787);
  // The 7.5 outlier of batch 1 moves the max by only 1% of the gap.
  expect_range(calibrate(o), -1.7420700788497925, 2.27341890335083);
  expect_range(calibrate(o, true), 0.0, 2.27341890335083);
  o.symmetric = true;
  expect_range(calibrate(o), -2.27341890335083, 2.27341890335083);
}

TEST(EntropyCalibratorTest, KlSearchOnDefaultBins) {
  const CalibrationOptions o = with_method(CalibrationMethod::kEntropy);
  // One batch: 128 bins and 128 quantized bins leave one window, the whole range.
  const TensorRange one = calibrate(o, false, 1);
  expect_range(one, -1.75, 2.2359941005706787);
  expect_histogram(one, 128, 2000, -2.2359941005706787, 2.2359941005706787, 141066);

  const TensorRange r = calibrate(o);
  expect_range(r, -1.9458510875701904, 2.2709314823150635);
  expect_histogram(r, 430, 4500, -7.511542797088623, 7.511542797088623, 957865);

  const TensorRange relu = calibrate(o, true);
  expect_range(relu, 0.0, 2.2709314823150635);
  expect_histogram(relu, 430, 4500, -7.511542797088623, 7.511542797088623, 1000607);
}

TEST(EntropyCalibratorTest, KlSearchWithMoreBins) {
  CalibrationOptions o = with_method(CalibrationMethod::kEntropy);
  o.num_bins = 512;
  const TensorRange r = calibrate(o);
  expect_histogram(r, 1718, 4500, -7.502808094024658, 7.502808094024658, 3833716);
  expect_range(r, -1.9458510875701904, 3.3539910316467285);
  expect_range(calibrate(o, true), 0.0, 2.2447285652160645);
  // Mirrored: the 7.5 outlier now folds into the windows' first bin.
  Calibrator mirrored(o);
  for (int b = 0; b < kNumBatches; ++b) {
    auto data = batch(b);
    for (float& v : data) v = -v;
    ASSERT_TRUE(mirrored.observe("t", data.data(), static_cast<int64_t>(data.size())).is_ok());
  }
  auto m = mirrored.compute();
  ASSERT_TRUE(m.has_value());
  expect_histogram(m->at("t"), 1718, 4500, -7.502808094024658, 7.502808094024658, 3892784);
  expect_range(m->at("t"), -2.2359941005706787, 1.9458510875701904);

  o.num_quantized_bins = 32;
  expect_range(calibrate(o), -1.9458510875701904, 2.2447285652160645);
  expect_range(calibrate(o, true), 0.0, 2.1049787998199463);
}

TEST(HistogramMergeCalibratorTest, WiderBatchGrowsByWholeOldBins) {
  const CalibrationOptions o = with_method(CalibrationMethod::kEntropy);
  // Batch 0 spans +-2.236 in 128 bins (stride 0.0349); batch 1's 7.5 adds
  // 151 old-width bins per side: 430 bins over +-7.5115, the old counts in
  // bins 151..278. Batch 2 fits and lands in the same bins.
  const TensorRange two = calibrate(o, false, 2);
  expect_histogram(two, 430, 3500, -7.511542797088623, 7.511542797088623, 743417);
  EXPECT_EQ(two.hist[25], 0);
  expect_histogram(calibrate(o, true, 2), 430, 3500, -7.511542797088623, 7.511542797088623, 782043);
  const TensorRange three = calibrate(o);
  ASSERT_EQ(three.hist.size(), 430u);
  EXPECT_EQ(three.hist[213], 99);
  EXPECT_EQ(three.hist[214], 94);
  EXPECT_EQ(three.hist[215], 98);
  EXPECT_EQ(three.hist[216], 89);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(three.hist[i], 0) << i;
  // The bin edges stay a uniform grid after growing.
  const double stride = (three.bin_edges.back() - three.bin_edges.front()) / 430.0;
  EXPECT_NEAR(three.bin_edges[151] - three.bin_edges[150], stride, 1e-5);
}

TEST(HistogramMergeCalibratorTest, FirstAllZeroBatchIsRebinned) {
  Calibrator c(with_method(CalibrationMethod::kEntropy));
  const std::vector<float> zeros(4, 0.0f);
  ASSERT_TRUE(c.observe("t", zeros.data(), 4).is_ok());
  const auto data = batch(0);
  ASSERT_TRUE(c.observe("t", data.data(), static_cast<int64_t>(data.size())).is_ok());
  auto ranges = c.compute();
  ASSERT_TRUE(ranges.has_value());
  const TensorRange& r = ranges->at("t");
  ASSERT_EQ(r.hist.size(), 128u);
  EXPECT_EQ(total(r), 2004);
  EXPECT_EQ(weighted(r), 141322);
  EXPECT_EQ(r.hist[62], 32);
  EXPECT_EQ(r.hist[63], 30);
  EXPECT_EQ(r.hist[64], 34);
  EXPECT_EQ(r.hist[65], 30);
  EXPECT_NEAR(r.bin_edges.back(), 2.2359941005706787, kTol);
}

TEST(PercentileCalibratorTest, TwoSided) {
  CalibrationOptions o = with_method(CalibrationMethod::kPercentile);
  const TensorRange r = calibrate(o);
  expect_histogram(r, 6870, 4500, -7.500624656677246, 7.500624656677246, 15337102);
  // 99.999% of 4500 values keeps all but the outermost bins: the low edge
  // is clamped to the observed min.
  expect_range(r, -1.9458510875701904, 7.498441219329834);
  o.percentile = 99.0;
  expect_range(calibrate(o), -1.7403196096420288, 1.9346590042114258);
  expect_range(calibrate(o, true), 0.0, 1.9346590042114258);
}

TEST(PercentileCalibratorTest, SymmetricUsesAbsoluteHistogram) {
  CalibrationOptions o = with_method(CalibrationMethod::kPercentile);
  o.symmetric = true;
  const TensorRange r = calibrate(o);
  // |x| histogram: starts at batch 0's smallest |x|; batch 1 appends 4823
  // bins (numpy.arange adds one past the max); one later |x| below the
  // first edge is not counted, as in ORT (4499 of 4500).
  expect_histogram(r, 6871, 4499, 0.00026680040173232555, 7.5013532638549805, 2417437);
  EXPECT_EQ(r.hist[0], 9);
  EXPECT_EQ(r.hist[1], 4);
  EXPECT_EQ(r.hist[2], 9);
  EXPECT_EQ(r.hist[6869], 1);
  EXPECT_EQ(r.hist[6870], 0);
  expect_range(r, -1.9458510875701904, 7.499169826507568);
  o.percentile = 99.0;
  expect_range(calibrate(o), -1.8539117574691772, 1.8539117574691772);
  const TensorRange relu = calibrate(o, true);
  expect_histogram(relu, 6870, 4500, 0.0, 7.500261306762695, 1091071);
  EXPECT_EQ(relu.hist[0], 2448);
  expect_range(relu, 0.0, 1.8134697675704956);
}

TEST(PercentileCalibratorTest, PercentileOutOfRangeIsRefused) {
  CalibrationOptions o = with_method(CalibrationMethod::kPercentile);
  o.percentile = 100.5;
  Calibrator c(o);
  const float x = 1.0f;
  EXPECT_EQ(c.observe("t", &x, 1).code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(c.compute().has_value());
}

TEST(DistributionCalibratorTest, MeanStddevAndFloat8Range) {
  const TensorRange r = calibrate(with_method(CalibrationMethod::kDistribution));
  expect_histogram(r, 6870, 4500, -7.500624656677246, 7.500624656677246, 15337102);
  EXPECT_NEAR(r.mean, -0.05733034759759903, kTol);
  EXPECT_NEAR(r.stddev, 0.7521807551383972, kTol);
  expect_range(r, -3.367825746536255, 3.367825746536255);
  const TensorRange relu = calibrate(with_method(CalibrationMethod::kDistribution), true);
  EXPECT_NEAR(relu.mean, 0.26555874943733215, kTol);
  EXPECT_NEAR(relu.stddev, 0.4484357237815857, kTol);
  expect_range(relu, -2.0078330039978027, 2.0078330039978027);
  EXPECT_NEAR(float8_e4m3fn_stddev(), 100.05772399902344, 1e-4);
}

TEST(DistributionCalibratorTest, NeedsAtLeast512Bins) {
  CalibrationOptions o = with_method(CalibrationMethod::kDistribution);
  o.num_bins = 256;
  Calibrator c(o);
  const float x = 1.0f;
  const Status st = c.observe("t", &x, 1);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("512"), std::string::npos) << st.message();
}

TEST(CalibratorTest, NanAndInfAreSkipped) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (auto m : {CalibrationMethod::kMinMax, CalibrationMethod::kEntropy, CalibrationMethod::kPercentile,
                 CalibrationMethod::kDistribution}) {
    const TensorRange clean = calibrate(with_method(m));
    Calibrator c(with_method(m));
    const std::vector<float> only_bad = {nan, inf, -inf};
    ASSERT_TRUE(c.observe("t", only_bad.data(), 3).is_ok());  // changes nothing
    for (int b = 0; b < kNumBatches; ++b) {
      auto data = batch(b);
      data.insert(data.begin() + 10, nan);
      data.insert(data.begin() + 20, inf);
      data.push_back(-inf);
      ASSERT_TRUE(c.observe("t", data.data(), static_cast<int64_t>(data.size())).is_ok());
    }
    auto ranges = c.compute();
    ASSERT_TRUE(ranges.has_value());
    const TensorRange& r = ranges->at("t");
    EXPECT_EQ(r.low, clean.low) << calibration_method_name(m);
    EXPECT_EQ(r.high, clean.high) << calibration_method_name(m);
    EXPECT_EQ(r.hist, clean.hist) << calibration_method_name(m);
    EXPECT_EQ(r.bin_edges, clean.bin_edges) << calibration_method_name(m);
  }
}

TEST(CalibratorTest, TensorWithoutFiniteValuesIsLeftOut) {
  Calibrator c(with_method(CalibrationMethod::kEntropy));
  const std::vector<float> bad = {std::numeric_limits<float>::quiet_NaN()};
  ASSERT_TRUE(c.observe("all_nan", bad.data(), 1).is_ok());
  EXPECT_FALSE(c.compute().has_value());
  const float x = 0.5f;
  ASSERT_TRUE(c.observe("ok", &x, 1).is_ok());
  auto ranges = c.compute();
  ASSERT_TRUE(ranges.has_value());
  EXPECT_EQ(ranges->size(), 1u);
  EXPECT_EQ(ranges->count("ok"), 1u);
}

TEST(CalibratorTest, Errors) {
  Calibrator c(with_method(CalibrationMethod::kMinMax));
  auto nothing = c.compute();
  ASSERT_FALSE(nothing.has_value());
  EXPECT_EQ(nothing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.observe("t", nullptr, 3).code(), StatusCode::kInvalidArgument);
  const float x = 1.0f;
  EXPECT_EQ(c.observe("t", &x, -1).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(c.observe("t", nullptr, 0).is_ok());
  EXPECT_FALSE(c.compute().has_value());

  CalibrationOptions o = with_method(CalibrationMethod::kMinMax);
  o.moving_average = true;
  o.averaging_constant = 1.5f;
  Calibrator bad(o);
  EXPECT_EQ(bad.observe("t", &x, 1).code(), StatusCode::kInvalidArgument);

  CalibrationOptions e = with_method(CalibrationMethod::kEntropy);
  e.num_quantized_bins = 256;  // more than the 128 bins
  EXPECT_FALSE(validate(e).is_ok());
}

TEST(CalibratorTest, FarOutlierIsRefusedAndStateKept) {
  for (bool symmetric_percentile : {false, true}) {
    CalibrationOptions o = with_method(symmetric_percentile ? CalibrationMethod::kPercentile : CalibrationMethod::kEntropy);
    o.symmetric = symmetric_percentile;
    const TensorRange one = calibrate(o, false, 1);
    Calibrator c(o);
    const auto data = batch(0);
    ASSERT_TRUE(c.observe("t", data.data(), static_cast<int64_t>(data.size())).is_ok());
    // 1e30 would need ~1e31 bins of batch 0's width.
    const std::vector<float> far = {0.5f, 1e30f};
    const Status st = c.observe("t", far.data(), 2);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("tensor 't'"), std::string::npos) << st.message();
    auto ranges = c.compute();
    ASSERT_TRUE(ranges.has_value());
    EXPECT_EQ(ranges->at("t").hist, one.hist);
    EXPECT_EQ(ranges->at("t").low, one.low);
    EXPECT_EQ(ranges->at("t").high, one.high);
  }
}

TEST(CalibratorTest, SeveralTensorsAreIndependent) {
  Calibrator c(with_method(CalibrationMethod::kMinMax));
  const auto a = batch(0), r = batch(0, true);
  ASSERT_TRUE(c.observe("act", a.data(), static_cast<int64_t>(a.size())).is_ok());
  ASSERT_TRUE(c.observe("relu", r.data(), static_cast<int64_t>(r.size())).is_ok());
  auto ranges = c.compute();
  ASSERT_TRUE(ranges.has_value());
  ASSERT_EQ(ranges->size(), 2u);
  expect_range(ranges->at("act"), -1.75, 2.2359941005706787);
  expect_range(ranges->at("relu"), 0.0, 2.2359941005706787);
}

}  // namespace
}  // namespace loom::quant
