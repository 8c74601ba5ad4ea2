// The data-movement ops on the CUDA EP, part one: copies that only change
// the shape (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout at
// inference), Shape and Size (written on the host from the dims), Transpose,
// DepthToSpace / SpaceToDepth. The shape copies are one cudaMemcpyAsync
// each and may alias their input (the planner decides; an aliased copy is
// skipped). register_movement_kernels registers the whole family: the rest
// is in movement_layout_kernels.cpp (Concat, Split, Expand, Tile),
// slicing_kernels.cpp and resize_kernels.cpp.
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/families.h"
#include "kernels/movement_common.h"

namespace loom::cuda {
namespace {

constexpr int kOpen = LOOM_OPSET_OPEN_END;

// --- shape-only copies ---

class ReshapeKernel {
 public:
  ReshapeKernel(const sdk::Node& node, const EpContext&) : allowzero_(node.attr_int("allowzero", 0) != 0) {}
  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor x = ctx.required_input(0);
    const std::vector<int64_t> in = x.shape();
    std::vector<int64_t> req = required_host_ints(ctx, 1, "Reshape", "shape");
    int64_t infer = -1, known = 1;
    for (size_t i = 0; i < req.size(); ++i) {
      if (req[i] == 0 && !allowzero_) {
        if (i >= in.size())
          fail_op("Reshape", "shape " + shape_text(req) + " has 0 beyond the input rank " + std::to_string(in.size()));
        req[i] = in[i];
      }
      if (req[i] == -1) {
        if (infer >= 0) fail_op("Reshape", "more than one -1 in shape " + shape_text(req));
        infer = static_cast<int64_t>(i);
      } else if (req[i] < 0) {
        fail_op("Reshape", "invalid dimension " + std::to_string(req[i]));
      } else {
        known = sdk::checked_mul(known, req[i], "cuda Reshape shape");
      }
    }
    if (infer >= 0) {
      if (known == 0 || x.size() % known != 0)
        fail_op("Reshape", "cannot infer -1 reshaping " + shape_text(in) + " to " + shape_text(req));
      req[static_cast<size_t>(infer)] = x.size() / known;
    }
    copy_as(ctx, req, "Reshape");
  }

 private:
  bool allowzero_;
};

class FlattenKernel {
 public:
  FlattenKernel(const sdk::Node& node, const EpContext&) : axis_(node.attr_int("axis", 1)) {}
  void compute(sdk::KernelContext& ctx) const {
    const std::vector<int64_t> in = ctx.required_input(0).shape();
    const int64_t rank = static_cast<int64_t>(in.size());
    if (axis_ < -rank || axis_ > rank)
      fail_op("Flatten", "axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(rank));
    const size_t a = static_cast<size_t>(axis_ < 0 ? axis_ + rank : axis_);
    copy_as(ctx, {product(in, 0, a, "cuda Flatten"), product(in, a, in.size(), "cuda Flatten")}, "Flatten");
  }

 private:
  int64_t axis_;
};

// Squeeze / Unsqueeze axes: the attribute before opset 13, input 1 (on the
// host) from 13; nullopt when absent.
std::optional<std::vector<int64_t>> axes_operand(const sdk::KernelContext& ctx, bool from_input,
                                                 const std::optional<std::vector<int64_t>>& attr,
                                                 const std::string& op) {
  if (!from_input) return attr;
  if (!ctx.input(1).exists()) return std::nullopt;
  return required_host_ints(ctx, 1, op, "axes");
}

class SqueezeKernel {
 public:
  SqueezeKernel(const sdk::Node& node, const EpContext&)
      : from_input_(node.opset() >= 13), axes_(node.find_ints("axes")) {}
  void compute(sdk::KernelContext& ctx) const {
    const std::vector<int64_t> in = ctx.required_input(0).shape();
    const int64_t rank = static_cast<int64_t>(in.size());
    std::vector<bool> drop(in.size(), false);
    const auto axes = axes_operand(ctx, from_input_, axes_, "Squeeze");
    if (!axes || axes->empty()) {
      for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
    } else {
      for (int64_t a : *axes) {
        const size_t ax = static_cast<size_t>(normalize_axis(a, rank, "Squeeze"));
        if (in[ax] != 1) fail_op("Squeeze", "dimension " + std::to_string(ax) + " of " + shape_text(in) + " is not 1");
        drop[ax] = true;
      }
    }
    std::vector<int64_t> out;
    for (size_t i = 0; i < in.size(); ++i)
      if (!drop[i]) out.push_back(in[i]);
    copy_as(ctx, out, "Squeeze");
  }

