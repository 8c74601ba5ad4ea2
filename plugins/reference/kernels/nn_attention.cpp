// Attention (23, 24): scaled dot-product attention over 4-D [batch, heads,
// sequence, head size] or 3-D [batch, sequence, heads * head size] inputs,
// with grouped-query heads (q heads a multiple of kv heads, each kv head
// serving a run of consecutive q heads), a KV cache (past_key/past_value
// prepended along the sequence; present_* returned), a boolean or additive
// mask broadcast to [batch, q heads, q sequence, total sequence] (a mask
// shorter than the total sequence is padded with "masked"), causal masking
// aligned to the end of the cache, nonpad_kv_seqlen (24: keys at or past it
// are masked), softcap and the qk_matmul_output stages. Everything is
// computed in double and rounded once; a row whose every key is masked
// gives zero weights (not NaN).
#include <cmath>
#include <limits>

#include "common/reduction_common.h"
#include "kernels/nn_internal.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();
const std::string kOp = "Attention";

// Sizes of one call, from the inputs' shapes (and the head-count attributes
// for 3-D inputs), each checked against the others.
struct Dims {
  bool three_d = false;
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_seq = 0, kv_seq = 0, past = 0, total = 0, k_size = 0, v_size = 0;
};

// (heads, sequence, head size) of a Q/K/V input.
void split_heads(const Shape& s, bool three_d, int64_t heads_attr, const char* what, int64_t* heads, int64_t* seq,
                 int64_t* size) {
  if (!three_d) {
    *heads = s[1], *seq = s[2], *size = s[3];
    return;
  }
  if (heads_attr <= 0)
    sdk::fail_invalid(kOp + ": 3-D inputs need a positive " +
                      (std::string(what) == "Q" ? "q_num_heads" : "kv_num_heads") + " attribute");
  if (s[2] % heads_attr != 0)
    sdk::fail_invalid(kOp + ": " + what + "'s hidden size " + std::to_string(s[2]) + " is not a multiple of " +
                      std::to_string(heads_attr) + " heads");
  *heads = heads_attr, *seq = s[1], *size = s[2] / heads_attr;
}

Dims read_dims(KernelContext& ctx) {
  const sdk::Node node = ctx.node();
  const Shape q = ctx.required_input(0).shape(), k = ctx.required_input(1).shape(), v = ctx.required_input(2).shape();
  if ((q.size() != 3 && q.size() != 4) || k.size() != q.size() || v.size() != q.size())
    sdk::fail_invalid(kOp + ": Q, K and V must all be 3-D or all 4-D, got " + shape_string(q) + ", " +
                      shape_string(k) + ", " + shape_string(v));
  Dims d;
  d.three_d = q.size() == 3;
  d.batch = q[0];
  if (k[0] != d.batch || v[0] != d.batch) sdk::fail_invalid(kOp + ": Q, K and V differ in batch size");
  const int64_t q_attr = node.attr_int("q_num_heads", 0), kv_attr = node.attr_int("kv_num_heads", 0);
  split_heads(q, d.three_d, q_attr, "Q", &d.q_heads, &d.q_seq, &d.k_size);
  int64_t k_size = 0, v_heads = 0, v_seq = 0;
  split_heads(k, d.three_d, kv_attr, "K", &d.kv_heads, &d.kv_seq, &k_size);
  split_heads(v, d.three_d, kv_attr, "V", &v_heads, &v_seq, &d.v_size);
  if (k_size != d.k_size) sdk::fail_invalid(kOp + ": Q and K head sizes differ (" + std::to_string(d.k_size) + " and " + std::to_string(k_size) + ")");
  if (v_heads != d.kv_heads || v_seq != d.kv_seq) sdk::fail_invalid(kOp + ": K and V differ in heads or sequence length");
  if (d.kv_heads <= 0 || d.q_heads % d.kv_heads != 0)
    sdk::fail_invalid(kOp + ": q heads (" + std::to_string(d.q_heads) + ") must be a multiple of kv heads (" +
                      std::to_string(d.kv_heads) + ")");
  const sdk::ConstTensor past_k = ctx.input(4), past_v = ctx.input(5);
  if (past_k.exists() != past_v.exists()) sdk::fail_invalid(kOp + ": past_key and past_value come together");
  if (past_k.exists()) {
    const Shape pk = past_k.shape(), pv = past_v.shape();
    if (pk.size() != 4 || pk[0] != d.batch || pk[1] != d.kv_heads || pk[3] != d.k_size)
      sdk::fail_invalid(kOp + ": past_key must be [batch, kv heads, past, head size], got " + shape_string(pk));
    if (pv.size() != 4 || pv[0] != d.batch || pv[1] != d.kv_heads || pv[2] != pk[2] || pv[3] != d.v_size)
      sdk::fail_invalid(kOp + ": past_value must be [batch, kv heads, past, v head size], got " + shape_string(pv));
    d.past = pk[2];
  }
  d.total = sdk::checked_add(d.past, d.kv_seq, kOp + ": past + new sequence");
  return d;
}

