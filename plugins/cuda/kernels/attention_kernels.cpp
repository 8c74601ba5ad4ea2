// com.microsoft Attention (1) on the CUDA EP: the BERT-style self attention
// the core's attention fusion emits (core/transform/passes/attention_fusion.cpp),
// with the reference EP's semantics (plugins/reference/kernels/
// contrib_attention.cpp): inputs input [B, S, D_in], weights [D_in, D + D +
// D_v], optional bias and int32 mask_index ([B], [2B], [B, S], [B, S, S] or
// a [B or 1, 1] dummy); attributes num_heads, qkv_hidden_sizes,
// unidirectional, scale, mask_filter_value. past / present, attention_bias,
// past_sequence_length, 4-D masks and rotary embeddings are declined.
// float and float16 (the pipeline: kernels/attention_run.cpp).
#include <cmath>
#include <string>
#include <vector>

#include "kernel_table.h"
#include "kernels/attention.h"
#include "kernels/kernel_support.h"

namespace loom::cuda {
namespace {

const std::string kOp = "cuda Attention";

[[noreturn]] void invalid(const std::string& what) {
  throw sdk::Error(kOp + ": " + what, LOOM_STATUS_INVALID_ARGUMENT);
}

std::string dims_string(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

class AttentionKernel {
 public:
  AttentionKernel(const sdk::Node& node, const EpContext& ep)
      : num_heads_(node.required_int("num_heads")), unidirectional_(node.attr_int("unidirectional", 0) != 0),
        qkv_hidden_sizes_(node.attr_ints("qkv_hidden_sizes")),
        mask_filter_value_(node.attr_float("mask_filter_value", -10000.f)), scale_(node.attr_float("scale", 0.f)),
        tf32_(ep.options.use_tf32) {
    if (num_heads_ <= 0) invalid("num_heads must be positive, got " + std::to_string(num_heads_));
  }

  void compute(sdk::KernelContext& ctx) const {
    for (size_t i = 4; i < ctx.input_count(); ++i)
      if (ctx.input(i).exists())
        throw sdk::Error(kOp + ": input " + std::to_string(i) + " (past, attention_bias, ...) is not supported",
                         LOOM_STATUS_NOT_IMPLEMENTED);
    sdk::ConstTensor input = ctx.required_input(0), weights = ctx.required_input(1);
    sdk::ConstTensor bias = ctx.input(2), mask = ctx.input(3);
    AttentionProblem p;
    p.dtype = input.dtype();
    if (p.dtype != LOOM_DTYPE_FLOAT && p.dtype != LOOM_DTYPE_FLOAT16)
      throw sdk::Error(kOp + ": no kernel for " + sdk::dtype_name(p.dtype), LOOM_STATUS_NOT_IMPLEMENTED);
    if (weights.dtype() != p.dtype || (bias.exists() && bias.dtype() != p.dtype))
      invalid("weights and bias must have the input's element type");
    p.dims = dims_of(input, weights, bias);
    p.d_in = input.dim(2);
    p.scale = scale_ == 0.f ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.dims.head))) : scale_;
    p.mask.filter = mask_filter_value_;
    p.mask.unidirectional = unidirectional_;
    p.tf32 = tf32_;
    if (mask.exists()) {
      if (mask.dtype() != LOOM_DTYPE_INT32) invalid("mask_index must be int32, got " + sdk::dtype_name(mask.dtype()));
      std::string why;
      p.mask.kind = attention_mask_kind(mask.shape(), p.dims.batch, p.dims.seq, &why);
      if (!why.empty()) throw sdk::Error(kOp + ": " + why, mask.rank() == 4 ? LOOM_STATUS_NOT_IMPLEMENTED
                                                                              : LOOM_STATUS_INVALID_ARGUMENT);
      if (p.mask.kind != MaskKind::kNone) p.mask.data = static_cast<const int32_t*>(mask.raw_data());
    }
    const AttentionDims& d = p.dims;
    const std::vector<int64_t> out = {d.batch, d.seq, d.dv()};
    const int64_t count = element_count(out, kOp + " output");
    sdk::Tensor y = ctx.output(0, out, p.dtype);
    if (count == 0) return;

    const AttentionScratchBytes bytes = attention_scratch_bytes(p);
    StreamResources& res = stream_resources(ctx);
    AttentionScratch scratch;
    scratch.qkv = res.scratch(bytes.qkv, 0);
    scratch.heads = res.scratch(bytes.heads, 1);
    scratch.scores = static_cast<float*>(res.scratch(bytes.scores, 2));
    if (bytes.probs > 0) scratch.probs = res.scratch(bytes.probs, 3);
    run_attention(res.blas(), res.stream(), p, input.raw_data(), weights.raw_data(),
                  bias.exists() ? bias.raw_data() : nullptr, y.raw_mutable_data(), scratch);
  }

