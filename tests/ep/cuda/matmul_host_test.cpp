// The matmul family's host-side planning (kernels/matmul_plan.h) and
// Attention's index and mask helpers (kernels/attention_mask.h), run on the
// CPU against naive loops: the row-major to column-major translation
// through an emulation of cuBLAS's column-major GEMM, numpy shapes, the
// batch plans executed end to end, Gemm's C broadcast rule, the QKV split
// and head merge layouts, and the mask values of every mask_index form.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/attention_mask.h"
#include "kernels/matmul_plan.h"

namespace loom {
namespace {

using cuda::AttentionDims;
using cuda::AttentionMask;
using cuda::BatchMode;
using cuda::BatchPlan;
using cuda::ColumnMajorGemm;
using cuda::MaskKind;
using cuda::MatMulShape;
using cuda::RowMajorGemm;

std::vector<double> values(size_t n, int seed) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>((static_cast<int>(i) * 7 + seed * 13) % 23) - 11.0;
  return v;
}

// cuBLAS's GEMM as BLAS defines it (column-major, 0-based): C = op(A) op(B),
// op(A) m x k, op(B) k x n, element (i, j) of a column-major X at i + j * ld.
// Checks the leading-dimension rules cuBLAS enforces.
void blas_gemm(const ColumnMajorGemm& g, const double* a, const double* b, double* c) {
  ASSERT_GE(g.ld_first, std::max<int64_t>(1, g.trans_first ? g.k : g.m));
  ASSERT_GE(g.ld_second, std::max<int64_t>(1, g.trans_second ? g.n : g.k));
  ASSERT_GE(g.ldc, std::max<int64_t>(1, g.m));
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < g.k; ++p) {
        const double x = g.trans_first ? a[p + i * g.ld_first] : a[i + p * g.ld_first];
        const double y = g.trans_second ? b[j + p * g.ld_second] : b[p + j * g.ld_second];
        s += x * y;
      }
      c[i + j * g.ldc] = s;
    }
}

// Row-major C[m, n] = op(A) op(B) by the definition.
std::vector<double> row_major_product(const RowMajorGemm& g, const double* a, const double* b) {
  std::vector<double> c(static_cast<size_t>(g.m * g.n));
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < g.k; ++p)
        s += (g.trans_a ? a[p * g.m + i] : a[i * g.k + p]) * (g.trans_b ? b[j * g.k + p] : b[p * g.n + j]);
      c[static_cast<size_t>(i * g.n + j)] = s;
    }
  return c;
}

// The product through the translation: cuBLAS's first operand is B.
std::vector<double> through_blas(const RowMajorGemm& g, const double* a, const double* b) {
  std::vector<double> c(static_cast<size_t>(g.m * g.n), -999.0);
  blas_gemm(cuda::column_major(g), b, a, c.data());
  return c;
}

TEST(CudaMatMulHost, ColumnMajorTranslationMatchesTheRowMajorProduct) {
  const int64_t sizes[][3] = {{37, 129, 61}, {1, 5, 3}, {4, 1, 7}, {1, 1, 9}, {6, 5, 1}, {2, 3, 4}};
  for (const auto& sz : sizes)
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        const RowMajorGemm g{ta, tb, sz[0], sz[1], sz[2]};
        const std::vector<double> a = values(static_cast<size_t>(g.m * g.k), 1);
        const std::vector<double> b = values(static_cast<size_t>(g.k * g.n), 2);
        EXPECT_EQ(through_blas(g, a.data(), b.data()), row_major_product(g, a.data(), b.data()))
            << g.m << "x" << g.n << "x" << g.k << " transA " << ta << " transB " << tb;
      }
}

