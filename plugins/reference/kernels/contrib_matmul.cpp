// com.microsoft FusedMatMul (ONNX Runtime semantics): Y = alpha * op(A) x op(B)
// with numpy batch broadcasting; op transposes the last two dims when transA /
// transB is set (ignored for a 1-D operand). transBatchA / transBatchB are not
// implemented. MatMulIntegerToFloat's kernel is nn_matmul.cpp's.
#include <string>
#include <vector>

#include "common/broadcast.h"
#include "common/dispatch.h"
#include "common/shape.h"
#include "kernels/contrib_internal.h"
#include "kernels/nn_internal.h"

namespace loom::reference {
namespace {

using sdk::ConstTensor;
using sdk::KernelContext;

class FusedMatMulKernel {
 public:
  explicit FusedMatMulKernel(const sdk::Node& node) {
    alpha_ = node.attr_float("alpha", 1.0f);
    trans_a_ = node.attr_int("transA", 0) != 0;
    trans_b_ = node.attr_int("transB", 0) != 0;
    if (node.attr_int("transBatchA", 0) != 0 || node.attr_int("transBatchB", 0) != 0)
      throw sdk::Error("FusedMatMul: transBatchA / transBatchB = 1 is not implemented", LOOM_STATUS_NOT_IMPLEMENTED);
  }

  void compute(KernelContext& ctx) const {
    const std::string op = "FusedMatMul";
    const ConstTensor a = ctx.required_input(0), b = ctx.required_input(1);
    if (a.dtype() != b.dtype()) sdk::fail_invalid(op + ": A and B element types differ");
    Shape sa = a.shape(), sb = b.shape();
    if (sa.empty() || sb.empty()) sdk::fail_invalid(op + ": operands must have rank >= 1");
    const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
    const bool ta = trans_a_ && !a1, tb = trans_b_ && !b1;
    if (a1) sa.insert(sa.begin(), 1);
    if (b1) sb.push_back(1);
    const size_t ra = sa.size(), rb = sb.size();
    const int64_t m = ta ? sa[ra - 1] : sa[ra - 2], ka = ta ? sa[ra - 2] : sa[ra - 1];
    const int64_t kb = tb ? sb[rb - 1] : sb[rb - 2], n = tb ? sb[rb - 2] : sb[rb - 1];
    if (ka != kb)
      sdk::fail_invalid(op + ": inner dimensions differ: op(A) has K = " + std::to_string(ka) + " (A " +
                        shape_string(a.shape()) + ", transA " + std::to_string(trans_a_) + "), op(B) has K = " +
                        std::to_string(kb) + " (B " + shape_string(b.shape()) + ", transB " + std::to_string(trans_b_) + ")");
    const Shape a_batch(sa.begin(), sa.end() - 2), b_batch(sb.begin(), sb.end() - 2);
    const Shape batch = broadcast_shape({a_batch, b_batch}, op);
    Shape out_shape = batch;
    if (!a1) out_shape.push_back(m);
    if (!b1) out_shape.push_back(n);
    dispatch<TypeList<float, double>>(a.dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      sdk::Tensor y = ctx.output(0, out_shape, a.dtype());
      const int64_t mn = m * n, mk = m * ka, kn = ka * n;
      if (mn == 0) return;
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* py = y.mutable_data<T>();
      for_each_broadcast(batch, {a_batch, b_batch}, [&](int64_t i, const int64_t* off) {
        if (ka == 0) {
          for (int64_t j = 0; j < mn; ++j) py[i * mn + j] = T(0);
          return;
        }
        nn_gemm<T>(ta, tb, m, n, ka, static_cast<T>(alpha_), pa + off[0] * mk, ta ? m : ka, pb + off[1] * kn,
                   tb ? ka : n, T(0), py + i * mn, n, &ctx);
      });
    });
  }

 private:
  float alpha_ = 1.0f;
  bool trans_a_ = false, trans_b_ = false;
};

}  // namespace

void register_contrib_matmul_kernels(sdk::KernelRegistry& r) {
  r.add_class<FusedMatMulKernel>(kMsDomain, "FusedMatMul", 1, LOOM_OPSET_OPEN_END,
                                 {{"T", {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE}}});
  r.add(kMsDomain, "MatMulIntegerToFloat", 1, LOOM_OPSET_OPEN_END, matmul_integer_to_float);
}

}  // namespace loom::reference
