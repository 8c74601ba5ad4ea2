// Matrix products: MatMul (numpy batching and 1-D operands), Gemm,
// MatMulInteger and QLinearMatMul, all on the shared GEMM (nn_gemm.cpp);
// also com.microsoft MatMulIntegerToFloat, which shares their integer
// matmul (registered with the contrib family, contrib_matmul.cpp).
#include <vector>

#include "common/broadcast.h"
#include "common/dispatch.h"
#include "common/nn_quant.h"
#include "kernel_families.h"
#include "kernels/nn_internal.h"

namespace loom::reference {
namespace {

using sdk::ConstTensor;
using sdk::KernelContext;

// Shapes of a numpy matmul: batch dims broadcast, 1-D operands promoted.
struct MatMulProblem {
  int64_t m = 0, k = 0, n = 0;
  Shape a_batch, b_batch, batch, out_shape;
};

MatMulProblem matmul_problem(Shape sa, Shape sb, const std::string& op) {
  if (sa.empty() || sb.empty()) sdk::fail_invalid(op + ": operands must have rank >= 1");
  const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
  if (a1) sa.insert(sa.begin(), 1);
  if (b1) sb.push_back(1);
  MatMulProblem p;
  p.m = sa[sa.size() - 2];
  p.k = sa[sa.size() - 1];
  p.n = sb[sb.size() - 1];
  if (sb[sb.size() - 2] != p.k)
    sdk::fail_invalid(op + ": inner dimensions differ: A " + shape_string(sa) + " and B " + shape_string(sb));
  p.a_batch.assign(sa.begin(), sa.end() - 2);
  p.b_batch.assign(sb.begin(), sb.end() - 2);
  p.batch = broadcast_shape({p.a_batch, p.b_batch}, op);
  p.out_shape = p.batch;
  if (!a1) p.out_shape.push_back(p.m);
  if (!b1) p.out_shape.push_back(p.n);
  return p;
}

// y[batch, m, n] = a[a_batch, m, k] * b[b_batch, k, n] with broadcast batches;
// stops between blocks once `ctx`'s run is cancelled or timed out.
template <class A>
void batched_matmul(const KernelContext& ctx, const MatMulProblem& p, const A* a, const A* b, A* y) {
  const KernelContext* stop = &ctx;
  const int64_t mk = p.m * p.k, kn = p.k * p.n, mn = p.m * p.n;
  if (mn == 0) return;
  for_each_broadcast(p.batch, {p.a_batch, p.b_batch}, [&](int64_t i, const int64_t* off) {
    nn_gemm<A>(false, false, p.m, p.n, p.k, A(1), a + off[0] * mk, p.k, b + off[1] * kn, p.n, A(0), y + i * mn, p.n,
               stop);
  });
}

void matmul(KernelContext& ctx) {
  const ConstTensor a = ctx.required_input(0), b = ctx.required_input(1);
  if (a.dtype() != b.dtype()) sdk::fail_invalid("MatMul: A and B element types differ");
  const MatMulProblem p = matmul_problem(a.shape(), b.shape(), "MatMul");
  dispatch<TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>>(
      a.dtype(), "MatMul", [&](auto tag) {
        using T = decltype(tag);
        using A = compute_t<T>;
        sdk::Tensor yt = ctx.output(0, p.out_shape, a.dtype());
        const int64_t ny = element_count(p.out_shape);
        if (ny == 0) return;
        T* y = yt.template mutable_data<T>();
        if constexpr (std::is_same_v<T, A>) {
          batched_matmul<A>(ctx, p, a.template data<T>(), b.template data<T>(), y);
        } else {
          const std::vector<A> av = nn_to_vector<A>(a.template data<T>(), a.size());
          const std::vector<A> bv = nn_to_vector<A>(b.template data<T>(), b.size());
          std::vector<A> yv(static_cast<size_t>(ny));
          batched_matmul<A>(ctx, p, av.data(), bv.data(), yv.data());
          for (int64_t i = 0; i < ny; ++i) y[i] = static_cast<T>(yv[i]);
        }
      });
}

class Gemm {
 public:
  explicit Gemm(const sdk::Node& n)
      : trans_a_(n.attr_int("transA", 0) != 0),
        trans_b_(n.attr_int("transB", 0) != 0),
        alpha_(n.attr_float("alpha", 1.0f)),
        beta_(n.attr_float("beta", 1.0f)) {}

  void compute(KernelContext& ctx) const { run(ctx); }