TEST(CudaMatMulHost, LeadingDimensionsAreTheStoredRowLengths) {
  const ColumnMajorGemm n = cuda::column_major(RowMajorGemm{false, false, 3, 5, 7});
  EXPECT_EQ(n.m, 5);
  EXPECT_EQ(n.n, 3);
  EXPECT_EQ(n.k, 7);
  EXPECT_EQ(n.ld_first, 5);   // B [7, 5]
  EXPECT_EQ(n.ld_second, 7);  // A [3, 7]
  EXPECT_EQ(n.ldc, 5);
  const ColumnMajorGemm t = cuda::column_major(RowMajorGemm{true, true, 3, 5, 7});
  EXPECT_TRUE(t.trans_first && t.trans_second);
  EXPECT_EQ(t.ld_first, 7);   // B [5, 7]
  EXPECT_EQ(t.ld_second, 3);  // A [7, 3]
}

TEST(CudaMatMulHost, NumpyShapes) {
  auto check = [](std::vector<int64_t> a, std::vector<int64_t> b, std::vector<int64_t> out, int64_t m, int64_t n,
                  int64_t k, bool ta = false, bool tb = false) {
    const MatMulShape s = cuda::matmul_shape(a, b, ta, tb);
    EXPECT_EQ(s.out, out);
    EXPECT_EQ(s.m, m);
    EXPECT_EQ(s.n, n);
    EXPECT_EQ(s.k, k);
  };
  check({37, 61}, {61, 129}, {37, 129}, 37, 129, 61);
  check({61}, {61, 129}, {129}, 1, 129, 61);
  check({37, 61}, {61}, {37}, 37, 1, 61);
  check({61}, {61}, {}, 1, 1, 61);
  check({3, 37, 61}, {61, 29}, {3, 37, 29}, 37, 29, 61);
  check({2, 1, 5, 7}, {1, 3, 7, 9}, {2, 3, 5, 9}, 5, 9, 7);
  check({61}, {2, 61, 5}, {2, 5}, 1, 5, 61);
  check({61, 37}, {29, 61}, {37, 29}, 37, 29, 61, true, true);
  check({61}, {29, 61}, {29}, 1, 29, 61, true, true);  // transA ignored for a 1-D A
  const MatMulShape one_d = cuda::matmul_shape({61}, {61}, true, true);
  EXPECT_FALSE(one_d.trans_a || one_d.trans_b);
  EXPECT_THROW(cuda::matmul_shape({3, 4}, {5, 6}), std::invalid_argument);
  EXPECT_THROW(cuda::matmul_shape({2, 3, 4}, {3, 4, 6}), std::invalid_argument);  // batch 2 vs 3
  EXPECT_THROW(cuda::matmul_shape({}, {4}), std::invalid_argument);
}

TEST(CudaMatMulHost, BatchPlanModes) {
  auto mode = [](std::vector<int64_t> a, std::vector<int64_t> b, bool ta = false) {
    return cuda::plan_batches(cuda::matmul_shape(a, b, ta, false)).mode;
  };
  EXPECT_EQ(mode({37, 61}, {61, 29}), BatchMode::kStrided);
  EXPECT_EQ(mode({3, 37, 61}, {3, 61, 29}), BatchMode::kStrided);
  EXPECT_EQ(mode({3, 37, 61}, {61, 29}), BatchMode::kFoldedRows);
  EXPECT_EQ(mode({3, 61, 37}, {61, 29}, true), BatchMode::kStrided);  // transposed A cannot fold
  EXPECT_EQ(mode({37, 61}, {3, 61, 29}), BatchMode::kStrided);
  EXPECT_EQ(mode({1, 1, 5, 7}, {2, 3, 7, 9}), BatchMode::kStrided);
  EXPECT_EQ(mode({2, 3, 5, 7}, {1, 3, 7, 9}), BatchMode::kLoop);
  EXPECT_EQ(mode({2, 1, 5, 7}, {1, 3, 7, 9}), BatchMode::kLoop);
  const BatchPlan p = cuda::plan_batches(cuda::matmul_shape({37, 61}, {3, 61, 29}));
  EXPECT_EQ(p.count, 3);
  EXPECT_EQ(p.stride_a, 0);
  EXPECT_EQ(p.stride_b, 61 * 29);
}