 private:
  bool from_input_;
  std::optional<std::vector<int64_t>> axes_;
};

class UnsqueezeKernel {
 public:
  UnsqueezeKernel(const sdk::Node& node, const EpContext&)
      : from_input_(node.opset() >= 13), axes_(node.find_ints("axes")) {}
  void compute(sdk::KernelContext& ctx) const {
    const std::vector<int64_t> in = ctx.required_input(0).shape();
    const auto axes = axes_operand(ctx, from_input_, axes_, "Unsqueeze");
    if (!axes) fail_op("Unsqueeze", "axes are required");
    const int64_t out_rank = static_cast<int64_t>(in.size() + axes->size());
    std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
    for (int64_t a : *axes) {
      const size_t ax = static_cast<size_t>(normalize_axis(a, out_rank, "Unsqueeze"));
      if (inserted[ax]) fail_op("Unsqueeze", "axis " + std::to_string(a) + " repeated");
      inserted[ax] = true;
    }
    std::vector<int64_t> out;
    size_t k = 0;
    for (size_t i = 0; i < inserted.size(); ++i) out.push_back(inserted[i] ? 1 : in[k++]);
    copy_as(ctx, out, "Unsqueeze");
  }

 private:
  bool from_input_;
  std::optional<std::vector<int64_t>> axes_;
};

// Identity of a tensor; sequences and optionals (opset 14 / 16 types) are
// not device values: the kernel fails on them (the claim cannot tell them
// apart from tensors of the same element type).
class IdentityKernel {
 public:
  IdentityKernel(const sdk::Node&, const EpContext&) {}
  void compute(sdk::KernelContext& ctx) const {
    if (!ctx.input(0).exists())
      throw sdk::Error("cuda Identity: input 0 is not a tensor (sequences and optionals are not supported)",
                       LOOM_STATUS_NOT_IMPLEMENTED);
    copy_as(ctx, ctx.input(0).shape(), "Identity");
  }
};

// Dropout at inference: y = x, the optional mask all true (bool from
// opset 10, the input's type before). Training mode (opset 12's
// training_mode input true with a non-zero ratio) is not supported.
class DropoutKernel {
 public:
  DropoutKernel(const sdk::Node& node, const EpContext&)
      : opset_(node.opset()), ratio_(node.attr_float("ratio", 0.5f)),
        want_mask_(node.output_count() > 1 && !node.output_name(1).empty()) {}
  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor x = ctx.required_input(0);
    float ratio = ratio_;
    bool training = false;
    if (opset_ >= 12) {
      ratio = static_cast<float>(host_scalar(ctx, 1, 0.5));
      const std::vector<int64_t> t = host_int64s(ctx, 2);
      training = !t.empty() && t[0] != 0;
    }
    if (ratio < 0.f || ratio > 1.f) fail_op("Dropout", "ratio must be in [0, 1]");
    if (training && ratio != 0.f)
      throw sdk::Error("cuda Dropout: training mode is not supported", LOOM_STATUS_NOT_IMPLEMENTED);
    copy_as(ctx, x.shape(), "Dropout");
    if (!want_mask_) return;
    const int32_t mask_type = opset_ >= 10 ? LOOM_DTYPE_BOOL : x.dtype();
    sdk::Tensor mask = ctx.output(1, x.shape(), mask_type);
    check_movement(launch_fill(element_bytes(mask_type), value_pattern(1.f, mask_type), mask.raw_mutable_data(),
                               mask.size(), stream_of(ctx)),
                   "Dropout", mask_type);
  }

