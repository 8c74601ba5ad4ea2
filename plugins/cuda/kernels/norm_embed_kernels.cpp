// com.microsoft EmbedLayerNormalization on the CUDA EP. Inputs: input_ids
// [B, S] int32, segment_ids? [B, S], word_embedding [V, H],
// position_embedding [P, H], segment_embedding? [G, H], gamma [H], beta [H],
// mask? [B, S] int32, position_ids? [B, S] or [1, S]. Outputs: output
// [B, S, H], mask_index [B] int32 (count of mask == 1; zeros without a
// mask), embedding_sum? [B, S, H]. Ids are device data, so an id out of
// range cannot fail the run: its row comes out NaN (the reference fails).
#include <string>

#include "kernels/norm.h"
#include "kernels/reduce_family.h"

namespace loom::cuda {
namespace {

const std::string kOp = "EmbedLayerNormalization";

[[noreturn]] void fail(const std::string& what) {
  throw sdk::Error("cuda " + kOp + ": " + what, LOOM_STATUS_INVALID_ARGUMENT);
}

std::string shape_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

const int32_t* int32_ids(const sdk::ConstTensor& t, const char* what) {
  if (t.dtype() != LOOM_DTYPE_INT32) fail(std::string(what) + " must be int32, got " + sdk::dtype_name(t.dtype()));
  return t.data<int32_t>();
}

// A 2-D table [rows, hidden] of the word table's type.
void check_table(const sdk::ConstTensor& t, int32_t dtype, int64_t hidden, const char* what) {
  if (t.rank() != 2 || (hidden >= 0 && t.dim(1) != hidden))
    fail(std::string(what) + " must be 2-D [rows, " + std::to_string(hidden) + "], got " + shape_text(t.shape()));
  if (t.dtype() != dtype) fail(std::string(what) + " type differs from word_embedding's");
}

const void* hidden_param(const sdk::ConstTensor& t, int32_t dtype, int64_t hidden, const char* what) {
  if (t.dtype() != dtype) fail(std::string(what) + " type differs from word_embedding's");
  if (t.rank() != 1 || t.dim(0) != hidden)
    fail(std::string(what) + " must be 1-D of size " + std::to_string(hidden) + ", got " + shape_text(t.shape()));
  return t.raw_data();
}

class EmbedLayerNormKernel {
 public:
  EmbedLayerNormKernel(const sdk::Node& node, const EpContext&)
      : epsilon_(node.attr_float("epsilon", 1e-12f)), want_mask_index_(names_output(node, 1)),
        want_sum_(names_output(node, 2)) {}

  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor ids = ctx.required_input(0), seg_ids = ctx.input(1), word = ctx.required_input(2);
    sdk::ConstTensor pos = ctx.required_input(3), seg = ctx.input(4), mask = ctx.input(7), pos_ids = ctx.input(8);
    if (ids.rank() != 2) fail("input_ids must be 2-D [batch, sequence], got " + shape_text(ids.shape()));
    const std::vector<int64_t> ids_shape = ids.shape();
    if (word.rank() != 2) fail("word_embedding must be 2-D [rows, hidden], got " + shape_text(word.shape()));
    const int32_t dtype = word.dtype();
    EmbedRows p;
    p.batch = ids_shape[0];
    p.seq = ids_shape[1];
    p.hidden = word.dim(1);
    check_table(pos, dtype, p.hidden, "position_embedding");
    if (seg_ids.exists() != seg.exists()) fail("segment_ids and segment_embedding must be given together");
    if (seg.exists()) check_table(seg, dtype, p.hidden, "segment_embedding");
    if (seg_ids.exists() && seg_ids.shape() != ids_shape)
      fail("segment_ids shape " + shape_text(seg_ids.shape()) + " differs from input_ids " + shape_text(ids_shape));
    if (mask.exists() && mask.shape() != ids_shape)
      fail("mask shape " + shape_text(mask.shape()) + " differs from input_ids " + shape_text(ids_shape));
    if (pos_ids.exists()) {
      const std::vector<int64_t> ps = pos_ids.shape();
      if (ps.size() != 2 || ps[1] != p.seq || (ps[0] != p.batch && ps[0] != 1))
        fail("position_ids must have shape [" + std::to_string(p.batch) + ", " + std::to_string(p.seq) + "] or [1, " +
             std::to_string(p.seq) + "], got " + shape_text(ps));
      p.position_ids = int32_ids(pos_ids, "position_ids");
      p.position_broadcast = ps[0] == 1 && p.batch != 1;
    }
    p.input_ids = int32_ids(ids, "input_ids");
    if (seg_ids.exists()) p.segment_ids = int32_ids(seg_ids, "segment_ids");
    if (mask.exists()) p.mask = int32_ids(mask, "mask");
    p.word = word.raw_data();
    p.position = pos.raw_data();
    p.segment = seg.exists() ? seg.raw_data() : nullptr;
    p.word_rows = word.dim(0);
    p.position_rows = pos.dim(0);
    p.segment_rows = seg.exists() ? seg.dim(0) : 0;
    p.gamma = hidden_param(ctx.required_input(5), dtype, p.hidden, "gamma");
    p.beta = hidden_param(ctx.required_input(6), dtype, p.hidden, "beta");
    p.epsilon = epsilon_;
    const std::vector<int64_t> out_dims = {p.batch, p.seq, p.hidden};
    element_count(out_dims, "cuda " + kOp + " output");
    p.y = ctx.output(0, out_dims, dtype).raw_mutable_data();
    if (want_mask_index_) p.mask_index = ctx.output(1, {p.batch}, LOOM_DTYPE_INT32).mutable_data<int32_t>();
    if (want_sum_) p.sum = ctx.output(2, out_dims, dtype).raw_mutable_data();
    if (p.batch == 0) return;
    if (p.seq == 0) p.mask = nullptr;
    check_family_launch(launch_embed_layer_norm(dtype, p, stream_of(ctx)), kOp, dtype);
  }

 private:
  float epsilon_;
  bool want_mask_index_, want_sum_;
};

// Claim check: int32 ids and mask.
std::string embed_supported(const sdk::Node& node) {
  for (size_t i : {0, 1, 7, 8})
    if (i < node.input_count() && !node.input_name(i).empty() && node.input_dtype(i) != LOOM_DTYPE_UNDEFINED &&
        node.input_dtype(i) != LOOM_DTYPE_INT32)
      return "input " + std::to_string(i) + " is " + sdk::dtype_name(node.input_dtype(i)) + ", not int32";
  return {};
}

}  // namespace

void register_embed_layer_norm_kernels(KernelTable& t) {
  // The first constraint is checked on input 2 (word_embedding).
  t.add<EmbedLayerNormKernel>("com.microsoft", kOp, 1, LOOM_OPSET_OPEN_END,
                              {{"T", kFloat3Types}, {"T1", {LOOM_DTYPE_INT32}}}, embed_supported, 2);
}

}  // namespace loom::cuda