  // Computes Y into output 0 and returns it (FusedGemm applies its activation to it).
  sdk::Tensor run(KernelContext& ctx) const {
    const ConstTensor a = ctx.required_input(0), b = ctx.required_input(1), c = ctx.input(2);
    const Shape sa = a.shape(), sb = b.shape();
    if (sa.size() != 2 || sb.size() != 2)
      sdk::fail_invalid("Gemm: A " + shape_string(sa) + " and B " + shape_string(sb) + " must be 2-D");
    if (a.dtype() != b.dtype() || (c.exists() && c.dtype() != a.dtype()))
      sdk::fail_invalid("Gemm: A, B and C element types differ");
    const int64_t m = trans_a_ ? sa[1] : sa[0], k = trans_a_ ? sa[0] : sa[1];
    const int64_t n = trans_b_ ? sb[0] : sb[1], kb = trans_b_ ? sb[1] : sb[0];
    if (k != kb)
      sdk::fail_invalid("Gemm: inner dimensions differ: op(A) is [" + std::to_string(m) + "," + std::to_string(k) +
                        "], op(B) is [" + std::to_string(kb) + "," + std::to_string(n) + "]");
    const Shape ys = {m, n};
    Shape cs;
    if (c.exists()) {
      cs = c.shape();
      if (cs.size() > 2) sdk::fail_invalid("Gemm: C " + shape_string(cs) + " has rank > 2");
      // Unidirectional: C must broadcast to [M, N].
      if (broadcast_shape({cs, ys}, "Gemm") != ys)
        sdk::fail_invalid("Gemm: C " + shape_string(cs) + " cannot be broadcast to " + shape_string(ys));
    }
    sdk::Tensor yt;
    dispatch<TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>>(
        a.dtype(), "Gemm", [&](auto tag) {
          using T = decltype(tag);
          using A = compute_t<T>;
          yt = ctx.output(0, ys, a.dtype());
          if (m * n == 0) return;
          T* y = yt.template mutable_data<T>();
          const A alpha = static_cast<A>(alpha_), beta = static_cast<A>(beta_);
          std::vector<A> yv;
          A* acc;
          if constexpr (std::is_same_v<T, A>) {
            acc = y;
          } else {
            yv.resize(static_cast<size_t>(m * n));
            acc = yv.data();
          }
          const bool use_c = c.exists() && beta != A(0);
          if (use_c) {
            const T* pc = c.template data<T>();
            for_each_broadcast(ys, {cs}, [&](int64_t i, const int64_t* off) { acc[i] = beta * static_cast<A>(pc[off[0]]); });
          }
          const A* pa;
          const A* pb;
          std::vector<A> av, bv;
          if constexpr (std::is_same_v<T, A>) {
            pa = a.template data<T>();
            pb = b.template data<T>();
          } else {
            av = nn_to_vector<A>(a.template data<T>(), a.size());
            bv = nn_to_vector<A>(b.template data<T>(), b.size());
            pa = av.data();
            pb = bv.data();
          }
          nn_gemm<A>(trans_a_, trans_b_, m, n, k, alpha, pa, sa[1], pb, sb[1], use_c ? A(1) : A(0), acc, n, &ctx);
          if constexpr (!std::is_same_v<T, A>)
            for (int64_t i = 0; i < m * n; ++i) y[i] = static_cast<T>(acc[i]);
        });
    return yt;
  }

 private:
  bool trans_a_, trans_b_;
  float alpha_, beta_;
};

// Reads a uint8/int8 tensor as int32 minus its zero point. The zero point is
// per tensor (1 element) or per row of A / per column of B: `lines` rows or
// columns per matrix, `count` lines in all (lines or batch * lines).
std::vector<int32_t> centered(const ConstTensor& t, const ConstTensor& zero, const MatMulProblem& p, bool is_a,
                              const std::string& op) {
  const int64_t n = t.size();
  const int64_t lines = is_a ? p.m : p.n;
  std::vector<int32_t> zp;
  if (zero.exists()) {
    for (int64_t i = 0; i < zero.size(); ++i) zp.push_back(param_as_int(zero, i));
    const int64_t batches = element_count(is_a ? p.a_batch : p.b_batch);
    if (zp.size() != 1 && static_cast<int64_t>(zp.size()) != lines &&
        static_cast<int64_t>(zp.size()) != lines * batches)
      sdk::fail_invalid(op + ": zero point of " + (is_a ? "A" : "B") + " has " + std::to_string(zp.size()) +
                        " elements; expected 1, " + std::to_string(lines) + " or " + std::to_string(lines * batches));
  } else {
    zp.push_back(0);
  }
  std::vector<int32_t> out(static_cast<size_t>(n));
  dispatch<TypeList<uint8_t, int8_t>>(t.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* pt = t.template data<T>();
    const int64_t mat = p.m * p.k * (is_a ? 1 : 0) + p.k * p.n * (is_a ? 0 : 1);
    for (int64_t i = 0; i < n; ++i) {
      int64_t z = 0;
      if (zp.size() != 1) {
        const int64_t in_mat = mat ? i % mat : 0, batch = mat ? i / mat : 0;
        const int64_t line = is_a ? in_mat / p.k : in_mat % p.n;
        z = static_cast<int64_t>(zp.size()) == lines ? line : batch * lines + line;
      }
      out[i] = static_cast<int32_t>(pt[i]) - zp[z];
    }
  });
  return out;
}

void matmul_integer(KernelContext& ctx) {
  const ConstTensor a = ctx.required_input(0), b = ctx.required_input(1);
  const MatMulProblem p = matmul_problem(a.shape(), b.shape(), "MatMulInteger");
  const std::vector<int32_t> av = centered(a, ctx.input(2), p, true, "MatMulInteger");
  const std::vector<int32_t> bv = centered(b, ctx.input(3), p, false, "MatMulInteger");
  sdk::Tensor yt = ctx.output(0, p.out_shape, LOOM_DTYPE_INT32);
  if (element_count(p.out_shape) == 0) return;
  batched_matmul<int32_t>(ctx, p, av.data(), bv.data(), yt.mutable_data<int32_t>());
}

void qlinear_matmul(KernelContext& ctx) {
  const std::string op = "QLinearMatMul";
  const ConstTensor a = ctx.required_input(0), b = ctx.required_input(3), y_zero = ctx.required_input(7);
  const MatMulProblem p = matmul_problem(a.shape(), b.shape(), op);
  const std::vector<int32_t> av = centered(a, ctx.required_input(2), p, true, op);
  const std::vector<int32_t> bv = centered(b, ctx.required_input(5), p, false, op);
  const QuantParams aq = read_quant_params(ctx.required_input(1), ConstTensor(), p.m, op + " a_scale");
  const QuantParams bq = read_quant_params(ctx.required_input(4), ConstTensor(), p.n, op + " b_scale");
  const QuantParams yq = read_quant_params(ctx.required_input(6), y_zero, 1, op + " y");
  const int64_t ny = element_count(p.out_shape);
  dispatch<TypeList<uint8_t, int8_t>>(y_zero.dtype(), op, [&](auto tag) {
    using Q = decltype(tag);
    sdk::Tensor yt = ctx.output(0, p.out_shape, y_zero.dtype());  // Y first: its limit before any work
    if (ny == 0) return;
    int32_t* acc = ctx.scratch<int32_t>(ny, op + " accumulators");
    batched_matmul<int32_t>(ctx, p, av.data(), bv.data(), acc);
    Q* y = yt.template mutable_data<Q>();
    const int64_t mn = p.m * p.n;
    for (int64_t i = 0; i < ny; ++i) {
      const int64_t row = (i % mn) / p.n, col = i % p.n;
      const float scale = aq.scale_at(row) * bq.scale_at(col) / yq.scale_at(0);
      y[i] = quantize_round<Q>(static_cast<float>(acc[i]) * scale, yq.zero_at(0));
    }
  });
}

}  // namespace