// The element offset of (b, h, s, 0) in a Q/K/V input.
int64_t row_at(bool three_d, int64_t heads, int64_t seq, int64_t size, int64_t b, int64_t h, int64_t s) {
  return three_d ? (b * seq + s) * heads * size + h * size : ((b * heads + h) * seq + s) * size;
}

// The cache [batch, kv heads, total, size]: past rows, then the new ones.
double* present(KernelContext& ctx, const Dims& d, size_t input, size_t past_input, int64_t size, const char* what) {
  const int64_t count = sdk::checked_element_count({d.batch, d.kv_heads, d.total, size}, kOp + ": " + what);
  double* out = ctx.scratch<double>(count, kOp + ": " + what);
  const std::vector<double> now = float_tensor_to_doubles(ctx.required_input(input), kOp);
  std::vector<double> past;
  if (d.past > 0) past = float_tensor_to_doubles(ctx.required_input(past_input), kOp);
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.kv_heads; ++h)
      for (int64_t t = 0; t < d.total; ++t) {
        double* dst = out + ((b * d.kv_heads + h) * d.total + t) * size;
        const double* src = t < d.past ? past.data() + ((b * d.kv_heads + h) * d.past + t) * size
                                       : now.data() + row_at(d.three_d, d.kv_heads, d.kv_seq, size, b, h, t - d.past);
        for (int64_t e = 0; e < size; ++e) dst[e] = src[e];
      }
  return out;
}

// attn_mask as an additive bias indexed by (b, h, i, j): 0 or -inf for a
// bool mask, the value for a float one; -inf past the mask's last column.
class Mask {
 public:
  Mask(const sdk::ConstTensor& m, const Dims& d) {
    if (!m.exists()) return;
    const Shape s = m.shape();
    if (s.empty() || s.size() > 4) sdk::fail_invalid(kOp + ": attn_mask must have rank 1 to 4, got " + shape_string(s));
    const Shape target = {d.batch, d.q_heads, d.q_seq, d.total};
    Shape dims(4 - s.size(), 1);
    dims.insert(dims.end(), s.begin(), s.end());
    for (size_t i = 0; i < 3; ++i)
      if (dims[i] != 1 && dims[i] != target[i])
        sdk::fail_invalid(kOp + ": attn_mask of shape " + shape_string(s) + " does not broadcast to " +
                          shape_string(target));
    if (dims[3] > d.total)
      sdk::fail_invalid(kOp + ": attn_mask has " + std::to_string(dims[3]) + " columns, over the total sequence " +
                        std::to_string(d.total));
    columns_ = dims[3];
    int64_t stride = 1;  // bounded by the mask's own element count
    for (int i = 3; i >= 0; --i) {
      strides_[i] = dims[static_cast<size_t>(i)] == 1 && i < 3 ? 0 : stride;
      stride *= dims[static_cast<size_t>(i)];
    }
    if (m.dtype() == LOOM_DTYPE_BOOL) {
      const bool* p = m.data<bool>();
      values_.resize(static_cast<size_t>(m.size()));
      for (size_t i = 0; i < values_.size(); ++i) values_[i] = p[i] ? 0.0 : kNegInf;
    } else {
      values_ = float_tensor_to_doubles(m, kOp);
    }
    present_ = true;
  }
  bool present() const { return present_; }
  double at(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (!present_) return 0;
    if (j >= columns_) return kNegInf;
    return values_[static_cast<size_t>(b * strides_[0] + h * strides_[1] + i * strides_[2] + j * strides_[3])];
  }

 private:
  bool present_ = false;
  int64_t columns_ = 0;
  int64_t strides_[4] = {0, 0, 0, 0};
  std::vector<double> values_;
};

// Writes `count` doubles to output `index` as `dtype`.
void write_output(KernelContext& ctx, size_t index, const Shape& dims, int32_t dtype, const double* values) {
  sdk::Tensor out = ctx.output(index, dims, dtype);
  if (out.size() == 0) return;
  dispatch<FloatTypes>(dtype, kOp, [&](auto tag) {
    using T = decltype(tag);
    T* p = out.mutable_data<T>();
    for (int64_t i = 0; i < out.size(); ++i) p[i] = to_elem<T>(values[i]);
  });
}

