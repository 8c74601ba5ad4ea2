// com.microsoft EmbedLayerNormalization(input_ids, segment_ids?, word_embedding,
// position_embedding, segment_embedding?, gamma, beta, mask?, position_ids?)
// with ONNX Runtime's semantics (as the reference EP):
//   sum[b, s] = word[ids[b, s]] + pos[p(b, s)] (+ seg[segment_ids[b, s]])
//     p = position_ids[b | 0, s] when given, else s     -> output 2 (embedding_sum), optional
//   output    = LayerNorm(sum) over H                    -> output 0
//   mask_index[b] = count of mask[b, :] == 1 (0s without a mask), int32 -> output 1, optional
// oneDNN has no gather: a host step gathers the rows into the sum (int32
// ids, as op_support claims them; bounds-checked), then build_layer_norm
// normalises it, and a second host step counts the mask. epsilon defaults to ORT's 1e-12.
#include <oneapi/dnnl/dnnl.hpp>

#include <cstring>

#include "ops/op_builders.h"

namespace loom::onednn {
namespace {

// An ids input for host steps: int32 data of `want` dims.
ValueId ids_input(ProgramBuilder& b, const NodeSpec& n, size_t i, const char* what,
                  const std::vector<int64_t>* want) {
  if (n.input_dtypes[i] != LOOM_DTYPE_INT32) n.fail(std::string(what) + " must be int32");
  const ValueId v = b.host_input(n.inputs[i]);
  if (want && b.dims(v) != *want) n.fail(std::string(what) + " must have input_ids' shape [batch, sequence]");
  return v;
}

std::string dims_string(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

}  // namespace

size_t build_embed_layer_norm(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  const ValueId ids = ids_input(b, n, 0, "input_ids", nullptr);
  const std::vector<int64_t> ids_dims = b.dims(ids);
  if (ids_dims.size() != 2) n.fail("input_ids must be 2-D [batch, sequence], got " + dims_string(ids_dims));
  const int64_t B = ids_dims[0], S = ids_dims[1];
  const ValueId word = b.plain(b.value_of(n.inputs[2]));
  const ValueId pos = b.plain(b.value_of(n.inputs[3]));
  if (b.dims(word).size() != 2) n.fail("word_embedding must be 2-D [rows, hidden]");
  const int64_t H = b.dims(word)[1], V = b.dims(word)[0];
  auto check_table = [&](ValueId t, const char* what) {
    if (b.dims(t).size() != 2 || b.dims(t)[1] != H)
      n.fail(std::string(what) + " must be 2-D [rows, " + std::to_string(H) + "], got " + dims_string(b.dims(t)));
  };
  check_table(pos, "position_embedding");
  const int64_t P = b.dims(pos)[0];
  const bool has_seg = n.has_input(4);
  if (n.has_input(1) != has_seg) n.fail("segment_ids and segment_embedding must be given together");
  std::vector<ValueId> args = {ids};
  int64_t G = 0;
  if (has_seg) {
    args.push_back(ids_input(b, n, 1, "segment_ids", &ids_dims));
    const ValueId seg = b.plain(b.value_of(n.inputs[4]));
    check_table(seg, "segment_embedding");
    G = b.dims(seg)[0];
  }
  const bool has_pos_ids = n.has_input(8);
  bool broadcast_pos = false;
  if (has_pos_ids) {
    const ValueId p = ids_input(b, n, 8, "position_ids", nullptr);
    const std::vector<int64_t>& pd = b.dims(p);
    if (pd.size() != 2 || pd[1] != S || (pd[0] != B && pd[0] != 1))
      n.fail("position_ids must have shape [batch_size, sequence_length] or [1, sequence_length], got " +
             dims_string(pd));
    broadcast_pos = pd[0] == 1;
    args.push_back(p);
  }
  const std::vector<int64_t> hidden = {H};
  for (size_t i : {size_t{5}, size_t{6}})
    if (n.has_input(i) && b.dims(b.value_of(n.inputs[i])) != hidden)
      n.fail("gamma / beta must be 1-D of the hidden size " + std::to_string(H));
  if (!n.has_input(5)) n.fail("gamma is required");
  args.push_back(word);
  args.push_back(pos);
  if (has_seg) args.push_back(b.plain(b.value_of(n.inputs[4])));

  // The sum goes straight into output 2 when that is wanted.
  const std::vector<int64_t> out_dims = {B, S, H};
  const bool sum_wanted = n.outputs.size() > 2 && !n.outputs[2].empty();
  const std::string sum_name = sum_wanted ? n.outputs[2] : n.outputs[0] + "/embedding_sum";
  const ValueId sum = b.new_value(plain_desc(out_dims), out_dims, sum_wanted ? sum_name : "");
  args.push_back(sum);
  const std::string label = n.label();
  b.add_host_step(
      [=](const std::vector<dnnl::memory>& m) {
        size_t k = 0;
        const auto* word_ids = static_cast<const int32_t*>(m[k++].get_data_handle());
        const auto* seg_ids = has_seg ? static_cast<const int32_t*>(m[k++].get_data_handle()) : nullptr;
        const auto* pos_ids = has_pos_ids ? static_cast<const int32_t*>(m[k++].get_data_handle()) : nullptr;
        const float* w = static_cast<const float*>(m[k++].get_data_handle());
        const float* p = static_cast<const float*>(m[k++].get_data_handle());
        const float* g = has_seg ? static_cast<const float*>(m[k++].get_data_handle()) : nullptr;
        float* out = static_cast<float*>(m[k++].get_data_handle());
        auto row = [&](int64_t v, int64_t limit, const char* what, int64_t bi, int64_t si) {
          if (v < 0 || v >= limit)
            throw sdk::Error("cpu_onednn: " + label + ": " + what + " " + std::to_string(v) + " at [" +
                                 std::to_string(bi) + ", " + std::to_string(si) + "] out of range [0, " +
                                 std::to_string(limit) + ")",
                             LOOM_STATUS_INVALID_ARGUMENT);
          return v * H;
        };
        for (int64_t bi = 0; bi < B; ++bi)
          for (int64_t si = 0; si < S; ++si) {
            const int64_t idx = bi * S + si;
            const float* wr = w + row(word_ids[idx], V, "input_ids value", bi, si);
            const int64_t pv = has_pos_ids ? pos_ids[broadcast_pos ? si : idx] : si;
            const float* pr = p + row(pv, P, has_pos_ids ? "position_ids value" : "position", bi, si);
            float* o = out + idx * H;
            if (g) {
              const float* gr = g + row(seg_ids[idx], G, "segment_ids value", bi, si);
              for (int64_t h = 0; h < H; ++h) o[h] = wr[h] + pr[h] + gr[h];
            } else {
              for (int64_t h = 0; h < H; ++h) o[h] = wr[h] + pr[h];
            }
          }
      },
      args, label);
  b.define(sum_name, sum);

  // mask_index: count of mask values equal to 1 per batch row.
  if (n.outputs.size() > 1 && !n.outputs[1].empty()) {
    std::vector<ValueId> margs;
    const bool has_mask = n.has_input(7);
    if (has_mask) {
      if (n.input_dtypes[7] != LOOM_DTYPE_INT32) n.fail("mask must be int32");
      margs.push_back(ids_input(b, n, 7, "mask", &ids_dims));
    }
    const std::vector<int64_t> md = {B};
    const ValueId mask_index =
        b.new_value(plain_desc(md, dnnl::memory::data_type::s32), md, n.outputs[1]);
    margs.push_back(mask_index);
    b.add_host_step(
        [=](const std::vector<dnnl::memory>& m) {
          const int32_t* mask = has_mask ? static_cast<const int32_t*>(m[0].get_data_handle()) : nullptr;
          int32_t* out = static_cast<int32_t*>(m[has_mask ? 1 : 0].get_data_handle());
          for (int64_t bi = 0; bi < B; ++bi) {
            int32_t count = 0;
            if (mask)
              for (int64_t si = 0; si < S; ++si) count += mask[bi * S + si] == 1 ? 1 : 0;
            out[bi] = count;
          }
        },
        margs, label);
    b.define(n.outputs[1], mask_index);
  }

  return build_last_dim_layer_norm(b, n, sum_name, n.inputs[5], n.has_input(6) ? n.inputs[6] : "", n.outputs[0],
                                   n.attr_float("epsilon", 1e-12f));
}

}  // namespace loom::onednn