TEST(CudaMatMulHost, BroadcastMatrixIndexMatchesNumpy) {
  const std::vector<int64_t> batch = {2, 3, 4};
  const std::vector<int64_t> op = {2, 1, 4}, right = {3, 1}, none = {};
  for (int64_t i = 0; i < 24; ++i) {
    const int64_t x = i / 12, y = (i / 4) % 3, z = i % 4;
    EXPECT_EQ(cuda::broadcast_matrix_index(i, batch, op), x * 4 + z) << i;
    EXPECT_EQ(cuda::broadcast_matrix_index(i, batch, right), y) << i;
    EXPECT_EQ(cuda::broadcast_matrix_index(i, batch, none), 0) << i;
    EXPECT_EQ(cuda::broadcast_matrix_index(i, batch, batch), i) << i;
  }
}

// Runs a plan the way gemm_blas.cpp does (each GEMM through the emulated
// cuBLAS) and compares with numpy semantics computed directly.
std::vector<double> run_plan(const MatMulShape& s, const std::vector<double>& a, const std::vector<double>& b) {
  const BatchPlan p = cuda::plan_batches(s);
  const int64_t mn = s.m * s.n, mk = s.m * s.k, kn = s.k * s.n;
  std::vector<double> y(static_cast<size_t>(p.count * mn), -999.0);
  RowMajorGemm g{s.trans_a, s.trans_b, s.m, s.n, s.k};
  if (p.mode == BatchMode::kFoldedRows) {
    g.m = p.count * s.m;
    blas_gemm(cuda::column_major(g), b.data(), a.data(), y.data());
    return y;
  }
  for (int64_t i = 0; i < p.count; ++i) {
    int64_t ia, ib;
    if (p.mode == BatchMode::kStrided) {
      ia = i * p.stride_a;
      ib = i * p.stride_b;
    } else {
      ia = cuda::broadcast_matrix_index(i, s.batch, s.a_batch) * mk;
      ib = cuda::broadcast_matrix_index(i, s.batch, s.b_batch) * kn;
    }
    blas_gemm(cuda::column_major(g), b.data() + ib, a.data() + ia, y.data() + i * mn);
  }
  return y;
}

std::vector<double> numpy_matmul(std::vector<int64_t> sa, std::vector<int64_t> sb, bool ta, bool tb,
                                 const std::vector<double>& a, const std::vector<double>& b) {
  if (sa.size() == 1) ta = false, sa.insert(sa.begin(), 1);
  if (sb.size() == 1) tb = false, sb.push_back(1);
  const size_t r = std::max(sa.size(), sb.size()) - 2;
  std::vector<int64_t> pa(r, 1), pb(r, 1), batch(r);
  std::copy(sa.begin(), sa.end() - 2, pa.begin() + static_cast<long>(r - (sa.size() - 2)));
  std::copy(sb.begin(), sb.end() - 2, pb.begin() + static_cast<long>(r - (sb.size() - 2)));
  int64_t count = 1;
  for (size_t d = 0; d < r; ++d) count *= (batch[d] = std::max(pa[d], pb[d]));
  const int64_t m = ta ? sa.back() : sa[sa.size() - 2], k = ta ? sa[sa.size() - 2] : sa.back();
  const int64_t n = tb ? sb[sb.size() - 2] : sb.back();
  std::vector<double> y;
  for (int64_t i = 0; i < count; ++i) {
    int64_t oa = 0, ob = 0, sta = 1, stb = 1, rem = i;
    for (size_t d = r; d-- > 0;) {
      const int64_t c = rem % batch[d];
      rem /= batch[d];
      oa += (pa[d] == 1 ? 0 : c) * sta;
      ob += (pb[d] == 1 ? 0 : c) * stb;
      sta *= pa[d];
      stb *= pb[d];
    }
    const std::vector<double> part =
        row_major_product(RowMajorGemm{ta, tb, m, n, k}, a.data() + oa * m * k, b.data() + ob * k * n);
    y.insert(y.end(), part.begin(), part.end());
  }
  return y;
}

