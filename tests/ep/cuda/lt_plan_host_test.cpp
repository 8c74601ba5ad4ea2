// The cuBLASLt product's host-side plan (kernels/lt_plan.h) on the CPU: the
// operand layouts through an emulation of cublasLtMatmul with its bias and
// ReLU epilogues against the row-major definition of act(A x B + bias), which
// Gemm forms take an epilogue, and pointer alignments.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "kernels/lt_plan.h"

namespace loom {
namespace {

using cuda::ColumnMajorGemm;
using cuda::LtEpilogue;
using cuda::LtLayout;
using cuda::RowMajorGemm;

std::vector<double> values(size_t n, int seed) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>((static_cast<int>(i) * 5 + seed * 11) % 19) - 9.0;
  return v;
}

// Element (r, c) of the stored column-major matrix `l`, checking bounds as
// cuBLASLt does (ld >= rows).
double at(const LtLayout& l, const std::vector<double>& m, int64_t r, int64_t c) {
  EXPECT_GE(l.ld, std::max<int64_t>(1, l.rows));
  EXPECT_LT(r, l.rows);
  EXPECT_LT(c, l.cols);
  return m[static_cast<size_t>(r + c * l.ld)];
}

// cublasLtMatmul as documented: D = epilogue(op(A) op(B)), D column-major
// l.out.rows x l.out.cols, the bias vector one value per row of D.
std::vector<double> lt_matmul(const ColumnMajorGemm& c, const std::vector<double>& first,
                              const std::vector<double>& second, const std::vector<double>& bias, LtEpilogue e) {
  const cuda::LtLayouts l = cuda::lt_layouts(c);
  EXPECT_EQ(c.trans_first ? l.first.cols : l.first.rows, l.out.rows);
  EXPECT_EQ(c.trans_second ? l.second.rows : l.second.cols, l.out.cols);
  std::vector<double> d(static_cast<size_t>(l.out.ld * l.out.cols), -999.0);
  for (int64_t i = 0; i < l.out.rows; ++i)
    for (int64_t j = 0; j < l.out.cols; ++j) {
      double s = 0;
      for (int64_t p = 0; p < c.k; ++p)
        s += (c.trans_first ? at(l.first, first, p, i) : at(l.first, first, i, p)) *
             (c.trans_second ? at(l.second, second, j, p) : at(l.second, second, p, j));
      if (e == LtEpilogue::kBias || e == LtEpilogue::kReluBias) s += bias[static_cast<size_t>(i)];
      if (e == LtEpilogue::kRelu || e == LtEpilogue::kReluBias) s = std::max(s, 0.0);
      d[static_cast<size_t>(i + j * l.out.ld)] = s;
    }
  return d;
}

TEST(CudaLtPlanHost, LayoutsAndEpiloguesGiveTheRowMajorGemm) {
  const int64_t sizes[][3] = {{7, 13, 5}, {1, 9, 4}, {6, 1, 3}, {3, 4, 1}};
  for (const auto& sz : sizes)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (LtEpilogue e : {LtEpilogue::kDefault, LtEpilogue::kBias, LtEpilogue::kRelu, LtEpilogue::kReluBias}) {
          const RowMajorGemm g{ta, tb, sz[0], sz[1], sz[2]};
          const std::vector<double> a = values(static_cast<size_t>(g.m * g.k), 1);
          const std::vector<double> b = values(static_cast<size_t>(g.k * g.n), 2);
          const std::vector<double> bias = values(static_cast<size_t>(g.n), 3);
          // cuBLAS's first operand is Loom's B (matmul_plan.h).
          const std::vector<double> got = lt_matmul(cuda::column_major(g), b, a, bias, e);
          for (int64_t i = 0; i < g.m; ++i)
            for (int64_t j = 0; j < g.n; ++j) {
              double s = 0;
              for (int64_t p = 0; p < g.k; ++p)
                s += (ta ? a[p * g.m + i] : a[i * g.k + p]) * (tb ? b[j * g.k + p] : b[p * g.n + j]);
              if (e == LtEpilogue::kBias || e == LtEpilogue::kReluBias) s += bias[static_cast<size_t>(j)];
              if (e == LtEpilogue::kRelu || e == LtEpilogue::kReluBias) s = std::max(s, 0.0);
              ASSERT_EQ(got[static_cast<size_t>(i * g.n + j)], s)
                  << g.m << "x" << g.n << "x" << g.k << " transA " << ta << " transB " << tb << " epilogue "
                  << static_cast<int>(e) << " at (" << i << ", " << j << ")";
            }
        }
}

TEST(CudaLtPlanHost, WhichGemmFormsTakeAnEpilogue) {
  EXPECT_EQ(cuda::lt_epilogue(true, {8}, 8, 1.f, false), LtEpilogue::kBias);
  EXPECT_EQ(cuda::lt_epilogue(true, {1, 8}, 8, 1.f, true), LtEpilogue::kReluBias);
  EXPECT_EQ(cuda::lt_epilogue(false, {}, 8, 1.f, true), LtEpilogue::kRelu);
  EXPECT_EQ(cuda::lt_epilogue(false, {}, 8, 1.f, false), LtEpilogue::kDefault);
  EXPECT_EQ(cuda::lt_epilogue(true, {8}, 8, 0.f, false), LtEpilogue::kDefault) << "beta 0: C is not read";
  // The epilogue adds the bias unscaled, one value per column, down the rows.
  EXPECT_FALSE(cuda::lt_epilogue(true, {8}, 8, 0.5f, false).has_value());
  EXPECT_FALSE(cuda::lt_epilogue(true, {4, 1}, 8, 1.f, false).has_value()) << "a column of C";
  EXPECT_FALSE(cuda::lt_epilogue(true, {4, 8}, 8, 1.f, false).has_value()) << "a full C";
  EXPECT_FALSE(cuda::lt_epilogue(true, {1}, 8, 1.f, false).has_value()) << "a scalar C";
  EXPECT_FALSE(cuda::lt_epilogue(true, {}, 8, 1.f, false).has_value()) << "a rank-0 C";
  EXPECT_TRUE(cuda::lt_epilogue(true, {1}, 1, 1.f, false).has_value()) << "n = 1: one value per column";
}

TEST(CudaLtPlanHost, PointerAlignment) {
  EXPECT_EQ(cuda::pointer_alignment(0), 256u);
  EXPECT_EQ(cuda::pointer_alignment(4096), 256u);
  EXPECT_EQ(cuda::pointer_alignment(4096 + 64), 64u);
  EXPECT_EQ(cuda::pointer_alignment(4096 + 4), 4u);
  EXPECT_EQ(cuda::pointer_alignment(4096 + 2), 2u);
  EXPECT_EQ(cuda::pointer_alignment(4097), 1u);
}

// The workspace handed to cublasLtMatmul starts 256-aligned and still holds
// the bytes the algorithm asked for, wherever the 64-aligned scratch lands.
TEST(CudaLtPlanHost, WorkspaceAlignedInsideItsScratch) {
  EXPECT_EQ(cuda::lt_workspace_request(0), 0u);
  for (uint64_t need : {uint64_t{1}, uint64_t{4096}, uint64_t{1} << 22}) {
    const uint64_t asked = cuda::lt_workspace_request(need);
    for (uintptr_t scratch = 0x10000; scratch < 0x10000 + 512; scratch += 64) {
      const uintptr_t start = cuda::lt_workspace_start(scratch);
      EXPECT_EQ(start % 256, 0u) << scratch;
      EXPECT_GE(start, scratch);
      EXPECT_LE(start + need, scratch + asked) << "need " << need << " at " << scratch;
    }
  }
}

}  // namespace
}  // namespace loom
