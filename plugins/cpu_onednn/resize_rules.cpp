#include "resize_rules.h"

#include <cmath>

namespace loom::onednn {
namespace {

// The constant input `i` (scales or sizes) when given, in *values; empty when
// the input is omitted or an empty tensor. An input computed when the model
// runs sets *at_run_time instead (its values are checked when a program is
// built for them): it must be 1-D of `dtype`, with 4 entries where known.
std::string parameter_input(const NodeSpec& n, size_t i, const char* what, int32_t dtype, std::vector<double>* values,
                            bool* at_run_time) {
  values->clear();
  *at_run_time = false;
  if (!n.has_input(i)) return {};
  if (i >= n.input_is_constant.size() || !n.input_is_constant[i]) {
    if (i >= n.input_dtypes.size() || n.input_dtypes[i] != dtype)
      return std::string(what) + " computed at run time must be " + (dtype == LOOM_DTYPE_INT64 ? "int64" : "float32");
    const auto& shape = i < n.input_shapes.size() ? n.input_shapes[i] : std::nullopt;
    if (shape && (shape->size() != 1 || ((*shape)[0] >= 0 && (*shape)[0] != 4 && (*shape)[0] != 0)))
      return std::string(what) + " must have 4 entries";
    // An empty runtime tensor would mean "not given": only known ones count.
    *at_run_time = !shape || (*shape)[0] != 0;
    return {};
  }
  auto it = n.small_constants.find(i);
  if (it == n.small_constants.end()) return std::string(what) + " must be a small numeric constant";
  *values = it->second;
  return {};
}

}  // namespace

bool resize_is_linear(const NodeSpec& n) { return n.attr_string("mode", "nearest") == "linear"; }

std::vector<size_t> resize_parameter_inputs(const NodeSpec& n) {
  return n.op_type == "Upsample" ? std::vector<size_t>{1} : std::vector<size_t>{2, 3};
}

std::string resize_mismatch(const NodeSpec& n, const std::vector<int64_t>& in, std::vector<int64_t>* out) {
  const bool upsample = n.op_type == "Upsample";
  if (upsample && n.opset != 9) return "only Upsample opset 9 is compiled";
  // Resize-11 and -13 serve models of opsets 11 to 17; -18 and -19 add
  // attributes that change nothing at their defaults (-19's new
  // half_pixel_symmetric mode is declined below with the other modes).
  if (!upsample && n.opset < 11) return "Resize-10 (opset 10) is not compiled: its scales map differently";
  if (!upsample && n.attr_int("antialias", 0) != 0) return "antialias is not compiled";
  if (!upsample && n.has_attr("axes")) return "axes is not compiled";
  if (!upsample && n.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch")
    return "keep_aspect_ratio_policy other than stretch is not compiled";
  if (in.size() != 4) return "only 4-D (NCHW) inputs are compiled";

  const std::string mode = n.attr_string("mode", "nearest");
  // Upsample-9 is Resize with asymmetric coordinates and floor rounding.
  const std::string ctm = upsample ? "asymmetric" : n.attr_string("coordinate_transformation_mode", "half_pixel");
  const std::string nearest = upsample ? "floor" : n.attr_string("nearest_mode", "round_prefer_floor");
  const bool linear = mode == "linear";
  if (mode == "nearest") {
    if (ctm != "asymmetric" || nearest != "floor")
      return "nearest with " + ctm + " / " + nearest +
             ": oneDNN rounds the half-pixel source coordinate half away from zero; only asymmetric + floor "
             "matches ONNX";
  } else if (linear) {
    if (ctm != "half_pixel" && ctm != "pytorch_half_pixel")
      return "linear with " + ctm + " coordinates: oneDNN's linear uses half-pixel centres";
  } else {
    return "mode '" + mode + "' has no oneDNN resampling";
  }

  std::vector<double> scales, sizes;
  bool scales_later = false, sizes_later = false;
  const std::vector<size_t> params = resize_parameter_inputs(n);  // scales[, sizes]
  if (auto e = parameter_input(n, params[0], "scales", LOOM_DTYPE_FLOAT, &scales, &scales_later); !e.empty())
    return e;
  if (params.size() > 1)
    if (auto e = parameter_input(n, params[1], "sizes", LOOM_DTYPE_INT64, &sizes, &sizes_later); !e.empty()) return e;
  if (scales_later || sizes_later) {
    // Known when a program is built for a run: until then N and C keep their
    // sizes and H, W are unknown.
    if ((scales_later || !scales.empty()) && (sizes_later || !sizes.empty())) return "both scales and sizes given";
    out->assign(4, -1);
    (*out)[0] = in[0];
    (*out)[1] = in[1];
    return {};
  }
  const bool use_scales = !scales.empty();
  if (use_scales && !sizes.empty()) return "both scales and sizes given";
  if (!use_scales && sizes.empty()) return "neither scales nor sizes given";
  const std::vector<double>& v = use_scales ? scales : sizes;
  if (v.size() != 4) return std::string(use_scales ? "scales" : "sizes") + " must have 4 entries";

  out->assign(4, -1);
  for (size_t d = 0; d < 4; ++d) {
    if (in[d] == 0) return "empty input";
    if (d < 2) {  // oneDNN resamples H and W only
      if (use_scales ? v[d] != 1.0 : (in[d] < 0 || v[d] != static_cast<double>(in[d])))
        return "N and C must keep their (known) sizes: oneDNN resamples H and W only";
      (*out)[d] = in[d];
      continue;
    }
    if (use_scales) {
      const double s = v[d];
      if (!(s > 0) || !std::isfinite(s)) return "scales must be positive and finite";
      const bool whole = s == std::floor(s);
      if (!whole && !linear)
        return "nearest with a non-integer scale: oneDNN's rounded half-pixel index differs from floor(o / scale)";
      if (in[d] >= 0) {
        const double len = std::floor(s * static_cast<double>(in[d]));
        // ONNX maps through `scale` itself, oneDNN through out / in: equal only when scale * in is whole.
        if (len != s * static_cast<double>(in[d])) return "scale x input size is not whole: ONNX and oneDNN ratios differ";
        if (len < 1) return "output size below 1";
        (*out)[d] = static_cast<int64_t>(len);
      } else if (!whole) {
        return "non-integer scale on an unknown input size: scale x size may not be whole";
      }
      // pytorch_half_pixel maps a length-1 output to source 0, oneDNN to the centre.
      if (ctm == "pytorch_half_pixel" && ((*out)[d] == 1 || ((*out)[d] < 0 && s < 2)))
        return "pytorch_half_pixel with an output size that may be 1";
    } else {
      const double sz = v[d];
      if (!(sz >= 1)) return "sizes must be positive";
      if (!linear) {
        if (in[d] < 0) return "nearest with sizes needs a known input size";
        if (std::fmod(sz, static_cast<double>(in[d])) != 0)
          return "nearest with a non-integer size ratio: oneDNN's rounded half-pixel index differs from floor";
      }
      if (ctm == "pytorch_half_pixel" && sz == 1) return "pytorch_half_pixel with an output size of 1";
      (*out)[d] = static_cast<int64_t>(sz);
    }
  }
  return {};
}

}  // namespace loom::onednn
