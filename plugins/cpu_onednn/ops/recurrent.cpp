// LSTM and GRU of float32 as one oneDNN RNN primitive (lstm_forward,
// gru_forward, lbr_gru_forward for linear_before_reset = 1), in every
// direction, with initial states given or not. The weights are constants,
// rearranged once into oneDNN's gate order and layout: ONNX stacks LSTM
// gates as i, o, f, c and oneDNN as i, f, c, o; GRU's z, r, h are oneDNN's
// u, r, o. The two ONNX biases add into oneDNN's one, except the recurrent
// bias of a linear-before-reset GRU's candidate, which oneDNN keeps apart.
// What oneDNN has no form for stays with the reference EP: explicit
// activations, clip, coupled input-forget gates, the batch-first layout,
// per-sequence lengths and peepholes.
#include <oneapi/dnnl/dnnl.hpp>

#include "op_support.h"
#include "ops/op_builders.h"
#include "thread_count.h"

namespace loom::onednn {
namespace {

using dnnl::memory;

// Multiply-adds per time step from which the RNN is split across threads
// (bench/results/2026-11-28-recurrent-cpu.md: a 2-layer bidirectional LSTM
// of hidden 64 at batch 64, 3M a step, ran no faster on 2 threads; hidden
// 256 at batch 16, 12.6M, ran 1.35x faster).
constexpr int64_t kSplitStepWork = 1 << 22;

// ONNX inputs.
constexpr size_t kX = 0, kW = 1, kR = 2, kB = 3, kSequenceLens = 4, kInitialH = 5, kInitialC = 6, kPeepholes = 7;

bool is_lstm(const NodeSpec& n) { return n.op_type == "LSTM"; }
int64_t gate_count(const NodeSpec& n) { return is_lstm(n) ? 4 : 3; }
int64_t direction_count(const NodeSpec& n) { return n.attr_string("direction", "forward") == "bidirectional" ? 2 : 1; }

// oneDNN's gate g is ONNX's gate onnx_gate[g].
const std::vector<int64_t>& onnx_gates(const NodeSpec& n) {
  static const std::vector<int64_t> lstm = {0, 2, 3, 1}, gru = {0, 1, 2};
  return is_lstm(n) ? lstm : gru;
}

std::optional<dnnl::rnn_direction> rnn_direction(const std::string& direction) {
  if (direction == "forward") return dnnl::rnn_direction::unidirectional_left2right;
  if (direction == "reverse") return dnnl::rnn_direction::unidirectional_right2left;
  if (direction == "bidirectional") return dnnl::rnn_direction::bidirectional_concat;
  return std::nullopt;
}

// ONNX weights [D][G * H][K] as oneDNN's [1][D][K][G][H] (ldigo).
std::vector<float> onednn_weights(const NodeSpec& n, const std::vector<float>& w, int64_t d_count, int64_t k,
                                  int64_t h) {
  const int64_t g_count = gate_count(n);
  std::vector<float> out(w.size());
  for (int64_t d = 0; d < d_count; ++d)
    for (int64_t g = 0; g < g_count; ++g) {
      const int64_t onnx_g = onnx_gates(n)[static_cast<size_t>(g)];
      for (int64_t j = 0; j < h; ++j)
        for (int64_t i = 0; i < k; ++i)
          out[static_cast<size_t>(((d * k + i) * g_count + g) * h + j)] =
              w[static_cast<size_t>((d * g_count * h + onnx_g * h + j) * k + i)];
    }
  return out;
}

// ONNX biases [D][2 G H] (input's, then recurrent's; zeros when absent) as
// oneDNN's [1][D][G'][H]: their sum per gate, and for a linear-before-reset
// GRU a fourth gate holding the candidate's recurrent bias apart.
std::vector<float> onednn_bias(const NodeSpec& n, const std::vector<float>& b, int64_t d_count, int64_t h,
                               bool linear_before_reset) {
  const int64_t g_count = gate_count(n), out_gates = g_count + (linear_before_reset ? 1 : 0);
  std::vector<float> out(static_cast<size_t>(d_count * out_gates * h), 0.f);
  if (b.empty()) return out;
  for (int64_t d = 0; d < d_count; ++d) {
    const float* input_bias = b.data() + d * 2 * g_count * h;
    const float* recurrent_bias = input_bias + g_count * h;
    for (int64_t g = 0; g < g_count; ++g) {
      const int64_t onnx_g = onnx_gates(n)[static_cast<size_t>(g)];
      // The candidate of a linear-before-reset GRU (oneDNN gate 2) takes only
      // its input bias here; its recurrent bias is the fourth gate.
      const bool apart = linear_before_reset && g == 2;
      for (int64_t j = 0; j < h; ++j)
        out[static_cast<size_t>((d * out_gates + g) * h + j)] =
            input_bias[onnx_g * h + j] + (apart ? 0.f : recurrent_bias[onnx_g * h + j]);
    }
    if (linear_before_reset)
      for (int64_t j = 0; j < h; ++j) out[static_cast<size_t>((d * out_gates + 3) * h + j)] = recurrent_bias[2 * h + j];
  }
  return out;
}

// A state input [D][N][H] as oneDNN's [1][D][N][H], or a zero desc when absent.
std::optional<ValueId> state_input(ProgramBuilder& b, const NodeSpec& n, size_t input) {
  if (!n.has_input(input)) return std::nullopt;
  const ValueId v = b.value_of(n.inputs[input]);
  std::vector<int64_t> dims = b.dims(v);
  dims.insert(dims.begin(), 1);
  return b.view(v, dims);
}

}  // namespace

SupportVerdict check_recurrent(const NodeSpec& n) {
  auto no = [](std::string why) { return SupportVerdict{OpRole::kUnsupported, std::move(why)}; };
  if (n.has_attr("clip")) return no("clip has no oneDNN form");
  if (n.has_attr("activation_alpha") || n.has_attr("activation_beta")) return no("explicit activations");
  if (n.attr_int("layout", 0) != 0) return no("the batch-first layout (layout = 1)");
  if (is_lstm(n) && n.attr_int("input_forget", 0) != 0) return no("coupled input-forget gates");
  if (!rnn_direction(n.attr_string("direction", "forward"))) return no("unknown direction");
  if (n.has_input(kSequenceLens)) return no("per-sequence lengths (sequence_lens)");
  if (is_lstm(n) && n.has_input(kPeepholes)) return no("peepholes");
  if (n.input_rank(kX) != 3 || n.input_shapes[kX]->at(2) <= 0) return no("X must be rank 3 with a known size");
  for (size_t i : {kW, kR, kB})
    if (n.has_input(i) && !n.input_is_constant[i]) return no("W, R and B must be constants");
  const auto w = n.constant_shapes.find(kW);
  const auto r = n.constant_shapes.find(kR);
  const int64_t d_count = direction_count(n), g_count = gate_count(n);
  if (w == n.constant_shapes.end() || r == n.constant_shapes.end() || w->second.size() != 3 ||
      r->second.size() != 3 || w->second[0] != d_count || w->second[1] % g_count != 0 ||
      w->second[2] != n.input_shapes[kX]->at(2))
    return no("W and R must match X and the direction");
  const int64_t h = w->second[1] / g_count;
  if (n.attr_int("hidden_size", h) != h || r->second != std::vector<int64_t>{d_count, g_count * h, h})
    return no("hidden_size must match W and R");
  return {OpRole::kCompute, {}};
}

size_t build_recurrent(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  const ValueId x = b.value_of(n.inputs[kX]);
  const std::vector<int64_t> xd = b.dims(x);  // [T][N][K]
  const ValueId w = b.value_of(n.inputs[kW]), r = b.value_of(n.inputs[kR]);
  if (xd.size() != 3 || b.dims(w).size() != 3) n.fail("expects X of rank 3 and W of rank 3");
  const int64_t t = xd[0], batch = xd[1], k = xd[2], d_count = direction_count(n), g_count = gate_count(n);
  const int64_t h = b.dims(w)[1] / g_count;
  const bool lbr = !is_lstm(n) && n.attr_int("linear_before_reset", 0) != 0;
  const auto f32 = memory::data_type::f32;
  const auto any = memory::format_tag::any;

  const ValueId weights_layer =
      b.new_constant(onednn_weights(n, b.constant_data(w), d_count, k, h), {1, d_count, k, g_count, h});
  const ValueId weights_iter =
      b.new_constant(onednn_weights(n, b.constant_data(r), d_count, h, h), {1, d_count, h, g_count, h});
  const int64_t bias_gates = g_count + (lbr ? 1 : 0);
  const ValueId bias = b.new_constant(
      onednn_bias(n, n.has_input(kB) ? b.constant_data(b.value_of(n.inputs[kB])) : std::vector<float>{}, d_count, h, lbr),
      {1, d_count, bias_gates, h});
  std::optional<ValueId> initial_h = state_input(b, n, kInitialH);
  const std::optional<ValueId> initial_c = is_lstm(n) ? state_input(b, n, kInitialC) : std::nullopt;
  // oneDNN reads a cell state only beside a hidden one: zeros, as ONNX's default.
  if (initial_c && !initial_h)
    initial_h = b.new_constant(std::vector<float>(static_cast<size_t>(d_count * batch * h), 0.f), {1, d_count, batch, h});

  const memory::desc src_layer({t, batch, k}, f32, memory::format_tag::tnc);
  const memory::desc state({1, d_count, batch, h}, f32, memory::format_tag::ldnc);
  const memory::desc dst_layer({t, batch, d_count * h}, f32, memory::format_tag::tnc);
  const memory::desc w_layer({1, d_count, k, g_count, h}, f32, any), w_iter({1, d_count, h, g_count, h}, f32, any);
  const memory::desc bias_desc({1, d_count, bias_gates, h}, f32, memory::format_tag::ldgo);
  const bool want_h = n.outputs.size() > 1 && !n.outputs[1].empty();
  const bool want_c = is_lstm(n) && n.outputs.size() > 2 && !n.outputs[2].empty();
  const bool dst_iter = want_h || want_c;  // oneDNN writes a cell state only beside a hidden one
  const memory::desc none;
  const dnnl::rnn_direction direction = *rnn_direction(n.attr_string("direction", "forward"));
  const auto inference = dnnl::prop_kind::forward_inference;

  // One time step's work is batch x gates x H x (K + H) multiply-adds; a
  // small one split across threads costs more in the barrier each step
  // than it saves.
  const int threads = batch * g_count * h * (k + h) < kSplitStepWork ? 1 : 0;
  const ThreadCount thread_count(threads);
  std::vector<std::pair<int, ValueId>> args;
  dnnl::primitive primitive;
  memory::desc scratchpad;
  auto bind = [&](const auto& pd) {
    args = {{DNNL_ARG_SRC_LAYER, b.require(x, pd.src_layer_desc())},
            {DNNL_ARG_WEIGHTS_LAYER, b.require(weights_layer, pd.weights_layer_desc())},
            {DNNL_ARG_WEIGHTS_ITER, b.require(weights_iter, pd.weights_iter_desc())},
            {DNNL_ARG_BIAS, b.require(bias, pd.bias_desc())}};
    if (initial_h) args.emplace_back(DNNL_ARG_SRC_ITER, b.require(*initial_h, pd.src_iter_desc()));
    scratchpad = pd.scratchpad_desc();
  };
  if (is_lstm(n)) {
    dnnl::lstm_forward::desc desc(inference, direction, src_layer, initial_h ? state : none,
                                  initial_c ? state : none, w_layer, w_iter, none, none, bias_desc, dst_layer,
                                  dst_iter ? state : none, want_c ? state : none);
    dnnl::lstm_forward::primitive_desc pd(desc, b.attr(), b.engine());
    bind(pd);
    if (initial_c) args.emplace_back(DNNL_ARG_SRC_ITER_C, b.require(*initial_c, pd.src_iter_c_desc()));
    primitive = dnnl::lstm_forward(pd);
  } else if (lbr) {
    dnnl::lbr_gru_forward::desc desc(inference, direction, src_layer, initial_h ? state : none, w_layer, w_iter,
                                     bias_desc, dst_layer, want_h ? state : none);
    dnnl::lbr_gru_forward::primitive_desc pd(desc, b.attr(), b.engine());
    bind(pd);
    primitive = dnnl::lbr_gru_forward(pd);
  } else {
    dnnl::gru_forward::desc desc(inference, direction, src_layer, initial_h ? state : none, w_layer, w_iter,
                                 bias_desc, dst_layer, want_h ? state : none);
    dnnl::gru_forward::primitive_desc pd(desc, b.attr(), b.engine());
    bind(pd);
    primitive = dnnl::gru_forward(pd);
  }

  // Y [T][D][N][H]: oneDNN's dst_layer [T][N][D H] as it is for one
  // direction, reordered for two.
  const bool want_y = !n.outputs.empty() && !n.outputs[0].empty();
  const std::vector<int64_t> y_dims = {t, d_count, batch, h};
  const ValueId dst = b.new_value(dst_layer, {t, batch, d_count * h}, d_count == 1 && want_y ? n.outputs[0] : "");
  args.emplace_back(DNNL_ARG_DST_LAYER, dst);
  const std::vector<int64_t> state_dims = {d_count, batch, h};
  std::optional<ValueId> y_h, y_c;
  if (dst_iter) {
    const ValueId hidden = b.new_value(plain_desc(state_dims), state_dims, want_h ? n.outputs[1] : "");
    if (want_h) y_h = hidden;
    args.emplace_back(DNNL_ARG_DST_ITER, b.alias(hidden, state, {1, d_count, batch, h}));
  }
  if (want_c) {
    y_c = b.new_value(plain_desc(state_dims), state_dims, n.outputs[2]);
    args.emplace_back(DNNL_ARG_DST_ITER_C, b.alias(*y_c, state, {1, d_count, batch, h}));
  }
  b.add_step(primitive, std::move(args), scratchpad, n.label());
  b.name_last_step(is_lstm(n) ? "lstm" : "gru");
  b.set_last_step_threads(threads);
  if (want_y) {
    if (d_count == 1) {
      b.define(n.outputs[0], b.alias(dst, plain_desc(y_dims), y_dims));
    } else {
      const memory::desc strided(y_dims, f32, {batch * d_count * h, h, d_count * h, 1});
      const ValueId y = b.new_value(plain_desc(y_dims), y_dims, n.outputs[0]);
      b.add_reorder(b.alias(dst, strided, y_dims), y, n.label() + " (Y by direction)");
      b.define(n.outputs[0], y);
    }
  }
  if (y_h) b.define(n.outputs[1], *y_h);
  if (y_c) b.define(n.outputs[2], *y_c);
  return 0;
}

}  // namespace loom::onednn
