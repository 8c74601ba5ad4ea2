// Ops over regions and index tuples: RoiAlign, MaxRoiPool,
// NonMaxSuppression, GatherND, GridSample, CenterCropPad, and the losses
// (SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss).
#include <cstdint>

#include "opreg/infer/shape_rules.h"

namespace loom::opreg {
namespace {

using C = ShapeContext;

// RoiAlign (X, rois, batch_indices): [num_rois, C, output_height, output_width].
void roi_align(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  auto rois = c.shape(C::input(n, 1));
  if (!x || !rois || x->size() != 4 || rois->size() != 2) return;
  const int64_t h = attr_int(n, "output_height", 1), w = attr_int(n, "output_width", 1);
  if (h < 0 || w < 0) return;
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), {(*rois)[0], (*x)[1], known_dim(h), known_dim(w)});
}

// MaxRoiPool (X, rois): [num_rois, C, pooled_shape...].
void max_roi_pool(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  auto rois = c.shape(C::input(n, 1));
  const std::vector<int64_t> pooled = attr_ints(n, "pooled_shape");
  if (!x || !rois || x->size() != 4 || rois->size() != 2 || pooled.size() != 2 || pooled[0] < 0 || pooled[1] < 0)
    return;
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), {(*rois)[0], (*x)[1], known_dim(pooled[0]), known_dim(pooled[1])});
}

// NonMaxSuppression: [selected, 3] int64, the count known only at run time.
void non_max_suppression(const ir::Node& n, C& c) { c.set(n.outputs[0], DType::kInt64, {unknown_dim(), known_dim(3)}); }

// GatherND (data, indices, batch_dims b): indices' dims but the last, then
// the data dims past b + indices' last dim.
void gather_nd(const ir::Node& n, C& c) {
  auto data = c.shape(C::input(n, 0));
  auto idx = c.shape(C::input(n, 1));
  const int64_t b = attr_int(n, "batch_dims", 0);
  if (!data || !idx || idx->empty() || b < 0) return;
  const int64_t last = idx->back().value;
  if (last < 0 || static_cast<uint64_t>(b) + static_cast<uint64_t>(last) > data->size()) return;
  Shape s(idx->begin(), idx->end() - 1);
  s.insert(s.end(), data->begin() + b + last, data->end());
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), s);
}

// GridSample (X [N, C, D...], grid [N, D_out..., r]): [N, C, D_out...].
void grid_sample(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  auto grid = c.shape(C::input(n, 1));
  if (!x || !grid || x->size() < 3 || grid->size() != x->size()) return;
  Shape s = {(*x)[0], (*x)[1]};
  s.insert(s.end(), grid->begin() + 1, grid->end() - 1);
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), s);
}

// CenterCropPad (input, shape [, axes attribute]): the given sizes on the
// given axes (all axes without the attribute).
void center_crop_pad(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  auto sizes = c.const_ints(C::input(n, 1));
  if (!x || !sizes) return;
  std::vector<int64_t> axes = attr_ints(n, "axes");
  if (axes.empty())
    for (size_t i = 0; i < x->size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (axes.size() != sizes->size()) return;
  Shape s = *x;
  for (size_t k = 0; k < axes.size(); ++k) {
    auto a = normalize_axis(axes[k], x->size());
    if (!a || (*sizes)[k] < 0) return;
    s[*a] = known_dim((*sizes)[k]);
  }
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), s);
}

// SoftmaxCrossEntropyLoss / NegativeLogLikelihoodLoss (scores [N, C, D...],
// labels [N, D...]): a scalar unless reduction is "none" ([N, D...]);
// SoftmaxCrossEntropyLoss's log_prob output is like the scores.
void loss(const ir::Node& n, C& c) {
  auto scores = c.shape(C::input(n, 0));
  const ir::Attribute* r = n.find_attribute("reduction");
  const bool none = r != nullptr && r->s == "none";
  const DType dtype = c.dtype_of(C::input(n, 0));
  if (!none) {
    c.set(n.outputs[0], dtype, {});
  } else if (scores && scores->size() >= 2) {
    Shape s = {(*scores)[0]};
    s.insert(s.end(), scores->begin() + 2, scores->end());
    c.set(n.outputs[0], dtype, s);
  }
  if (n.outputs.size() > 1 && scores) c.set(n.outputs[1], dtype, *scores);
}

}  // namespace

void add_region_shape_rules(ShapeRuleTable& t) {
  t[{"", "RoiAlign"}] = roi_align;
  t[{"", "MaxRoiPool"}] = max_roi_pool;
  t[{"", "NonMaxSuppression"}] = non_max_suppression;
  t[{"", "GatherND"}] = gather_nd;
  t[{"", "GridSample"}] = grid_sample;
  t[{"", "CenterCropPad"}] = center_crop_pad;
  t[{"", "SoftmaxCrossEntropyLoss"}] = loss;
  t[{"", "NegativeLogLikelihoodLoss"}] = loss;
}

}  // namespace loom::opreg
