// Recurrent layers: RNN, GRU and LSTM, with every optional input and output,
// directions (forward / reverse / bidirectional), sequence_lens, custom
// activations, clip and, from opset 14, the batch-major layout.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <vector>

#include "common/dispatch.h"
#include "common/shape.h"
#include "kernel_families.h"
#include "kernels/nn_internal.h"

namespace loom::reference {
namespace {

using sdk::ConstTensor;
using sdk::KernelContext;

enum class Cell { kRnn, kGru, kLstm };

// One activation function with its alpha / beta.
struct Activation {
  enum Kind { kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu,
              kSoftsign, kSoftplus };
  Kind kind = kTanh;
  float alpha = 0, beta = 0;

  template <class A>
  A operator()(A x) const {
    const A a = static_cast<A>(alpha), b = static_cast<A>(beta);
    switch (kind) {
      case kRelu: return x > A(0) ? x : A(0);
      case kTanh: return std::tanh(x);
      case kSigmoid: return A(1) / (A(1) + std::exp(-x));
      case kAffine: return a * x + b;
      case kLeakyRelu: return x >= A(0) ? x : a * x;
      case kThresholdedRelu: return x > a ? x : A(0);
      case kScaledTanh: return a * std::tanh(b * x);
      case kHardSigmoid: return std::max(A(0), std::min(A(1), a * x + b));
      case kElu: return x >= A(0) ? x : a * (std::exp(x) - A(1));
      case kSoftsign: return x / (A(1) + std::fabs(x));
      case kSoftplus: return std::log1p(std::exp(x));
    }
    return x;
  }
};

// Parses `activations` with `activation_alpha` / `activation_beta`, which are
// consumed in order by the functions that take them (defaults otherwise).
std::vector<Activation> parse_activations(const sdk::Node& n, std::vector<std::string> names, const std::string& op) {
  const std::vector<float> alphas = n.attr_floats("activation_alpha"), betas = n.attr_floats("activation_beta");
  size_t ai = 0, bi = 0;
  std::vector<Activation> out;
  for (std::string name : names) {
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    Activation a;
    bool uses_alpha = false, uses_beta = false;
    if (name == "relu") a.kind = Activation::kRelu;
    else if (name == "tanh") a.kind = Activation::kTanh;
    else if (name == "sigmoid") a.kind = Activation::kSigmoid;
    else if (name == "affine") { a.kind = Activation::kAffine; a.alpha = 1; uses_alpha = uses_beta = true; }
    else if (name == "leakyrelu") { a.kind = Activation::kLeakyRelu; a.alpha = 0.01f; uses_alpha = true; }
    else if (name == "thresholdedrelu") { a.kind = Activation::kThresholdedRelu; a.alpha = 1; uses_alpha = true; }
    else if (name == "scaledtanh") { a.kind = Activation::kScaledTanh; a.alpha = 1; a.beta = 1; uses_alpha = uses_beta = true; }
    else if (name == "hardsigmoid") { a.kind = Activation::kHardSigmoid; a.alpha = 0.2f; a.beta = 0.5f; uses_alpha = uses_beta = true; }
    else if (name == "elu") { a.kind = Activation::kElu; a.alpha = 1; uses_alpha = true; }
    else if (name == "softsign") a.kind = Activation::kSoftsign;
    else if (name == "softplus") a.kind = Activation::kSoftplus;
    else sdk::fail_invalid(op + ": unsupported activation '" + name + "'");
    if (uses_alpha && ai < alphas.size()) a.alpha = alphas[ai++];
    if (uses_beta && bi < betas.size()) a.beta = betas[bi++];
    out.push_back(a);
  }
  return out;
}

class Recurrent {
 public:
  Recurrent(const sdk::Node& n, Cell cell, const char* name) : cell_(cell), name_(name) {
    const std::string op(name);
    const std::string dir = n.attr_string("direction", "forward");
    if (dir == "forward") directions_ = 1;
    else if (dir == "reverse") { directions_ = 1; reverse_ = true; }
    else if (dir == "bidirectional") directions_ = 2;
    else sdk::fail_invalid(op + ": unknown direction '" + dir + "'");
    hidden_ = n.attr_int("hidden_size", 0);
    layout_ = n.attr_int("layout", 0);
    if (layout_ != 0 && layout_ != 1) sdk::fail_invalid(op + ": layout must be 0 or 1");
    if (auto c = n.find_float("clip")) {
      has_clip_ = true;
      clip_ = *c;
    }
    linear_before_reset_ = n.attr_int("linear_before_reset", 0) != 0;
    input_forget_ = n.attr_int("input_forget", 0) != 0;
    const size_t per_dir = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3;
    std::vector<std::string> names = n.attr_strings("activations");
    if (names.empty()) {
      const std::vector<std::string> defaults =
          cell == Cell::kRnn ? std::vector<std::string>{"Tanh"}
          : cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                               : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
      for (int d = 0; d < directions_; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
    } else if (names.size() == per_dir && directions_ == 2) {
      const std::vector<std::string> copy = names;
      names.insert(names.end(), copy.begin(), copy.end());
    }
    if (names.size() != per_dir * static_cast<size_t>(directions_))
      sdk::fail_invalid(op + ": expected " + std::to_string(per_dir * directions_) + " activations, got " +
                        std::to_string(names.size()));
    acts_ = parse_activations(n, names, op);
  }

  void compute(KernelContext& ctx) const {
    dispatch<TypeList<float, double, Float16, BFloat16>>(ctx.required_input(0).dtype(), name_, [&](auto tag) {
      run<decltype(tag)>(ctx);
    });
  }

 private:
  int64_t gates() const { return cell_ == Cell::kRnn ? 1 : cell_ == Cell::kGru ? 3 : 4; }

  template <class A, class T>
  static std::vector<A> read(const ConstTensor& t) {
    std::vector<A> v(static_cast<size_t>(t.size()));
    const T* p = t.template data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<A>(static_cast<compute_t<T>>(p[i]));
    return v;
  }

  template <class T>
  void run(KernelContext& ctx) const {
    using A = compute_t<T>;
    const std::string op(name_);
    const ConstTensor x = ctx.required_input(0), w = ctx.required_input(1), r = ctx.required_input(2);
    const ConstTensor b = ctx.input(3), lens = ctx.input(4), h0 = ctx.input(5);
    const ConstTensor c0 = cell_ == Cell::kLstm ? ctx.input(6) : ConstTensor();
    const ConstTensor peep = cell_ == Cell::kLstm ? ctx.input(7) : ConstTensor();
    const Shape xs = x.shape(), ws = w.shape(), rs = r.shape();
    const int64_t g = gates(), dirs = directions_;
    if (xs.size() != 3) sdk::fail_invalid(op + ": X must be 3-D, got " + shape_string(xs));
    const int64_t seq = layout_ == 0 ? xs[0] : xs[1], batch = layout_ == 0 ? xs[1] : xs[0], in = xs[2];
    const int64_t hs = hidden_ > 0 ? hidden_ : (rs.size() == 3 ? rs[2] : 0);
    if (ws != Shape{dirs, g * hs, in})
      sdk::fail_invalid(op + ": W " + shape_string(ws) + " should be " + shape_string({dirs, g * hs, in}));
    if (rs != Shape{dirs, g * hs, hs})
      sdk::fail_invalid(op + ": R " + shape_string(rs) + " should be " + shape_string({dirs, g * hs, hs}));
    auto check = [&](const ConstTensor& t, const Shape& want, const char* what) {
      if (t.exists() && t.shape() != want)
        sdk::fail_invalid(op + ": " + what + " " + shape_string(t.shape()) + " should be " + shape_string(want));
    };
    check(b, {dirs, 2 * g * hs}, "B");
    const Shape state_shape = layout_ == 0 ? Shape{dirs, batch, hs} : Shape{batch, dirs, hs};
    check(h0, state_shape, "initial_h");
    check(c0, state_shape, "initial_c");
    check(peep, {dirs, 3 * hs}, "P");
    std::vector<int64_t> len(static_cast<size_t>(batch), seq);
    if (lens.exists()) {
      if (lens.rank() != 1 || lens.size() != batch) sdk::fail_invalid(op + ": sequence_lens must have batch elements");
      len = lens.to_int64_vector();
      for (int64_t l : len)
        if (l < 0 || l > seq) sdk::fail_invalid(op + ": sequence length " + std::to_string(l) + " out of range");
    }

    // Inputs in A, X as [seq, batch, in] and states as [dirs, batch, hs].
    std::vector<A> xv(static_cast<size_t>(seq * batch * in));
    {
      const std::vector<A> raw = read<A, T>(x);
      for (int64_t t = 0; t < seq; ++t)
        for (int64_t bi = 0; bi < batch; ++bi) {
          const int64_t src = layout_ == 0 ? (t * batch + bi) * in : (bi * seq + t) * in;
          std::copy(raw.begin() + src, raw.begin() + src + in, xv.begin() + (t * batch + bi) * in);
        }
    }
    auto state_in = [&](const ConstTensor& t) {
      std::vector<A> s(static_cast<size_t>(dirs * batch * hs), A(0));
      if (!t.exists()) return s;
      const std::vector<A> raw = read<A, T>(t);
      for (int64_t d = 0; d < dirs; ++d)
        for (int64_t bi = 0; bi < batch; ++bi) {
          const int64_t src = layout_ == 0 ? (d * batch + bi) * hs : (bi * dirs + d) * hs;
          std::copy(raw.begin() + src, raw.begin() + src + hs, s.begin() + (d * batch + bi) * hs);
        }
      return s;
    };
    std::vector<A> hstate = state_in(h0), cstate = state_in(c0);
    const std::vector<A> wv = read<A, T>(w), rv = read<A, T>(r);
    const std::vector<A> bv = b.exists() ? read<A, T>(b) : std::vector<A>(static_cast<size_t>(dirs * 2 * g * hs), A(0));
    const std::vector<A> pv = peep.exists() ? read<A, T>(peep) : std::vector<A>(static_cast<size_t>(dirs * 3 * hs), A(0));
    std::vector<A> yv(static_cast<size_t>(seq * dirs * batch * hs), A(0));  // [seq, dirs, batch, hs]

    const int64_t gh = g * hs;
    std::vector<A> xw(static_cast<size_t>(seq * batch * gh)), hr(static_cast<size_t>(batch * gh));
    std::vector<A> gate(static_cast<size_t>(gh)), rh(static_cast<size_t>(batch * hs)), hrh(static_cast<size_t>(batch * hs));
    auto clip = [&](A v) {
      return has_clip_ ? std::max(static_cast<A>(-clip_), std::min(static_cast<A>(clip_), v)) : v;
    };
    for (int64_t d = 0; d < dirs; ++d) {
      const bool rev = reverse_ || d == 1;
      const A* wd = wv.data() + d * gh * in;
      const A* rd = rv.data() + d * gh * hs;
      const A* wb = bv.data() + d * 2 * gh;
      const A* rb = wb + gh;
      const A* pd = pv.data() + d * 3 * hs;
      const Activation* act = acts_.data() + d * (cell_ == Cell::kRnn ? 1 : cell_ == Cell::kGru ? 2 : 3);
      A* hd = hstate.data() + d * batch * hs;
      A* cd = cstate.data() + d * batch * hs;
      // xw[t*batch + b, :] = X_t,b * W^T for every step at once.
      if (seq * batch > 0 && in > 0)
        nn_gemm<A>(false, true, seq * batch, gh, in, A(1), xv.data(), in, wd, in, A(0), xw.data(), gh);
      else
        std::fill(xw.begin(), xw.end(), A(0));
      for (int64_t s = 0; s < seq; ++s) {
        // hr = H * R^T for the whole batch (rows of finished sequences are unused).
        if (batch > 0 && hs > 0)
          nn_gemm<A>(false, true, batch, gh, hs, A(1), hd, hs, rd, hs, A(0), hr.data(), gh);
        if (cell_ == Cell::kGru && !linear_before_reset_) {
          // r = f(Xr + H Rr + biases), then (r * H) * Rh^T.
          for (int64_t bi = 0; bi < batch; ++bi) {
            if (s >= len[bi]) continue;
            const int64_t t = rev ? len[bi] - 1 - s : s;
            const A* xr = xw.data() + (t * batch + bi) * gh;
            for (int64_t j = 0; j < hs; ++j) {
              const A rg = act[0](clip(xr[hs + j] + hr[bi * gh + hs + j] + wb[hs + j] + rb[hs + j]));
              rh[bi * hs + j] = rg * hd[bi * hs + j];
            }
          }
          if (batch > 0 && hs > 0)
            nn_gemm<A>(false, true, batch, hs, hs, A(1), rh.data(), hs, rd + 2 * hs * hs, hs, A(0), hrh.data(), hs);
        }
        for (int64_t bi = 0; bi < batch; ++bi) {
          if (s >= len[bi]) continue;
          const int64_t t = rev ? len[bi] - 1 - s : s;
          const A* xr = xw.data() + (t * batch + bi) * gh;
          const A* hrr = hr.data() + bi * gh;
          A* h = hd + bi * hs;
          A* c = cd + bi * hs;
          for (int64_t j = 0; j < gh; ++j) gate[j] = xr[j] + hrr[j] + wb[j] + rb[j];
          if (cell_ == Cell::kRnn) {
            for (int64_t j = 0; j < hs; ++j) h[j] = act[0](clip(gate[j]));
          } else if (cell_ == Cell::kGru) {
            for (int64_t j = 0; j < hs; ++j) {
              const A z = act[0](clip(gate[j]));
              const A rg = act[0](clip(gate[hs + j]));
              A pre;
              if (linear_before_reset_) pre = xr[2 * hs + j] + wb[2 * hs + j] + rg * (hrr[2 * hs + j] + rb[2 * hs + j]);
              else pre = xr[2 * hs + j] + wb[2 * hs + j] + rb[2 * hs + j] + hrh[bi * hs + j];
              const A hn = act[1](clip(pre));
              h[j] = (A(1) - z) * hn + z * h[j];
            }
          } else {
            for (int64_t j = 0; j < hs; ++j) {
              const A i_g = act[0](clip(gate[j] + pd[j] * c[j]));
              const A f_g = input_forget_ ? A(1) - i_g : act[0](clip(gate[2 * hs + j] + pd[2 * hs + j] * c[j]));
              const A c_n = act[1](clip(gate[3 * hs + j]));
              const A c_new = f_g * c[j] + i_g * c_n;
              const A o_g = act[0](clip(gate[hs + j] + pd[hs + j] * c_new));
              c[j] = c_new;
              h[j] = o_g * act[2](c_new);
            }
          }
          std::copy(h, h + hs, yv.begin() + ((t * dirs + d) * batch + bi) * hs);
        }
      }
    }

    // Outputs in the requested layout.
    const auto wanted = [&](size_t i) { return ctx.output_count() > i && !ctx.node().output_name(i).empty(); };
    if (wanted(0)) {
      const Shape ys = layout_ == 0 ? Shape{seq, dirs, batch, hs} : Shape{batch, seq, dirs, hs};
      sdk::Tensor yt = ctx.output(0, ys, sdk::DTypeOf<T>::value);
      if (!yv.empty()) {
        T* py = yt.template mutable_data<T>();
        for (int64_t t = 0; t < seq; ++t)
          for (int64_t d = 0; d < dirs; ++d)
            for (int64_t bi = 0; bi < batch; ++bi) {
              const int64_t src = ((t * dirs + d) * batch + bi) * hs;
              const int64_t dst = layout_ == 0 ? src : ((bi * seq + t) * dirs + d) * hs;
              for (int64_t j = 0; j < hs; ++j) py[dst + j] = static_cast<T>(yv[src + j]);
            }
      }
    }
    auto state_out = [&](size_t i, const std::vector<A>& s) {
      sdk::Tensor st = ctx.output(i, state_shape, sdk::DTypeOf<T>::value);
      if (s.empty()) return;
      T* p = st.template mutable_data<T>();
      for (int64_t d = 0; d < dirs; ++d)
        for (int64_t bi = 0; bi < batch; ++bi) {
          const int64_t src = (d * batch + bi) * hs;
          const int64_t dst = layout_ == 0 ? src : (bi * dirs + d) * hs;
          for (int64_t j = 0; j < hs; ++j) p[dst + j] = static_cast<T>(s[src + j]);
        }
    };
    if (wanted(1)) state_out(1, hstate);
    if (cell_ == Cell::kLstm && wanted(2)) state_out(2, cstate);
  }

  Cell cell_;
  const char* name_;
  int directions_ = 1;
  bool reverse_ = false;
  int64_t hidden_ = 0, layout_ = 0;
  bool has_clip_ = false;
  float clip_ = 0;
  bool linear_before_reset_ = false, input_forget_ = false;
  std::vector<Activation> acts_;
};

struct Rnn : Recurrent {
  explicit Rnn(const sdk::Node& n) : Recurrent(n, Cell::kRnn, "RNN") {}
};
struct Gru : Recurrent {
  explicit Gru(const sdk::Node& n) : Recurrent(n, Cell::kGru, "GRU") {}
};
struct Lstm : Recurrent {
  explicit Lstm(const sdk::Node& n) : Recurrent(n, Cell::kLstm, "LSTM") {}
};

}  // namespace

void register_nn_rnn_kernels(sdk::KernelRegistry& r) {
  r.add_class<Rnn>("", "RNN", 1, LOOM_OPSET_OPEN_END);
  r.add_class<Gru>("", "GRU", 1, LOOM_OPSET_OPEN_END);
  r.add_class<Lstm>("", "LSTM", 1, LOOM_OPSET_OPEN_END);
}

}  // namespace loom::reference
