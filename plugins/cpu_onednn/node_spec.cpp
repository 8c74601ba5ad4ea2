#include "node_spec.h"

#include <algorithm>

namespace loom::onednn {
namespace {

// Every attribute an op handled here reads. The SDK cannot enumerate a
// node's attributes, so the snapshot asks for these by name.
const char* const kAttributeNames[] = {
    "alpha", "beta", "gamma", "axis", "axes", "epsilon", "momentum", "training_mode", "spatial",
    "group", "dilations", "pads", "strides", "kernel_shape", "auto_pad", "output_padding",
    "output_shape", "ceil_mode", "count_include_pad", "storage_order", "p", "transA", "transB",
    "perm", "allowzero", "min", "max", "stash_type", "keepdims", "is_test", "consumed_inputs",
    "broadcast", "legacy_cuda_hack", "mode", "coordinate_transformation_mode", "nearest_mode",
    "cubic_coeff_a", "exclude_outside", "extrapolation_value", "antialias", "keep_aspect_ratio_policy",
    // Pad before opset 11 (opset 1 names the pads "paddings")
    "value", "paddings",
    // reductions (opset 18), Cast, Slice-1, Split
    "noop_with_empty_axes", "to", "starts", "ends", "split", "num_outputs",
    // LSTM, GRU ("activations" is a list of strings: present, it keeps the node off this EP)
    "hidden_size", "direction", "activations", "clip", "input_forget", "layout", "linear_before_reset",
    // com.microsoft Attention
    "num_heads", "unidirectional", "qkv_hidden_sizes", "mask_filter_value", "scale", "do_rotary",
    "past_present_share_buffer",
    // com.microsoft FusedConv / FusedGemm / FusedMatMul
    "activation", "activation_params", "activation_alpha", "activation_beta", "activation_gamma", "transBatchA",
    "transBatchB"};

constexpr int64_t kSmallConstantLimit = 64;

bool is_integer_dtype(int32_t t) {
  switch (t) {
    case LOOM_DTYPE_INT8: case LOOM_DTYPE_UINT8: case LOOM_DTYPE_INT16: case LOOM_DTYPE_UINT16:
    case LOOM_DTYPE_INT32: case LOOM_DTYPE_UINT32: case LOOM_DTYPE_INT64: case LOOM_DTYPE_UINT64:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::optional<std::vector<double>> numbers_of(const sdk::ConstTensor& t) {
  std::vector<double> values;
  if (t.dtype() == LOOM_DTYPE_FLOAT) {
    const float* p = t.data<float>();
    values.assign(p, p + t.size());
  } else if (t.dtype() == LOOM_DTYPE_DOUBLE) {
    const double* p = t.data<double>();
    values.assign(p, p + t.size());
  } else {
    try {
      for (int64_t v : t.to_int64_vector()) values.push_back(static_cast<double>(v));
    } catch (const sdk::Error&) {
      return std::nullopt;  // strings and other kinds: not a number this EP reads
    }
  }
  return values;
}

NodeSpec NodeSpec::from(const sdk::Node& node) {
  NodeSpec s;
  s.op_type = std::string(node.op_type());
  s.domain = std::string(node.domain());
  s.name = std::string(node.name());
  s.opset = node.opset();
  for (size_t i = 0; i < node.input_count(); ++i) {
    s.inputs.emplace_back(node.input_name(i));
    const bool present = !s.inputs.back().empty();
    s.input_dtypes.push_back(present ? node.input_dtype(i) : LOOM_DTYPE_UNDEFINED);
    s.input_shapes.push_back(present ? node.input_shape(i) : std::nullopt);
    sdk::ConstTensor c = present ? node.input_constant(i) : sdk::ConstTensor();
    s.input_is_constant.push_back(c.exists());
    if (!c.exists()) continue;
    s.constant_shapes[i] = c.shape();
    if (is_integer_dtype(c.dtype())) {
      const auto* bytes = static_cast<const unsigned char*>(c.raw_data());
      const size_t n = static_cast<size_t>(c.size()) * sdk::dtype_size(c.dtype());
      if (std::all_of(bytes, bytes + n, [](unsigned char v) { return v == 0; })) s.zero_constants.insert(i);
    }
    if (c.size() > kSmallConstantLimit) continue;
    if (auto values = numbers_of(c)) s.small_constants[i] = std::move(*values);
  }
  for (size_t i = 0; i < node.output_count(); ++i) {
    s.outputs.emplace_back(node.output_name(i));
    s.output_dtypes.push_back(s.outputs.back().empty() ? LOOM_DTYPE_UNDEFINED : node.output_dtype(i));
  }
  for (const char* key : kAttributeNames) {
    switch (node.attr_type(key)) {
      case LOOM_ATTR_UNDEFINED: break;
      case LOOM_ATTR_INT: s.ints[key] = *node.find_int(key); break;
      case LOOM_ATTR_FLOAT: s.floats[key] = *node.find_float(key); break;
      case LOOM_ATTR_STRING: s.strings[key] = *node.find_string(key); break;
      case LOOM_ATTR_INTS: s.int_lists[key] = *node.find_ints(key); break;
      case LOOM_ATTR_FLOATS: s.float_lists[key] = *node.find_floats(key); break;
      default: s.other_attrs.emplace_back(key); break;
    }
  }
  return s;
}

}  // namespace loom::onednn
