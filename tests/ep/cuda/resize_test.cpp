// Resize and Upsample on the CUDA EP against the reference EP: every mode
// (nearest with each nearest_mode, linear, cubic with its coefficient and
// exclude_outside) with every coordinate_transformation_mode, upsampling,
// downsampling and mixed (1x2x5x7 -> 1x2x9x4), by scales and by sizes,
// opsets 10 / 11 / 13 / 18 (axes) / 19 (half_pixel_symmetric), Upsample 7
// and 9, float16 / double / integer data, an empty output, the PP-OCR
// shapes; and the declines (antialias, keep_aspect_ratio_policy).
#include <gtest/gtest.h>

#include "ep/cuda/movement_case.h"

namespace loom {
namespace {

using namespace cuda_testing;
using namespace cuda_testing::movement;

struct ResizeCase {
  int64_t opset = 13;
  std::string mode = "nearest", coord, nearest;  // "" leaves the attribute out
  Dims x = {1, 2, 5, 7};
  std::vector<float> scales;  // empty: sizes
  Dims sizes;
  std::vector<float> roi;  // tf_crop_and_resize
  DType type = DType::kFloat;
  float cubic_a = 0.f;  // 0: default
  bool exclude_outside = false;
  float extrapolation = 0.f;  // 0: default
  std::vector<int64_t> axes;
};

void float_input(testing::ModelBuilder& m, const std::string& name, const std::vector<float>& v) {
  m.float_initializer(name, {static_cast<int64_t>(v.size())}, v);
}

std::string describe(const ResizeCase& c) {
  std::string s = "Resize-" + std::to_string(c.opset) + " " + c.mode + "/" + c.coord + "/" + c.nearest + " " +
                  dtype_name(c.type) + (c.scales.empty() ? " sizes" : " scales");
  if (c.exclude_outside) s += " exclude_outside";
  if (c.cubic_a != 0.f) s += " a=" + std::to_string(c.cubic_a);
  return s;
}

void check_resize(const ResizeCase& c) {
  testing::ModelBuilder m(c.opset);
  m.input("x", onnx_type(c.type), c.x);
  std::vector<std::string> in = {"x"};
  if (c.opset < 11) {
    float_input(m, "scales", c.scales);
    in.push_back("scales");
  } else {
    const bool legacy_inputs = c.opset < 13;  // roi and scales required (may be empty)
    if (!c.roi.empty() || legacy_inputs) float_input(m, "roi", c.roi);
    in.push_back(!c.roi.empty() || legacy_inputs ? "roi" : "");
    if (!c.scales.empty() || legacy_inputs) float_input(m, "scales", c.scales);
    in.push_back(!c.scales.empty() || legacy_inputs ? "scales" : "");
    if (!c.sizes.empty()) {
      m.int64_initializer("sizes", {static_cast<int64_t>(c.sizes.size())}, c.sizes);
      in.push_back("sizes");
    }
    while (in.back().empty()) in.pop_back();
  }
  auto& n = m.node("Resize", in, {"y"});
  testing::add_string_attr(n, "mode", c.mode);
  if (!c.coord.empty()) testing::add_string_attr(n, "coordinate_transformation_mode", c.coord);
  if (!c.nearest.empty()) testing::add_string_attr(n, "nearest_mode", c.nearest);
  if (c.cubic_a != 0.f) testing::add_float_attr(n, "cubic_coeff_a", c.cubic_a);
  if (c.exclude_outside) testing::add_int_attr(n, "exclude_outside", 1);
  if (c.extrapolation != 0.f) testing::add_float_attr(n, "extrapolation_value", c.extrapolation);
  if (!c.axes.empty()) testing::add_ints_attr(n, "axes", c.axes);
  std::string out = "y";
  if (c.type == DType::kInt64) {
    testing::add_int_attr(m.node("Cast", {"y"}, {"y_as_float"}), "to", kFloat);
    out = "y_as_float";
  }
  auto* vi = m.proto().mutable_graph()->add_output();
  vi->set_name(out);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(c.type == DType::kInt64 ? kFloat : onnx_type(c.type));
  const Tensor x = random_tensor(c.type, c.x, 17, c.type == DType::kInt64 || c.type == DType::kUint8 ? 0.f : -1.f,
                                 c.type == DType::kInt64 || c.type == DType::kUint8 ? 200.f : 1.f);
  const Tolerance tol = c.type == DType::kFloat16 ? kHalfTolerance : Tolerance{1e-6, 1e-6};
  expect_matches_reference(m.bytes(), {{"x", x}}, tol, describe(c));
}

// The three geometries every combination runs: mixed by sizes, upsampling
// and downsampling by scales.
std::vector<ResizeCase> geometries(ResizeCase c) {
  std::vector<ResizeCase> out;
  c.sizes = {1, 2, 9, 4};
  c.scales.clear();
  out.push_back(c);
  c.sizes.clear();
  c.scales = {1, 1, 2.5f, 1.5f};
  out.push_back(c);
  c.scales = {1, 1, 0.6f, 0.45f};
  out.push_back(c);
  return out;
}

const std::vector<std::string> kCoords = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                          "tf_crop_and_resize"};

ResizeCase with_coord(ResizeCase c, const std::string& coord) {
  c.coord = coord;
  if (coord == "tf_crop_and_resize") {
    c.roi = {0, 0, 0.1f, -0.2f, 1, 1, 0.8f, 1.3f};  // partly outside: extrapolated
    c.extrapolation = 7.5f;
  }
  if (coord == "tf_half_pixel_for_nn") c.opset = 11;  // removed from the spec in opset 13
  if (coord == "half_pixel_symmetric") c.opset = 19;
  return c;
}

TEST(CudaResize, NearestEveryCoordinateAndRounding) {
  LOOM_SKIP_WITHOUT_GPU();
  std::vector<std::string> coords = kCoords;
  coords.push_back("tf_half_pixel_for_nn");
  coords.push_back("half_pixel_symmetric");
  ResizeCase base;
  for (const std::string& coord : coords)
    for (const ResizeCase& c : geometries(with_coord(base, coord))) check_resize(c);
  for (const char* nearest : {"round_prefer_ceil", "floor", "ceil"})
    for (const char* coord : {"asymmetric", "half_pixel", "align_corners"}) {
      base.nearest = nearest;
      for (const ResizeCase& c : geometries(with_coord(base, coord))) check_resize(c);
    }
}

TEST(CudaResize, LinearAndCubicEveryCoordinate) {
  LOOM_SKIP_WITHOUT_GPU();
  std::vector<std::string> coords = kCoords;
  coords.push_back("half_pixel_symmetric");
  for (const char* mode : {"linear", "cubic"}) {
    ResizeCase base;
    base.mode = mode;
    for (const std::string& coord : coords)
      for (const ResizeCase& c : geometries(with_coord(base, coord))) check_resize(c);
  }
  ResizeCase cubic;
  cubic.mode = "cubic";
  cubic.cubic_a = -0.5f;
  cubic.exclude_outside = true;
  for (const char* coord : {"half_pixel", "align_corners"})
    for (const ResizeCase& c : geometries(with_coord(cubic, coord))) check_resize(c);
  cubic.cubic_a = 0.f;
  for (const ResizeCase& c : geometries(with_coord(cubic, "asymmetric"))) check_resize(c);
}

TEST(CudaResize, TypesOpsetsAndAxes) {
  LOOM_SKIP_WITHOUT_GPU();
  ResizeCase c;
  for (DType t : {DType::kFloat16, DType::kDouble}) {
    c.type = t;
    for (const char* mode : {"nearest", "linear", "cubic"}) {
      c.mode = mode;
      for (const ResizeCase& g : geometries(with_coord(c, "half_pixel"))) check_resize(g);
    }
  }
  c = ResizeCase();
  for (DType t : {DType::kInt64, DType::kUint8}) {  // nearest copies any type
    c.type = t;
    for (const ResizeCase& g : geometries(with_coord(c, "asymmetric"))) check_resize(g);
  }
  // Opset 11 with empty roi / scales and sizes, opset 10's scales.
  c = ResizeCase();
  c.opset = 11;
  c.mode = "linear";
  c.coord = "align_corners";
  c.sizes = {1, 2, 9, 4};
  check_resize(c);
  for (const char* mode : {"nearest", "linear"}) {
    c = ResizeCase();
    c.opset = 10;
    c.mode = mode;
    c.scales = {1, 1, 1.8f, 0.6f};
    check_resize(c);
    c.scales = {1, 1, 0.6f, 0.45f};
    check_resize(c);
  }
  // Opset 18 axes: the last two, and one negative axis.
  c = ResizeCase();
  c.opset = 18;
  c.mode = "linear";
  c.axes = {2, 3};
  c.sizes = {9, 4};
  check_resize(c);
  c.axes = {-1};
  c.sizes.clear();
  c.scales = {1.5f};
  check_resize(c);
  // An empty output.
  c = ResizeCase();
  c.sizes = {1, 2, 0, 4};
  check_resize(c);
}

TEST(CudaResize, PpOcrShapes) {
  LOOM_SKIP_WITHOUT_GPU();
  ResizeCase c;
  c.opset = 11;
  c.x = {1, 3, 37, 129};
  c.coord = "asymmetric";
  c.nearest = "floor";
  c.scales = {1, 1, 2, 2};
  check_resize(c);
  c.scales = {1, 1, 4, 4};
  check_resize(c);
  c.mode = "linear";
  c.coord = "align_corners";
  c.nearest = "";
  c.scales.clear();
  c.sizes = {1, 3, 48, 320};
  check_resize(c);
  c.coord = "half_pixel";
  c.sizes = {1, 3, 74, 258};
  check_resize(c);
}

TEST(CudaResize, Upsample) {
  LOOM_SKIP_WITHOUT_GPU();
  for (const char* mode : {"nearest", "linear"}) {
    for (const std::vector<float>& scales : {std::vector<float>{1, 1, 2, 1.5f}, std::vector<float>{1, 1, 3, 2.5f}}) {
      testing::ModelBuilder m9(9);
      m9.input("x", kFloat, {1, 2, 5, 7});
      float_input(m9, "scales", scales);
      testing::add_string_attr(m9.node("Upsample", {"x", "scales"}, {"y"}), "mode", mode);
      m9.output("y", kFloat, {});
      expect_matches_reference(m9.bytes(), {{"x", random_tensor(DType::kFloat, {1, 2, 5, 7}, 3)}}, {1e-6, 1e-6},
                               std::string("Upsample-9 ") + mode);
      testing::ModelBuilder m7(7);
      m7.input("x", kFloat, {1, 2, 5, 7});
      auto& n = m7.node("Upsample", {"x"}, {"y"});
      testing::add_string_attr(n, "mode", mode);
      testing::add_floats_attr(n, "scales", scales);
      m7.output("y", kFloat, {});
      expect_matches_reference(m7.bytes(), {{"x", random_tensor(DType::kFloat, {1, 2, 5, 7}, 4)}}, {1e-6, 1e-6},
                               std::string("Upsample-7 ") + mode);
    }
  }
}

// Declined nodes go to the reference EP with the reason (placement only:
// against the virtual device where there is no GPU).
TEST(CudaResize, DeclinesAntialiasAndAspectPolicies) {
  Config config;
  config.providers = {"cuda", "reference"};
  config.fallback = FallbackPolicy::kAllow;
  config.optimization_level = OptimizationLevel::kDisabled;
  config.provider_options["cuda"] = {{"virtual_device", "1"}};
  auto env = testing::make_env(config);
  ASSERT_TRUE(env);
  struct Declined {
    std::string attr, value, reason;
  };
  for (const Declined& d : {Declined{"antialias", "", "antialias"},
                            Declined{"keep_aspect_ratio_policy", "not_larger", "keep_aspect_ratio_policy"}}) {
    testing::ModelBuilder m(18);
    m.input("x", kFloat, {1, 2, 5, 7});
    m.int64_initializer("sizes", {4}, {1, 2, 9, 4});
    auto& n = m.node("Resize", {"x", "", "", "sizes"}, {"y"});
    testing::add_string_attr(n, "mode", "linear");
    if (d.value.empty()) testing::add_int_attr(n, d.attr, 1);
    else testing::add_string_attr(n, d.attr, d.value);
    m.output("y", kFloat, {});
    auto s = make_session(env, m.bytes());
    ASSERT_TRUE(s) << d.attr;
    for (const auto& p : s->placement().nodes) {
      EXPECT_EQ(p.provider, "reference") << d.attr;
      EXPECT_NE(p.reason.find(d.reason), std::string::npos) << p.reason;
    }
  }
}

}  // namespace
}  // namespace loom