 private:
  // B, S, N, H, Hv from the shapes, checked as the reference EP checks them.
  AttentionDims dims_of(const sdk::ConstTensor& input, const sdk::ConstTensor& weights,
                        const sdk::ConstTensor& bias) const {
    if (input.rank() != 3) invalid("input must be 3-D [batch, sequence, hidden], got " + dims_string(input.shape()));
    const int64_t d_in = input.dim(2);
    if (weights.rank() != 2 || weights.dim(0) != d_in)
      invalid("weights must be 2-D [" + std::to_string(d_in) + ", D + D + D_v], got " + dims_string(weights.shape()));
    const int64_t w = weights.dim(1);
    int64_t dq = w / 3, dk = dq, dv = dq;
    if (!qkv_hidden_sizes_.empty()) {
      if (qkv_hidden_sizes_.size() != 3) invalid("qkv_hidden_sizes must have 3 elements");
      dq = qkv_hidden_sizes_[0];
      dk = qkv_hidden_sizes_[1];
      dv = qkv_hidden_sizes_[2];
      if (dq != dk) invalid("qkv_hidden_sizes Q and K sizes differ");
    } else if (w % 3 != 0) {
      invalid("weights dimension 1 (" + std::to_string(w) + ") is not divisible by 3");
    }
    if (dq <= 0 || dv <= 0 || dq % num_heads_ != 0 || dv % num_heads_ != 0)
      invalid("hidden sizes " + std::to_string(dq) + " / " + std::to_string(dv) +
              " must be positive and divisible by num_heads " + std::to_string(num_heads_));
    if (sdk::checked_add(sdk::checked_mul(2, dq, kOp), dv, kOp) != w)
      invalid("weights dimension 1 (" + std::to_string(w) + ") differs from the sum of the Q/K/V hidden sizes");
    if (bias.exists() && (bias.rank() != 1 || bias.dim(0) != w))
      invalid("bias must be 1-D [" + std::to_string(w) + "], got " + dims_string(bias.shape()));
    AttentionDims d;
    d.batch = input.dim(0);
    d.seq = input.dim(1);
    d.heads = num_heads_;
    d.head = dq / num_heads_;
    d.head_v = dv / num_heads_;
    return d;
  }

  int64_t num_heads_;
  bool unidirectional_;
  std::vector<int64_t> qkv_hidden_sizes_;
  float mask_filter_value_, scale_;
  bool tf32_;
};

bool present(const sdk::Node& node, size_t input) {
  return input < node.input_count() && !node.input_name(input).empty();
}

std::string attention_supported(const sdk::Node& node) {
  for (size_t i = 4; i < node.input_count(); ++i)
    if (present(node, i)) return "input " + std::to_string(i) + " (past, attention_bias, ...) is not supported";
  if (node.output_count() > 1 && !node.output_name(1).empty()) return "the present output is not supported";
  if (node.attr_int("do_rotary", 0) != 0) return "do_rotary is not supported";
  if (node.attr_int("past_present_share_buffer", 0) != 0) return "past_present_share_buffer is not supported";
  if (node.attr_int("num_heads", 0) <= 0) return "num_heads is missing or not positive";
  const int32_t dtype = node.input_dtype(0);
  for (size_t i = 1; i < 3; ++i)
    if (present(node, i) && node.input_dtype(i) != LOOM_DTYPE_UNDEFINED && dtype != LOOM_DTYPE_UNDEFINED &&
        node.input_dtype(i) != dtype)
      return "weights and bias must have the input's element type";
  auto shape = node.input_shape(0);
  if (shape && shape->size() != 3) return "input is not 3-D";
  if (present(node, 3)) {
    const int32_t mt = node.input_dtype(3);
    if (mt != LOOM_DTYPE_UNDEFINED && mt != LOOM_DTYPE_INT32) return "mask_index is not int32";
    auto ms = node.input_shape(3);
    if (ms && (ms->empty() || ms->size() > 3))
      return "mask_index of rank " + std::to_string(ms->size()) + " (1 to 3 are supported)";
  }
  return {};
}

}  // namespace

void register_attention_kernels(KernelTable& t) {
  t.add<AttentionKernel>("com.microsoft", "Attention", 1, LOOM_OPSET_OPEN_END,
                         {{"T", {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16}}}, attention_supported);
}

}  // namespace loom::cuda