 private:
  int64_t opset_;
  float ratio_;
  bool want_mask_;
};

// Only inference: training_mode absent or a constant false (a graph input
// could turn training on at run time, which only the reference EP does).
std::string dropout_supported(const sdk::Node& node) {
  if (node.input_count() > 2 && !node.input_name(2).empty()) {
    sdk::ConstTensor t = node.input_constant(2);
    if (!t.exists()) return "training_mode is not a constant (training mode may be asked for at run time)";
    if (t.size() > 0 && t.to_int64_vector()[0] != 0) return "training mode (training_mode is true)";
  }
  return {};
}

// Identity from opset 14 also takes sequences and optionals, which the
// node view does not tell apart from tensors: only inputs of known rank
// (tensors) are claimed.
std::string identity_supported(const sdk::Node& node) {
  if (!node.input_shape(0)) return "input of unknown rank (it may be a sequence or an optional, which stay on the host)";
  return {};
}

// --- Shape, Size: host outputs from the dims ---

class ShapeKernel {
 public:
  ShapeKernel(const sdk::Node& node, const EpContext&) : start_(node.find_int("start")), end_(node.find_int("end")) {}
  void compute(sdk::KernelContext& ctx) const {
    const std::vector<int64_t> in = ctx.required_input(0).shape();
    const int64_t rank = static_cast<int64_t>(in.size());
    auto clamp_axis = [rank](int64_t a) {
      if (a < 0) a += rank;
      return std::clamp<int64_t>(a, 0, rank);
    };
    const int64_t start = start_ ? clamp_axis(*start_) : 0;
    const int64_t end = end_ ? clamp_axis(*end_) : rank;
    const int64_t n = std::max<int64_t>(end - start, 0);
    sdk::Tensor y = ctx.output(0, {n}, LOOM_DTYPE_INT64);
    int64_t* p = static_cast<int64_t*>(y.raw_mutable_data());
    for (int64_t i = 0; i < n; ++i) p[i] = in[static_cast<size_t>(start + i)];
  }

 private:
  std::optional<int64_t> start_, end_;
};

class SizeKernel {
 public:
  SizeKernel(const sdk::Node&, const EpContext&) {}
  void compute(sdk::KernelContext& ctx) const {
    const int64_t n = ctx.required_input(0).size();
    sdk::Tensor y = ctx.output(0, {}, LOOM_DTYPE_INT64);
    *static_cast<int64_t*>(y.raw_mutable_data()) = n;
  }
};

// --- Transpose, DepthToSpace, SpaceToDepth: permuted copies ---

// y = x viewed with `view` dims, permuted by `perm`.
void permuted_copy(const sdk::KernelContext& ctx, const sdk::ConstTensor& x, const sdk::Tensor& y,
                   const std::vector<int64_t>& view, const std::vector<int64_t>& perm, const std::string& op) {
  if (y.size() == 0) return;
  StridedMap map;
  try {
    map = compact_map(permute_map(view, perm));
  } catch (const std::invalid_argument& e) {
    throw sdk::Error("cuda " + op + ": " + e.what(), LOOM_STATUS_NOT_IMPLEMENTED);
  }
  check_movement(launch_strided_copy(element_bytes(x.dtype()), x.raw_data(), map, y.raw_mutable_data(), y.size(),
                                     stream_of(ctx)),
                 op, x.dtype());
}

class TransposeKernel {
 public:
  TransposeKernel(const sdk::Node& node, const EpContext&) : perm_(node.attr_ints("perm")) {}
  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor x = ctx.required_input(0);
    const std::vector<int64_t> in = x.shape();
    const int64_t rank = static_cast<int64_t>(in.size());
    std::vector<int64_t> perm = perm_;
    if (perm.empty())
      for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
    if (static_cast<int64_t>(perm.size()) != rank)
      fail_op("Transpose", "perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(rank));
    std::vector<bool> seen(in.size(), false);
    std::vector<int64_t> out(in.size());
    for (size_t i = 0; i < perm.size(); ++i) {
      perm[i] = normalize_axis(perm[i], rank, "Transpose");
      if (seen[static_cast<size_t>(perm[i])]) fail_op("Transpose", "perm is not a permutation");
      seen[static_cast<size_t>(perm[i])] = true;
      out[i] = in[static_cast<size_t>(perm[i])];
    }
    sdk::Tensor y = ctx.output(0, out, x.dtype());
    permuted_copy(ctx, x, y, in, perm, "Transpose");
  }