// com.microsoft MatMulIntegerToFloat (ONNX Runtime): inputs A, B, a_scale,
// b_scale, a_zero_point, b_zero_point, bias; Y = (A - a_zp) x (B - b_zp) *
// (a_scale * b_scale[n]) + bias[n], batched like MatMul. The scale product
// is formed first, in float, as cpu_onednn's output scales are.
void matmul_integer_to_float(KernelContext& ctx) {
  const std::string op = "MatMulIntegerToFloat";
  const ConstTensor a = ctx.required_input(0), b = ctx.required_input(1);
  const MatMulProblem p = matmul_problem(a.shape(), b.shape(), op);
  const std::vector<int32_t> av = centered(a, ctx.input(4), p, true, op);
  const std::vector<int32_t> bv = centered(b, ctx.input(5), p, false, op);
  const QuantParams aq = read_quant_params(ctx.required_input(2), ConstTensor(), 1, op + " a_scale");
  const QuantParams bq = read_quant_params(ctx.required_input(3), ConstTensor(), p.n, op + " b_scale");
  const ConstTensor bias = ctx.input(6);
  if (bias.exists() && (bias.dtype() != LOOM_DTYPE_FLOAT || bias.size() != p.n))
    sdk::fail_invalid(op + ": bias must be float32 with " + std::to_string(p.n) + " elements (N)");
  const float* pbias = bias.exists() ? bias.data<float>() : nullptr;
  const int64_t ny = element_count(p.out_shape);
  sdk::Tensor yt = ctx.output(0, p.out_shape, LOOM_DTYPE_FLOAT);  // Y first: its limit before any work
  if (ny == 0) return;
  int32_t* acc = ctx.scratch<int32_t>(ny, op + " accumulators");
  batched_matmul<int32_t>(ctx, p, av.data(), bv.data(), acc);
  float* y = yt.mutable_data<float>();
  for (int64_t i = 0; i < ny; ++i) {
    const int64_t col = i % p.n;
    const float scale = aq.scale_at(0) * bq.scale_at(col);
    y[i] = static_cast<float>(acc[i]) * scale + (pbias ? pbias[col] : 0.f);
  }
}

sdk::Tensor gemm_into_output(KernelContext& ctx, const sdk::Node& node) { return Gemm(node).run(ctx); }

void register_nn_matmul_kernels(sdk::KernelRegistry& r) {
  r.add("", "MatMul", 1, LOOM_OPSET_OPEN_END, matmul);
  r.add_class<Gemm>("", "Gemm", 1, LOOM_OPSET_OPEN_END);
  r.add("", "MatMulInteger", 10, LOOM_OPSET_OPEN_END, matmul_integer);
  r.add("", "QLinearMatMul", 10, LOOM_OPSET_OPEN_END, qlinear_matmul);
}

}  // namespace loom::reference