TEST(CudaMatMulHost, BatchPlansComputeNumpyProducts) {
  struct Case {
    std::vector<int64_t> a, b;
    bool ta, tb;
  };
  const std::vector<Case> cases = {
      {{5, 7}, {7, 3}, false, false},          {{3, 5, 7}, {3, 7, 2}, false, false},
      {{3, 5, 7}, {7, 2}, false, false},       {{2, 3, 5, 7}, {7, 2}, false, false},
      {{5, 7}, {3, 7, 2}, false, false},       {{1, 1, 5, 7}, {2, 3, 7, 4}, false, false},
      {{2, 3, 5, 7}, {1, 3, 7, 4}, false, false}, {{2, 1, 5, 7}, {1, 3, 7, 4}, false, false},
      {{2, 1, 7, 5}, {1, 3, 4, 7}, true, true}, {{3, 7, 5}, {7, 2}, true, false},
      {{3, 5, 7}, {2, 7}, false, true},        {{7}, {2, 7, 3}, false, false},
      {{2, 3, 7}, {7}, false, false},          {{7}, {7}, false, false},
  };
  for (const Case& c : cases) {
    const MatMulShape s = cuda::matmul_shape(c.a, c.b, c.ta, c.tb);
    int64_t na = 1, nb = 1;
    for (int64_t d : c.a) na *= d;
    for (int64_t d : c.b) nb *= d;
    const std::vector<double> a = values(static_cast<size_t>(na), 3), b = values(static_cast<size_t>(nb), 4);
    EXPECT_EQ(run_plan(s, a, b), numpy_matmul(c.a, c.b, c.ta, c.tb, a, b))
        << "A rank " << c.a.size() << " B rank " << c.b.size() << " mode "
        << static_cast<int>(cuda::plan_batches(s).mode);
  }
}

TEST(CudaMatMulHost, GemmCBroadcastForms) {
  EXPECT_TRUE(cuda::gemm_c_broadcasts({}, 3, 4));
  EXPECT_TRUE(cuda::gemm_c_broadcasts({4}, 3, 4));
  EXPECT_TRUE(cuda::gemm_c_broadcasts({1}, 3, 4));
  EXPECT_TRUE(cuda::gemm_c_broadcasts({1, 4}, 3, 4));
  EXPECT_TRUE(cuda::gemm_c_broadcasts({3, 1}, 3, 4));
  EXPECT_TRUE(cuda::gemm_c_broadcasts({3, 4}, 3, 4));
  EXPECT_TRUE(cuda::gemm_c_broadcasts({1, 1}, 3, 4));
  EXPECT_FALSE(cuda::gemm_c_broadcasts({3}, 3, 4));
  EXPECT_FALSE(cuda::gemm_c_broadcasts({4, 3}, 3, 4));
  EXPECT_FALSE(cuda::gemm_c_broadcasts({1, 3, 4}, 3, 4));
}

TEST(CudaAttentionHost, QkvSplitAndHeadMergeLayouts) {
  AttentionDims d;
  d.batch = 2;
  d.seq = 3;
  d.heads = 2;
  d.head = 4;
  d.head_v = 5;
  EXPECT_EQ(d.width(), 2 * 8 + 10);
  std::vector<int> seen[3] = {std::vector<int>(static_cast<size_t>(d.batch * d.seq * d.dq()), 0),
                              std::vector<int>(static_cast<size_t>(d.batch * d.seq * d.dq()), 0),
                              std::vector<int>(static_cast<size_t>(d.batch * d.seq * d.dv()), 0)};
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t s = 0; s < d.seq; ++s)
      for (int64_t c = 0; c < d.width(); ++c) {
        const cuda::QkvSlot slot = cuda::qkv_slot(d, b, s, c);
        // Naive: column c of [Q | K | V]; head n, channel h; [B, N, S, size].
        const int which = c < 8 ? 0 : c < 16 ? 1 : 2;
        const int64_t local = c - 8 * which, size = which == 2 ? 5 : 4;
        const int64_t n = local / size, h = local % size;
        EXPECT_EQ(slot.which, which);
        EXPECT_EQ(slot.offset, ((b * 2 + n) * 3 + s) * size + h);
        ++seen[which][static_cast<size_t>(slot.offset)];
      }
  for (const auto& v : seen)
    for (int count : v) EXPECT_EQ(count, 1);  // a bijection onto Q, K, V
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t s = 0; s < d.seq; ++s)
      for (int64_t n = 0; n < d.heads; ++n)
        for (int64_t h = 0; h < d.head_v; ++h)
          EXPECT_EQ(cuda::merged_source(d, (b * d.seq + s) * d.dv() + n * d.head_v + h),
                    ((b * d.heads + n) * d.seq + s) * d.head_v + h);
}