void attention(KernelContext& ctx) {
  const sdk::Node node = ctx.node();
  const Dims d = read_dims(ctx);
  const sdk::ConstTensor q_t = ctx.required_input(0);
  const int32_t q_type = q_t.dtype(), v_type = ctx.required_input(2).dtype();
  const int64_t mode = node.attr_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) sdk::fail_invalid(kOp + ": qk_matmul_output_mode must be 0 to 3, got " + std::to_string(mode));
  const bool causal = node.attr_int("is_causal", 0) != 0;
  const double softcap = node.attr_float("softcap", 0.0f);
  const auto scale_attr = node.find_float("scale");
  const double scale = scale_attr ? *scale_attr : 1.0 / std::sqrt(static_cast<double>(d.k_size));
  const Mask mask(ctx.input(3), d);
  std::vector<int64_t> nonpad;
  if (const sdk::ConstTensor n = ctx.input(6); n.exists()) {
    nonpad = n.to_int64_vector();
    if (static_cast<int64_t>(nonpad.size()) != d.batch)
      sdk::fail_invalid(kOp + ": nonpad_kv_seqlen must hold one length per batch entry, got " +
                        std::to_string(nonpad.size()));
  }
  const std::vector<double> q = float_tensor_to_doubles(q_t, kOp);
  const double* keys = present(ctx, d, 1, 4, d.k_size, "present_key");
  const double* vals = present(ctx, d, 2, 5, d.v_size, "present_value");
  const int64_t out_count = sdk::checked_element_count({d.batch, d.q_heads, d.q_seq, d.v_size}, kOp + ": Y");
  const int64_t qk_count = sdk::checked_element_count({d.batch, d.q_heads, d.q_seq, d.total}, kOp + ": QK");
  double* y = ctx.scratch<double>(out_count, kOp + ": Y");
  double* qk_out = ctx.scratch<double>(qk_count, kOp + ": qk_matmul_output");
  double* row = ctx.scratch<double>(d.total, kOp + ": scores");
  const int64_t group = d.q_heads / d.kv_heads;
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.q_heads; ++h) {
      const int64_t kv = h / group;
      for (int64_t i = 0; i < d.q_seq; ++i) {
        const double* qrow = q.data() + row_at(d.three_d, d.q_heads, d.q_seq, d.k_size, b, h, i);
        double* stage = qk_out + ((b * d.q_heads + h) * d.q_seq + i) * d.total;
        // Keys j <= i + offset are visible under causal masking: the query
        // block sits at the end of the cache.
        const int64_t offset = d.past > 0 || nonpad.empty() ? d.past : nonpad[static_cast<size_t>(b)] - d.q_seq;
        double max = kNegInf;
        for (int64_t j = 0; j < d.total; ++j) {
          const double* krow = keys + ((b * d.kv_heads + kv) * d.total + j) * d.k_size;
          double s = 0;
          for (int64_t e = 0; e < d.k_size; ++e) s += qrow[e] * krow[e];
          s *= scale;
          if (mode == 0) stage[j] = s;
          if (softcap > 0) s = softcap * std::tanh(s / softcap);
          if (mode == 1) stage[j] = s;
          s += mask.at(b, h, i, j);
          if (causal && j > i + offset) s = kNegInf;
          if (!nonpad.empty() && j >= nonpad[static_cast<size_t>(b)]) s = kNegInf;
          if (mode == 2) stage[j] = s;
          row[j] = s;
          if (s > max) max = s;
        }
        double sum = 0;
        for (int64_t j = 0; j < d.total; ++j) {
          row[j] = max == kNegInf ? 0.0 : std::exp(row[j] - max);  // a fully masked row weighs nothing
          sum += row[j];
        }
        for (int64_t j = 0; j < d.total; ++j) {
          if (sum > 0) row[j] /= sum;
          if (mode == 3) stage[j] = row[j];
        }
        double* yrow = y + ((b * d.q_heads + h) * d.q_seq + i) * d.v_size;
        for (int64_t e = 0; e < d.v_size; ++e) yrow[e] = 0;
        for (int64_t j = 0; j < d.total; ++j) {
          if (row[j] == 0) continue;
          const double* vrow = vals + ((b * d.kv_heads + kv) * d.total + j) * d.v_size;
          for (int64_t e = 0; e < d.v_size; ++e) yrow[e] += row[j] * vrow[e];
        }
      }
      ctx.stop_if_asked();
    }
  if (d.three_d) {
    // [b, h, s, e] -> [b, s, h * v_size + e]
    double* t = ctx.scratch<double>(out_count, kOp + ": Y");
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t h = 0; h < d.q_heads; ++h)
        for (int64_t s = 0; s < d.q_seq; ++s)
          for (int64_t e = 0; e < d.v_size; ++e)
            t[((b * d.q_seq + s) * d.q_heads + h) * d.v_size + e] = y[((b * d.q_heads + h) * d.q_seq + s) * d.v_size + e];
    write_output(ctx, 0, {d.batch, d.q_seq, d.q_heads * d.v_size}, q_type, t);
  } else {
    write_output(ctx, 0, {d.batch, d.q_heads, d.q_seq, d.v_size}, q_type, y);
  }
  if (wants_output(ctx, 1)) write_output(ctx, 1, {d.batch, d.kv_heads, d.total, d.k_size}, q_type, keys);
  if (wants_output(ctx, 2)) write_output(ctx, 2, {d.batch, d.kv_heads, d.total, d.v_size}, v_type, vals);
  if (wants_output(ctx, 3)) write_output(ctx, 3, {d.batch, d.q_heads, d.q_seq, d.total}, q_type, qk_out);
}

}  // namespace

void register_nn_attention_kernels(sdk::KernelRegistry& r) {
  r.add("", "Attention", 23, LOOM_OPSET_OPEN_END, attention);
}

}  // namespace loom::reference
