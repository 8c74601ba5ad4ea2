#include "opreg/infer/window_shapes.h"

#include <string>

#include "ir/type_precision.h"
#include "opreg/infer/shape_context.h"

namespace loom::opreg {
namespace {

using ir::anonymous_symbol;

std::string auto_pad(const ir::Node& n) {
  const ir::Attribute* a = n.find_attribute("auto_pad");
  return a ? a->s : "NOTSET";
}

// floor((d + off) / s) + 1 (ceil with `ceil_mode`), for a known d.
std::optional<int64_t> known_out(int64_t d, int64_t off, int64_t s, bool ceil_mode) {
  int64_t num = 0, rounded = 0;
  if (!add(d, off, &num) || num < 0) return std::nullopt;
  if (ceil_mode && !add(num, s - 1, &rounded)) return std::nullopt;
  int64_t out = 0;
  if (!add(ceil_mode ? rounded / s : num / s, 1, &out)) return std::nullopt;
  return out;
}

// The same for a symbol: "x" when the window keeps the size, else a
// canonical expression ("x+2", "(x-1)//2+1", "ceil((x-2)/2)+1").
DimInfo symbolic_out(const std::string& x, int64_t off, int64_t s, bool ceil_mode) {
  if (s == 1) {
    int64_t delta = 0;
    if (!add(off, 1, &delta)) return DimInfo{-1, ""};
    if (delta == 0) return DimInfo{-1, x};
    return DimInfo{-1, "(" + x + (delta > 0 ? "+" : "") + std::to_string(delta) + ")"};
  }
  const std::string num = off == 0 ? x : x + (off > 0 ? "+" : "") + std::to_string(off);
  const std::string sym = ceil_mode ? "ceil((" + num + ")/" + std::to_string(s) + ")+1"
                                    : "(" + num + ")//" + std::to_string(s) + "+1";
  return DimInfo{-1, "(" + sym + ")"};
}

}  // namespace

std::optional<std::vector<DimInfo>> window_output_shape(const ir::Node& n, const std::vector<DimInfo>& x,
                                                        const std::optional<std::vector<DimInfo>>& w) {
  const bool conv = n.op_type == "Conv" || n.op_type == "FusedConv" || n.op_type == "QLinearConv" ||
                    n.op_type == "ConvInteger";
  if (x.size() < 3) return std::nullopt;
  const size_t spatial = x.size() - 2;
  std::vector<int64_t> kernel = attr_ints(n, "kernel_shape");
  if (kernel.empty() && conv && w && w->size() == x.size())
    for (size_t i = 0; i < spatial; ++i) kernel.push_back((*w)[i + 2].value);
  if (kernel.size() != spatial) return std::nullopt;
  std::vector<int64_t> strides = attr_ints(n, "strides"), dilations = attr_ints(n, "dilations"),
                       pads = attr_ints(n, "pads");
  if (strides.empty()) strides.assign(spatial, 1);
  if (dilations.empty()) dilations.assign(spatial, 1);
  if (pads.empty()) pads.assign(2 * spatial, 0);
  if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial) return std::nullopt;
  const std::string pad_mode = auto_pad(n);
  const bool ceil_mode = !conv && n.find_attribute("ceil_mode") && n.find_attribute("ceil_mode")->i != 0;

  std::vector<DimInfo> out;
  out.push_back(x[0]);
  if (conv) {
    if (!w || w->empty() || (*w)[0].value < 0) return std::nullopt;
    out.push_back((*w)[0]);
  } else {
    out.push_back(x[1]);
  }
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t k = kernel[i], s = strides[i], d = dilations[i];
    if (k <= 0 || s <= 0 || d <= 0) return std::nullopt;
    const DimInfo& in = x[i + 2];
    int64_t extent = 0;
    if (!mul(d, k - 1, &extent) || !add(extent, 1, &extent)) return std::nullopt;
    if (pad_mode == "SAME_UPPER" || pad_mode == "SAME_LOWER") {
      // out = ceil(in / s), whatever the kernel.
      int64_t rounded = 0;
      if (in.value >= 0 && !add(in.value, s - 1, &rounded)) return std::nullopt;
      if (in.value >= 0) out.push_back(DimInfo{rounded / s, ""});
      else if (s == 1 && !anonymous_symbol(in.symbol)) out.push_back(in);
      else if (!anonymous_symbol(in.symbol))
        out.push_back(DimInfo{-1, "(ceil(" + in.symbol + "/" + std::to_string(s) + "))"});
      else out.push_back(DimInfo{-1, ""});
      continue;
    }
    if (pad_mode != "NOTSET" && pad_mode != "VALID") return std::nullopt;
    int64_t total_pad = 0, off = 0;
    if (pad_mode != "VALID" && !add(pads[i], pads[i + spatial], &total_pad)) return std::nullopt;
    if (!sub(total_pad, extent, &off)) return std::nullopt;
    if (in.value >= 0) {
      auto v = known_out(in.value, off, s, ceil_mode);
      if (!v) return std::nullopt;
      out.push_back(DimInfo{*v, ""});
    } else if (!anonymous_symbol(in.symbol)) {
      out.push_back(symbolic_out(in.symbol, off, s, ceil_mode));
    } else {
      out.push_back(DimInfo{-1, ""});
    }
  }
  return out;
}

}  // namespace loom::opreg