// The reference EP's PrepareMask for B batches of T tokens (no past).
double reference_mask(int kind, const std::vector<int32_t>& m, int64_t B, int64_t T, int64_t b, int64_t s, int64_t t,
                      double filter, bool uni) {
  auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v, 0, T); };
  double o = 0;
  if (kind == 1 || kind == 2) {
    if (t >= clamp(m[static_cast<size_t>(b)])) o = filter;
    if (kind == 2 && t < clamp(m[static_cast<size_t>(B + b)])) o = filter;
  } else if (kind == 3) {
    o = m[static_cast<size_t>(b * T + t)] > 0 ? 0.0 : filter;
  } else if (kind == 4) {
    o = m[static_cast<size_t>((b * T + s) * T + t)] > 0 ? 0.0 : filter;
  }
  if (uni && t > s) o = static_cast<double>(std::numeric_limits<float>::lowest());
  return o;
}

TEST(CudaAttentionHost, MaskValuesMatchTheReference) {
  const int64_t B = 2, T = 5;
  struct Form {
    std::vector<int64_t> dims;
    std::vector<int32_t> data;
    MaskKind kind;
    int reference_kind;
  };
  std::vector<int32_t> full(static_cast<size_t>(B * T * T));
  for (size_t i = 0; i < full.size(); ++i) full[i] = (i * 7) % 3 == 0 ? 0 : 1;
  const std::vector<Form> forms = {
      {{}, {}, MaskKind::kNone, 0},
      {{2}, {3, 9}, MaskKind::kEnd, 1},
      {{2}, {-1, 0}, MaskKind::kEnd, 1},
      {{4}, {4, 5, 1, 2}, MaskKind::kEndStart, 2},
      {{2, 5}, {1, 1, 0, 1, 0, 0, 1, 1, 1, 2}, MaskKind::kKeys, 3},
      {{2, 5, 5}, full, MaskKind::kFull, 4},
      {{2, 1}, {1, 1}, MaskKind::kNone, 0},
      {{1, 1}, {1}, MaskKind::kNone, 0},
  };
  for (const Form& f : forms)
    for (bool uni : {false, true}) {
      std::string why;
      if (!f.dims.empty()) {
        EXPECT_EQ(cuda::attention_mask_kind(f.dims, B, T, &why), f.kind);
        EXPECT_EQ(why, "");
      }
      AttentionMask m;
      m.kind = f.kind;
      m.data = f.data.data();
      m.filter = -1234.5f;
      m.unidirectional = uni;
      for (int64_t b = 0; b < B; ++b)
        for (int64_t s = 0; s < T; ++s)
          for (int64_t t = 0; t < T; ++t)
            EXPECT_EQ(static_cast<double>(cuda::attention_mask_value(m, B, T, b, s, t)),
                      reference_mask(f.reference_kind, f.data, B, T, b, s, t, -1234.5, uni))
                << "kind " << static_cast<int>(f.kind) << " uni " << uni << " b" << b << " s" << s << " t" << t;
    }
  std::string why;
  cuda::attention_mask_kind({3}, B, T, &why);
  EXPECT_NE(why, "");
  cuda::attention_mask_kind({2, 4}, B, T, &why);
  EXPECT_NE(why, "");
  cuda::attention_mask_kind({2, 1, 5, 5}, B, T, &why);
  EXPECT_NE(why, "");
}

}  // namespace
}  // namespace loom
