#include "ops/quant_params.h"

namespace loom::onednn {

std::optional<ScalarQuantParams> scalar_quant_params(const NodeSpec& q) {
  auto s = q.small_constants.find(1);
  if (s == q.small_constants.end() || s->second.size() != 1 || !(s->second[0] > 0)) return std::nullopt;
  if (!q.has_input(2)) return ScalarQuantParams{static_cast<float>(s->second[0]), 0};
  auto z = q.small_constants.find(2);
  if (z == q.small_constants.end() || z->second.size() != 1) return std::nullopt;
  return ScalarQuantParams{static_cast<float>(s->second[0]), static_cast<int32_t>(z->second[0])};
}

float scalar_scale(const NodeSpec& n, size_t i) {
  auto it = n.small_constants.find(i);
  if (it == n.small_constants.end() || it->second.size() != 1) n.fail("scale " + std::to_string(i) + " must be a scalar constant");
  return static_cast<float>(it->second[0]);
}

int32_t scalar_zero_point(const NodeSpec& n, size_t i) {
  if (!n.has_input(i)) return 0;
  auto it = n.small_constants.find(i);
  if (it == n.small_constants.end() || it->second.size() != 1)
    n.fail("zero point " + std::to_string(i) + " must be a scalar constant");
  return static_cast<int32_t>(it->second[0]);
}

int32_t common_zero_point(const NodeSpec& n, size_t i) {
  if (!n.has_input(i) || n.zero_constants.count(i)) return 0;
  auto it = n.small_constants.find(i);
  if (it == n.small_constants.end() || it->second.empty()) n.fail("zero point " + std::to_string(i) + " must be a constant");
  for (double v : it->second)
    if (v != it->second.front()) n.fail("zero points along the axis must be equal");
  return static_cast<int32_t>(it->second.front());
}

std::vector<float> constant_scales(ProgramBuilder& b, const NodeSpec& n, size_t i) {
  if (auto it = n.small_constants.find(i); it != n.small_constants.end())
    return std::vector<float>(it->second.begin(), it->second.end());
  const ValueId v = b.value_of(n.inputs[i]);
  if (!b.is_constant(v)) n.fail("scale " + std::to_string(i) + " must be a constant");
  return b.constant_data(v);
}

std::vector<float> requantize_scales(float in_scale, const std::vector<float>& w_scales, float out_scale) {
  std::vector<float> s;
  s.reserve(w_scales.size());
  for (float w : w_scales) s.push_back(in_scale * w / out_scale);
  return s;
}

void request_zero_point(dnnl::primitive_attr& attr, int arg, int32_t zero_point) {
  if (zero_point != 0) attr.set_zero_points(arg, 0, {DNNL_RUNTIME_S32_VAL});
}

RunTimeZeroPoint run_time_zero_point(ProgramBuilder& b, const NodeSpec& n, size_t i, const std::string& what) {
  using dnnl::memory;
  RunTimeZeroPoint z;
  z.source = b.plain(b.value_of(n.inputs[i]));
  const memory::data_type t = b.desc(z.source).data_type();
  if (element_count(b.dims(z.source)) != 1 || (t != memory::data_type::u8 && t != memory::data_type::s8))
    n.fail(what + " must be one uint8 or int8 value");
  z.is_signed = t == memory::data_type::s8;
  z.s32 = b.new_value(memory::desc({1}, memory::data_type::s32, memory::format_tag::a), {1});
  return z;
}

void bind_zero_point(ProgramBuilder& b, std::vector<std::pair<int, ValueId>>& args, int arg, int32_t zero_point) {
  if (zero_point == 0) return;
  const dnnl::memory::desc d({1}, dnnl::memory::data_type::s32, dnnl::memory::format_tag::a);
  args.emplace_back(DNNL_ARG_ATTR_ZERO_POINTS | arg, b.new_constant(&zero_point, d, {1}));
}

}  // namespace loom::onednn