 private:
  std::vector<int64_t> perm_;
};

// DepthToSpace (DCR / CRD) and SpaceToDepth on NCHW: 6-d permutations.
class BlockKernel {
 public:
  BlockKernel(const sdk::Node& node, const EpContext&)
      : to_space_(node.op_type() == "DepthToSpace"), crd_(node.attr_string("mode", "DCR") == "CRD"),
        block_(node.required_int("blocksize")) {}
  void compute(sdk::KernelContext& ctx) const {
    const std::string op = to_space_ ? "DepthToSpace" : "SpaceToDepth";
    sdk::ConstTensor x = ctx.required_input(0);
    const std::vector<int64_t> in = x.shape();
    if (in.size() != 4) fail_op(op, "input must be 4-D, got " + shape_text(in));
    const int64_t b = block_;
    if (b <= 0) fail_op(op, "blocksize must be positive");
    const int64_t bb = sdk::checked_mul(b, b, "cuda " + op + " blocksize");
    const int64_t n = in[0];
    if (to_space_) {
      if (b > in[1] || in[1] % bb != 0)
        fail_op(op, "channels " + std::to_string(in[1]) + " are not divisible by blocksize^2");
      const int64_t c = in[1] / bb, h = in[2], w = in[3];
      sdk::Tensor y = ctx.output(
          0, {n, c, sdk::checked_mul(h, b, "cuda " + op), sdk::checked_mul(w, b, "cuda " + op)}, x.dtype());
      if (crd_) permuted_copy(ctx, x, y, {n, c, b, b, h, w}, {0, 1, 4, 2, 5, 3}, op);
      else permuted_copy(ctx, x, y, {n, b, b, c, h, w}, {0, 3, 4, 1, 5, 2}, op);
      return;
    }
    if (in[2] % b != 0 || in[3] % b != 0)
      fail_op(op, "spatial dims of " + shape_text(in) + " are not divisible by blocksize");
    const int64_t c = in[1], h = in[2] / b, w = in[3] / b;
    sdk::Tensor y = ctx.output(0, {n, sdk::checked_mul(c, bb, "cuda " + op), h, w}, x.dtype());
    permuted_copy(ctx, x, y, {n, c, h, b, w, b}, {0, 3, 5, 1, 2, 4}, op);
  }

 private:
  bool to_space_, crd_;
  int64_t block_;
};

std::string block_supported(const sdk::Node& node) {
  const std::string mode = node.attr_string("mode", "DCR");
  if (node.op_type() == "DepthToSpace" && mode != "DCR" && mode != "CRD") return "unknown mode '" + mode + "'";
  if (!node.find_int("blocksize")) return "no blocksize";
  return {};
}

}  // namespace

void register_movement_kernels(KernelTable& t) {
  const std::vector<int32_t>& all = kAllFixedTypes;
  t.add<ReshapeKernel>("", "Reshape", 5, kOpen, {{"T", all}}).input_on_host(1).output_may_reuse_input(0, 0);
  t.add<FlattenKernel>("", "Flatten", 1, kOpen, {{"T", all}}).output_may_reuse_input(0, 0);
  t.add<SqueezeKernel>("", "Squeeze", 1, 12, {{"T", all}}).output_may_reuse_input(0, 0);
  t.add<SqueezeKernel>("", "Squeeze", 13, kOpen, {{"T", all}}).input_on_host(1).output_may_reuse_input(0, 0);
  t.add<UnsqueezeKernel>("", "Unsqueeze", 1, 12, {{"T", all}}).output_may_reuse_input(0, 0);
  t.add<UnsqueezeKernel>("", "Unsqueeze", 13, kOpen, {{"T", all}}).input_on_host(1).output_may_reuse_input(0, 0);
  t.add<IdentityKernel>("", "Identity", 1, 13, {{"T", all}}).output_may_reuse_input(0, 0);
  t.add<IdentityKernel>("", "Identity", 14, kOpen, {{"V", all}}, identity_supported).output_may_reuse_input(0, 0);
  t.add<DropoutKernel>("", "Dropout", 1, 11, {{"T", all}}).output_may_reuse_input(0, 0);
  t.add<DropoutKernel>("", "Dropout", 12, kOpen, {{"T", all}}, dropout_supported)
      .input_on_host(1)
      .input_on_host(2)
      .output_may_reuse_input(0, 0);

  t.add<ShapeKernel>("", "Shape", 1, kOpen, {{"T", all}}).output_on_host(0);
  t.add<SizeKernel>("", "Size", 1, kOpen, {{"T", all}}).output_on_host(0);

  t.add<TransposeKernel>("", "Transpose", 1, kOpen, {{"T", all}}, rank_fits);
  t.add<BlockKernel>("", "DepthToSpace", 1, kOpen, {{"T", all}}, block_supported);
  t.add<BlockKernel>("", "SpaceToDepth", 1, kOpen, {{"T", all}}, block_supported);

  register_layout_kernels(t);
  register_slicing_kernels(t);
  register_resize_kernels(t);
}

}  // namespace loom::cuda
